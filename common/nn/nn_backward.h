/*
 * nn_backward.h: the backward pass of the whole network.
 */
#ifndef NN_BACKWARD_H
#define NN_BACKWARD_H

#include "nn/nn_model.h"
#include "nn/nn_plan.h"

/* Given plan->dlogits (n, 2086), plan->dvalue (n) (gradient of the tanh output), for a
 * survival net plan->dsurv (n, 90) (gradient of the survival logits) and for a reply net
 * plan->dreply (n, 2, 90) (gradient of the reply logits), after
 * nn_forward(train = true) on the same plan and n, accumulates dL/dparams into m->grads
 * (the caller zeroes them first, see nn_model_zero_grad). Uses the plan's gradient
 * buffers; dlogits and dvalue are overwritten. */
void nn_backward(nn_plan_t *plan, nn_model_t *m, const float *planes, int n);

#endif
