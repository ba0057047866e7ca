/*
 * dirlock.c: the state directory lock (see dirlock.h).
 */
#define _DEFAULT_SOURCE
#include "support/dirlock.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

/* The holder's line from the lock file, without its newline ("unknown" when empty). */
static void read_holder(int fd, char *out, size_t n) {
  ssize_t got = pread(fd, out, n - 1, 0);
  if (got < 0) got = 0;
  out[got] = '\0';
  out[strcspn(out, "\r\n")] = '\0';
  if (!out[0]) snprintf(out, n, "unknown (the lock file is empty)");
}

int xq_dirlock_acquire(xq_dirlock_t *l, const char *dir, const char *program, xq_errbuf_t *eb) {
  l->fd = -1;
  char path[4200];
  snprintf(path, sizeof path, "%s/%s", dir, XQ_DIRLOCK_NAME);
  int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0)
    return xq_err_set(eb, XQ_EIO, "%s: cannot create the lock file: %s", path, strerror(errno));
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    int err = errno;
    if (err != EWOULDBLOCK) {
      close(fd);
      return xq_err_set(eb, XQ_EIO, "%s: cannot lock: %s", path, strerror(err));
    }
    char holder[200];
    read_holder(fd, holder, sizeof holder);
    close(fd);
    return xq_err_set(eb, XQ_EBUSY, "%s is in use by another process (%s); stop that one first,"
                      " or give this one another directory", dir, holder);
  }
  char host[128] = "unknown";
  if (gethostname(host, sizeof host) != 0) snprintf(host, sizeof host, "unknown");
  host[sizeof host - 1] = '\0';
  char line[400];
  int n = snprintf(line, sizeof line, "pid=%ld host=%s program=%s since=%lld\n", (long)getpid(),
                   host, program, (long long)time(NULL));
  /* Who holds it, for the refusal of the next one. */
  if (ftruncate(fd, 0) != 0 || pwrite(fd, line, (size_t)n, 0) != n) {
    close(fd);
    return xq_err_set(eb, XQ_EIO, "%s: cannot write the lock file: %s", path, strerror(errno));
  }
  l->fd = fd;
  return 0;
}

void xq_dirlock_release(xq_dirlock_t *l) {
  if (!l || l->fd < 0) return;
  close(l->fd); /* closing the last descriptor drops the flock */
  l->fd = -1;
}
