/*
 * selfplay.c: batched self-play (selfplay.h). One thread owns G games, each with its own
 * tree (mcts_tree.h) and descent position; every round takes one leaf from each game
 * that needs one, evaluates the batch in one call, and moves any game whose search is
 * complete. An evaluation cache per thread answers repeated positions without the net.
 */
#include "search/selfplay.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nn/encode.h"
#include "rules/policy_index.h"
#include "rules/rules.h"
#include "search/mcts_tree.h"
#include "search/selfplay_defaults.h"
#include "support/rng.h"
#include "support/clock.h"

void xq_selfplay_config_default(xq_selfplay_config_t *cfg) {
  memset(cfg, 0, sizeof *cfg);
  xq_mcts_config_default(&cfg->mcts);
  cfg->mcts.noise_frac = (float)XQ_SELFPLAY_NOISE_FRAC;
  cfg->mcts.node_budget = 1 << 16;
  cfg->threads = 1;
  cfg->parallel = 32;
  cfg->sims_full = 800;
  cfg->sims_fast = 160;
  cfg->full_frac = (float)XQ_SELFPLAY_FULL_FRAC;
  cfg->temp_plies = XQ_SELFPLAY_TEMP_PLIES;
  cfg->temp_final = (float)XQ_SELFPLAY_TEMP_FINAL;
  cfg->resign_threshold = (float)XQ_SELFPLAY_RESIGN_THRESHOLD;
  cfg->resign_moves = 3;
  cfg->no_resign_frac = (float)XQ_SELFPLAY_NO_RESIGN_FRAC;
  cfg->cache_size = 1 << 15;
  cfg->seed = 1;
}

/* ---- evaluation cache ---- */

typedef struct {
  uint64_t key;    /* 0 = empty */
  float value;
  uint16_t n;
  uint16_t pri[XQ_MAX_MOVES]; /* priors in legal-move order, scaled by 65535 */
} cache_entry_t;

/* The key covers everything nn_encode reads: the Zobrist key (board and side), the exact
 * no-capture counter (clamped at 120 like the plane) and the repetition flag. */
static uint64_t cache_key(const xq_pos_t *pos) {
  uint64_t st = (uint64_t)(pos->rule60 < 120 ? pos->rule60 : 120) |
                (uint64_t)nn_encode_is_repetition(pos) << 8;
  uint64_t k = pos->key ^ xq_splitmix64(&st);
  return k ? k : 1;
}

/* ---- one game ---- */

typedef struct {
  xqt_tree_t tree;
  xq_pos_t pos;   /* the game */
  xq_pos_t slot;  /* descents */
  xqt_leaf_t leaf;
  xq_game_record_t rec;
  uint64_t ckey;
  bool active, full, noise_done, resign_off;
  int target, done;
  int low[2];
  int would_resign; /* side that would have resigned in a no-resign game, or -1 */
} game_t;

typedef struct {
  const xq_selfplay_config_t *cfg;
  const char *net_path;
  int64_t ngames;
  atomic_llong started;
  atomic_int stop;
  pthread_mutex_t lock;
  xq_selfplay_sink_t sink;
  void *ctx;
  xq_selfplay_stats_t total;
  int err;
  xq_errbuf_t eb;
} shared_t;

typedef struct {
  shared_t *sh;
  int id;
  int64_t quota; /* games this thread may still start, or -1 for no limit */
  xq_selfplay_stats_t st;
} worker_t;

static void begin_move(const xq_selfplay_config_t *cfg, game_t *g, xq_rng_t *rng) {
  g->full = xq_rng_uniform(rng) < cfg->full_frac;
  g->target = g->full ? cfg->sims_full : cfg->sims_fast;
  g->done = 0;
  g->noise_done = false;
  xqt_set_root(&g->tree, &g->pos);
  memcpy(&g->slot, &g->pos, sizeof g->pos);
}

static bool start_game(worker_t *w, game_t *g, xq_rng_t *rng, uint64_t net_id) {
  shared_t *sh = w->sh;
  if (w->quota == 0 || atomic_load(&sh->stop) ||
      atomic_fetch_add(&sh->started, 1) >= sh->ngames) {
    g->active = false;
    return false;
  }
  if (w->quota > 0) w->quota--;
  xq_pos_startpos(&g->pos);
  xqt_clear(&g->tree);
  xq_record_reset(&g->rec, XQ_START_FEN, net_id);
  g->resign_off = xq_rng_uniform(rng) < sh->cfg->no_resign_frac;
  g->low[0] = g->low[1] = 0;
  g->would_resign = -1;
  g->active = true;
  begin_move(sh->cfg, g, rng);
  return true;
}

