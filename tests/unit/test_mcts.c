/*
 * test_mcts.c: the PUCT search with the uniform evaluator: mates in 1 and 2 for both
 * colours (checked against a brute-force mate search), value signs, visit sums over legal
 * moves only, determinism for a fixed seed, tree reuse, a tiny node pool, the mate probe,
 * the search on several threads sharing one tree (exact node limits, mates found, visits
 * consistent), and that a position our rules call over but with moves is still searched.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdlib.h>

#include <unistd.h>

#include "nn/encode.h"
#include "nn/nn_file.h"
#include "rules/movegen.h"
#include "rules/policy_index.h"
#include "rules/rules.h"
#include "search/evaluator.h"
#include "search/mcts.h"
#include "test_helpers.h"

/* True when the side to move has lost: checkmate or stalemate. */
static bool is_mated(xq_pos_t *pos) {
  xq_outcome_t o = xq_adjudicate(pos, 0); /* stalemate loses too */
  return o.reason == XQ_REASON_CHECKMATE || o.reason == XQ_REASON_STALEMATE;
}

/* True when the side to move can mate within n of its moves. */
static bool can_mate(xq_pos_t *pos, int n) {
  xq_move_t mv[XQ_MAX_MOVES], rep[XQ_MAX_MOVES];
  int k = xq_gen_legal(pos, mv);
  for (int i = 0; i < k; i++) {
    xq_pos_make(pos, mv[i]);
    bool ok;
    if (is_mated(pos)) ok = true;
    else if (n <= 1) ok = false;
    else {
      int r = xq_gen_legal(pos, rep);
      ok = r > 0;
      for (int j = 0; j < r && ok; j++) {
        xq_pos_make(pos, rep[j]);
        ok = can_mate(pos, n - 1);
        xq_pos_unmake(pos);
      }
    }
    xq_pos_unmake(pos);
    if (ok) return true;
  }
  return false;
}

/* A search over a uniform evaluator of max_batch positions; the caller frees
 * both with xq_mcts_free and xq_evaluator_free. */
static xq_mcts_t *uniform_search_new(xq_evaluator_t **ev, int max_batch, int node_budget,
                                     float noise, uint64_t seed) {
  assert_int_equal(xq_evaluator_uniform_new(ev, max_batch), 0);
  xq_mcts_config_t cfg;
  xq_mcts_config_default(&cfg);
  cfg.node_budget = node_budget;
  cfg.noise_frac = noise;
  xq_mcts_t *s;
  xq_errbuf_t eb = {{0}};
  if (xq_mcts_new(&s, &cfg, *ev, seed, &eb)) fail_msg("xq_mcts_new: %s", eb.msg);
  return s;
}

static void search(const char *fen, int64_t nodes, uint64_t seed, float noise,
                   xq_mcts_result_t *res, xq_pos_t *pos) {
  xq_evaluator_t *ev;
  xq_mcts_t *s = uniform_search_new(&ev, 16, 1 << 18, noise, seed);
  th_parse(pos, fen);
  xq_mcts_limits_t lim = {.nodes = nodes};
  assert_int_equal(xq_mcts_search(s, pos, &lim, res), 0);
  xq_mcts_free(&s);
  xq_evaluator_free(&ev);
  assert_null(ev);
}

static const char *mate1[] = {"3k5/R8/1R7/9/9/9/9/9/9/4K4 w - - 0 1",
                              "4k4/9/9/9/9/9/9/7r1/8r/5K3 b - - 0 1"};
static const char *mate2[] = {"4k4/9/9/9/9/9/9/9/1R7/R2K5 w - - 0 1",
                              "5k3/8r/7r1/9/9/9/9/9/9/4K4 b - - 0 1"};

static void test_mate_in_one(void **state) {
  (void)state;
  for (int c = 0; c < 2; c++) {
    xq_pos_t pos;
    th_parse(&pos, mate1[c]);
    assert_true(can_mate(&pos, 1));
    xq_mcts_result_t res;
    search(mate1[c], 800, 1, 0.0f, &res, &pos);
    if (res.simulations != 800) fail_msg("sims %lld", (long long)res.simulations);
    assert_true(xq_move_is_legal(&pos, res.best));
    xq_pos_make(&pos, res.best);
    if (!is_mated(&pos)) fail_msg("colour %d: best move does not mate", c);
    if (!(res.value > 0.9f)) fail_msg("colour %d: root value %f", c, res.value);
  }
}

