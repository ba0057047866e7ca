/*
 * nn_plan.h: activation memory for one network shape and a maximum batch size, planned
 * once and reused for every call (no allocation per layer or per batch).
 *
 * An inference plan holds two tower buffers (the residual block writes its output over
 * its input, see conv3x3.h) and the heads. A training plan keeps every layer's conv
 * output (before BN) and its activation (after BN, skip and ReLU) for the backward pass,
 * plus the batch statistics and the gradient buffers.
 *
 * Ownership: nn_plan_new allocates, nn_plan_free(&p) releases. A plan is used by one
 * thread at a time; it may be used with any model of the same architecture.
 */
#ifndef NN_PLAN_H
#define NN_PLAN_H

#include <stdbool.h>

#include "nn/nn_layers.h"
#include "nn/nn_model.h"

typedef struct {
  nn_arch_t arch;
  int max_n;
  bool training;
  /* A shard of a data-parallel batch (nn_train_pool.h) sets reduce; NULL otherwise. A
   * shard's training forward does not prepare the 3x3 weights (the pool does, once)
   * and only rank 0 updates the running statistics. */
  nn_reduce_t *reduce;
  float *scratch; /* conv3x3 scratch for max_n, also the line bias's (nn_lines.h) */
  /* inference tower */
  float *act[2]; /* (n, C, 90) */
  /* The same in the resident layout (conv3x3.h) for one chunk of images, where
   * nn_plan_resident_tower: the input planes, then two tower buffers. Zeroed once (their
   * borders), NULL in training plans and other towers. */
  float *res_in, *res[2];
  /* training tower caches, per 3x3 conv l (0 stem; block b: 1+2b, 2+2b) */
  float *z[NN_MAX_CONVS];       /* (n, C, 90) conv output, before BN */
  float *y[NN_MAX_CONVS];       /* (n, C, 90) after BN (+ skip), ReLU */
  float *bn_mean[NN_MAX_CONVS]; /* (C) batch mean */
  float *bn_var[NN_MAX_CONVS];  /* (C) batch variance (biased) */
  float *gy[NN_MAX_BLOCKS];     /* (n, C, 90) a pooling (or line) block's y[1 + 2b] plus
                                 * its global pooling (or rank and file) bias, the input of
                                 * its second conv; NULL in blocks without either and in
                                 * inference plans */
  /* heads */
  float *pz;            /* (n, 2, 90) policy 1x1 conv output before BN (training) */
  float *py;            /* (n, 2, 90) after BN, ReLU */
  float *pmean, *pvar;  /* (2) */
  float *logits;        /* (n, 2086) raw policy logits (not masked) */
  float *vz;            /* (n, 1, 90) value 1x1 conv output before BN (training) */
  float *vy;            /* (n, 1, 90) after BN, ReLU */
  float *vmean, *vvar;  /* (1) */
  float *vh;            /* (n, hidden) after FC1 and ReLU */
  float *value;         /* (n) tanh output */
  /* Training: when set (by nn_compute_gradients or a train pool, from nn_loss_cfg_t's
   * legal_policy), the policy FC runs at this mask's legal rows only (n, 2086), forward
   * and backward; logits elsewhere are -inf. NULL: the whole FC. */
  const uint8_t *policy_mask;
  float *surv;          /* (n, 90) survival logits, side to move's frame (training plans
                         * only; NULL without the head) */
  float *reply;         /* (n, 2, 90) opponent-reply logits, from and to squares, side to
                         * move's frame (training plans only; NULL without the head) */
  /* gradients (training) */
  float *dlogits; /* (n, 2086) */
  float *dvalue;  /* (n) */
  float *dvh;     /* (n, hidden) */
  float *dpy;     /* (n, 2, 90) */
  float *dvy;     /* (n, 1, 90) */
  float *dsurv;   /* (n, 90) gradient of the survival logits; NULL without the head */
  float *dreply;  /* (n, 2, 90) gradient of the reply logits; NULL without the head */
  float *dA, *dB, *dskip; /* (n, C, 90) */
  float *mem;
  size_t mem_floats;
} nn_plan_t;

/*
 * Whether an inference plan runs the tower in the resident layout, a chunk of images at a
 * time through every conv (nn_forward.c): for towers of plain blocks (no pooling, no lines)
 * whose prepared 3x3 weights fit in NN_RESIDENT_WEIGHT_BYTES, so that they stay in L2
 * while each chunk goes through them all. Larger towers go one layer at a time over the
 * whole batch, NCHW between convs, and read each layer's weights once per batch: on the
 * 6x64 net the chunked order measured 0.87x to 0.96x (`xqz bench nn`, docs/network-performance.md).
 */
#define NN_RESIDENT_WEIGHT_BYTES (256 * 1024)
bool nn_plan_resident_tower(const nn_arch_t *a);

/* Plans memory for batches of up to max_n positions. Returns 0 or a negative code. */
int nn_plan_new(nn_plan_t **out, const nn_arch_t *arch, int max_n, bool training,
                xq_errbuf_t *eb);
/* NULL-safe; sets *p to NULL. */
void nn_plan_free(nn_plan_t **p);

#endif
