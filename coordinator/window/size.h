/*
 * size.h: the replay window's size as a function of the positions ingested so far, after
 * KataGo's power-law window (python/shuffle.py: min rows, expand_window_per_row,
 * taper_window_exponent). With N positions ingested, W0 = window, s = window_slope and
 * a = window_exponent:
 *
 *   W(N) = W0                                   for N <= W0
 *   W(N) = W0 + s * W0 / a * ((N / W0)^a - 1)   beyond, capped at window_max
 *
 * The window starts to grow by s positions per position ingested once it is full, and its
 * growth falls off as (N / W0)^(a - 1). The window never shrinks, and since s <= 1 and
 * a <= 1 it never grows faster than the positions arrive, so a position that has left the
 * window is never needed again (replay.h relies on it). docs/tuning.md shows sizes.
 */
#ifndef XQC_WINDOW_SIZE_H
#define XQC_WINDOW_SIZE_H

#include <stdint.h>

#include "config.h"

typedef struct {
  uint64_t min;     /* W0: the window until it is full (window) */
  uint64_t max;     /* the cap (window_max); max <= min: the window stays at min */
  double exponent;  /* a in (0, 1] (window_exponent) */
  double slope;     /* s in (0, 1] (window_slope) */
} xqc_window_rule_t;

/* The rule of the settings (window, window_max, window_exponent, window_slope). */
xqc_window_rule_t xqc_window_rule(const xqc_config_t *c);
/* W(n): the window's size after n positions ingested, in [min, max(min, max)]. */
uint64_t xqc_window_size(const xqc_window_rule_t *w, uint64_t n);

#endif