static void test_mate_in_two(void **state) {
  (void)state;
  for (int c = 0; c < 2; c++) {
    xq_pos_t pos;
    th_parse(&pos, mate2[c]);
    assert_false(can_mate(&pos, 1));
    assert_true(can_mate(&pos, 2));
    xq_mcts_result_t res;
    search(mate2[c], 6000, 1, 0.0f, &res, &pos);
    xq_pos_make(&pos, res.best);
    /* every reply allows a mate in 1 */
    xq_move_t rep[XQ_MAX_MOVES];
    int r = xq_gen_legal(&pos, rep);
    assert_true(r > 0);
    for (int j = 0; j < r; j++) {
      xq_pos_make(&pos, rep[j]);
      if (!can_mate(&pos, 1)) fail_msg("colour %d: reply %d escapes", c, j);
      xq_pos_unmake(&pos);
    }
    if (!(res.value > 0.5f)) fail_msg("colour %d: root value %f", c, res.value);
  }
}

static void test_losing_side_value(void **state) {
  (void)state;
  /* Black to move, Red threatens mate it cannot stop: value must be negative for Black */
  xq_pos_t pos;
  xq_mcts_result_t res;
  search("4k4/9/9/9/9/9/9/9/1R7/R2K5 w - - 0 1", 6000, 3, 0.0f, &res, &pos);
  xq_pos_make(&pos, res.best);
  xq_mcts_result_t r2;
  xq_evaluator_t *ev;
  xq_mcts_t *s = uniform_search_new(&ev, 8, 1 << 16, 0.0f, 1);
  xq_mcts_limits_t lim = {.nodes = 2000};
  assert_int_equal(xq_mcts_search(s, &pos, &lim, &r2), 0);
  if (!(r2.value < -0.5f)) fail_msg("mated side value %f", r2.value);
  xq_mcts_free(&s);
  xq_evaluator_free(&ev);
}

static void test_visits_sum(void **state) {
  (void)state;
  xq_pos_t pos;
  xq_mcts_result_t res;
  search(XQ_START_FEN, 500, 5, 0.25f, &res, &pos);
  assert_int_equal(res.simulations, 500);
  xq_move_t legal[XQ_MAX_MOVES];
  assert_int_equal(res.nmoves, xq_gen_legal(&pos, legal));
  int64_t sum = 0;
  for (int i = 0; i < res.nmoves; i++) {
    assert_true(xq_move_is_legal(&pos, res.moves[i]));
    sum += res.visits[i];
  }
  assert_int_equal(sum, res.simulations);
  assert_true(res.pv_len >= 1);
  assert_int_equal(res.pv[0], res.best);
}

static void test_deterministic(void **state) {
  (void)state;
  xq_pos_t pos;
  xq_mcts_result_t a, b;
  search(XQ_START_FEN, 400, 42, 0.25f, &a, &pos);
  search(XQ_START_FEN, 400, 42, 0.25f, &b, &pos);
  assert_int_equal(a.nmoves, b.nmoves);
  assert_memory_equal(a.visits, b.visits, sizeof(int) * (size_t)a.nmoves);
  assert_int_equal(a.best, b.best);
}

