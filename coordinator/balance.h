/*
 * balance.h: the balance of self-play against training. Over a sliding span of
 * balance_window_s seconds it measures positions ingested/s, samples served/s, the
 * achieved reuse (samples served / positions ingested, against the target R), the window's
 * turnover time and the trainer's busy share, and it names the campaign's state:
 *
 *   filling        the window holds fewer than min_positions: training has not started
 *   no-trainer     no batch request within worker_timeout_ms
 *   trainer-bound  achieved reuse below R/2 for balance_warn_s: positions leave the
 *                  window barely trained (one warning logged; one line when it clears)
 *   worker-bound   the pacing made the trainer wait within the span: self-play is the limit
 *   balanced       neither: the trainer keeps up and is never held back
 *
 * The trainer's busy share comes from the timing of its batch requests: the time from a
 * request answered with a Batch to its next request counts as training, the time from one
 * answered with a Wait as waiting (a trainer that prefetches trains on through a Wait, so
 * the share is a lower bound then). Several trainers are told apart by routing id.
 *
 * The module knows nothing of the coordinator's state: the caller passes the counters in
 * (status.c does), so it is tested on made-up timelines.
 */
#ifndef XQC_BALANCE_H
#define XQC_BALANCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "progress.h"

#define XQC_BALANCE_SAMPLES 64  /* ring of counter samples: about 60 per span */
#define XQC_BALANCE_TRAINERS 8  /* trainers timed at once (more: the least recent is dropped) */
#define XQC_BALANCE_RID_MAX 255

/* How the coordinator answered a BatchRequest. */
typedef enum { XQC_BATCH_SERVED, XQC_BATCH_PACED, XQC_BATCH_FILLING } xqc_batch_answer_t;

typedef enum {
  XQC_BALANCE_FILLING,
  XQC_BALANCE_NO_TRAINER,
  XQC_BALANCE_BALANCED,
  XQC_BALANCE_TRAINER_BOUND,
  XQC_BALANCE_WORKER_BOUND,
  XQC_BALANCE_NSTATES
} xqc_balance_state_t;

/* Cumulative counters at one moment. */
typedef struct {
  uint64_t ms, positions, served, busy_ms, wait_ms, paced;
} xqc_balance_mark_t;

typedef struct {
  uint8_t rid[XQC_BALANCE_RID_MAX];
  size_t rid_len;
  uint64_t last_ms;            /* its last request; 0: slot free */
  xqc_batch_answer_t last;     /* how that request was answered */
} xqc_balance_trainer_t;

typedef struct {
  xqc_balance_mark_t ring[XQC_BALANCE_SAMPLES];
  int head, n;
  xqc_balance_trainer_t trainers[XQC_BALANCE_TRAINERS];
  uint64_t busy_ms, wait_ms, paced;   /* cumulative over every trainer */
  uint64_t last_request_ms;           /* any trainer's last request; 0: none yet */
  xqc_balance_state_t state;
  uint64_t state_since_ms;
  uint64_t low_since_ms;              /* achieved reuse below R/2 since (when low) */
  bool low, started;
  /* When the next events are due (progress.h): the trainer's step rate and plan, the arena
   * pair rate. Kept beside the balance's rates, fed and read by status.c. */
  xqc_progress_t progress;
} xqc_balance_t;

/* What the coordinator knows now (status.c fills it from xqc_t and the settings). */
typedef struct {
  uint64_t positions, served;          /* positions ingested, samples served: all time */
  uint64_t window_count, window_cap, min_positions;
  double reuse_target;                 /* R */
  uint64_t span_ms, warn_ms, trainer_timeout_ms;
} xqc_balance_in_t;

/* The figures over the span (what Status.balance shows). */
typedef struct {
  double span_s;            /* the span covered: balance_window_s, less after a start */
  double positions_per_s;   /* ingested */
  double samples_per_s;     /* served to the trainer */
  double reuse;             /* samples served / positions ingested; 0 when none ingested */
  double turnover_s;        /* window_cap / positions_per_s; 0 when none ingested */
  double trainer_busy;      /* 0..1; NaN when no trainer time was measured */
  uint64_t paced;           /* batch requests the pacing refused */
  xqc_balance_state_t state;
  double state_s;           /* seconds in this state */
} xqc_balance_view_t;

/* xqc_balance_t needs no init beyond zeroing (the coordinator's state is calloc'd). */

/* A trainer's BatchRequest from routing id rid, answered as `answer`. */
void xqc_balance_request(xqc_balance_t *b, const uint8_t *rid, size_t rid_len,
                         xqc_batch_answer_t answer, uint64_t now_ms);
/* Called by the timer: samples the counters about 60 times a span and re-evaluates the
 * state, logging the entry into and the exit from trainer-bound. */
void xqc_balance_tick(xqc_balance_t *b, const xqc_balance_in_t *in, uint64_t now_ms);
void xqc_balance_view(const xqc_balance_t *b, const xqc_balance_in_t *in, uint64_t now_ms,
                      xqc_balance_view_t *v);
/* "filling", "no-trainer", "balanced", "trainer-bound", "worker-bound". */
const char *xqc_balance_state_name(xqc_balance_state_t s);
/* What the state means and what to do ("" for balanced). */
const char *xqc_balance_advice(xqc_balance_state_t s);

#endif
