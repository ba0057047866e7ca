/*
 * nn_train_pool.h: data-parallel training steps over the cores of one box.
 *
 * A pool of T threads (the caller's thread is rank 0, T - 1 more are created once) splits
 * each batch into T contiguous shards. Each thread fills its shard (the caller's fill
 * function: decoding, plane encoding, legal-move masks), runs the training forward and
 * backward passes on it with single-threaded BLAS, and accumulates its own gradients.
 * Batch norm uses the statistics of the whole batch: every BN layer all-reduces its
 * partial sums across the shards (nn_reduce_t). The shards' gradients are then summed in
 * rank order, in parallel over slices of the parameters, and each rank applies the SGD
 * update to its slice (the same update nn_sgd_step makes, element by element).
 * So T threads compute the step one thread computes, up to the order of float sums, and a
 * run is bit-for-bit reproducible for a fixed T. With T = 1 the step is exactly
 * nn_train_step's.
 *
 * Nothing is allocated per step. A pool is bound to one model (m must outlive it) and is
 * driven by one thread at a time.
 */
#ifndef NN_TRAIN_POOL_H
#define NN_TRAIN_POOL_H

#include <stdint.h>

#include "nn/nn_loss.h"
#include "nn/nn_model.h"
#include "nn/nn_optim.h"

#define NN_TRAIN_MAX_THREADS 1024

/* One shard's input buffers, owned by the pool. */
typedef struct {
  int max_n;              /* samples it holds */
  int max_pi;             /* policy-target entries per sample */
  int nplanes;            /* input planes per sample: the model's (nn_arch_input_planes) */
  float *planes;          /* (max_n, nplanes, 90) */
  uint8_t *mask;          /* (max_n, NN_POLICY_SIZE) */
  int32_t *pi_offset;     /* (max_n + 1) */
  nn_pi_entry_t *pi;      /* (max_n * max_pi) */
  float *z;               /* (max_n) */
  uint8_t *surv_mask;     /* (max_n, 90) survival targets (nn_batch_t): a sample without */
  uint8_t *surv_target;   /* (max_n, 90)  one has an all-zero mask */
  int16_t *reply;         /* (max_n, 2) reply targets (nn_batch_t), -1 = none */
} nn_shard_t;

/* Fills shard with the caller's items [lo, hi) of the batch (hi - lo <= shard->max_n) and
 * returns how many samples it wrote (an item it rejects is not written). Called on pool
 * thread `rank`, at the same time as the other ranks: it may touch only the shard and
 * the caller's per-rank state. */
typedef int (*nn_shard_fill_fn)(void *ctx, int rank, int lo, int hi, nn_shard_t *shard);

typedef struct nn_train_pool nn_train_pool_t;

/* A pool of `threads` (1..NN_TRAIN_MAX_THREADS, at most max_n) for batches of up to max_n
 * items with up to max_pi target entries each. Returns 0 or a negative code. */
int nn_train_pool_new(nn_train_pool_t **out, nn_model_t *m, int threads, int max_n,
                      int max_pi, xq_errbuf_t *eb);
/* Stops and joins the threads; NULL-safe; sets *p to NULL. */
void nn_train_pool_free(nn_train_pool_t **p);
int nn_train_pool_threads(const nn_train_pool_t *p);

/* One SGD step on `count` (<= max_n) items: shards filled by fill(ctx, ...), then forward,
 * loss, backward, reduction and update. Returns the samples trained on; 0 (every item
 * rejected) takes no step and leaves out zeroed. */
int nn_train_pool_step(nn_train_pool_t *p, nn_sgd_t *opt, int count, nn_shard_fill_fn fill,
                       void *ctx, const nn_loss_cfg_t *cfg, nn_loss_t *out);

/* A fill function copying from a whole nn_batch_t given as ctx (tests, benchmarks). */
int nn_shard_fill_from_batch(void *ctx, int rank, int lo, int hi, nn_shard_t *shard);

/* The number of cores this process may run on (its CPU affinity), at least 1: the
 * trainer's default thread count. */
int nn_train_default_threads(void);

#endif