/* Counts a finished game in st: its result and end, and, for a game played with
 * resignation off, whether the side that would have resigned went on to lose. */
static void count_game(xq_selfplay_stats_t *st, const game_t *g, xq_result_t res,
                       xq_reason_t reason) {
  st->games++;
  st->results[res]++;
  st->reasons[reason]++;
  if (g->would_resign >= 0) {
    st->resign_checked++;
    xq_result_t loss = g->would_resign == XQ_RED ? XQ_RESULT_BLACK_WIN : XQ_RESULT_RED_WIN;
    if (res != loss) st->false_resigns++;
  }
}

static void finish_game(worker_t *w, game_t *g, xq_result_t res, xq_reason_t reason) {
  shared_t *sh = w->sh;
  g->rec.result = res;
  g->rec.reason = reason;
  count_game(&w->st, g, res, reason);
  pthread_mutex_lock(&sh->lock);
  xq_selfplay_stats_t *t = &sh->total;
  count_game(t, g, res, reason);
  t->plies += g->rec.nplies;
  for (int i = 0; i < g->rec.nplies; i++) t->positions += g->rec.plies[i].full;
  if (sh->sink && sh->sink(sh->ctx, &g->rec, t)) atomic_store(&sh->stop, 1);
  pthread_mutex_unlock(&sh->lock);
}

/* A move drawn with probability proportional to visits^(1/tau); fallback when no visits. */
static xq_move_t pick_with_temperature(const xq_mcts_result_t *res, float tau, xq_rng_t *rng,
                                       xq_move_t fallback) {
  double w[XQ_MAX_MOVES], sum = 0.0, top = 0.0;
  for (int i = 0; i < res->nmoves; i++)
    if (res->visits[i] > top) top = (double)res->visits[i];
  if (top <= 0.0) return fallback;
  for (int i = 0; i < res->nmoves; i++) {
    w[i] = res->visits[i] > 0 ? pow((double)res->visits[i] / top, 1.0 / tau) : 0.0;
    sum += w[i];
  }
  double r = xq_rng_uniform(rng) * sum;
  for (int i = 0; i < res->nmoves; i++) {
    r -= w[i];
    if (r < 0.0 && w[i] > 0.0) return res->moves[i];
  }
  return fallback;
}

/* Scale of the improved policy's probabilities in the record's integer counts. */
#define POLICY_COUNT_SCALE 65536.0f

/* The policy target of a search: the visit counts, or under a Gumbel root the improved
 * policy (gumbel.h) as counts out of POLICY_COUNT_SCALE (moves that round to 0 left out).
 * Returns the entries written to vis. */
static int policy_target(const game_t *g, const xq_mcts_result_t *res, xq_visit_t *vis) {
  float pi[XQ_MAX_MOVES];
  bool improved = g->tree.gumbel.active;
  if (improved) xqg_improved_policy(&g->tree, pi);
  int nv = 0;
  for (int i = 0; i < res->nmoves; i++) {
    uint32_t count = improved ? (uint32_t)lrintf(pi[i] * POLICY_COUNT_SCALE)
                              : (uint32_t)(res->visits[i] > 0 ? res->visits[i] : 0);
    if (!count) continue;
    vis[nv].index = (uint16_t)xq_policy_index_for(res->moves[i], g->pos.side);
    vis[nv++].count = count;
  }
  return nv;
}

