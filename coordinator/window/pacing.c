/* pacing.c: when the trainer may have a batch (see pacing.h). */
#include "pacing.h"

#include <stdio.h>

xqc_pace_t xqc_pace(const xqc_pacing_rule_t *r, uint64_t window, uint64_t fresh,
                    uint64_t served, uint32_t n, uint32_t *wait_ms, char *why, size_t len) {
  *wait_ms = 0;
  if (window < r->min_positions) {
    snprintf(why, len, "window holds %llu of %lld positions needed to start",
             (unsigned long long)window, (long long)r->min_positions);
    *wait_ms = 2000;
    return XQC_PACE_FILLING;
  }
  if ((double)(served + n) > r->reuse * (double)fresh) {
    snprintf(why, len, "pacing: %llu samples served for %llu positions since start"
             " (reuse %g)", (unsigned long long)served, (unsigned long long)fresh, r->reuse);
    *wait_ms = 1000;
    return XQC_PACE_PACED;
  }
  return XQC_PACE_SERVE;
}
