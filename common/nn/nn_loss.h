/*
 * nn_loss.h: the training batch and the loss.
 *
 *   L = (1/n) sum_i [ wp * CE(pi_i, softmax_legal(logits_i)) + wv * (v_i - z_i)^2
 *                     + ws * S_i + wr * R_i ] + c * sum over decayed weights of w^2
 *
 * CE(pi, p) = -sum_k pi_k log p_k over the sparse target pi (search visit distribution);
 * the softmax runs over the legal moves only (mask). Target entries on masked moves are
 * ignored (they cannot come from a valid search; ignoring keeps the loss finite). pi
 * need not sum exactly to 1: the gradient p * sum(pi) - pi is exact for any pi.
 *
 * S_i (survival nets only) is sample i's mean binary cross-entropy between the survival
 * logits and the survival target over its trained squares (the occupied squares but the
 * kings, when the sample has the target), 0 when it has none. Normalising per sample
 * keeps the loss a sum over samples, so a data-parallel step needs no new reduction.
 *
 * R_i (reply nets only) is the mean of two cross-entropies of the opponent-reply head:
 * the softmax of channel 0 over the 90 squares against the square the opponent's reply
 * move starts on, and of channel 1 against the square it ends on (KataGo's auxiliary
 * opponent policy, factored into squares); 0 for a sample without the target (the last
 * move of its game).
 */
#ifndef NN_LOSS_H
#define NN_LOSS_H

#include <stdbool.h>
#include <stdint.h>

#include "nn/nn_model.h"

/* One entry of a sparse policy target. */
typedef struct {
  int32_t index; /* policy index from the side to move's view, 0..NN_POLICY_SIZE-1 */
  float prob;    /* target probability */
} nn_pi_entry_t;

/* A training batch; all arrays are caller-owned. */
typedef struct {
  int n;
  const float *planes;      /* (n, nn_arch_input_planes, 10, 9) from nn_encode */
  const uint8_t *mask;      /* (n, NN_POLICY_SIZE) 1 = legal; NULL = all legal */
  const int32_t *pi_offset; /* (n + 1) sample i's targets are pi[pi_offset[i] .. [i+1]) */
  const nn_pi_entry_t *pi;  /* (pi_offset[n]) */
  const float *z;           /* (n) game result from the side to move's view, in [-1, 1] */
  /* Survival targets, squares in the input planes' frame (xq_sample_survival): */
  const uint8_t *surv_mask;   /* (n, 90) 1 = a trained square; NULL = no survival target */
  const uint8_t *surv_target; /* (n, 90) 1 = the piece there survives to the end */
  /* Reply targets (xq_sample_reply): (n, 2) the from and to squares of the opponent's
   * reply in the input planes' frame, -1 = none; NULL = no reply target at all. */
  const int16_t *reply;
} nn_batch_t;

typedef struct {
  float policy_weight; /* wp, usually 1 */
  float value_weight;  /* wv, usually 1 */
  float l2;            /* c, e.g. 1e-4 */
  float survival_weight; /* ws (survival nets only; the trainer's --survival-weight) */
  float reply_weight;    /* wr (reply nets only; the trainer's --reply-weight) */
  /* The policy FC forward and backward at the batch's legal moves only (its mask), where
   * the masked cross-entropy's gradient lives: the same loss and gradients up to rounding,
   * about a fiftieth of the FC's work. No effect on a batch without a mask. */
  bool legal_policy;
} nn_loss_cfg_t;

typedef struct {
  double total;  /* everything below, weighted */
  double policy; /* mean cross-entropy (unweighted) */
  double value;  /* mean squared error (unweighted) */
  double l2;     /* c * sum w^2 */
  double survival; /* mean of the per-sample survival cross-entropy (unweighted) */
  double reply;    /* mean of R_i (unweighted) */
} nn_loss_t;

/* probs (n, NN_POLICY_SIZE) = softmax of logits over legal moves, 0 on illegal ones.
 * A sample with no legal move gets all zeros. probs may alias logits. */
void nn_masked_softmax(float *probs, const float *logits, const uint8_t *mask, int n);

/* Head losses and their gradients: dlogits (n, NN_POLICY_SIZE) = dL/dlogits (0 on
 * masked moves), dvalue (n) = dL/dv (v: the tanh output). Fills out->policy, value and
 * total (without L2). */
void nn_loss_heads(float *dlogits, float *dvalue, const float *logits, const float *value,
                   const nn_batch_t *b, const nn_loss_cfg_t *cfg, nn_loss_t *out);

/* The same on one shard of a batch of n_total samples (nn_train_pool.h): gradients
 * scaled by 1 / n_total, and sums[0], sums[1] = this shard's sums of the cross-entropy
 * and of the squared error (the caller reduces them). b->n may be 0. */
void nn_loss_heads_shard(float *dlogits, float *dvalue, const float *logits,
                         const float *value, const nn_batch_t *b, const nn_loss_cfg_t *cfg,
                         int n_total, double sums[2]);

/* The survival term of a survival net: dsurv (n, 90) = dL/dlogits of the survival head,
 * from logits (n, 90) and b's survival targets (none: dsurv = 0). Sets out->survival and
 * adds ws times it to out->total. */
void nn_loss_survival(float *dsurv, const float *logits, const nn_batch_t *b,
                      const nn_loss_cfg_t *cfg, nn_loss_t *out);
/* The same on one shard of a batch of n_total samples: gradients scaled by 1 / n_total;
 * returns this shard's sum of S_i (the caller adds the shards'). b->n may be 0. */
double nn_loss_survival_shard(float *dsurv, const float *logits, const nn_batch_t *b,
                              const nn_loss_cfg_t *cfg, int n_total);

/* The reply term of a reply net: dreply (n, 2, 90) = dL/dlogits of the reply head, from
 * logits (n, 2, 90) and b's reply targets (none: dreply = 0). Sets out->reply and adds wr
 * times it to out->total. */
void nn_loss_reply(float *dreply, const float *logits, const nn_batch_t *b,
                   const nn_loss_cfg_t *cfg, nn_loss_t *out);
/* The same on one shard of a batch of n_total samples: gradients scaled by 1 / n_total;
 * returns this shard's sum of R_i. b->n may be 0. */
double nn_loss_reply_shard(float *dreply, const float *logits, const nn_batch_t *b,
                           const nn_loss_cfg_t *cfg, int n_total);

/* Adds the L2 term to out (l2 and total) and its gradient 2 c w into m->grads. */
void nn_loss_l2(nn_model_t *m, const nn_loss_cfg_t *cfg, nn_loss_t *out);
/* The same over parameters [lo, hi) only: adds 2 c w of the decayed ones into m->grads and
 * returns their sum of w^2 (the caller multiplies by c; slices of a data-parallel step). */
double nn_loss_l2_range(nn_model_t *m, const nn_loss_cfg_t *cfg, size_t lo, size_t hi);

#endif
