/*
 * mcts.c: the single-game search of mcts.h on top of the shared tree (mcts_tree.h):
 * gathers up to cfg.batch leaves with virtual loss, evaluates them in one call, expands
 * and backs up, until a limit is reached.
 */
#include "search/mcts.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rules/policy_index.h"
#include "rules/rules.h"
#include "search/mcts_tree.h"
#include "support/clock.h"

struct xq_mcts {
  xqt_tree_t tree;
  xq_evaluator_t *ev;
  xq_rng_t rng;
  int batch;
  xq_pos_t *slots;   /* (batch) positions the descents run on */
  xq_pos_t **ptrs;   /* (batch) */
  xqt_leaf_t *leaves; /* (batch) */
  float *priors;     /* (batch, XQ_POLICY_SIZE) */
  float *values;     /* (batch) */
};

void xq_mcts_config_default(xq_mcts_config_t *cfg) {
  cfg->cpuct_init = 1.25f;
  cfg->cpuct_base = 19652.0f;
  cfg->fpu_reduction = 0.25f;
  cfg->dirichlet_alpha = 0.3f;
  cfg->noise_frac = 0.0f;
  cfg->batch = 8;
  cfg->max_plies = 400;
  cfg->node_budget = 1 << 20;
  cfg->mate_probe = false;
}

int xq_mcts_new(xq_mcts_t **out, const xq_mcts_config_t *cfg, xq_evaluator_t *ev,
                uint64_t seed, xq_errbuf_t *eb) {
  *out = NULL;
  if (cfg->batch < 1 || cfg->node_budget < 1 || cfg->cpuct_base <= 0.0f)
    return xq_err_set(eb, XQ_EINVAL, "mcts: batch, node_budget and cpuct_base must be > 0");
  xq_mcts_t *s = calloc(1, sizeof *s);
  if (!s) return xq_err_set(eb, XQ_ENOMEM, "mcts");
  s->ev = ev;
  s->batch = cfg->batch < ev->max_batch ? cfg->batch : ev->max_batch;
  xq_rng_seed(&s->rng, seed);
  int rc = xqt_init(&s->tree, cfg);
  s->slots = malloc((size_t)s->batch * sizeof *s->slots);
  s->ptrs = malloc((size_t)s->batch * sizeof *s->ptrs);
  s->leaves = malloc((size_t)s->batch * sizeof *s->leaves);
  s->priors = malloc((size_t)s->batch * XQ_POLICY_SIZE * sizeof(float));
  s->values = malloc((size_t)s->batch * sizeof(float));
  if (rc || !s->slots || !s->ptrs || !s->leaves || !s->priors || !s->values) {
    xq_mcts_free(&s);
    return xq_err_set(eb, XQ_ENOMEM, "mcts: %d nodes", cfg->node_budget);
  }
  *out = s;
  return 0;
}

void xq_mcts_free(xq_mcts_t **ps) {
  if (!ps || !*ps) return;
  xq_mcts_t *s = *ps;
  xqt_free(&s->tree);
  free(s->slots);
  free(s->ptrs);
  free(s->leaves);
  free(s->priors);
  free(s->values);
  free(s);
  *ps = NULL;
}

void xq_mcts_clear(xq_mcts_t *s) { xqt_clear(&s->tree); }

/* Gathers up to want leaves, evaluates them, backs up. Returns completed simulations. */
static int run_batch(xq_mcts_t *s, int want) {
  int ne = 0, done = 0;
  for (int b = 0; b < want; b++) {
    xqt_leaf_t *lf = &s->leaves[ne];
    xqt_leaf_kind_t k = xqt_select(&s->tree, &s->slots[ne], lf);
    if (k == XQT_LEAF_COLLISION) {
      xqt_unwind(&s->slots[ne], lf);
      break;
    }
    if (k == XQT_LEAF_DONE) {
      xqt_unwind(&s->slots[ne], lf);
      done++;
      continue;
    }
    s->ptrs[ne] = &s->slots[ne];
    ne++;
  }
  if (ne) s->ev->eval(s->ev, s->ptrs, ne, s->priors, s->values);
  for (int i = 0; i < ne; i++) {
    xqt_expand_backup(&s->tree, &s->leaves[i], NULL, s->priors + (size_t)i * XQ_POLICY_SIZE,
                      s->values[i]);
    xqt_unwind(&s->slots[i], &s->leaves[i]);
  }
  return done + ne;
}

int xq_mcts_search(xq_mcts_t *s, xq_pos_t *pos, const xq_mcts_limits_t *lim,
                   xq_mcts_result_t *res) {
  int64_t t0 = xq_clock_ms();
  memset(res, 0, sizeof *res);
  xq_outcome_t o = xq_adjudicate(pos, s->tree.cfg.max_plies);
  if (o.result != XQ_RESULT_NONE) return XQ_EINVAL;
  xqt_set_root(&s->tree, pos);
  for (int i = 0; i < s->batch; i++) memcpy(&s->slots[i], pos, sizeof *pos);
  xqt_tree_t *t = &s->tree;
  if (!(t->nodes[0].flags & XQT_EXPANDED)) run_batch(s, 1); /* the root: not counted */
  xqt_add_noise(t, &s->rng, t->cfg.dirichlet_alpha, t->cfg.noise_frac);
  int64_t sims = 0;
  int64_t max_sims = lim->nodes;
  if (max_sims <= 0 && lim->movetime_ms <= 0 && lim->depth <= 0 && !lim->stop)
    max_sims = 800; /* no limit at all: a default search */
  for (int it = 0;; it++) {
    if (lim->stop && atomic_load(lim->stop)) break;
    if (max_sims > 0 && sims >= max_sims) break;
    if (lim->movetime_ms > 0 && xq_clock_ms() - t0 >= lim->movetime_ms) break;
    if (lim->depth > 0 && (it & 15) == 0) {
      xqt_fill_result(t, res);
      if (res->pv_len >= lim->depth) break;
    }
    int want = s->batch;
    if (max_sims > 0 && max_sims - sims < want) want = (int)(max_sims - sims);
    sims += run_batch(s, want);
  }
  xqt_fill_result(t, res);
  res->simulations = sims;
  res->elapsed_ms = xq_clock_ms() - t0;
  return 0;
}
