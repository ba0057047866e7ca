/* diverge.c: the checks of the divergence guard (diverge.h). */

#include "diverge.h"

#include <math.h>
#include <stdio.h>

bool trainer_loss_sane(const nn_loss_t *l, double max_loss) {
  return isfinite(l->total) && isfinite(l->policy) && isfinite(l->value) && isfinite(l->l2) &&
         isfinite(l->survival) && isfinite(l->reply) && l->total <= max_loss;
}

/* The index of the first non-finite float of a (n floats), or n when there is none. */
static size_t first_bad(const float *a, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (!isfinite(a[i])) return i;
  return n;
}

/* Checks one model's floats; names the first bad one, prefixed (e.g. "averaged "). */
static bool model_sane(const nn_model_t *m, const char *prefix, char *what, size_t cap) {
  size_t i = first_bad(m->params, m->nparams);
  if (i < m->nparams) {
    snprintf(what, cap, "%sparameter %zu = %g", prefix, i, (double)m->params[i]);
    return false;
  }
  i = first_bad(m->stats, m->nstats);
  if (i < m->nstats) {
    snprintf(what, cap, "%sBN statistic %zu = %g", prefix, i, (double)m->stats[i]);
    return false;
  }
  return true;
}

bool trainer_weights_sane(const nn_model_t *m, const nn_sgd_t *opt, const nn_ema_t *ema,
                          char *what, size_t cap) {
  if (!model_sane(m, "", what, cap)) return false;
  if (opt && opt->velocity) {
    size_t i = first_bad(opt->velocity, opt->n);
    if (i < opt->n) {
      snprintf(what, cap, "momentum %zu = %g", i, (double)opt->velocity[i]);
      return false;
    }
  }
  if (ema && ema->avg && ema->count > 0 && !model_sane(ema->avg, "averaged ", what, cap))
    return false;
  return true;
}
