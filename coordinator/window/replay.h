/*
 * replay.h: the replay window: the last W training samples in a ring, each tagged with
 * its source (the worker that sent it, so a ban can take its samples out), uniform sampling
 * with the left-right mirror applied to half the draws at sampling time, and conversion
 * of a batch to wire samples. Pacing (serve at most R samples per ingested position) is
 * decided by the caller from the counters here.
 *
 * W may grow with the positions pushed (size.h). The ring then has more slots than W:
 * it doubles (up to the rule's max) when W outgrows it, so a growing window costs one copy
 * per doubling, and the window is always the newest W samples held.
 */
#ifndef XQC_REPLAY_H
#define XQC_REPLAY_H

#include <stdbool.h>
#include <stdint.h>

#include "support/rng.h"
#include "wire/sample.h"
#include "size.h"
#include "xqz.pb-c.h"

typedef struct {
  xq_sample_t *ring;    /* (slots) */
  uint32_t *src;        /* (slots) source tag of each slot: an index into sources.h's table */
  uint64_t slots;       /* size of the ring, >= cap */
  uint64_t cap;         /* W now: the window's capacity */
  uint64_t count;       /* samples in the window: min(stored, cap) */
  uint64_t stored;      /* samples held, the newest before head (<= slots) */
  uint64_t head;        /* next slot to write */
  uint64_t total;       /* samples ever pushed (the N of the window rule) */
  xqc_window_rule_t rule;
  bool grow_failed;     /* the ring could not grow (out of memory): W stays at cap */
  bool grow_reported;   /* the owner has logged grow_failed */
} xqc_replay_t;

/* A fixed window of W = window samples. */
int xqc_replay_init(xqc_replay_t *r, uint64_t window);
/* A window that grows by the rule (W starts at rule->min). */
int xqc_replay_init_rule(xqc_replay_t *r, const xqc_window_rule_t *rule);
void xqc_replay_close(xqc_replay_t *r);
/* Adds a sample from source `src` (sources.h), replacing the oldest when full; W follows
 * the rule (a failure to grow the ring keeps W and sets grow_failed). */
void xqc_replay_push(xqc_replay_t *r, const xq_sample_t *s, uint32_t src);
/* Removes every held sample whose source drop() says to remove, keeping the order of the
 * rest: the survivors are packed at the newest end, so sampling stays uniform over what is
 * left. O(slots); meant for the rare ban. Returns the number of samples removed. */
uint64_t xqc_replay_remove(xqc_replay_t *r, int (*drop)(uint32_t src, void *user), void *user);
/* The slot of the k-th oldest sample of the window (k < count). */
uint64_t xqc_replay_slot(const xqc_replay_t *r, uint64_t k);

typedef struct {
  Xqz__Sample *msgs;   /* (n) */
  Xqz__Sample **ptrs;  /* (n) */
  uint32_t *idx;       /* (n * XQ_MAX_MOVES) */
  float *prob;         /* (n * XQ_MAX_MOVES) */
  xq_sample_t *samples; /* (n) the samples as served: msgs point into them */
  int n;
} xqc_batch_t;

/* How samples are served (coordinator settings). */
typedef struct {
  float q_weight;    /* value target (1 - q_weight) z + q_weight q (value_target_q; 0 = z) */
  float colour_swap; /* share of samples served with the colours swapped (colour_swap) */
} xqc_sample_opts_t;

/* Draws n samples uniformly (mirrored with probability 1/2, colour-swapped with
 * probability o->colour_swap) into b. 0 or XQ_ENOMEM. */
int xqc_replay_sample(xqc_replay_t *r, xq_rng_t *rng, int n, const xqc_sample_opts_t *o,
                      xqc_batch_t *b);
void xqc_batch_free(xqc_batch_t *b);

#endif
