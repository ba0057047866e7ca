/*
 * test_gumbel.c: Gumbel AlphaZero's root search (search/gumbel.h) with a known evaluator
 * (fixed, uneven priors and position-dependent values): the halving schedule against a
 * transliteration of mctx's get_sequence_of_considered_visits, the budget spent exactly
 * and split as sequential halving splits it, the improved policy and the chosen move
 * against the paper's formulas computed here from the search's own statistics, Gumbel
 * noise making self-play choose differently, and self-play records whose policy targets
 * are the improved policy in the same sparse record, accepted by the ingest check.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nn/encode.h"
#include "rules/movegen.h"
#include "rules/policy_index.h"
#include "search/gumbel.h"
#include "search/mcts.h"
#include "search/mcts_tree.h"
#include "search/selfplay.h"
#include "records/targets.h"
#include "test_helpers.h"

/* ---- a known evaluator ---- */

/* Prior weight of a policy index: uneven, fixed. */
static float known_weight(int index) { return 1.0f + (float)((index * 7919) % 13); }

/* Value of a position for its side to move: fixed by its key, in [-0.8, 0.8]. */
static float known_value(const xq_pos_t *pos) {
  return (float)((pos->key >> 11) % 1601) / 1000.0f - 0.8f;
}

static void known_eval(xq_evaluator_t *ev, xq_pos_t *const *pos, int n, float *priors,
                       float *values) {
  (void)ev;
  for (int b = 0; b < n; b++) {
    float *p = priors + (size_t)b * XQ_POLICY_SIZE;
    memset(p, 0, XQ_POLICY_SIZE * sizeof *p);
    int idx[XQ_MAX_MOVES];
    int nm = nn_encode_legal(pos[b], NULL, idx, NULL);
    float sum = 0.0f;
    for (int i = 0; i < nm; i++) sum += known_weight(idx[i]);
    for (int i = 0; i < nm; i++) p[idx[i]] = known_weight(idx[i]) / sum;
    values[b] = known_value(pos[b]);
  }
}

static void known_destroy(xq_evaluator_t *ev) { (void)ev; }

static xq_evaluator_t KNOWN = {.eval = known_eval, .destroy = known_destroy, .max_batch = 16};

/* The prior the known evaluator gives move i of the root's legal moves (in res order). */
static void known_priors(const xq_pos_t *pos, const xq_mcts_result_t *res, float *prior) {
  float sum = 0.0f;
  for (int i = 0; i < res->nmoves; i++)
    sum += prior[i] = known_weight(xq_policy_index_for(res->moves[i], pos->side));
  for (int i = 0; i < res->nmoves; i++) prior[i] /= sum;
}

static void gumbel_config(xq_mcts_config_t *cfg) {
  xq_mcts_config_default(cfg);
  cfg->search = XQ_SEARCH_GUMBEL;
  cfg->node_budget = 1 << 16;
}

/* ---- the schedule ---- */

/* mctx's get_sequence_of_considered_visits, as written there (lists and all). */
static void mctx_sequence(int m, int n, int *seq) {
  if (m <= 1) {
    for (int k = 0; k < n; k++) seq[k] = k;
    return;
  }
  int log2max = (int)ceil(log2((double)m));
  int visits[128] = {0}, len = 0, considered = m;
  while (len < n) {
    int extra = (int)((double)n / (log2max * considered));
    if (extra < 1) extra = 1;
    for (int e = 0; e < extra; e++) {
      for (int i = 0; i < considered; i++)
        if (len < n) seq[len++] = visits[i];
      for (int i = 0; i < considered; i++) visits[i]++;
    }
    considered = considered / 2 > 2 ? considered / 2 : 2;
  }
}