static void test_tree_reuse(void **state) {
  (void)state;
  xq_evaluator_t *ev;
  xq_mcts_t *s = uniform_search_new(&ev, 8, 1 << 16, 0.0f, 9);
  xq_pos_t pos;
  th_parse(&pos, XQ_START_FEN);
  xq_mcts_result_t res;
  xq_mcts_limits_t lim = {.nodes = 600};
  assert_int_equal(xq_mcts_search(s, &pos, &lim, &res), 0);
  int nbest = 0;
  for (int i = 0; i < res.nmoves; i++)
    if (res.moves[i] == res.best) nbest = res.visits[i];
  assert_true(nbest > 1);
  xq_pos_make(&pos, res.best);
  lim.nodes = 1;
  assert_int_equal(xq_mcts_search(s, &pos, &lim, &res), 0);
  int64_t sum = 0;
  for (int i = 0; i < res.nmoves; i++) sum += res.visits[i];
  /* the kept subtree's visits (the child's own evaluation is not a child visit) + 1 */
  assert_int_equal(sum, nbest);
  /* The same position again: the search goes on in the same tree. */
  int64_t before = sum;
  lim.nodes = 50;
  assert_int_equal(xq_mcts_search(s, &pos, &lim, &res), 0);
  sum = 0;
  for (int i = 0; i < res.nmoves; i++) sum += res.visits[i];
  assert_int_equal(sum, before + 50);
  lim.nodes = 1;
  xq_mcts_clear(s);
  assert_int_equal(xq_mcts_search(s, &pos, &lim, &res), 0);
  sum = 0;
  for (int i = 0; i < res.nmoves; i++) sum += res.visits[i];
  assert_int_equal(sum, 1);
  xq_mcts_free(&s);
  xq_evaluator_free(&ev);
}

static void test_small_pool(void **state) {
  (void)state;
  xq_evaluator_t *ev;
  xq_mcts_t *s = uniform_search_new(&ev, 8, 300, 0.0f, 9);
  xq_pos_t pos;
  th_parse(&pos, XQ_START_FEN);
  xq_mcts_result_t res;
  xq_mcts_limits_t lim = {.nodes = 2000};
  assert_int_equal(xq_mcts_search(s, &pos, &lim, &res), 0);
  /* The pool cannot hold 2000 expansions: the search stops when full (test_mcts_pool.c). */
  assert_true(res.pool_full);
  assert_true(res.simulations > 0 && res.simulations < 2000);
  assert_true(xq_move_is_legal(&pos, res.best));
  /* finished positions are refused */
  th_parse(&pos, mate1[0]);
  th_play(&pos, "b7b9");
  assert_true(is_mated(&pos));
  assert_int_not_equal(xq_mcts_search(s, &pos, &lim, &res), 0);
  xq_mcts_free(&s);
  xq_evaluator_free(&ev);
}

/* Most of the side to move's moves allow a mate in one; a few do not. The first two are
 * stalemated by it, the last two checkmated. */
static const char *threat[] = {"4k4/9/9/9/9/9/9/R6r1/8r/5K3 w - - 0 1",
                               "5k3/8R/r6R1/9/9/9/9/9/9/4K4 b - - 0 1",
                               "3k5/4a4/9/9/9/9/9/7r1/8r/R3K4 w - - 0 1",
                               "r3k4/8R/7R1/9/9/9/9/9/4A4/3K5 b - - 0 1"};

/* The mate probe: a reply that mates (or stalemates) is seen when the move allowing it
 * is first visited, so a short search over a uniform evaluator parries the threat and
 * spends its visits on the safe moves. Without the probe it plays a losing move. */
static void test_mate_probe(void **state) {
  (void)state;
  xq_mcts_config_t cfg;
  xq_mcts_config_default(&cfg);
  assert_false(cfg.mate_probe); /* off unless asked for */
  cfg.mate_probe = true;
  cfg.node_budget = 1 << 16;
  for (int c = 0; c < 4; c++) {
    xq_pos_t pos;
    th_parse(&pos, threat[c]);
    assert_false(can_mate(&pos, 1));
    xq_move_t mv[XQ_MAX_MOVES];
    int n = xq_gen_legal(&pos, mv), nsafe = 0;
    bool safe[XQ_MAX_MOVES];
    for (int i = 0; i < n; i++) {
      xq_pos_make(&pos, mv[i]);
      safe[i] = !can_mate(&pos, 1);
      xq_pos_unmake(&pos);
      nsafe += safe[i];
    }
    if (!(nsafe > 0 && 4 * nsafe < n)) fail_msg("colour %d: %d safe of %d", c, nsafe, n);
    xq_evaluator_t *ev;
    assert_int_equal(xq_evaluator_uniform_new(&ev, 8), 0);
    xq_mcts_t *s;
    xq_errbuf_t eb = {{0}};
    assert_int_equal(xq_mcts_new(&s, &cfg, ev, 4, &eb), 0);
    xq_mcts_limits_t lim = {.nodes = 200};
    xq_mcts_result_t res;
    assert_int_equal(xq_mcts_search(s, &pos, &lim, &res), 0);
    int v_safe = 0, v_unsafe = 0;
    for (int i = 0; i < res.nmoves; i++) {
      int k = 0;
      while (k < n && mv[k] != res.moves[i]) k++;
      assert_true(k < n);
      if (safe[k]) v_safe += res.visits[i];
      else v_unsafe += res.visits[i];
      if (res.moves[i] == res.best && !safe[k]) fail_msg("colour %d: best move allows mate", c);
    }
    /* a visit proves a move lost; PUCT comes back to it rarely */
    if (v_safe < 4 * v_unsafe)
      fail_msg("colour %d: %d visits to safe moves, %d to moves allowing mate", c, v_safe,
               v_unsafe);
    xq_mcts_free(&s);
    xq_evaluator_free(&ev);
  }
}

