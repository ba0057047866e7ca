/*
 * nn_ema.h: an exponential moving average of a model's weights, which the trainer
 * publishes as its candidates instead of the weights of its last step (KataGo and Leela
 * Chess Zero publish such averages; docs/trainer.md, "Averaged weights").
 *
 * The average covers the parameters and the BN running statistics alike. Each update
 * moves it towards the model by the weight max(1 / count, 1 / horizon), count being the
 * models averaged so far, this one included: the first `horizon` updates take the plain
 * mean of every model seen (so a fresh average is not pulled towards the first one), and
 * later ones an exponential average whose weights sum over about `horizon` steps.
 *
 * Ownership: nn_ema_init allocates avg (a model of m's architecture); nn_ema_close frees
 * it. A zeroed nn_ema_t is an empty, closed average.
 */
#ifndef NN_EMA_H
#define NN_EMA_H

#include <stdint.h>

#include "nn/nn_model.h"
#include "support/error.h"

typedef struct {
  int64_t horizon;  /* >= 1: steps the average spans (1: the last model only) */
  int64_t count;    /* models averaged so far; 0: empty */
  nn_model_t *avg;  /* the average, as a model (folded weights invalid) */
} nn_ema_t;

/* An empty average for models of m's architecture. Returns 0 or a negative code. */
int nn_ema_init(nn_ema_t *e, const nn_model_t *m, int64_t horizon, xq_errbuf_t *eb);
/* Folds m's parameters and running statistics into the average (m must have avg's
 * architecture). The first update copies m. */
void nn_ema_update(nn_ema_t *e, const nn_model_t *m);
/* The weight the next update gives the model: max(1 / (count + 1), 1 / horizon). */
double nn_ema_next_weight(const nn_ema_t *e);
/* Frees the average; NULL-safe, leaves e zeroed. */
void nn_ema_close(nn_ema_t *e);

#endif