static void test_schedule(void **state) {
  (void)state;
  int expect[8] = {0, 0, 0, 0, 1, 1, 2, 2}; /* m = 4, n = 8: worked by hand */
  for (int k = 0; k < 8; k++) assert_int_equal(xqg_considered_visit(4, 8, k), expect[k]);
  static int seq[400];
  for (int m = 1; m <= 20; m++)
    for (int n = 1; n <= 400; n += (n < 40 ? 1 : 37)) {
      mctx_sequence(m, n, seq);
      for (int k = 0; k < n; k++)
        if (xqg_considered_visit(m, n, k) != seq[k])
          fail_msg("m %d n %d sim %d: %d, mctx %d", m, n, k, xqg_considered_visit(m, n, k),
                   seq[k]);
    }
}

/* ---- the search ---- */

static void run_search(const xq_mcts_config_t *cfg, const char *fen, int64_t nodes,
                       xq_pos_t *pos, xq_mcts_result_t *res) {
  xq_mcts_t *s;
  xq_errbuf_t eb = {{0}};
  if (xq_mcts_new(&s, cfg, &KNOWN, 5, &eb)) fail_msg("xq_mcts_new: %s", eb.msg);
  th_parse(pos, fen);
  xq_mcts_limits_t lim = {.nodes = nodes};
  assert_int_equal(xq_mcts_search(s, pos, &lim, res), 0);
  xq_mcts_free(&s);
}

/* A tree on fen's position, with the slot the simulations play on equal to it. */
static void start_tree(xqt_tree_t *t, const xq_mcts_config_t *cfg, const char *fen,
                       xq_pos_t *pos, xq_pos_t *slot) {
  assert_int_equal(xqt_init(t, cfg), 0);
  th_parse(pos, fen);
  xqt_set_root(t, pos);
  memcpy(slot, pos, sizeof *pos);
}

/* Evaluates a selected leaf with the known evaluator (a batch of one, as mcts.c with
 * batch 1), backs it up and takes the slot back to the root. */
static void finish_simulation(xqt_tree_t *t, xq_pos_t *slot, xqt_leaf_t *leaf,
                              xqt_leaf_kind_t kind) {
  if (kind == XQT_LEAF_EVAL) {
    float priors[XQ_POLICY_SIZE], value;
    known_eval(&KNOWN, &slot, 1, priors, &value);
    xqt_expand_backup(t, leaf, NULL, priors, value);
  }
  assert_int_not_equal(kind, XQT_LEAF_COLLISION);
  xqt_unwind(slot, leaf);
}

static int desc(const void *a, const void *b) { return *(const int *)b - *(const int *)a; }

static void test_budget_and_halving(void **state) {
  (void)state;
  xq_mcts_config_t cfg;
  gumbel_config(&cfg);
  xq_pos_t pos;
  xq_mcts_result_t res;
  /* 64 simulations among 16 actions: 16 x 1, then 8 get 2 more, 4 get 4 more, 2 get 8 more. */
  int want[16] = {15, 15, 7, 7, 3, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1};
  for (int batch = 1; batch <= 8; batch += 7) {
    cfg.batch = batch;
    run_search(&cfg, XQ_START_FEN, 64, &pos, &res);
    assert_int_equal(res.simulations, 64);
    int v[XQ_MAX_MOVES], sum = 0, visited = 0;
    for (int i = 0; i < res.nmoves; i++) {
      v[i] = res.visits[i];
      sum += v[i];
      visited += v[i] > 0;
    }
    assert_int_equal(sum, 64);
    assert_int_equal(visited, 16);
    qsort(v, (size_t)res.nmoves, sizeof v[0], desc);
    for (int i = 0; i < 16; i++) assert_int_equal(v[i], want[i]);
  }
  /* Other budgets and widths: spent exactly, never more actions than m. */
  int budgets[] = {2, 7, 16, 50, 200};
  for (size_t b = 0; b < sizeof budgets / sizeof budgets[0]; b++)
    for (int m = 1; m <= 32; m *= 4) {
      cfg.batch = 1;
      cfg.gumbel_actions = m;
      run_search(&cfg, XQ_START_FEN, budgets[b], &pos, &res);
      int sum = 0, visited = 0;
      for (int i = 0; i < res.nmoves; i++) sum += res.visits[i], visited += res.visits[i] > 0;
      assert_int_equal(sum, budgets[b]);
      assert_true(visited <= m && visited <= budgets[b]);
    }
}

