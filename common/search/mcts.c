/*
 * mcts.c: the single-game search of mcts.h on top of the shared tree (mcts_tree.h):
 * gathers up to cfg.batch leaves with virtual loss, evaluates them in one call, expands
 * and backs up, until a limit is reached. With several evaluators (xq_mcts_new_parallel)
 * each runs that loop on its own thread, a "lane" with its own scratch, and the lanes
 * share the tree under one lock that is released while they evaluate.
 */
#include "search/mcts.h"

#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rules/movegen.h"
#include "rules/policy_index.h"
#include "search/mcts_tree.h"
#include "support/clock.h"

/* One searcher's scratch: the positions its descents run on and its evaluator's batch. */
typedef struct {
  xq_evaluator_t *ev;  /* borrowed */
  int batch;
  xq_pos_t *slots;     /* (batch) positions the descents run on */
  xq_pos_t **ptrs;     /* (batch) */
  xqt_leaf_t *leaves;  /* (batch) */
  const int **legal;   /* (batch) the leaves' legal policy indices (leaves[i].index) */
  int *nlegal;         /* (batch) and counts (0 for a leaf evaluated without expanding) */
  float *priors;       /* (batch, XQ_POLICY_SIZE) */
  float *values;       /* (batch) */
} lane_t;

struct xq_mcts {
  xqt_tree_t tree;
  xq_rng_t rng;
  int nlanes;
  lane_t *lanes;       /* (nlanes); lane 0 runs on the caller's thread */
  /* With several lanes, the tree is shared: lock is held to select and to back up, and
   * released while a lane's evaluator runs. */
  pthread_mutex_t lock;
  /* The running search, read by the helper lanes. */
  const xq_mcts_limits_t *lim;
  int64_t t0, max_sims;
  atomic_llong sims;    /* simulations completed */
  atomic_llong claimed; /* simulations lanes have set out to do (a node limit is shared) */
  atomic_int done;
  atomic_int full;      /* the pool cannot hold one more expansion */
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
  cfg->search = XQ_SEARCH_PUCT;
  cfg->gumbel_actions = 16;
  cfg->gumbel_c_visit = 50.0f;
  cfg->gumbel_c_scale = 0.1f;
}

static int lane_init(lane_t *l, xq_evaluator_t *ev, int batch) {
  l->ev = ev;
  l->batch = batch < ev->max_batch ? batch : ev->max_batch;
  l->slots = malloc((size_t)l->batch * sizeof *l->slots);
  l->ptrs = malloc((size_t)l->batch * sizeof *l->ptrs);
  l->leaves = malloc((size_t)l->batch * sizeof *l->leaves);
  l->legal = malloc((size_t)l->batch * sizeof *l->legal);
  l->nlegal = malloc((size_t)l->batch * sizeof *l->nlegal);
  l->priors = malloc((size_t)l->batch * XQ_POLICY_SIZE * sizeof(float));
  l->values = malloc((size_t)l->batch * sizeof(float));
  return l->slots && l->ptrs && l->leaves && l->legal && l->nlegal && l->priors && l->values
             ? 0
             : XQ_ENOMEM;
}

static void lane_close(lane_t *l) {
  free(l->slots);
  free(l->ptrs);
  free(l->leaves);
  free(l->legal);
  free(l->nlegal);
  free(l->priors);
  free(l->values);
}

int xq_mcts_new_parallel(xq_mcts_t **out, const xq_mcts_config_t *cfg, xq_evaluator_t *const *evs,
                         int nev, uint64_t seed, xq_errbuf_t *eb) {
  *out = NULL;
  if (cfg->batch < 1 || cfg->node_budget < 1 || cfg->cpuct_base <= 0.0f)
    return xq_err_set(eb, XQ_EINVAL, "mcts: batch, node_budget and cpuct_base must be > 0");
  if (nev < 1 || nev > XQ_MCTS_MAX_THREADS)
    return xq_err_set(eb, XQ_EINVAL, "mcts: %d searchers (1..%d)", nev, XQ_MCTS_MAX_THREADS);
  xq_mcts_t *s = calloc(1, sizeof *s);
  if (!s) return xq_err_set(eb, XQ_ENOMEM, "mcts");
  pthread_mutex_init(&s->lock, NULL);
  xq_rng_seed(&s->rng, seed);
  int rc = xqt_init(&s->tree, cfg);
  s->lanes = calloc((size_t)nev, sizeof *s->lanes);
  if (!rc && s->lanes) {
    s->nlanes = nev;
    for (int i = 0; i < nev && !rc; i++) rc = lane_init(&s->lanes[i], evs[i], cfg->batch);
  }
  if (rc || !s->lanes) {
    xq_mcts_free(&s);
    return xq_err_set(eb, XQ_ENOMEM, "mcts: %d nodes, %d searchers", cfg->node_budget, nev);
  }
  *out = s;
  return 0;
}

