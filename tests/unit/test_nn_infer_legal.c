/*
 * test_nn_infer_legal.c: the policy at the legal moves only (nn_fc_rows.h,
 * nn_infer_legal in nn_forward.h) and the search's evaluator that uses it.
 *
 * nn_fc_rows equals a double-precision reference at every listed row, for input lengths
 * around the vector width and the policy FC's 180, rows in any order and repeated; a
 * row's value is the same bits whichever rows come with it. nn_infer_legal gives
 * nn_infer's masked priors within rounding, exact zeros off the listed moves, a row of
 * zeros for a position with none (or whose only move's logit is -inf), and nn_infer's
 * values bit for bit, for the tiny net, the 6x64 default and the attack-plane input. The
 * network evaluator's priors on positions from real games equal the whole-policy path's
 * (xq_evaluator_whole_policy) within rounding, and, given the legal lists as a tree's
 * leaves give them (xq_evaluator_eval_listed), its own path's bit for bit.
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

#include "nn/encode.h"
#include "nn/nn_fc_rows.h"
#include "nn/nn_file.h"
#include "nn/nn_forward.h"
#include "nn/nn_model.h"
#include "nn_test_util.h"
#include "rules/movegen.h"
#include "rules/policy_index.h"
#include "search/evaluator.h"

/* A policy's tolerance: priors are at most 1, summed in another order. */
static const double PRIOR_TOL = 2e-6;

static void test_fc_rows_reference(void **state) {
  (void)state;
  xq_rng_t r;
  xq_rng_seed(&r, 41);
  const int ins[] = {1, 3, 7, 8, 9, 15, 16, 17, 31, 180, 181, 360};
  const int out = 97;
  for (size_t t = 0; t < sizeof ins / sizeof ins[0]; t++) {
    int in = ins[t];
    float *x = malloc((size_t)in * 4), *w = malloc((size_t)out * in * 4), b[97];
    tu_fill(x, (size_t)in, &r, 1.0f);
    tu_fill(w, (size_t)out * in, &r, 1.0f);
    tu_fill(b, (size_t)out, &r, 1.0f);
    for (int nrows = 0; nrows <= 13; nrows++) {
      int rows[13];
      float y[13], alone;
      for (int j = 0; j < nrows; j++) rows[j] = (int)xq_rng_below(&r, out); /* repeats too */
      for (int with_b = 0; with_b < 2; with_b++) {
        nn_fc_rows(y, x, w, with_b ? b : NULL, in, rows, nrows);
        for (int j = 0; j < nrows; j++) {
          const float *wr = w + (size_t)rows[j] * in;
          double want = with_b ? b[rows[j]] : 0.0, mag = fabs(want);
          for (int i = 0; i < in; i++) {
            want += (double)x[i] * wr[i];
            mag += fabs((double)x[i] * wr[i]);
          }
          if (fabs(y[j] - want) > 1e-6 * (1.0 + mag))
            fail_msg("in %d, %d rows, row %d (%d): %.9g, want %.9g", in, nrows, j, rows[j],
                     y[j], want);
          /* The same bits when asked for alone. */
          nn_fc_rows(&alone, x, w, with_b ? b : NULL, in, &rows[j], 1);
          if (memcmp(&alone, &y[j], sizeof alone))
            fail_msg("in %d: row %d alone %.9g, among %d rows %.9g", in, rows[j], alone,
                     nrows, y[j]);
        }
      }
    }
    free(x), free(w);
  }
}

/* The mask's indices in a shuffled order, as a search's move generator lists them. */
static int mask_to_list(const uint8_t *mk, int *list, xq_rng_t *r) {
  int k = 0;
  for (int i = 0; i < NN_POLICY_SIZE; i++)
    if (mk[i]) list[k++] = i;
  for (int i = k - 1; i > 0; i--) {
    int j = (int)xq_rng_below(r, (uint64_t)i + 1), t = list[i];
    list[i] = list[j], list[j] = t;
  }
  return k;
}