/* sigma(completed Q) of each root move from the search's result, the paper's way. */
static void paper_sigma(const xq_pos_t *pos, const xq_mcts_result_t *res, const float *prior,
                        const xq_mcts_config_t *cfg, double *sigma) {
  double sum_n = 0, sum_p = 0, sum_pq = 0;
  int nmax = 0;
  for (int i = 0; i < res->nmoves; i++) {
    if (res->visits[i] > nmax) nmax = res->visits[i];
    if (!res->visits[i]) continue;
    sum_n += res->visits[i];
    sum_p += prior[i];
    sum_pq += prior[i] * res->q[i];
  }
  double v_mix = (known_value(pos) + sum_n * sum_pq / sum_p) / (1.0 + sum_n);
  double lo = 1e9, hi = -1e9, q[XQ_MAX_MOVES];
  for (int i = 0; i < res->nmoves; i++) {
    q[i] = res->visits[i] ? res->q[i] : v_mix;
    lo = fmin(lo, q[i]);
    hi = fmax(hi, q[i]);
  }
  for (int i = 0; i < res->nmoves; i++)
    sigma[i] = (cfg->gumbel_c_visit + nmax) * cfg->gumbel_c_scale * (q[i] - lo) / fmax(hi - lo, 1e-8);
}

static void test_improved_policy_and_choice(void **state) {
  (void)state;
  xq_mcts_config_t cfg;
  gumbel_config(&cfg);
  cfg.batch = 1;
  const char *fens[] = {XQ_START_FEN,
                        "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR b - - 0 1",
                        "3k5/9/9/9/9/9/9/9/4R4/4K4 w - - 0 1"};
  for (size_t f = 0; f < sizeof fens / sizeof fens[0]; f++) {
    xqt_tree_t t;
    xq_pos_t pos, slot;
    start_tree(&t, &cfg, fens[f], &pos, &slot);
    /* The root, then 48 simulations, as mcts.c runs them with a batch of one. */
    for (int k = 0; k <= 48; k++) {
      if (k == 1) xqg_begin(&t, NULL, 48);
      xqt_leaf_t leaf;
      xqt_leaf_kind_t kind = xqt_select(&t, &slot, &leaf);
      finish_simulation(&t, &slot, &leaf, kind);
    }
    xq_mcts_result_t res;
    xqt_fill_result(&t, &res);
    float prior[XQ_MAX_MOVES], pi[XQ_MAX_MOVES];
    known_priors(&pos, &res, prior);
    double sigma[XQ_MAX_MOVES], logits[XQ_MAX_MOVES], top = -1e30, sum = 0;
    paper_sigma(&pos, &res, prior, &cfg, sigma);
    xqg_improved_policy(&t, pi);
    for (int i = 0; i < res.nmoves; i++) top = fmax(top, logits[i] = log(prior[i]) + sigma[i]);
    for (int i = 0; i < res.nmoves; i++) sum += exp(logits[i] - top);
    double total = 0;
    for (int i = 0; i < res.nmoves; i++) {
      double want = exp(logits[i] - top) / sum;
      assert_true(pi[i] >= 0.0f);
      if (fabs(pi[i] - want) > 1e-5) fail_msg("%s move %d: pi %g, formula %g", fens[f], i, pi[i], want);
      total += pi[i];
    }
    assert_true(fabs(total - 1.0) < 1e-5);
    /* Without noise the move is the best logits + sigma among the most visited. */
    int most = 0, best = -1;
    for (int i = 0; i < res.nmoves; i++) most = res.visits[i] > most ? res.visits[i] : most;
    for (int i = 0; i < res.nmoves; i++)
      if (res.visits[i] == most && (best < 0 || logits[i] > logits[best])) best = i;
    assert_int_equal(res.best, res.moves[best]);
    assert_int_equal(res.pv[0], res.moves[best]);
    xqt_free(&t);
  }
}

