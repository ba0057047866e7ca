/*
 * test_eval_cache.c: the evaluation cache behind the engine's Hash option
 * (search/eval_cache.h). A cached evaluator must answer exactly what the net answers
 * (priors and value, bit for bit) for every position, including positions that differ
 * from one another only in what the input planes read besides the board (the
 * no-capture counter, a repetition); a second look-up is a hit; a one-entry cache, where
 * every new position evicts the last, still answers right.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nn/nn_file.h"
#include "nn/nn_model.h"
#include "rules/policy_index.h"
#include "search/eval_cache.h"
#include "search/evaluator.h"
#include "test_helpers.h"

static char g_net[160];

static int setup(void **state) {
  (void)state;
  snprintf(g_net, sizeof g_net, "%s/test_eval_cache_%ld.xqzn", XQZ_BINARY_DIR, (long)getpid());
  nn_arch_t arch;
  nn_model_t *m;
  xq_errbuf_t eb = {{0}};
  if (nn_arch_preset("tiny", &arch) || nn_model_new(&m, &arch, &eb)) return -1;
  nn_model_init(m, 11);
  nn_file_meta_t meta;
  memset(&meta, 0, sizeof meta);
  meta.net_id = 5;
  int rc = nn_file_save(g_net, m, &meta, &eb);
  nn_model_free(&m);
  return rc;
}

static int teardown(void **state) {
  (void)state;
  unlink(g_net);
  return 0;
}

enum { NPOS = 5 };

/* Positions whose planes differ: the start, after a move, the start again after a knight
 * dance (a repetition), the same board with a no-capture count, and a sparse ending. */
static void make_positions(xq_pos_t *pos) {
  th_parse(&pos[0], XQ_START_FEN);
  th_parse(&pos[1], XQ_START_FEN);
  th_play(&pos[1], "h2e2");
  th_parse(&pos[2], XQ_START_FEN);
  th_play(&pos[2], "b0c2 b9c7 c2b0 c7b9");
  th_parse(&pos[3], "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 40 30");
  th_parse(&pos[4], "3k5/9/9/9/4p4/9/9/9/4R4/4K4 b - - 0 1");
}

/* Evaluates pos[0..n) with ref and with cached and compares: within tol (0 = exactly). */
static void expect_same(xq_evaluator_t *ref, xq_evaluator_t *cached, xq_pos_t *pos, int n,
                        float tol) {
  xq_pos_t *ptrs[NPOS];
  for (int i = 0; i < n; i++) ptrs[i] = &pos[i];
  float *pa = malloc((size_t)n * XQ_POLICY_SIZE * sizeof(float));
  float *pb = malloc((size_t)n * XQ_POLICY_SIZE * sizeof(float));
  float va[NPOS], vb[NPOS];
  ref->eval(ref, ptrs, n, pa, va);
  for (size_t i = 0; i < (size_t)n * XQ_POLICY_SIZE; i++) pb[i] = 0.5f; /* stale garbage */
  cached->eval(cached, ptrs, n, pb, vb);
  for (int i = 0; i < n; i++) {
    if (fabsf(va[i] - vb[i]) > tol) fail_msg("position %d: value %.9g cached %.9g", i, va[i], vb[i]);
    for (int k = 0; k < XQ_POLICY_SIZE; k++) {
      float x = pa[(size_t)i * XQ_POLICY_SIZE + k], y = pb[(size_t)i * XQ_POLICY_SIZE + k];
      if (fabsf(x - y) > tol || ((x == 0.0f) != (y == 0.0f))) fail_msg("position %d, policy %d: %.9g cached %.9g", i, k, x, y);
    }
  }
  free(pa);
  free(pb);
}

static void test_exact_answers(void **state) {
  (void)state;
  xq_errbuf_t eb = {{0}};
  xq_evaluator_t *ref, *net, *cached;
  assert_int_equal(xq_evaluator_net_new(&ref, g_net, NPOS, &eb), 0);
  assert_int_equal(xq_evaluator_net_new(&net, g_net, NPOS, &eb), 0);
  assert_int_equal(xq_eval_cache_new(&cached, net, 1 << 20, &eb), 0);
  assert_true(cached->net_id == 5);
  assert_int_equal(cached->max_batch, NPOS);
  xq_pos_t *pos = malloc(NPOS * sizeof *pos);
  make_positions(pos);
  /* The repeated start and the counted one are different inputs for the net. */
  assert_true(pos[2].key == pos[0].key);
  xq_eval_cache_stats_t st;
  expect_same(ref, cached, pos, NPOS, 1e-5f);
  xq_eval_cache_stats(cached, &st);
  assert_int_equal(st.lookups, NPOS);
  assert_int_equal(st.hits, 0);
  assert_int_equal(st.used, NPOS);
  assert_int_equal(st.capacity, (1 << 20) / (int64_t)xq_eval_cache_entry_size());
  /* The hits return exactly what the misses stored: a second cache on the same net, asked
   * once, is the reference. */
  xq_evaluator_t *net2, *first;
  assert_int_equal(xq_evaluator_net_new(&net2, g_net, NPOS, &eb), 0);
  assert_int_equal(xq_eval_cache_new(&first, net2, 1 << 20, &eb), 0);
  expect_same(first, cached, pos, NPOS, 1e-5f);
  expect_same(cached, cached, pos, NPOS, 0.0f);
  xq_eval_cache_stats(cached, &st);
  assert_int_equal(st.hits, 3 * NPOS);
  /* One at a time too, out of order. */
  expect_same(ref, cached, &pos[3], 1, 1e-5f);
  expect_same(ref, cached, &pos[0], 2, 1e-5f);
  xq_evaluator_free(&first);
  free(pos);
  xq_evaluator_free(&cached);
  assert_null(cached);
  xq_evaluator_free(&ref);
}

static void test_one_entry(void **state) {
  (void)state;
  xq_errbuf_t eb = {{0}};
  xq_evaluator_t *ref, *net, *cached;
  assert_int_equal(xq_evaluator_net_new(&ref, g_net, NPOS, &eb), 0);
  assert_int_equal(xq_evaluator_net_new(&net, g_net, NPOS, &eb), 0);
  assert_int_equal(xq_eval_cache_new(&cached, net, 1, &eb), 0); /* rounds up to one entry */
  xq_pos_t *pos = malloc(NPOS * sizeof *pos);
  make_positions(pos);
  for (int round = 0; round < 3; round++)
    for (int i = 0; i < NPOS; i++) expect_same(ref, cached, &pos[i], 1, 1e-5f);
  xq_eval_cache_stats_t st;
  xq_eval_cache_stats(cached, &st);
  assert_int_equal(st.capacity, 1);
  assert_int_equal(st.used, 1);
  expect_same(ref, cached, pos, NPOS, 1e-5f); /* a batch that evicts within itself */
  free(pos);
  xq_evaluator_free(&cached);
  xq_evaluator_free(&ref);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_exact_answers),
      cmocka_unit_test(test_one_entry),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