/* The search of g is complete: choose, record and play the move. */
static void finish_move(worker_t *w, game_t *g, xq_rng_t *rng, uint64_t net_id) {
  const xq_selfplay_config_t *cfg = w->sh->cfg;
  xq_mcts_result_t *res = malloc(sizeof *res);
  if (!res) {
    atomic_store(&w->sh->stop, 1);
    g->active = false;
    return;
  }
  xqt_fill_result(&g->tree, res);
  int stm = g->pos.side;
  xq_move_t m = res->best;
  /* A Gumbel root has sampled its move already (its noise is the exploration). */
  float tau = (int)g->pos.ply < cfg->temp_plies ? 1.0f : cfg->temp_final;
  if (tau > 0.0f && !g->tree.gumbel.active) m = pick_with_temperature(res, tau, rng, m);
  xq_visit_t vis[XQ_MAX_MOVES];
  int nv = policy_target(g, res, vis);
  float value = res->value;
  free(res);
  w->st.plies++;
  w->st.positions += g->full;
  if (xq_record_add(&g->rec, m, g->full, value, vis, nv)) {
    atomic_store(&w->sh->stop, 1);
    g->active = false;
    return;
  }
  /* resignation */
  if (value < cfg->resign_threshold) g->low[stm]++;
  else g->low[stm] = 0;
  bool resign = cfg->resign_moves > 0 && g->low[stm] >= cfg->resign_moves;
  if (resign && !g->resign_off) {
    g->rec.nplies--; /* the resigning side plays no move */
    g->rec.nvisits -= g->rec.plies[g->rec.nplies].nvisits;
    finish_game(w, g, stm == XQ_RED ? XQ_RESULT_BLACK_WIN : XQ_RESULT_RED_WIN,
                XQ_REASON_RESIGN);
    start_game(w, g, rng, net_id);
    return;
  }
  if (resign && g->would_resign < 0) g->would_resign = stm;
  xq_pos_make(&g->pos, m);
  xq_outcome_t o = xq_adjudicate(&g->pos, cfg->mcts.max_plies);
  if (o.result != XQ_RESULT_NONE) {
    finish_game(w, g, o.result, o.reason);
    start_game(w, g, rng, net_id);
    return;
  }
  begin_move(cfg, g, rng);
}

/* One thread's search state: G game slots searched together, their leaves evaluated in
 * one batch. The iteration runs in lc0's stages: gather leaves, evaluate, back up, then
 * move the games whose search is done. */
typedef struct {
  worker_t *w;
  int G;
  xq_evaluator_t *ev;
  game_t *games;      /* (G) */
  int *bidx;          /* (G) game of each batch row */
  xq_pos_t **ptrs;    /* (G) the positions to evaluate */
  const int **legal;  /* (G) their leaves' legal policy indices (xqt_leaf_t.index) */
  int *nlegal;        /* (G) and counts (0 for a leaf evaluated without expanding) */
  float *priors;      /* (G, XQ_POLICY_SIZE) */
  float *values;      /* (G) */
  cache_entry_t *cache;
  uint64_t cmask;
  xq_rng_t rng;
} search_t;

/* Game slots and the evaluator of a thread; sets *eb and returns an error on failure
 * (search_free releases what was made). */
static int search_init(search_t *t, worker_t *w, int G, xq_errbuf_t *eb) {
  const xq_selfplay_config_t *cfg = w->sh->cfg;
  memset(t, 0, sizeof *t);
  t->w = w;
  t->G = G;
  int rc = w->sh->net_path ? xq_evaluator_net_new(&t->ev, w->sh->net_path, G, eb)
                           : xq_evaluator_uniform_new(&t->ev, G);
  t->games = calloc((size_t)G, sizeof *t->games);
  t->bidx = malloc((size_t)G * sizeof *t->bidx);
  t->ptrs = malloc((size_t)G * sizeof *t->ptrs);
  t->legal = malloc((size_t)G * sizeof *t->legal);
  t->nlegal = malloc((size_t)G * sizeof *t->nlegal);
  t->priors = malloc((size_t)G * XQ_POLICY_SIZE * sizeof(float));
  t->values = malloc((size_t)G * sizeof(float));
  t->cache = calloc((size_t)cfg->cache_size, sizeof *t->cache);
  t->cmask = (uint64_t)cfg->cache_size - 1;
  if (!rc && (!t->games || !t->bidx || !t->ptrs || !t->legal || !t->nlegal || !t->priors ||
              !t->values || !t->cache))
    rc = xq_err_set(eb, XQ_ENOMEM, "self-play thread memory");
  for (int i = 0; !rc && t->games && i < G; i++) {
    rc = xqt_init(&t->games[i].tree, &cfg->mcts);
    xq_record_init(&t->games[i].rec);
  }
  return rc;
}

static void search_free(search_t *t) {
  for (int i = 0; t->games && i < t->G; i++) {
    xqt_free(&t->games[i].tree);
    xq_record_free(&t->games[i].rec);
  }
  free(t->games);
  free(t->bidx);
  free(t->ptrs);
  free(t->legal);
  free(t->nlegal);
  free(t->priors);
  free(t->values);
  free(t->cache);
  xq_evaluator_free(&t->ev);
}

