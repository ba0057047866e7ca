/*
 * test_mcts_pool.c: the search tree's node pool never degrades the search (issue 52):
 *   - a search asked for more simulations than the pool holds stops when one more
 *     expansion might not fit, says so (pool_full), and answers exactly what a search
 *     stopped just before, by a node limit, answers (same move, same visits);
 *   - xq_mcts_nodes_for_bytes sizes a pool from memory;
 *   - reusing the tree after a move (the in-place compaction) keeps the subtree of the
 *     move played, visits and all, and frees the rest, so the full pool has room again;
 *   - searchmoves: only the moves given are searched and played.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "rules/fen.h"
#include "rules/movegen.h"
#include "rules/notation.h"
#include "search/evaluator.h"
#include "search/mcts.h"
#include "test_helpers.h"

/* A search over a uniform evaluator with a pool of node_budget nodes. */
static xq_mcts_t *search_new(xq_evaluator_t **ev, int node_budget) {
  assert_int_equal(xq_evaluator_uniform_new(ev, 8), 0);
  xq_mcts_config_t cfg;
  xq_mcts_config_default(&cfg);
  cfg.node_budget = node_budget;
  xq_mcts_t *s;
  xq_errbuf_t eb = {{0}};
  if (xq_mcts_new(&s, &cfg, *ev, 3, &eb)) fail_msg("xq_mcts_new: %s", eb.msg);
  return s;
}

/* One search of pos from an empty tree with a node limit. */
static void search_once(int node_budget, const char *fen, int64_t nodes, xq_mcts_result_t *res) {
  xq_evaluator_t *ev;
  xq_mcts_t *s = search_new(&ev, node_budget);
  xq_pos_t pos;
  th_parse(&pos, fen);
  xq_mcts_limits_t lim = {.nodes = nodes};
  assert_int_equal(xq_mcts_search(s, &pos, &lim, res), 0);
  xq_mcts_free(&s);
  xq_evaluator_free(&ev);
}

static void test_full_pool_stops_with_the_answer_before(void **state) {
  (void)state;
  xq_mcts_result_t *full = calloc(1, sizeof *full), *before = calloc(1, sizeof *before);
  assert_non_null(full);
  assert_non_null(before);
  const int budget = 20000;
  search_once(budget, XQ_START_FEN, 1000000, full);
  assert_true(full->pool_full);
  assert_true(full->simulations > 50);
  assert_true(full->simulations < 1000000);
  assert_true(full->nodes_used <= full->node_cap);
  assert_true(full->nodes_used + XQ_MAX_MOVES > full->node_cap);
  /* The same search stopped by a node limit at the same count: the same answer. */
  search_once(budget, XQ_START_FEN, full->simulations, before);
  assert_false(before->pool_full);
  assert_int_equal(before->simulations, full->simulations);
  char a[8], b[8];
  xq_move_print(full->best, a);
  xq_move_print(before->best, b);
  assert_string_equal(a, b);
  assert_int_equal(full->nmoves, before->nmoves);
  for (int i = 0; i < full->nmoves; i++) assert_int_equal(full->visits[i], before->visits[i]);
  assert_int_equal(full->pv_len, before->pv_len);
  free(full);
  free(before);
}

static void test_nodes_for_bytes(void **state) {
  (void)state;
  assert_int_equal(xq_mcts_nodes_for_bytes(0), XQ_MAX_MOVES + 1);
  int n1 = xq_mcts_nodes_for_bytes((size_t)1 << 20), n8 = xq_mcts_nodes_for_bytes((size_t)8 << 20);
  assert_true(n1 > 20000 && n1 < 60000); /* about 25 bytes a node */
  assert_true(n8 >= 8 * n1 - 8 && n8 <= 8 * n1 + 8);
}

static void test_reuse_frees_the_rest(void **state) {
  (void)state;
  xq_evaluator_t *ev;
  xq_mcts_t *s = search_new(&ev, 20000);
  xq_pos_t pos;
  th_parse(&pos, XQ_START_FEN);
  xq_mcts_result_t *r = calloc(1, sizeof *r);
  assert_non_null(r);
  xq_mcts_limits_t lim = {.nodes = 1000000};
  assert_int_equal(xq_mcts_search(s, &pos, &lim, r), 0);
  assert_true(r->pool_full);
  int64_t used_full = r->nodes_used;
  /* Play the best move and its best reply: the subtree two plies down is kept. */
  xq_move_t m1 = r->pv[0], m2 = r->pv[1];
  assert_true(r->pv_len >= 3);
  xq_pos_make(&pos, m1);
  xq_pos_make(&pos, m2);
  xq_move_t m3 = r->pv[2];
  /* A search of 0 new simulations shows the kept tree: the stop flag is already set. */
  atomic_int stop = 1;
  xq_mcts_limits_t look = {.stop = &stop};
  assert_int_equal(xq_mcts_search(s, &pos, &look, r), 0);
  assert_int_equal(r->simulations, 0);
  assert_false(r->pool_full);
  assert_true(r->nodes_used < used_full);
  assert_int_equal(r->best, m3); /* the line the first search found goes on */
  int kept = 0;
  for (int i = 0; i < r->nmoves; i++) kept += r->visits[i];
  assert_true(kept > 0);
  /* And it searches on in the room that was freed. */
  lim.nodes = 200;
  assert_int_equal(xq_mcts_search(s, &pos, &lim, r), 0);
  assert_int_equal(r->simulations, 200);
  int after = 0;
  for (int i = 0; i < r->nmoves; i++) after += r->visits[i];
  assert_int_equal(after, kept + 200);
  free(r);
  xq_mcts_free(&s);
  xq_evaluator_free(&ev);
}

static void test_searchmoves(void **state) {
  (void)state;
  xq_evaluator_t *ev;
  xq_mcts_t *s = search_new(&ev, 1 << 16);
  xq_pos_t pos;
  th_parse(&pos, XQ_START_FEN);
  xq_move_t only[2];
  xq_errbuf_t eb = {{0}};
  assert_int_equal(xq_move_parse("a3a4", &only[0], &eb), 0);
  assert_int_equal(xq_move_parse("i0i1", &only[1], &eb), 0);
  xq_mcts_result_t *r = calloc(1, sizeof *r);
  assert_non_null(r);
  xq_mcts_limits_t lim = {.nodes = 300, .searchmoves = only, .nsearchmoves = 2};
  assert_int_equal(xq_mcts_search(s, &pos, &lim, r), 0);
  assert_true(r->best == only[0] || r->best == only[1]);
  assert_int_equal(r->nmoves, 2);
  assert_int_equal(r->visits[0] + r->visits[1], 300);
  /* Without them, the same tree searches every move again. */
  xq_mcts_limits_t all = {.nodes = 100};
  assert_int_equal(xq_mcts_search(s, &pos, &all, r), 0);
  assert_true(r->nmoves > 40);
  free(r);
  xq_mcts_free(&s);
  xq_evaluator_free(&ev);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_full_pool_stops_with_the_answer_before),
      cmocka_unit_test(test_nodes_for_bytes),
      cmocka_unit_test(test_reuse_frees_the_rest),
      cmocka_unit_test(test_searchmoves),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
