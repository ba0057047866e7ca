/* job_check.c: bounds on what a coordinator sends (job_check.h). */
#include "job_check.h"

#include <math.h>
#include <string.h>

/* An unsigned field: 0 (the default) or up to max. */
static int check_u(const char *what, uint32_t v, uint32_t max, xq_errbuf_t *eb) {
  if (v <= max) return 0;
  return xq_err_set(eb, XQ_ERANGE, "%s = %u is out of range (0 to %u)", what, v, max);
}

/* A float field: finite and within [lo, hi]. */
static int check_f(const char *what, float v, double lo, double hi, xq_errbuf_t *eb) {
  if (isfinite(v) && v >= lo && v <= hi) return 0;
  return xq_err_set(eb, XQ_ERANGE, "%s = %g is out of range (finite, %g to %g)", what,
                    (double)v, lo, hi);
}

int xq_job_check_settings(const Xqz__SelfplaySettings *s, xq_errbuf_t *eb) {
  if (!s) return 0;
  int rc;
  if ((rc = check_u("sims", s->sims, XQ_JOB_SIMS_MAX, eb)) ||
      (rc = check_u("fast_sims", s->fast_sims, XQ_JOB_SIMS_MAX, eb)) ||
      (rc = check_u("max_plies", s->max_plies, XQ_JOB_PLIES_MAX, eb)) ||
      (rc = check_u("temp_plies", s->temp_plies, XQ_JOB_PLIES_MAX, eb)) ||
      (rc = check_u("gumbel_actions", s->gumbel_actions, XQ_JOB_GUMBEL_MAX, eb)) ||
      (rc = check_f("full_frac", s->full_frac, 0, 1, eb)) ||
      (rc = check_f("noise_frac", s->noise_frac, 0, 1, eb)) ||
      (rc = check_f("dirichlet_alpha", s->dirichlet_alpha, 0, 10, eb)) ||
      (rc = check_f("temp_final", s->temp_final, 0, 2, eb)) ||
      (rc = check_f("resign_threshold", s->resign_threshold, -1, 1, eb)) ||
      (rc = check_f("no_resign_frac", s->no_resign_frac, 0, 1, eb)))
    return rc;
  /* 0 means the default; a tiny positive alpha would put all the noise on one move. */
  if (s->dirichlet_alpha != 0.0f && s->dirichlet_alpha < 0.001f)
    return xq_err_set(eb, XQ_ERANGE, "dirichlet_alpha = %g is out of range (0 for the"
                      " default, or 0.001 to 10)", (double)s->dirichlet_alpha);
  return 0;
}

int xq_job_check_selfplay(const Xqz__SelfplayJob *j, xq_errbuf_t *eb) {
  int rc = check_u("games", j->games, XQ_JOB_GAMES_MAX, eb);
  return rc ? rc : xq_job_check_settings(j->settings, eb);
}

int xq_job_check_arena(const Xqz__ArenaJob *j, xq_errbuf_t *eb) {
  int rc;
  if ((rc = check_u("sims", j->sims, XQ_JOB_SIMS_MAX, eb)) ||
      (rc = check_u("max_plies", j->max_plies, XQ_JOB_PLIES_MAX, eb)) ||
      (rc = check_f("adjudicate_material", j->adjudicate_material, 0, 100, eb)) ||
      (rc = check_u("precision", (uint32_t)j->precision, XQZ__ARENA_PRECISION__ARENA_PRECISION_BF16,
                    eb)))
    return rc;
  size_t n = j->opening_fen ? strlen(j->opening_fen) : 0;
  if (n > XQ_JOB_FEN_MAX)
    return xq_err_set(eb, XQ_ERANGE, "opening_fen of %zu bytes is too long (at most %d)", n,
                      XQ_JOB_FEN_MAX);
  return 0;
}
