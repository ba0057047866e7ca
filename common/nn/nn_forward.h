/*
 * nn_forward.h: the forward passes.
 *
 * nn_infer is what a worker calls (the search through nn_infer_legal, the same pass with
 * the policy at the legal moves only): BN folded into the convolutions (nn_model_fold must
 * have been called since the parameters last changed), no caches, fused bias, residual
 * and ReLU. nn_forward is what the trainer calls: BN with batch statistics (train = true,
 * which also updates the running statistics) or with the running statistics (train =
 * false, the unfolded reference the folded pass is tested against); it keeps every
 * activation nn_backward needs. Both leave the raw logits in plan->logits (nn_infer_legal
 * does not) and the values in plan->value; nn_forward leaves a survival net's survival
 * logits in plan->surv and a reply net's opponent-reply logits in plan->reply. nn_infer
 * never computes the survival head (nn_infer_survival does, on request) nor the reply head
 * (only training uses it).
 */
#ifndef NN_FORWARD_H
#define NN_FORWARD_H

#include <stdbool.h>
#include <stdint.h>

#include "nn/nn_model.h"
#include "nn/nn_plan.h"

/*
 * Inference on n <= plan->max_n positions.
 *   policy: (n, NN_POLICY_SIZE) softmax over the legal moves (0 elsewhere), or NULL;
 *   value: (n) in [-1, 1] from the side to move's view, or NULL;
 *   planes: (n, nn_arch_input_planes(&m->arch), 10, 9);
 *   mask: (n, NN_POLICY_SIZE) 1 = legal, or NULL.
 * Any kind of plan works (a training plan has the inference buffers' roles covered).
 */
void nn_infer(float *policy, float *value, nn_plan_t *plan, const nn_model_t *m,
              const float *planes, const uint8_t *mask, int n);

/*
 * nn_infer for a search, which reads the priors of the legal moves only: the policy FC is
 * evaluated at the listed moves alone (nn_fc_rows.h), about a fiftieth of its work.
 *   policy: (n, NN_POLICY_SIZE), not NULL, written whole: the softmax over the listed
 *     moves, 0 elsewhere (all 0 for a position with none), as nn_infer gives with their
 *     mask, up to rounding (sums in another order);
 *   legal, nlegal: position s's policy indices are legal[s][0 .. nlegal[s] - 1] (at most
 *     NN_POLICY_SIZE, no repeats; nn_encode_legal's list, say);
 *   value, planes: as nn_infer. plan->logits is scratch here, not the logits.
 */
void nn_infer_legal(float *policy, float *value, nn_plan_t *plan, const nn_model_t *m,
                    const float *planes, const int *const *legal, const int *nlegal, int n);

/* After nn_infer or nn_infer_legal on the same plan, model and n: surv (n, 90) = the
 * survival head's probability that the piece on each square is still on the board at the
 * end of its game, squares in the input planes' frame (the side to move's view:
 * planes[p * 90 + s] and surv[s] are the same square). The model must have the head
 * (arch.survival). Costs one 1x1 convolution; the search never calls it. */
void nn_infer_survival(float *surv, const nn_plan_t *plan, const nn_model_t *m, int n);

/* Training-mode (train = true) or eval-mode unfolded forward; plan must be a training
 * plan. Re-prepares the 3x3 weights from m->params first, unless the plan is a shard
 * (plan->reduce set: then n may be 0, and the caller prepares them once for all shards). */
void nn_forward(nn_plan_t *plan, nn_model_t *m, const float *planes, int n, bool train);
/* The input of tower conv l in a training plan after nn_forward: the planes (l = 0), the
 * previous layer's activation, or for a pooling block's second conv that activation plus
 * the global pooling bias (plan->gy). nn_backward takes the weight gradients against it. */
const float *nn_forward_conv_input(const nn_plan_t *plan, const float *planes, int l);

#endif