/* The child the paper's deterministic selection takes at an expanded node, computed here
 * in doubles from the node's own statistics (section 5 of the paper, mctx's
 * gumbel_muzero_interior_action_selection); *margin gets the lead over the runner-up. */
static int paper_interior_choice(const xqt_tree_t *t, int32_t node, const xq_mcts_config_t *cfg,
                                 double *margin) {
  const xqt_node_t *p = &t->nodes[node];
  double q[XQ_MAX_MOVES], sum_n = 0, sum_p = 0, sum_pq = 0;
  int nmax = 0;
  for (int i = 0; i < p->nchild; i++) {
    const xqt_node_t *c = &t->nodes[p->first + i];
    if (c->n > nmax) nmax = c->n;
    if (c->n <= 0) continue;
    sum_n += c->n;
    sum_p += c->prior;
    sum_pq += c->prior * ((double)c->w / c->n);
  }
  double v_mix = sum_n > 0 ? (p->tvalue + sum_n * sum_pq / sum_p) / (1.0 + sum_n) : p->tvalue;
  double lo = 1e9, hi = -1e9;
  for (int i = 0; i < p->nchild; i++) {
    const xqt_node_t *c = &t->nodes[p->first + i];
    q[i] = c->n > 0 ? (double)c->w / c->n : v_mix;
    lo = fmin(lo, q[i]);
    hi = fmax(hi, q[i]);
  }
  double logit[XQ_MAX_MOVES], top = -1e30, z = 0;
  for (int i = 0; i < p->nchild; i++) {
    double scale = (cfg->gumbel_c_visit + nmax) * cfg->gumbel_c_scale;
    double sigma = scale * (q[i] - lo) / fmax(hi - lo, 1e-8);
    top = fmax(top, logit[i] = log(t->nodes[p->first + i].prior) + sigma);
  }
  for (int i = 0; i < p->nchild; i++) z += exp(logit[i] - top);
  int best = -1;
  double bs = -1e30, second = -1e30;
  for (int i = 0; i < p->nchild; i++) {
    double s = exp(logit[i] - top) / z - t->nodes[p->first + i].n / (1.0 + sum_n);
    if (s > bs) second = bs, bs = s, best = i;
    else if (s > second) second = s;
  }
  *margin = bs - second;
  return best;
}

/* search = gumbel_tree: below the root every step of every simulation is the child the
 * paper's rule picks from the statistics before that simulation (a node's children change
 * only after it has chosen among them); the root still spends its budget by halving. */