/* The network evaluator: priors sum to 1 over the legal moves only, values in [-1, 1],
 * for both colours; a bad path fails cleanly; a short search with it works. */
/* Several threads on one tree: the node limit holds exactly, the visits add up, mates are
 * found as by one thread, and a stop flag ends it. */
static void test_parallel(void **state) {
  (void)state;
  enum { LANES = 3 };
  xq_evaluator_t *evs[LANES];
  for (int i = 0; i < LANES; i++) assert_int_equal(xq_evaluator_uniform_new(&evs[i], 8), 0);
  xq_mcts_config_t cfg;
  xq_mcts_config_default(&cfg);
  cfg.node_budget = 1 << 18;
  xq_mcts_t *s;
  xq_errbuf_t eb = {{0}};
  assert_int_equal(xq_mcts_new_parallel(&s, &cfg, evs, 0, 1, &eb), XQ_EINVAL);
  assert_int_equal(xq_mcts_new_parallel(&s, &cfg, evs, XQ_MCTS_MAX_THREADS + 1, 1, &eb), XQ_EINVAL);
  assert_int_equal(xq_mcts_new_parallel(&s, &cfg, evs, LANES, 1, &eb), 0);
  xq_pos_t pos;
  xq_mcts_result_t res;
  for (int n = 1; n <= 1001; n += 250) {
    th_parse(&pos, XQ_START_FEN);
    xq_mcts_clear(s);
    xq_mcts_limits_t lim = {.nodes = n};
    assert_int_equal(xq_mcts_search(s, &pos, &lim, &res), 0);
    assert_int_equal(res.simulations, n);
    int64_t sum = 0;
    for (int i = 0; i < res.nmoves; i++) sum += res.visits[i];
    assert_int_equal(sum, n);
    assert_true(xq_move_is_legal(&pos, res.best));
  }
  for (int c = 0; c < 2; c++) {
    th_parse(&pos, mate1[c]);
    xq_mcts_clear(s);
    xq_mcts_limits_t lim = {.nodes = 800};
    assert_int_equal(xq_mcts_search(s, &pos, &lim, &res), 0);
    xq_pos_make(&pos, res.best);
    if (!is_mated(&pos)) fail_msg("colour %d: best move does not mate", c);
  }
  atomic_int stop = 1;
  xq_mcts_limits_t lim = {.stop = &stop};
  th_parse(&pos, XQ_START_FEN);
  assert_int_equal(xq_mcts_search(s, &pos, &lim, &res), 0);
  assert_int_equal(res.simulations, 0);
  xq_mcts_free(&s);
  for (int i = 0; i < LANES; i++) xq_evaluator_free(&evs[i]);
}

/* Our rules end these games (threefold repetition; no attacking pieces), yet each has moves:
 * the search gives one. Only a position without a legal move is refused. */
