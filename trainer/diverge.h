/*
 * diverge.h: the trainer's divergence guard (issue 47 item 12). A learning rate too high
 * for the net makes the loss explode (1e22 was seen) and then the weights turn to inf and
 * NaN; a checkpoint or a candidate written after that destroys the good state. The guard
 * reads every step's loss (non-finite, or above --max-loss) and, before each checkpoint
 * and candidate, the weights, running statistics and averaged weights (non-finite); a
 * trainer that trips it stops without writing, so the last good checkpoint stays.
 */
#ifndef XQ_TRAINER_DIVERGE_H
#define XQ_TRAINER_DIVERGE_H

#include <stdbool.h>
#include <stddef.h>

#include "nn/nn_ema.h"
#include "nn/nn_loss.h"
#include "nn/nn_model.h"
#include "nn/nn_optim.h"

/* true when every part of the step's loss is finite and its total is at most max_loss. */
bool trainer_loss_sane(const nn_loss_t *l, double max_loss);
/* true when m's parameters and running statistics, opt's momentum buffer and ema's
 * average when it holds one are all finite; otherwise false with the first bad value
 * named in what (e.g. "parameter 123 = nan"). opt and ema may be NULL. */
bool trainer_weights_sane(const nn_model_t *m, const nn_sgd_t *opt, const nn_ema_t *ema,
                          char *what, size_t cap);

#endif