/* A leaf found in the evaluation cache is expanded and backed up at once; true if so. */
static bool backup_from_cache(search_t *t, game_t *g, bool root) {
  cache_entry_t *e = &t->cache[g->ckey & t->cmask];
  if (e->key != g->ckey || e->n != g->leaf.nmoves) return false;
  float p[XQ_MAX_MOVES];
  for (int j = 0; j < e->n; j++) p[j] = (float)e->pri[j] * (1.0f / 65535.0f);
  xqt_expand_backup(&g->tree, &g->leaf, p, NULL, e->value);
  xqt_unwind(&g->slot, &g->leaf);
  t->w->st.cache_hits++;
  if (!root) g->done++, t->w->st.sims++;
  return true;
}

static bool cfg_gumbel(const search_t *t) {
  return t->w->sh->cfg->mcts.search != XQ_SEARCH_PUCT;
}

/* Stage 1: one descent in every active game; the leaves that need the net go into the
 * batch. Returns the batch size; *nactive gets the games still playing. */
static int gather_leaves(search_t *t, int *nactive) {
  int nb = 0;
  *nactive = 0;
  for (int i = 0; i < t->G; i++) {
    game_t *g = &t->games[i];
    if (!g->active) continue;
    (*nactive)++;
    bool root = !(g->tree.nodes[0].flags & XQT_EXPANDED);
    if (!root && !g->tree.gumbel.active && cfg_gumbel(t)) xqg_begin(&g->tree, &t->rng, g->target);
    xqt_leaf_kind_t k = xqt_select(&g->tree, &g->slot, &g->leaf);
    if (k != XQT_LEAF_EVAL) {
      xqt_unwind(&g->slot, &g->leaf);
      if (k == XQT_LEAF_DONE) g->done++, t->w->st.sims++;
      continue;
    }
    if (g->leaf.nmoves > 0) {
      g->ckey = cache_key(&g->slot);
      if (backup_from_cache(t, g, root)) continue;
    }
    t->bidx[nb] = i;
    t->legal[nb] = g->leaf.index;
    t->nlegal[nb] = g->leaf.nmoves > 0 ? g->leaf.nmoves : 0;
    t->ptrs[nb++] = &g->slot;
  }
  return nb;
}

/* Stage 2: the net on the batch. */
static void evaluate(search_t *t, int nb) {
  if (!nb) return;
  double ta = xq_clock_s();
  xq_evaluator_eval_listed(t->ev, t->ptrs, nb, t->legal, t->nlegal, t->priors, t->values);
  t->w->st.net_s += xq_clock_s() - ta;
  t->w->st.evals += nb;
  t->w->st.batches++;
}

/* Stage 3: each evaluated leaf is cached, expanded and backed up. */
static void back_up(search_t *t, int nb) {
  for (int b = 0; b < nb; b++) {
    game_t *g = &t->games[t->bidx[b]];
    bool root = g->leaf.len == 1;
    const float *pr = t->priors + (size_t)b * XQ_POLICY_SIZE;
    if (g->leaf.nmoves > 0) {
      cache_entry_t *e = &t->cache[g->ckey & t->cmask];
      e->key = g->ckey;
      e->value = t->values[b];
      e->n = (uint16_t)g->leaf.nmoves;
      for (int j = 0; j < g->leaf.nmoves; j++) {
        float p = pr[g->leaf.index[j]];
        e->pri[j] = (uint16_t)(p <= 0.0f ? 0 : p >= 1.0f ? 65535 : p * 65535.0f + 0.5f);
      }
    }
    xqt_expand_backup(&g->tree, &g->leaf, NULL, pr, t->values[b]);
    xqt_unwind(&g->slot, &g->leaf);
    if (!root) g->done++, t->w->st.sims++;
  }
}

/* Stage 4: root noise once a root is expanded; a game whose search is done plays its move. */
static void advance_games(search_t *t) {
  const xq_selfplay_config_t *cfg = t->w->sh->cfg;
  for (int i = 0; i < t->G; i++) {
    game_t *g = &t->games[i];
    if (!g->active) continue;
    if (!g->noise_done && (g->tree.nodes[0].flags & XQT_EXPANDED)) {
      if (g->full && !cfg_gumbel(t))
        xqt_add_noise(&g->tree, &t->rng, cfg->mcts.dirichlet_alpha, cfg->mcts.noise_frac);
      g->noise_done = true;
    }
    if (g->done >= g->target) finish_move(t->w, g, &t->rng, t->ev->net_id);
  }
}

/* The thread's share of a job: game slots, then search iterations until no game is left
 * (or the time limit). */