int xq_mcts_new(xq_mcts_t **out, const xq_mcts_config_t *cfg, xq_evaluator_t *ev,
                uint64_t seed, xq_errbuf_t *eb) {
  return xq_mcts_new_parallel(out, cfg, &ev, 1, seed, eb);
}

void xq_mcts_free(xq_mcts_t **ps) {
  if (!ps || !*ps) return;
  xq_mcts_t *s = *ps;
  xqt_free(&s->tree);
  for (int i = 0; i < s->nlanes; i++) lane_close(&s->lanes[i]);
  free(s->lanes);
  pthread_mutex_destroy(&s->lock);
  free(s);
  *ps = NULL;
}

void xq_mcts_clear(xq_mcts_t *s) { xqt_clear(&s->tree); }

int xq_mcts_nodes_for_bytes(size_t bytes) {
  size_t n = bytes / xqt_bytes_per_node();
  if (n > INT32_MAX / 2) n = INT32_MAX / 2;
  if (n < XQ_MAX_MOVES + 1) n = XQ_MAX_MOVES + 1;
  return (int)n;
}

/* Restricts the root to lim's searchmoves (all moves when there are none, or when none of
 * them is legal here). */
static void set_root_mask(xqt_tree_t *t, const xq_mcts_limits_t *lim) {
  t->root_masked = false;
  const xqt_node_t *r = &t->nodes[0];
  if (!lim->searchmoves || lim->nsearchmoves <= 0 || !(r->flags & XQT_EXPANDED)) return;
  int allowed = 0;
  for (int i = 0; i < r->nchild; i++) {
    t->root_allowed[i] = 0;
    for (int k = 0; k < lim->nsearchmoves; k++)
      if (t->nodes[r->first + i].move == lim->searchmoves[k]) t->root_allowed[i] = 1;
    allowed += t->root_allowed[i];
  }
  t->root_masked = allowed > 0;
}

/* Gathers up to want leaves, evaluates them, backs up. Returns completed simulations.
 * shared: the tree is shared with other lanes, so it is touched only under the lock. */
static int run_batch(xq_mcts_t *s, lane_t *l, int want, bool shared) {
  int ne = 0, done = 0;
  if (shared) pthread_mutex_lock(&s->lock);
  for (int b = 0; b < want; b++) {
    if (s->tree.used + XQ_MAX_MOVES > s->tree.cap) {
      /* One more expansion might not fit: stop here rather than evaluate leaves that
       * cannot be expanded (mcts.h). */
      atomic_store(&s->full, 1);
      break;
    }
    xqt_leaf_t *lf = &l->leaves[ne];
    xqt_leaf_kind_t k = xqt_select(&s->tree, &l->slots[ne], lf);
    if (k == XQT_LEAF_COLLISION) {
      xqt_unwind(&l->slots[ne], lf);
      break;
    }
    if (k == XQT_LEAF_DONE) {
      xqt_unwind(&l->slots[ne], lf);
      done++;
      continue;
    }
    l->ptrs[ne] = &l->slots[ne];
    l->legal[ne] = lf->index;
    l->nlegal[ne] = lf->nmoves > 0 ? lf->nmoves : 0;
    ne++;
  }
  if (shared) pthread_mutex_unlock(&s->lock);
  if (ne)
    xq_evaluator_eval_listed(l->ev, l->ptrs, ne, l->legal, l->nlegal, l->priors, l->values);
  if (shared && ne) pthread_mutex_lock(&s->lock);
  for (int i = 0; i < ne; i++) {
    xqt_expand_backup(&s->tree, &l->leaves[i], NULL, l->priors + (size_t)i * XQ_POLICY_SIZE,
                      l->values[i]);
    xqt_unwind(&l->slots[i], &l->leaves[i]);
  }
  if (shared && ne) pthread_mutex_unlock(&s->lock);
  return done + ne;
}

/* True when the running search has reached one of its limits (any lane may ask). */
static bool search_over(xq_mcts_t *s, int it) {
  const xq_mcts_limits_t *lim = s->lim;
  if (atomic_load(&s->done)) return true;
  bool over = atomic_load(&s->full) || (lim->stop && atomic_load(lim->stop)) ||
              (s->max_sims > 0 && atomic_load(&s->sims) >= s->max_sims) ||
              (lim->movetime_ms > 0 && xq_clock_ms() - s->t0 >= lim->movetime_ms);
  if (!over && lim->depth > 0 && (it & 15) == 0) {
    /* The principal variation's length, read under the lock when lanes share the tree. */
    xq_mcts_result_t *res = malloc(sizeof *res);
    if (res) {
      if (s->nlanes > 1) pthread_mutex_lock(&s->lock);
      xqt_fill_result(&s->tree, res);
      if (s->nlanes > 1) pthread_mutex_unlock(&s->lock);
      over = res->pv_len >= lim->depth;
      free(res);
    }
  }
  if (over) atomic_store(&s->done, 1);
  return over;
}

