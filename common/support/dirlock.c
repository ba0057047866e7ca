/*
 * dirlock.c: the state directory lock (see dirlock.h).
 */
#define _DEFAULT_SOURCE
#include "support/dirlock.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

/* t as ISO 8601 in UTC ("2026-12-06T21:44:16Z"): a lock on a shared file system may be
 * read on a host of another time zone. */
static void iso_utc(char *out, size_t n, time_t t) {
  struct tm tm;
  if (!gmtime_r(&t, &tm) || !strftime(out, n, "%Y-%m-%dT%H:%M:%SZ", &tm))
    snprintf(out, n, "%lld", (long long)t);
}

/* The holder's line from the lock file, without its newline ("unknown" when empty). A
 * lock written by an older build gives since= in seconds since the epoch: shown as a time. */
static void read_holder(int fd, char *out, size_t n) {
  ssize_t got = pread(fd, out, n - 1, 0);
  if (got < 0) got = 0;
  out[got] = '\0';
  out[strcspn(out, "\r\n")] = '\0';
  if (!out[0]) snprintf(out, n, "unknown (the lock file is empty)");
  char *since = strstr(out, "since=");
  if (since && since[6] >= '0' && since[6] <= '9') {
    char *end;
    long long t = strtoll(since + 6, &end, 10);
    if (*end != '\0' && *end != ' ') return; /* already a time: 2026-12-06T... */
    char iso[32], rest[200];
    snprintf(rest, sizeof rest, "%s", end);
    iso_utc(iso, sizeof iso, (time_t)t);
    snprintf(since + 6, n - (size_t)(since + 6 - out), "%s%s", iso, rest);
  }
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
  char line[400], since[32];
  iso_utc(since, sizeof since, time(NULL));
  int n = snprintf(line, sizeof line, "pid=%ld host=%s program=%s since=%s\n", (long)getpid(),
                   host, program, since);
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
