/* nn_ema.c: the moving average of a model's weights (nn_ema.h). */
#include "nn/nn_ema.h"

#include <assert.h>
#include <string.h>

int nn_ema_init(nn_ema_t *e, const nn_model_t *m, int64_t horizon, xq_errbuf_t *eb) {
  memset(e, 0, sizeof *e);
  if (horizon < 1) return xq_err_set(eb, XQ_EINVAL, "average horizon %lld: must be >= 1",
                                     (long long)horizon);
  int rc = nn_model_new(&e->avg, &m->arch, eb);
  if (rc) return rc;
  e->horizon = horizon;
  return 0;
}

double nn_ema_next_weight(const nn_ema_t *e) {
  double w = 1.0 / (double)(e->count + 1);
  double floor_w = 1.0 / (double)e->horizon;
  return w > floor_w ? w : floor_w;
}

static void blend(float *a, const float *x, size_t n, float w) {
  for (size_t i = 0; i < n; i++) a[i] += w * (x[i] - a[i]);
}

void nn_ema_update(nn_ema_t *e, const nn_model_t *m) {
  nn_model_t *a = e->avg;
  assert(a && a->nparams == m->nparams && a->nstats == m->nstats);
  float w = (float)nn_ema_next_weight(e);
  if (w == 1.0f) { /* the first model, or horizon 1: the model itself, not a rounding of it */
    memcpy(a->params, m->params, m->nparams * sizeof(float));
    memcpy(a->stats, m->stats, m->nstats * sizeof(float));
  } else {
    blend(a->params, m->params, m->nparams, w);
    blend(a->stats, m->stats, m->nstats, w);
  }
  e->count++;
  a->fold.valid = false;
}

void nn_ema_close(nn_ema_t *e) {
  nn_model_free(&e->avg);
  memset(e, 0, sizeof *e);
}
