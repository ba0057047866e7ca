/*
 * clock.h: the monotonic clock, for rates, time limits and time-outs (never for dates).
 * Header-only.
 */
#ifndef XQ_CLOCK_H
#define XQ_CLOCK_H

#include <stdint.h>
#include <time.h>

/* Seconds since an arbitrary fixed point. */
static inline double xq_clock_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Milliseconds since an arbitrary fixed point. */
static inline int64_t xq_clock_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

#endif
