/*
 * pacing.h: when the trainer may have a batch. Two rules, checked in order: the window
 * must hold min_positions samples before the first batch (it is filling), and at most
 * `reuse` samples are served per position ingested since this start (it is paced), so the
 * trainer cannot run ahead of self-play and overfit the window. The positions rebuilt
 * from the segments at start are not counted: they were paced before the restart.
 */
#ifndef XQC_PACING_H
#define XQC_PACING_H

#include <stddef.h>
#include <stdint.h>

typedef enum { XQC_PACE_SERVE, XQC_PACE_FILLING, XQC_PACE_PACED } xqc_pace_t;

typedef struct {
  uint64_t min_positions; /* the window's samples before the first batch (min_positions) */
  double reuse;           /* samples served per position ingested, at most (reuse) */
} xqc_pacing_rule_t;

/* May a batch of n samples be served now, with `window` samples in the window, `fresh`
 * positions ingested and `served` samples served since this start? When not, *wait_ms
 * gets how long the trainer should wait before asking again and why (len bytes) says why. */
xqc_pace_t xqc_pace(const xqc_pacing_rule_t *r, uint64_t window, uint64_t fresh,
                    uint64_t served, uint32_t n, uint32_t *wait_ms, char *why, size_t len);

#endif