static void run_infer_legal_matches(const char *size) {
  nn_arch_t a;
  nn_model_t *m;
  assert_int_equal(nn_arch_preset(size, &a), 0);
  assert_int_equal(nn_model_new(&m, &a, NULL), 0);
  nn_model_init(m, 17);
  xq_rng_t r;
  xq_rng_seed(&r, 18);
  /* Larger logits than a fresh net's, so the softmax is far from uniform. */
  for (int i = 0; i < NN_POLICY_SIZE; i++) m->p.pol_fc_b[i] = (float)(3.0 * xq_rng_normal(&r));
  const int n = 6;
  tu_batch_t tb;
  tu_batch_make_planes(&tb, n, nn_arch_input_planes(&a), 37, 3, &r);
  /* Position 2 has one legal move, position 4 none, position 5 one whose logit is -inf
   * (a row of zeros, as the masked softmax gives). */
  m->p.pol_fc_b[2085] = -INFINITY;
  nn_model_fold(m);
  memset(tb.mask + 2 * NN_POLICY_SIZE, 0, NN_POLICY_SIZE);
  tb.mask[2 * NN_POLICY_SIZE + 2084] = 1;
  memset(tb.mask + 4 * NN_POLICY_SIZE, 0, NN_POLICY_SIZE);
  memset(tb.mask + 5 * NN_POLICY_SIZE, 0, NN_POLICY_SIZE);
  tb.mask[5 * NN_POLICY_SIZE + 2085] = 1;
  int *legal = malloc((size_t)n * NN_POLICY_SIZE * sizeof(int)), nlegal[6];
  const int *rows[6];
  for (int s = 0; s < n; s++) {
    int *ls = legal + (size_t)s * NN_POLICY_SIZE;
    rows[s] = ls;
    nlegal[s] = mask_to_list(tb.mask + (size_t)s * NN_POLICY_SIZE, ls, &r);
  }
  nn_plan_t *p1, *p2;
  assert_int_equal(nn_plan_new(&p1, &a, n, false, NULL), 0);
  assert_int_equal(nn_plan_new(&p2, &a, n, false, NULL), 0);
  size_t len = (size_t)n * NN_POLICY_SIZE;
  float *pd = malloc(len * 4), *pl = malloc(len * 4), vd[6], vl[6];
  for (size_t i = 0; i < len; i++) pl[i] = NAN; /* every entry must be written */
  nn_infer(pd, vd, p1, m, tb.planes, tb.mask, n);
  nn_infer_legal(pl, vl, p2, m, tb.planes, rows, nlegal, n);
  for (int s = 0; s < n; s++) {
    if (memcmp(&vd[s], &vl[s], sizeof vd[s]))
      fail_msg("%s: value %d %.9g, whole-policy pass %.9g", size, s, vl[s], vd[s]);
    double sum = 0;
    for (int i = 0; i < NN_POLICY_SIZE; i++) {
      size_t at = (size_t)s * NN_POLICY_SIZE + i;
      if (!tb.mask[at] && pl[at] != 0.0f)
        fail_msg("%s: position %d, illegal index %d has prior %g", size, s, i, pl[at]);
      if (!(fabs(pl[at] - pd[at]) <= PRIOR_TOL)) /* NaN fails too */
        fail_msg("%s: position %d, index %d: %.9g, masked softmax %.9g", size, s, i, pl[at],
                 pd[at]);
      sum += pl[at];
    }
    double want = s == 4 || s == 5 ? 0.0 : 1.0;
    if (!(fabs(sum - want) <= 1e-5))
      fail_msg("%s: position %d sums to %.9g, want %g", size, s, sum, want);
    if (s == 2 && pl[2 * NN_POLICY_SIZE + 2084] != 1.0f)
      fail_msg("%s: the only move's prior is %.9g, want 1", size, pl[2 * NN_POLICY_SIZE + 2084]);
  }
  free(pd), free(pl), free(legal);
  nn_plan_free(&p1);
  nn_plan_free(&p2);
  tu_batch_free(&tb);
  nn_model_free(&m);
}

/* The tiny net (a 180-wide policy FC), the 6x64 default and the attack-plane input. */
static void test_infer_legal_tiny(void **state) {
  (void)state;
  run_infer_legal_matches("tiny");
}

static void test_infer_legal_default(void **state) {
  (void)state;
  run_infer_legal_matches("default");
}

static void test_infer_legal_attack(void **state) {
  (void)state;
  run_infer_legal_matches("2x16a");
}

