/*
 * dirlock.h: one process at a time in a state directory. A daemon takes an exclusive
 * flock(2) on DIR/xqz.lock right after creating DIR and holds it for the rest of its life;
 * the kernel drops it when the process ends, however it ends (kill -9 included), so a lock
 * is never stale. The file records who holds it ("pid=N host=H program=P since=T"), so a
 * second daemon given the same directory is refused with a message naming the holder.
 * The file itself is never deleted (deleting a lock file while another process waits on it
 * would let two in). On NFS, Linux maps flock to the server's byte-range locks, so the
 * lock also holds between hosts sharing the directory.
 */
#ifndef XQ_DIRLOCK_H
#define XQ_DIRLOCK_H

#include "support/error.h"

#define XQ_DIRLOCK_NAME "xqz.lock"

typedef struct {
  int fd; /* the locked file, -1 when not held */
} xq_dirlock_t;

/* Locks dir (which must exist) for `program` (e.g. "xqz-coordinator"). 0; XQ_EBUSY when
 * another process holds it (eb names its pid and host and what to do); XQ_EIO when the
 * lock file cannot be created or locked. */
int xq_dirlock_acquire(xq_dirlock_t *l, const char *dir, const char *program, xq_errbuf_t *eb);
/* Releases the lock (NULL-safe; a lock not held is fine). */
void xq_dirlock_release(xq_dirlock_t *l);

#endif