static void test_interior_selection(void **state) {
  (void)state;
  xq_mcts_config_t cfg;
  gumbel_config(&cfg);
  cfg.search = XQ_SEARCH_GUMBEL_TREE;
  cfg.batch = 1;
  const char *fens[] = {XQ_START_FEN,
                        "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR b - - 0 1"};
  static int32_t want[1 << 16];
  for (size_t f = 0; f < sizeof fens / sizeof fens[0]; f++) {
    xqt_tree_t t;
    xq_pos_t pos, slot;
    start_tree(&t, &cfg, fens[f], &pos, &slot);
    int checked = 0, deep = 0, ambiguous = 0;
    for (int k = 0; k <= 200; k++) {
      if (k == 1) xqg_begin(&t, NULL, 200);
      for (int32_t nd = 1; nd < t.used; nd++) {
        double margin = 0;
        bool expanded = t.nodes[nd].flags & XQT_EXPANDED;
        want[nd] = expanded ? paper_interior_choice(&t, nd, &cfg, &margin) : -1;
        /* An exact tie goes to the first child in both; a near one may go either way in
         * floats. */
        if (want[nd] >= 0 && margin > 0 && margin < 1e-5) want[nd] = -2;
      }
      xqt_leaf_t leaf;
      xqt_leaf_kind_t kind = xqt_select(&t, &slot, &leaf);
      for (int d = 1; d + 1 < leaf.len; d++) {
        int32_t nd = leaf.path[d];
        if (want[nd] == -2) {
          ambiguous++;
          continue;
        }
        assert_true(want[nd] >= 0);
        if (leaf.path[d + 1] != t.nodes[nd].first + want[nd])
          fail_msg("%s sim %d depth %d: took child %d, the paper's rule %d", fens[f], k, d,
                   leaf.path[d + 1] - t.nodes[nd].first, want[nd]);
        checked++;
        deep += d >= 2;
      }
      finish_simulation(&t, &slot, &leaf, kind);
    }
    /* The root's budget is still spent by sequential halving: 200 visits in all. */
    xq_mcts_result_t res;
    xqt_fill_result(&t, &res);
    int sum = 0;
    for (int i = 0; i < res.nmoves; i++) sum += res.visits[i];
    assert_int_equal(sum, 200);
    assert_true(checked >= 150 && deep >= 20 && ambiguous * 10 <= checked);
    /* The node's improved policy is a distribution. */
    float pi[XQ_MAX_MOVES];
    int32_t c = t.nodes[0].first;
    for (int i = 0; i < t.nodes[0].nchild; i++)
      if (t.nodes[t.nodes[0].first + i].n > t.nodes[c].n) c = t.nodes[0].first + i;
    xqg_node_policy(&t, c, pi);
    double total = 0;
    for (int i = 0; i < t.nodes[c].nchild; i++) {
      assert_true(pi[i] >= 0.0f);
      total += pi[i];
    }
    assert_true(fabs(total - 1.0) < 1e-5);
    xqt_free(&t);
  }
}

/* With equal priors and values, a win in one is what the halving keeps: its q is 1. Here
 * Ra1-a9 mates, and Ra1-d1 or Ri8-d8 stalemate (which also wins in Xiangqi). */
static void test_mate_found(void **state) {
  (void)state;
  xq_mcts_config_t cfg;
  gumbel_config(&cfg);
  cfg.gumbel_actions = 128; /* every move considered */
  xq_evaluator_t *ev;
  assert_int_equal(xq_evaluator_uniform_new(&ev, 16), 0);
  xq_mcts_t *s;
  xq_errbuf_t eb = {{0}};
  if (xq_mcts_new(&s, &cfg, ev, 5, &eb)) fail_msg("%s", eb.msg);
  /* Red to move; the rook on i8 holds rank 8, the king on f0 the f-file. */
  xq_pos_t pos;
  th_parse(&pos, "4k4/8R/9/9/9/9/9/9/R8/5K3 w - - 0 1");
  xq_mcts_limits_t lim = {.nodes = 64};
  xq_mcts_result_t res;
  assert_int_equal(xq_mcts_search(s, &pos, &lim, &res), 0);
  xq_pos_make(&pos, res.best);
  xq_move_t mv[XQ_MAX_MOVES];
  assert_int_equal(xq_gen_legal(&pos, mv), 0); /* Black has no move: the game is won */
  xq_mcts_free(&s);
  xq_evaluator_free(&ev);
}

/* ---- self-play ---- */

typedef struct {
  int games, full_plies, every_move;
} rec_sink_t;

