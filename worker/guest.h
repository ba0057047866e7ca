/*
 * guest.h: the worker as a good guest on a machine lent to self-play (docs/operations.md,
 * "Lending a machine to self-play"). It runs at the lowest CPU priority (nice 19) and idle
 * I/O priority, and it pauses its play thread, keeping its connection and spool, for any
 * of these reasons (a bit set; the first one set names the pause):
 *   signal   SIGUSR1 (SIGUSR2 resumes)
 *   schedule outside the daily --active HH:MM-HH:MM window (which may wrap midnight)
 *   busy     --idle-only LOAD: other processes keep more than LOAD cores busy
 *   memory   --max-rss-mb: the worker's resident memory is above the cap
 * The functions here are pure or read /proc; the agent (agent.c) applies them between
 * tasks. Nothing here keeps global state.
 */
#ifndef XQ_WORKER_GUEST_H
#define XQ_WORKER_GUEST_H

#include <stdbool.h>
#include <stdint.h>

#include "support/error.h"

enum {
  XQ_PAUSE_SIGNAL = 1,
  XQ_PAUSE_SCHEDULE = 2,
  XQ_PAUSE_BUSY = 4,
  XQ_PAUSE_MEMORY = 8,
};

/* The name of the first reason in mask ("signal", "schedule", "busy", "memory"), or "". */
const char *xq_pause_reason(unsigned mask);

/* Sets the calling thread's (and so every thread it starts afterwards) nice value to nice
 * (0..19) and, when io_idle, its I/O priority to the idle class (ioprio_set). Threads
 * started before are not changed: call it first. *got_nice receives the nice value in
 * force afterwards. A nice value below the current one needs CAP_SYS_NICE: that fails
 * with XQ_EPERM naming the fix; the I/O class failing is reported the same way. */
int xq_guest_priority(int nice, bool io_idle, int *got_nice, xq_errbuf_t *eb);
/* The I/O priority class of the calling thread: 3 idle, 2 best effort, 1 real time, 0 none
 * set (best effort by nice), -1 when it cannot be read. */
int xq_guest_io_class(void);

/* A daily window of local time, in minutes after midnight; from == to means always. */
typedef struct {
  int from, to; /* 0..1439 */
} xq_active_t;

/* Parses "HH:MM-HH:MM" (e.g. "19:00-08:00", which wraps midnight). */
int xq_active_parse(xq_active_t *a, const char *s, xq_errbuf_t *eb);
/* Whether minute (0..1439 after local midnight) is inside the window. */
bool xq_active_in(const xq_active_t *a, int minute);
/* The local minute of the day now. */
int xq_active_minute_now(void);

/* Busy jiffies of the whole machine from the text of /proc/stat (its "cpu" line: user,
 * nice, system, irq, softirq and steal; idle and iowait are not busy). 0 or XQ_EFORMAT. */
int xq_cpu_parse_stat(const char *text, uint64_t *busy);
/* This process's jiffies (utime + stime of every thread) from the text of
 * /proc/self/stat (the fields after the command name, which may hold spaces and ')'). */
int xq_cpu_parse_self(const char *text, uint64_t *ticks);
/* Reads both files now; 0 or XQ_EIO. */
int xq_cpu_sample(uint64_t *busy, uint64_t *self);
/* The resident memory of this process (VmRSS in /proc/self/status), in MiB; -1 unknown. */
long xq_guest_rss_mb(void);

/* The idle-only state machine: pause while other processes' load (cores busy, from two
 * samples) is above limit; resume once it has stayed below limit * XQ_IDLE_RESUME_FRAC for
 * XQ_IDLE_RESUME_MS (hysteresis, so a short lull between two compilations does not start
 * the searches for a moment). */
#define XQ_IDLE_SAMPLE_MS 2000    /* load measured over this long */
#define XQ_IDLE_RESUME_MS 30000   /* quiet this long before resuming */
#define XQ_IDLE_RESUME_FRAC 0.75  /* quiet: below this share of the limit */
typedef struct {
  double limit;       /* cores; <= 0: idle-only mode off */
  bool paused;
  int64_t quiet_since_ms; /* first sample below the resume level (0 = none yet) */
  double last_load;   /* the last measured load of other processes, in cores */
} xq_idle_t;

/* One sample of other processes' load (cores) at now_ms; returns the new paused state. */
bool xq_idle_step(xq_idle_t *s, double other_load, int64_t now_ms);

#endif