static void test_finished_by_rules_searched(void **state) {
  (void)state;
  xq_evaluator_t *ev;
  xq_mcts_t *s = uniform_search_new(&ev, 8, 1 << 16, 0.0f, 2);
  xq_pos_t pos;
  th_parse(&pos, XQ_START_FEN);
  th_play(&pos, "b0c2 b9c7 c2b0 c7b9 b0c2 b9c7 c2b0 c7b9 b0c2 b9c7 c2b0 c7b9");
  assert_int_equal(xq_adjudicate(&pos, 0).reason, XQ_REASON_REPETITION);
  xq_mcts_result_t res;
  xq_mcts_limits_t lim = {.nodes = 100};
  assert_int_equal(xq_mcts_search(s, &pos, &lim, &res), 0);
  assert_true(xq_move_is_legal(&pos, res.best));
  th_parse(&pos, "3k5/9/9/9/9/9/9/9/9/4K4 w - - 0 1");
  assert_int_equal(xq_adjudicate(&pos, 0).reason, XQ_REASON_NO_ATTACKERS);
  assert_int_equal(xq_mcts_search(s, &pos, &lim, &res), 0);
  assert_true(xq_move_is_legal(&pos, res.best));
  xq_mcts_free(&s);
  xq_evaluator_free(&ev);
}

static void test_net_evaluator(void **state) {
  (void)state;
  char path[128];
  snprintf(path, sizeof path, "%s/test_mcts_tiny_%ld.xqzn", XQZ_BINARY_DIR, (long)getpid());
  nn_arch_t arch;
  assert_int_equal(nn_arch_preset("tiny", &arch), 0);
  nn_model_t *m;
  xq_errbuf_t eb = {{0}};
  assert_int_equal(nn_model_new(&m, &arch, &eb), 0);
  nn_model_init(m, 3);
  nn_file_meta_t meta;
  memset(&meta, 0, sizeof meta);
  meta.net_id = 77;
  assert_int_equal(nn_file_save(path, m, &meta, &eb), 0);
  nn_model_free(&m);
  xq_evaluator_t *ev;
  assert_true(xq_evaluator_net_new(&ev, "/nonexistent/net.xqzn", 4, &eb) < 0);
  assert_null(ev);
  assert_int_equal(xq_evaluator_net_new(&ev, path, 4, &eb), 0);
  assert_true(ev->net_id == 77);
  xq_pos_t a, b;
  th_parse(&a, XQ_START_FEN);
  th_parse(&b, XQ_START_FEN);
  th_play(&b, "h2e2");
  xq_pos_t *ps[2] = {&a, &b};
  float *pri = malloc(2 * XQ_POLICY_SIZE * sizeof(float)), val[2];
  ev->eval(ev, ps, 2, pri, val);
  for (int i = 0; i < 2; i++) {
    uint8_t mask[XQ_POLICY_SIZE];
    nn_encode_legal(ps[i], mask, NULL, NULL);
    double sum = 0;
    for (int k = 0; k < XQ_POLICY_SIZE; k++) {
      float p = pri[i * XQ_POLICY_SIZE + k];
      if (!mask[k]) assert_true(p == 0.0f);
      sum += p;
    }
    assert_true(sum > 0.999 && sum < 1.001);
    assert_true(val[i] >= -1.0f && val[i] <= 1.0f);
  }
  free(pri);
  xq_mcts_config_t cfg;
  xq_mcts_config_default(&cfg);
  cfg.node_budget = 1 << 14;
  cfg.batch = 4;
  xq_mcts_t *s;
  assert_int_equal(xq_mcts_new(&s, &cfg, ev, 1, &eb), 0);
  xq_mcts_limits_t lim = {.nodes = 64};
  xq_mcts_result_t res;
  assert_int_equal(xq_mcts_search(s, &b, &lim, &res), 0);
  assert_true(xq_move_is_legal(&b, res.best));
  xq_mcts_free(&s);
  xq_evaluator_free(&ev);
  unlink(path);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_mate_in_one),     cmocka_unit_test(test_mate_in_two),
      cmocka_unit_test(test_losing_side_value), cmocka_unit_test(test_visits_sum),
      cmocka_unit_test(test_deterministic),   cmocka_unit_test(test_tree_reuse),
      cmocka_unit_test(test_small_pool),      cmocka_unit_test(test_mate_probe),
      cmocka_unit_test(test_net_evaluator),   cmocka_unit_test(test_parallel),
      cmocka_unit_test(test_finished_by_rules_searched),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
