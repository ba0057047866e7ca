/*
 * seg_fault_io.c: fault injection for the coordinator's segment writer, linked only into
 * the test build xqz-coordinator-faults (in the style of SQLite's test_vfs.c). When the
 * environment names a control directory, XQZ_FAULT_DIR, the writer's system calls
 * (coordinator/storage/segments.h, xqc_seg_io) consult it on every call:
 *
 *   enospc          while it exists, writes fail as on a full disk: the first failing call
 *                   writes half its bytes and returns the short count, later ones -1/ENOSPC
 *   fsync-eio-once  the next fsync fails with EIO; the file is then removed
 *   fsync-eio       while it exists, every fsync fails with EIO
 *   ftruncate-eio   while it exists, ftruncate fails with EIO
 *
 * so a test makes the disk fill up, an fsync fail, or space come back at a point of its
 * choosing, by creating and removing files, while the coordinator runs.
 */
#define _DEFAULT_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "storage/segments.h"

static const char *g_dir;
static bool g_short_done; /* the short write of the current full-disk spell was made */

static bool present(const char *name) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", g_dir, name);
  return access(path, F_OK) == 0;
}

static ssize_t fault_write(int fd, const void *buf, size_t n) {
  if (!present("enospc")) {
    g_short_done = false;
    return write(fd, buf, n);
  }
  if (!g_short_done && n > 1) {
    g_short_done = true;
    return write(fd, buf, n / 2);
  }
  errno = ENOSPC;
  return -1;
}

static int fault_fsync(int fd) {
  char once[1024];
  snprintf(once, sizeof once, "%s/fsync-eio-once", g_dir);
  if (unlink(once) == 0 || present("fsync-eio")) {
    errno = EIO;
    return -1;
  }
  return fsync(fd);
}

static int fault_ftruncate(int fd, off_t len) {
  if (present("ftruncate-eio")) {
    errno = EIO;
    return -1;
  }
  return ftruncate(fd, len);
}

__attribute__((constructor)) static void install(void) {
  g_dir = getenv("XQZ_FAULT_DIR");
  if (!g_dir || !*g_dir) return;
  xqc_seg_io = (xqc_seg_io_t){fault_write, fault_fsync, fault_ftruncate};
}
