/*
 * progress.h: when the campaign's next events are due (Status.progress): the trainer's
 * step rate and plan (its BatchRequests say --candidate-every and --max-steps), and the
 * rate at which arena pairs are scored. The measured rates are kept here; status.c turns
 * them into times. Every estimate is a rate measured lately, not a promise: a time not
 * measurable is NaN ("unknown"), never a guess.
 *
 * Ownership: the caller owns the xqc_progress_t (zeroed: nothing measured yet).
 */
#ifndef XQC_PROGRESS_H
#define XQC_PROGRESS_H

#include <stdbool.h>
#include <stdint.h>

#define XQC_PROGRESS_STEP_SAMPLES 64  /* (time, step) samples, at most one per 2 s */
#define XQC_PROGRESS_STEP_SPAN_MS 300000 /* the step rate is measured over 5 minutes */
#define XQC_PROGRESS_STEP_STALE_MS 120000 /* a trainer silent this long: rate unknown */
#define XQC_PROGRESS_PAIRS 64          /* the times of the last scored arena pairs */
#define XQC_PROGRESS_PAIR_SPAN_MS 1800000 /* the pair rate is measured over 30 minutes */

typedef struct {
  uint64_t candidate_every, max_steps; /* the trainer's plan; candidate_every 0: unknown */
  uint64_t step_ms[XQC_PROGRESS_STEP_SAMPLES]; /* monotonic ms, a ring */
  uint64_t step[XQC_PROGRESS_STEP_SAMPLES];
  int step_head, step_n;
  uint64_t pair_ms[XQC_PROGRESS_PAIRS]; /* monotonic ms of each scored pair, a ring */
  int pair_head, pair_n;
  uint64_t seen_match[2]; /* the gating (0) and anchor (1) match last counted */
  int seen_done[2];       /*   and its pairs scored then */
  uint64_t last_log_ms;   /* the progress log line (status.c) */
} xqc_progress_t;

/* A trainer's BatchRequest at now_ms: its step and plan (candidate_every 0: an older
 * trainer, the plan stays unknown). A step below the last one (a trainer resumed from an
 * older checkpoint, or another trainer) starts the measurement again. */
void xqc_progress_trainer(xqc_progress_t *p, uint64_t now_ms, uint64_t step,
                          uint64_t candidate_every, uint64_t max_steps);
/* Training steps per second over the last XQC_PROGRESS_STEP_SPAN_MS; NaN before two
 * samples 10 s apart, or when the trainer has been silent XQC_PROGRESS_STEP_STALE_MS. */
double xqc_progress_step_rate(const xqc_progress_t *p, uint64_t now_ms);
/* The scored pairs of match `match` (kind 0 gating, 1 anchor) are `done` at now_ms: the
 * pairs scored since the last call for the same match are counted at now_ms (a match seen
 * for the first time, e.g. one resumed after a restart, counts none). */
void xqc_progress_pairs(xqc_progress_t *p, int kind, uint64_t match, int done, uint64_t now_ms);
/* Arena pairs scored per second over the last XQC_PROGRESS_PAIRS pairs within
 * XQC_PROGRESS_PAIR_SPAN_MS, counted up to now (a pause lowers it); NaN before two. */
double xqc_progress_pair_rate(const xqc_progress_t *p, uint64_t now_ms);
/* The first multiple of every above step (the trainer uploads at step % every == 0). */
uint64_t xqc_progress_next_multiple(uint64_t step, uint64_t every);
/* Seconds to go `left` units at `rate` per second: NaN when the rate is unknown or 0. */
double xqc_progress_eta(double left, double rate);

#endif
