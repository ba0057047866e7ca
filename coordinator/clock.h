/*
 * clock.h: the coordinator's clock, monotonic milliseconds since an arbitrary fixed point:
 * time-outs, intervals and rates, never dates (a clock step leaves it alone). Header-only,
 * a name for support/clock.h in the coordinator's unsigned milliseconds.
 */
#ifndef XQC_CLOCK_H
#define XQC_CLOCK_H

#include <stdint.h>

#include "support/clock.h"

static inline uint64_t xqc_now_ms(void) { return (uint64_t)xq_clock_ms(); }

#endif