/* The shipped net's evaluator on positions from a random game: the priors from the
 * legal moves' logits alone equal the whole policy's masked softmax. */
static void test_evaluator_paths_agree(void **state) {
  (void)state;
  const char *net = XQZ_SOURCE_DIR "/nets/xqzero.xqzn";
  enum { NPOS = 24 };
  static xq_pos_t pos[NPOS];
  xq_pos_t *pp[NPOS];
  xq_rng_t r;
  xq_rng_seed(&r, 5);
  xq_pos_t cur;
  xq_pos_startpos(&cur);
  for (int i = 0; i < NPOS; i++) {
    pos[i] = cur;
    pp[i] = &pos[i];
    xq_move_t mv[XQ_MAX_MOVES];
    int k = xq_gen_legal(&cur, mv);
    if (k == 0) xq_pos_startpos(&cur);
    else xq_pos_make(&cur, mv[xq_rng_below(&r, (uint64_t)k)]);
  }
  xq_errbuf_t eb = {{0}};
  xq_evaluator_t *legal_ev, *whole_ev;
  assert_int_equal(xq_evaluator_net_new(&legal_ev, net, NPOS, &eb), 0);
  xq_evaluator_whole_policy(true);
  assert_int_equal(xq_evaluator_net_new(&whole_ev, net, NPOS, &eb), 0);
  size_t len = (size_t)NPOS * XQ_POLICY_SIZE;
  float *pw = malloc(len * 4), *pl = malloc(len * 4), vw[NPOS], vl[NPOS];
  for (size_t i = 0; i < len; i++) pl[i] = NAN; /* every entry must be written */
  whole_ev->eval(whole_ev, pp, NPOS, pw, vw);
  xq_evaluator_whole_policy(false);
  legal_ev->eval(legal_ev, pp, NPOS, pl, vl);
  int nonzero = 0;
  for (size_t i = 0; i < len; i++) {
    if (!(fabs(pl[i] - pw[i]) <= PRIOR_TOL))
      fail_msg("position %zu, index %zu: %.9g, whole policy %.9g", i / XQ_POLICY_SIZE,
               i % XQ_POLICY_SIZE, pl[i], pw[i]);
    nonzero += pl[i] != 0.0f;
  }
  for (int i = 0; i < NPOS; i++) assert_memory_equal(&vl[i], &vw[i], sizeof vl[i]);
  assert_true(nonzero > NPOS * 10); /* real positions: dozens of legal moves each */
  /* With the lists given, as a tree's leaves give them: the same bits; position 3 listed
   * with no moves (a leaf evaluated without expanding) gets a row of zeros. */
  static int idx[NPOS][XQ_MAX_MOVES];
  const int *rows[NPOS];
  int cnt[NPOS];
  for (int i = 0; i < NPOS; i++) {
    cnt[i] = i == 3 ? 0 : nn_encode_legal(pp[i], NULL, idx[i], NULL);
    rows[i] = idx[i];
  }
  float *px = malloc(len * 4), vx[NPOS];
  assert_non_null(legal_ev->eval_listed);
  xq_evaluator_eval_listed(legal_ev, pp, NPOS, rows, cnt, px, vx);
  for (int i = 0; i < NPOS; i++) {
    const float *want = pl + (size_t)i * XQ_POLICY_SIZE, *got = px + (size_t)i * XQ_POLICY_SIZE;
    for (int k = 0; k < XQ_POLICY_SIZE; k++)
      if (i == 3 ? got[k] != 0.0f : memcmp(&got[k], &want[k], sizeof got[k]))
        fail_msg("listed: position %d, index %d: %.9g, unlisted %.9g", i, k, got[k], want[k]);
    assert_memory_equal(&vx[i], &vl[i], sizeof vx[i]);
  }
  free(pw), free(pl), free(px);
  xq_evaluator_free(&legal_ev);
  xq_evaluator_free(&whole_ev);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_fc_rows_reference),
      cmocka_unit_test(test_infer_legal_tiny),
      cmocka_unit_test(test_infer_legal_default),
      cmocka_unit_test(test_infer_legal_attack),
      cmocka_unit_test(test_evaluator_paths_agree),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