/* The loop of one lane until the search is over. */
static void lane_run(xq_mcts_t *s, lane_t *l) {
  bool shared = s->nlanes > 1;
  for (int it = 0; !search_over(s, it); it++) {
    int want = l->batch;
    if (s->max_sims > 0) {
      /* Claim simulations before doing them, so lanes together never pass the limit. */
      int64_t from = atomic_fetch_add(&s->claimed, want);
      int64_t left = s->max_sims - from;
      if (left <= 0) {
        atomic_fetch_sub(&s->claimed, want);
        if (!shared) break;
        sched_yield(); /* others hold the last claims: wait for them to finish */
        continue;
      }
      if (left < want) {
        atomic_fetch_sub(&s->claimed, want - left);
        want = (int)left;
      }
    }
    int n = run_batch(s, l, want, shared);
    if (s->max_sims > 0 && n < want) atomic_fetch_sub(&s->claimed, want - n);
    atomic_fetch_add(&s->sims, n);
    if (n == 0 && shared) sched_yield(); /* every leaf in reach is being evaluated by others */
  }
}

typedef struct {
  xq_mcts_t *s;
  lane_t *lane;
} lane_arg_t;

static void *lane_main(void *arg) {
  lane_arg_t *a = arg;
  lane_run(a->s, a->lane);
  return NULL;
}

/* True when pos is the tree's root position with the same game history. */
static bool same_root(const xqt_tree_t *t, const xq_pos_t *pos) {
  const xq_pos_t *r = &t->root_pos;
  if (!t->has_root || pos->ply != r->ply || pos->key != r->key || pos->rule60 != r->rule60)
    return false;
  for (int i = 0; i < r->ply; i++)
    if (pos->hist[i].key != r->hist[i].key || pos->hist[i].move != r->hist[i].move) return false;
  return true;
}

int xq_mcts_search(xq_mcts_t *s, xq_pos_t *pos, const xq_mcts_limits_t *lim,
                   xq_mcts_result_t *res) {
  int64_t t0 = xq_clock_ms();
  memset(res, 0, sizeof *res);
  xq_move_t moves[XQ_MAX_MOVES];
  if (xq_gen_legal(pos, moves) == 0) return XQ_EINVAL;
  xqt_tree_t *t = &s->tree;
  /* The root searched again (the engine's slices, a second `go`): the search goes on in
   * the same tree, whose root already has its noise. */
  bool again = same_root(t, pos);
  if (!again) xqt_set_root(t, pos);
  for (int k = 0; k < s->nlanes; k++)
    for (int i = 0; i < s->lanes[k].batch; i++) memcpy(&s->lanes[k].slots[i], pos, sizeof *pos);
  if (!(t->nodes[0].flags & XQT_EXPANDED)) run_batch(s, &s->lanes[0], 1, false); /* the root: not counted */
  set_root_mask(t, lim);
  bool gumbel = t->cfg.search != XQ_SEARCH_PUCT && !t->root_masked;
  if (!again && !gumbel) xqt_add_noise(t, &s->rng, t->cfg.dirichlet_alpha, t->cfg.noise_frac);
  s->lim = lim;
  s->t0 = t0;
  s->max_sims = lim->nodes;
  if (s->max_sims <= 0 && lim->movetime_ms <= 0 && lim->depth <= 0 && !lim->stop)
    s->max_sims = 800; /* no limit at all: a default search */
  /* Sequential halving spends a known budget: without a simulation limit the root is PUCT. */
  if (gumbel && s->max_sims > 0 && s->max_sims <= INT32_MAX)
    xqg_begin(t, t->cfg.noise_frac > 0.0f ? &s->rng : NULL, (int)s->max_sims);
  else t->gumbel.active = false;
  atomic_store(&s->sims, 0);
  atomic_store(&s->claimed, 0);
  atomic_store(&s->done, 0);
  atomic_store(&s->full, 0);
  pthread_t threads[XQ_MCTS_MAX_THREADS];
  lane_arg_t args[XQ_MCTS_MAX_THREADS];
  int started = 0;
  for (int k = 1; k < s->nlanes; k++) {
    args[started] = (lane_arg_t){s, &s->lanes[k]};
    if (pthread_create(&threads[started], NULL, lane_main, &args[started])) break; /* fewer lanes */
    started++;
  }
  lane_run(s, &s->lanes[0]);
  atomic_store(&s->done, 1);
  for (int k = 0; k < started; k++) pthread_join(threads[k], NULL);
  xqt_fill_result(t, res);
  res->simulations = atomic_load(&s->sims);
  res->pool_full = atomic_load(&s->full) != 0;
  res->nodes_used = t->used;
  res->node_cap = t->cap;
  res->elapsed_ms = xq_clock_ms() - t0;
  return 0;
}
