/*
 * nn_optim.h: SGD with momentum (optionally Nesterov), a step learning-rate schedule,
 * and nn_train_step, the one call the trainer makes per batch.
 *
 * Update (PyTorch's torch.optim.SGD semantics, with L2 already in the gradient):
 *   v = mu * v + g;   w -= lr * (nesterov ? g + mu * v : v)
 *
 * Schedule: lr(step) = lr of the last entry whose `from` step is <= step (the first
 * entry's `from` is normally 0). E.g. {0: 0.02, 100000: 0.002, 200000: 0.0002}.
 * `step` counts optimiser steps taken before the one being made (0 for the first).
 */
#ifndef NN_OPTIM_H
#define NN_OPTIM_H

#include <stdbool.h>
#include <stdint.h>

#include "nn/nn_loss.h"
#include "nn/nn_model.h"
#include "nn/nn_plan.h"

#define NN_LR_MAX_STEPS 16

typedef struct {
  int n;
  struct {
    int64_t from; /* first step at which lr applies */
    float lr;
  } e[NN_LR_MAX_STEPS];
} nn_lr_schedule_t;

typedef struct {
  float momentum;            /* mu, e.g. 0.9 */
  bool nesterov;
  nn_lr_schedule_t schedule;
  int64_t step;              /* optimiser steps taken */
  size_t n;                  /* floats in velocity (== model nparams) */
  float *velocity;           /* (nparams) momentum buffer, same layout as params */
} nn_sgd_t;

/* Learning rate at a step (0 if the schedule is empty). */
float nn_lr_at(const nn_lr_schedule_t *s, int64_t step);
/* Parses "0:0.02,100000:0.002" into s. Returns 0 or XQ_EINVAL (reason in eb). */
int nn_lr_parse(nn_lr_schedule_t *s, const char *text, xq_errbuf_t *eb);

/* Allocates the momentum buffer (zeroed) for m; caller fills momentum, schedule. */
int nn_sgd_init(nn_sgd_t *o, const nn_model_t *m, xq_errbuf_t *eb);
/* Frees the momentum buffer; NULL-safe fields. */
void nn_sgd_close(nn_sgd_t *o);
/* One update of m->params from m->grads; increments o->step; invalidates the folded
 * weights (call nn_model_fold before inference). */
void nn_sgd_step(nn_sgd_t *o, nn_model_t *m);
/* The update of parameters [lo, hi) only, at the learning rate of o->step, which it does
 * not advance: threads updating disjoint slices together, then one nn_sgd_advance, take
 * exactly nn_sgd_step. */
void nn_sgd_update_range(const nn_sgd_t *o, nn_model_t *m, size_t lo, size_t hi);
/* Counts the step of nn_sgd_update_range's slices and invalidates the folded weights. */
void nn_sgd_advance(nn_sgd_t *o, nn_model_t *m);

/* Forward (training BN), loss, backward and one SGD step on the batch; loss in out.
 * plan: a training plan with max_n >= b->n. */
void nn_train_step(nn_model_t *m, nn_plan_t *plan, nn_sgd_t *opt, const nn_batch_t *b,
                   const nn_loss_cfg_t *cfg, nn_loss_t *out);
/* The same without the update: leaves the gradients in m->grads (tests, fixtures). */
void nn_compute_gradients(nn_model_t *m, nn_plan_t *plan, const nn_batch_t *b,
                          const nn_loss_cfg_t *cfg, nn_loss_t *out);

#endif
