/*
 * batch_shard.h: the trainer's fill function for nn_train_pool: each pool thread decodes
 * its range of a Batch message's samples (validated by xq_sample_from_proto), encodes
 * their input planes, legal-move masks, survival targets (xq_sample_survival) and reply
 * targets (xq_sample_reply) and
 * copies their other targets into its shard. A
 * sample that fails validation is dropped and counted for its thread.
 *
 * Ownership: the caller owns the struct; xq_batch_shard_init allocates the per-thread
 * scratch, xq_batch_shard_close frees it.
 */
#ifndef XQ_BATCH_SHARD_H
#define XQ_BATCH_SHARD_H

#include <stdint.h>

#include "nn/nn_train_pool.h"
#include "rules/board.h"
#include "support/error.h"
#include "wire/sample.h"
#include "xqz.pb-c.h"

typedef struct {
  xq_sample_t sample;  /* the sample being decoded */
  xq_pos_t pos;        /* its position, for the legal-move mask (set by from_proto) */
  int64_t rejected;    /* samples this thread dropped, ever */
  xq_errbuf_t last;    /* why the last one was dropped (msg "" until one is) */
} xq_batch_shard_rank_t;

typedef struct {
  const Xqz__Batch *batch;      /* set before each nn_train_pool_step */
  int threads;
  xq_batch_shard_rank_t *rank;  /* (threads) */
} xq_batch_shard_t;

/* Policy-target entries per sample a shard must hold (nn_train_pool_new's max_pi). */
#define XQ_BATCH_SHARD_MAX_PI XQ_MAX_MOVES

int xq_batch_shard_init(xq_batch_shard_t *s, int threads, xq_errbuf_t *eb);
void xq_batch_shard_close(xq_batch_shard_t *s);
/* nn_shard_fill_fn over ctx = xq_batch_shard_t *: items are s->batch->samples[lo, hi). */
int xq_batch_shard_fill(void *ctx, int rank, int lo, int hi, nn_shard_t *shard);
/* Samples dropped by every thread so far. */
int64_t xq_batch_shard_rejected(const xq_batch_shard_t *s);

#endif
