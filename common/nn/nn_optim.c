/* nn_optim.c: the learning-rate schedule, SGD with momentum, and the training step. */
#include "nn/nn_optim.h"

#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "nn/nn_backward.h"
#include "nn/nn_forward.h"

float nn_lr_at(const nn_lr_schedule_t *s, int64_t step) {
  float lr = s->n > 0 ? s->e[0].lr : 0.0f;
  for (int i = 0; i < s->n; i++)
    if (step >= s->e[i].from) lr = s->e[i].lr;
  return lr;
}

int nn_lr_parse(nn_lr_schedule_t *s, const char *text, xq_errbuf_t *eb) {
  memset(s, 0, sizeof *s);
  const char *p = text;
  while (*p) {
    if (s->n == NN_LR_MAX_STEPS)
      return xq_err_set(eb, XQ_EINVAL, "lr schedule: more than %d entries", NN_LR_MAX_STEPS);
    char *end;
    errno = 0;
    long long from = strtoll(p, &end, 10);
    if (end == p || *end != ':' || errno || from < 0)
      return xq_err_set(eb, XQ_EINVAL, "lr schedule: expected STEP:LR at '%s'", p);
    p = end + 1;
    float lr = strtof(p, &end);
    if (end == p || !(lr >= 0.0f && lr < 100.0f))
      return xq_err_set(eb, XQ_EINVAL, "lr schedule: bad learning rate at '%s'", p);
    if (s->n > 0 && from <= s->e[s->n - 1].from)
      return xq_err_set(eb, XQ_EINVAL, "lr schedule: steps must increase (%lld)", from);
    s->e[s->n].from = from;
    s->e[s->n].lr = lr;
    s->n++;
    p = end;
    if (*p == ',') p++;
    else if (*p)
      return xq_err_set(eb, XQ_EINVAL, "lr schedule: unexpected '%s'", p);
  }
  if (s->n == 0) return xq_err_set(eb, XQ_EINVAL, "lr schedule: empty");
  return 0;
}

int nn_sgd_init(nn_sgd_t *o, const nn_model_t *m, xq_errbuf_t *eb) {
  o->step = 0;
  o->n = m->nparams;
  o->velocity = calloc(m->nparams, sizeof(float));
  if (!o->velocity) return xq_err_set(eb, XQ_ENOMEM, "cannot allocate the momentum buffer");
  return 0;
}

void nn_sgd_close(nn_sgd_t *o) {
  free(o->velocity);
  o->velocity = NULL;
}

void nn_sgd_update_range(const nn_sgd_t *o, nn_model_t *m, size_t lo, size_t hi) {
  assert(o->n == m->nparams && lo <= hi && hi <= o->n);
  float lr = nn_lr_at(&o->schedule, o->step), mu = o->momentum;
  float *w = m->params, *v = o->velocity;
  const float *g = m->grads;
  if (o->nesterov) {
    for (size_t i = lo; i < hi; i++) {
      v[i] = mu * v[i] + g[i];
      w[i] -= lr * (g[i] + mu * v[i]);
    }
  } else {
    for (size_t i = lo; i < hi; i++) {
      v[i] = mu * v[i] + g[i];
      w[i] -= lr * v[i];
    }
  }
}

void nn_sgd_advance(nn_sgd_t *o, nn_model_t *m) {
  o->step++;
  m->fold.valid = false;
}

void nn_sgd_step(nn_sgd_t *o, nn_model_t *m) {
  nn_sgd_update_range(o, m, 0, o->n);
  nn_sgd_advance(o, m);
}

void nn_compute_gradients(nn_model_t *m, nn_plan_t *plan, const nn_batch_t *b,
                          const nn_loss_cfg_t *cfg, nn_loss_t *out) {
  plan->policy_mask = cfg->legal_policy ? b->mask : NULL;
  nn_forward(plan, m, b->planes, b->n, true);
  nn_model_zero_grad(m);
  nn_loss_heads(plan->dlogits, plan->dvalue, plan->logits, plan->value, b, cfg, out);
  if (m->arch.survival) nn_loss_survival(plan->dsurv, plan->surv, b, cfg, out);
  if (m->arch.reply) nn_loss_reply(plan->dreply, plan->reply, b, cfg, out);
  nn_loss_l2(m, cfg, out);
  nn_backward(plan, m, b->planes, b->n);
  plan->policy_mask = NULL; /* the batch's, not to outlive the step */
}

void nn_train_step(nn_model_t *m, nn_plan_t *plan, nn_sgd_t *opt, const nn_batch_t *b,
                   const nn_loss_cfg_t *cfg, nn_loss_t *out) {
  nn_compute_gradients(m, plan, b, cfg, out);
  nn_sgd_step(opt, m);
}
