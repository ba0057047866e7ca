/*
 * size.c: the growing window's size (see size.h).
 */
#include "size.h"

#include <assert.h>
#include <math.h>

xqc_window_rule_t xqc_window_rule(const xqc_config_t *c) {
  xqc_window_rule_t w = {(uint64_t)c->window, (uint64_t)c->window_max, c->window_exponent,
                         c->window_slope};
  return w;
}

uint64_t xqc_window_size(const xqc_window_rule_t *w, uint64_t n) {
  if (w->max <= w->min || n <= w->min) return w->min;
  assert(w->exponent > 0 && w->exponent <= 1 && w->slope > 0 && w->slope <= 1);
  double w0 = (double)w->min;
  double size = w0 + w->slope * w0 / w->exponent * (pow((double)n / w0, w->exponent) - 1.0);
  if (!(size < (double)w->max)) return w->max; /* also a NaN, never expected */
  uint64_t s = (uint64_t)size;
  return s < w->min ? w->min : s;
}