static int rec_sink(void *ctx, const xq_game_record_t *rec, const xq_selfplay_stats_t *tot) {
  (void)tot;
  rec_sink_t *s = ctx;
  s->games++;
  xq_pos_t pos;
  xq_pos_startpos(&pos);
  for (int i = 0; i < rec->nplies; i++) {
    const xq_record_ply_t *pl = &rec->plies[i];
    xq_move_t mv[XQ_MAX_MOVES];
    int nlegal = xq_gen_legal(&pos, mv);
    xq_pos_make(&pos, pl->move);
    if (!pl->full) continue;
    s->full_plies++;
    uint64_t sum = 0;
    for (int k = 0; k < pl->nvisits; k++) sum += rec->visits[pl->visit_off + k].count;
    /* The improved policy out of 65536, each move rounded. */
    assert_true(sum + (uint64_t)pl->nvisits >= 65536 && sum <= 65536 + (uint64_t)pl->nvisits);
    assert_true(pl->nvisits <= nlegal);
    /* With the uniform evaluator the improved policy is near uniform: every legal move
     * has a share, not only the (at most 8) visited ones. */
    s->every_move += pl->nvisits == nlegal;
  }
  xq_sample_t *samples = calloc(1024, sizeof *samples);
  xq_errbuf_t eb = {{0}};
  int n = xq_samples_from_record(rec, samples, 1024, &eb);
  if (n < 0) fail_msg("ingest refuses a Gumbel record: %s", eb.msg);
  for (int i = 0; i < n; i++) {
    double p = 0;
    for (int k = 0; k < samples[i].npi; k++) p += samples[i].pi_prob[k];
    assert_true(fabs(p - 1.0) < 1e-4);
  }
  free(samples);
  return 0;
}

static void selfplay_records(xq_search_kind_t search) {
  xq_selfplay_config_t cfg;
  xq_selfplay_config_default(&cfg);
  cfg.mcts.search = search;
  cfg.sims_full = 8;
  cfg.sims_fast = 4;
  cfg.full_frac = 0.5f;
  cfg.parallel = 4;
  cfg.mcts.max_plies = 30;
  cfg.mcts.node_budget = 4096;
  cfg.cache_size = 1024;
  cfg.seed = 3;
  rec_sink_t s = {0};
  xq_selfplay_stats_t st;
  xq_errbuf_t eb = {{0}};
  if (xq_selfplay_run(&cfg, NULL, 6, rec_sink, &s, &st, &eb)) fail_msg("%s", eb.msg);
  assert_int_equal(s.games, 6);
  assert_true(s.full_plies > 0);
  assert_true(s.every_move * 10 >= s.full_plies * 9);
}

static void test_selfplay_records(void **state) {
  (void)state;
  selfplay_records(XQ_SEARCH_GUMBEL);
  selfplay_records(XQ_SEARCH_GUMBEL_TREE);
}

/* Gumbel noise is the exploration: two seeds choose different first moves in a search
 * whose priors alone would always pick the same one. */
static void test_noise_explores(void **state) {
  (void)state;
  xq_mcts_config_t cfg;
  gumbel_config(&cfg);
  cfg.noise_frac = 0.25f; /* a search with noise uses Gumbel samples */
  cfg.batch = 1;
  xq_move_t first = 0;
  bool differ = false;
  for (uint64_t seed = 1; seed <= 12 && !differ; seed++) {
    xq_mcts_t *s;
    xq_errbuf_t eb = {{0}};
    if (xq_mcts_new(&s, &cfg, &KNOWN, seed, &eb)) fail_msg("%s", eb.msg);
    xq_pos_t pos;
    th_parse(&pos, XQ_START_FEN);
    xq_mcts_limits_t lim = {.nodes = 4};
    xq_mcts_result_t res;
    assert_int_equal(xq_mcts_search(s, &pos, &lim, &res), 0);
    if (seed == 1) first = res.best;
    else differ = res.best != first;
    xq_mcts_free(&s);
  }
  assert_true(differ);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_schedule),
      cmocka_unit_test(test_budget_and_halving),
      cmocka_unit_test(test_improved_policy_and_choice),
      cmocka_unit_test(test_interior_selection),
      cmocka_unit_test(test_mate_found),
      cmocka_unit_test(test_noise_explores),
      cmocka_unit_test(test_selfplay_records),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