static void *worker_main(void *arg) {
  worker_t *w = arg;
  shared_t *sh = w->sh;
  const xq_selfplay_config_t *cfg = sh->cfg;
  /* Games are claimed from a shared count, so a thread running `parallel` slots would take
   * all of a small job and leave the other threads idle: in a job smaller than the slots,
   * each thread runs and starts at most its share, even when another thread starts late. */
  int G = cfg->parallel;
  int64_t share = (sh->ngames + cfg->threads - 1) / cfg->threads;
  w->quota = -1;
  if (share < G) {
    G = share > 1 ? (int)share : 1;
    w->quota = G;
  }
  double t0 = xq_clock_s();
  search_t t;
  xq_errbuf_t eb = {{0}};
  int rc = search_init(&t, w, G, &eb);
  if (rc) {
    pthread_mutex_lock(&sh->lock);
    if (!sh->err) {
      sh->err = rc;
      sh->eb = eb;
    }
    pthread_mutex_unlock(&sh->lock);
    atomic_store(&sh->stop, 1);
    goto out;
  }
  uint64_t seed_state = cfg->seed * 0x9e3779b97f4a7c15ull + (uint64_t)w->id;
  xq_rng_seed(&t.rng, xq_splitmix64(&seed_state));
  for (int i = 0; i < G; i++) start_game(w, &t.games[i], &t.rng, t.ev->net_id);
  for (;;) {
    if (cfg->time_limit_s > 0 && xq_clock_s() - t0 >= cfg->time_limit_s) break;
    if (cfg->abort && atomic_load(cfg->abort)) break;
    int nactive;
    int nb = gather_leaves(&t, &nactive);
    if (!nactive) break;
    evaluate(&t, nb);
    back_up(&t, nb);
    advance_games(&t);
  }
out:
  w->st.total_s = xq_clock_s() - t0;
  search_free(&t);
  return NULL;
}

int xq_selfplay_run(const xq_selfplay_config_t *cfg, const char *net_path, int64_t ngames,
                    xq_selfplay_sink_t sink, void *ctx, xq_selfplay_stats_t *stats,
                    xq_errbuf_t *eb) {
  if (cfg->threads < 1 || cfg->parallel < 1 || cfg->sims_full < 1 || cfg->sims_fast < 1 ||
      cfg->cache_size < 1 || (cfg->cache_size & (cfg->cache_size - 1)))
    return xq_err_set(eb, XQ_EINVAL,
                      "self-play: threads, parallel, sims must be >= 1, cache a power of 2");
  shared_t *sh = calloc(1, sizeof *sh);
  worker_t *ws = calloc((size_t)cfg->threads, sizeof *ws);
  pthread_t *th = calloc((size_t)cfg->threads, sizeof *th);
  if (!sh || !ws || !th) {
    free(sh);
    free(ws);
    free(th);
    return xq_err_set(eb, XQ_ENOMEM, "self-play");
  }
  sh->cfg = cfg;
  sh->net_path = net_path;
  sh->ngames = ngames;
  sh->sink = sink;
  sh->ctx = ctx;
  pthread_mutex_init(&sh->lock, NULL);
  int started = 0;
  for (int i = 0; i < cfg->threads; i++) {
    ws[i].sh = sh;
    ws[i].id = i;
    if (cfg->threads == 1) {
      worker_main(&ws[0]);
      started = 1;
      break;
    }
    if (pthread_create(&th[i], NULL, worker_main, &ws[i])) break;
    started++;
  }
  if (cfg->threads > 1)
    for (int i = 0; i < started; i++) pthread_join(th[i], NULL);
  xq_selfplay_stats_t tot;
  memset(&tot, 0, sizeof tot);
  for (int i = 0; i < started; i++) {
    const xq_selfplay_stats_t *s = &ws[i].st;
    tot.games += s->games;
    tot.plies += s->plies;
    tot.positions += s->positions;
    tot.sims += s->sims;
    tot.evals += s->evals;
    tot.cache_hits += s->cache_hits;
    tot.batches += s->batches;
    for (int k = 0; k < 4; k++) tot.results[k] += s->results[k];
    for (int k = 0; k <= XQ_REASON_RESIGN; k++) tot.reasons[k] += s->reasons[k];
    tot.resign_checked += s->resign_checked;
    tot.false_resigns += s->false_resigns;
    tot.net_s += s->net_s;
    tot.total_s += s->total_s;
  }
  if (stats) *stats = tot;
  int rc = sh->err;
  if (rc && eb) *eb = sh->eb;
  if (!rc && started < cfg->threads) rc = xq_err_set(eb, XQ_ENOMEM, "could not start threads");
  pthread_mutex_destroy(&sh->lock);
  free(sh);
  free(ws);
  free(th);
  return rc;
}
