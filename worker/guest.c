/* guest.c: priority, schedule, machine load and memory for a lent machine (guest.h). */
#define _GNU_SOURCE /* syscall() */
#include "guest.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* linux/ioprio.h is not in every libc's headers: the three values the kernel ABI fixes. */
#define IOPRIO_CLASS_SHIFT 13
#define IOPRIO_CLASS_IDLE 3
#define IOPRIO_WHO_PROCESS 1

const char *xq_pause_reason(unsigned mask) {
  if (mask & XQ_PAUSE_SIGNAL) return "signal";
  if (mask & XQ_PAUSE_SCHEDULE) return "schedule";
  if (mask & XQ_PAUSE_BUSY) return "busy";
  if (mask & XQ_PAUSE_MEMORY) return "memory";
  return "";
}

int xq_guest_priority(int nice, bool io_idle, int *got_nice, xq_errbuf_t *eb) {
  int rc = 0;
  /* On Linux both values belong to the thread (who = 0) and are inherited by the threads
   * it creates: the play thread, the search threads and ZeroMQ's I/O thread. */
  if (setpriority(PRIO_PROCESS, 0, nice) != 0)
    rc = xq_err_set(eb, XQ_EIO, "cannot set nice %d: %s (a lower nice value than the"
                    " current one needs root or CAP_SYS_NICE; give a higher --nice)",
                    nice, strerror(errno));
  errno = 0;
  int now = getpriority(PRIO_PROCESS, 0);
  *got_nice = errno ? nice : now;
  if (io_idle && !rc &&
      syscall(SYS_ioprio_set, IOPRIO_WHO_PROCESS, 0, IOPRIO_CLASS_IDLE << IOPRIO_CLASS_SHIFT))
    rc = xq_err_set(eb, XQ_EIO, "cannot set the idle I/O priority: %s (the worker's disk"
                    " writes keep the default priority)", strerror(errno));
  return rc;
}

int xq_guest_io_class(void) {
  long v = syscall(SYS_ioprio_get, IOPRIO_WHO_PROCESS, 0);
  return v < 0 ? -1 : (int)(v >> IOPRIO_CLASS_SHIFT);
}

/* "HH:MM" at s into *minute; the characters used in *used. */
static int parse_hhmm(const char *s, int *minute, int *used) {
  int h, m, n = 0;
  if (sscanf(s, "%2d:%2d%n", &h, &m, &n) != 2 || n < 4 || h < 0 || h > 23 || m < 0 || m > 59)
    return -1;
  *minute = h * 60 + m;
  *used = n;
  return 0;
}

int xq_active_parse(xq_active_t *a, const char *s, xq_errbuf_t *eb) {
  int n1, n2;
  if (parse_hhmm(s, &a->from, &n1) || s[n1] != '-' || parse_hhmm(s + n1 + 1, &a->to, &n2) ||
      s[n1 + 1 + n2])
    return xq_err_set(eb, XQ_EINVAL, "--active must be HH:MM-HH:MM in local time, e.g."
                      " 19:00-08:00 (evenings and nights), not '%s'", s);
  return 0;
}

bool xq_active_in(const xq_active_t *a, int minute) {
  if (a->from == a->to) return true;
  if (a->from < a->to) return minute >= a->from && minute < a->to;
  return minute >= a->from || minute < a->to; /* wraps midnight */
}

int xq_active_minute_now(void) {
  time_t t = time(NULL);
  struct tm tm;
  if (!localtime_r(&t, &tm)) return 0;
  return tm.tm_hour * 60 + tm.tm_min;
}

int xq_cpu_parse_stat(const char *text, uint64_t *busy) {
  unsigned long long v[8] = {0};
  /* cpu  user nice system idle iowait irq softirq steal [guest guest_nice: in user, nice] */
  int n = sscanf(text, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2],
                 &v[3], &v[4], &v[5], &v[6], &v[7]);
  if (n < 4) return XQ_EFORMAT;
  *busy = v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
  return 0;
}

int xq_cpu_parse_self(const char *text, uint64_t *ticks) {
  const char *p = strrchr(text, ')');
  if (!p) return XQ_EFORMAT;
  /* After "pid (comm)": state is field 3; utime and stime are fields 14 and 15. */
  unsigned long long ut, st;
  int n = sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st);
  if (n != 2) return XQ_EFORMAT;
  *ticks = ut + st;
  return 0;
}

/* Reads the start of a small /proc file into buf (NUL-terminated); 0 or XQ_EIO. */
static int read_small(const char *path, char *buf, size_t cap) {
  FILE *f = fopen(path, "r");
  if (!f) return XQ_EIO;
  size_t n = fread(buf, 1, cap - 1, f);
  fclose(f);
  buf[n] = 0;
  return n ? 0 : XQ_EIO;
}

int xq_cpu_sample(uint64_t *busy, uint64_t *self) {
  char buf[4096];
  if (read_small("/proc/stat", buf, sizeof buf) || xq_cpu_parse_stat(buf, busy)) return XQ_EIO;
  if (read_small("/proc/self/stat", buf, sizeof buf) || xq_cpu_parse_self(buf, self))
    return XQ_EIO;
  return 0;
}

long xq_guest_rss_mb(void) {
  char buf[8192];
  if (read_small("/proc/self/status", buf, sizeof buf)) return -1;
  const char *p = strstr(buf, "\nVmRSS:");
  long kb;
  if (!p || sscanf(p + 7, "%ld", &kb) != 1) return -1;
  return kb / 1024;
}

bool xq_idle_step(xq_idle_t *s, double other_load, int64_t now_ms) {
  s->last_load = other_load;
  if (s->limit <= 0) return s->paused = false;
  if (other_load > s->limit) {
    s->quiet_since_ms = 0;
    return s->paused = true;
  }
  if (!s->paused) return false;
  if (other_load >= s->limit * XQ_IDLE_RESUME_FRAC) {
    s->quiet_since_ms = 0;
    return true;
  }
  if (!s->quiet_since_ms) s->quiet_since_ms = now_ms ? now_ms : 1;
  if (now_ms - s->quiet_since_ms >= XQ_IDLE_RESUME_MS) {
    s->paused = false;
    s->quiet_since_ms = 0;
  }
  return s->paused;
}
