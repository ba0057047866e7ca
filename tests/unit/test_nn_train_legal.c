/*
 * test_nn_train_legal.c: training with the policy FC at the legal moves only
 * (nn_loss_cfg_t's legal_policy; nn_fc_rows_backward in nn_fc_rows.h).
 *
 * nn_fc_rows_backward equals a double-precision reference (rows in any order and
 * repeated; rows whose gradient is zero change nothing). A training step's loss, logits
 * and every gradient with legal_policy equal the whole FC's within rounding, for the tiny
 * net and a pooling net; the logits off the legal moves are -inf; a batch without a mask
 * takes the whole FC. Through a two-thread train pool, one step with it and one without
 * leave the same weights within rounding, and with it the pool reads no illegal row of
 * the FC (a NaN row stays out of the tower's weights; the whole FC spreads it).
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

#include "nn/nn_fc_rows.h"
#include "nn/nn_optim.h"
#include "nn/nn_plan.h"
#include "nn/nn_train_pool.h"
#include "nn_test_util.h"

static void test_fc_rows_backward_reference(void **state) {
  (void)state;
  xq_rng_t r;
  xq_rng_seed(&r, 61);
  const int ins[] = {1, 7, 8, 9, 17, 180};
  enum { OUT = 53, NROWS = 11 };
  for (size_t t = 0; t < sizeof ins / sizeof ins[0]; t++) {
    int in = ins[t];
    size_t wlen = (size_t)OUT * in;
    float *x = malloc((size_t)in * 4), *w = malloc(wlen * 4), *dx = malloc((size_t)in * 4);
    float *dw = malloc(wlen * 4), db[OUT], dy[NROWS];
    double *rdx = calloc((size_t)in, 8), *rdw = calloc(wlen, 8), rdb[OUT] = {0};
    int rows[NROWS];
    tu_fill(x, (size_t)in, &r, 1.0f);
    tu_fill(w, wlen, &r, 1.0f);
    tu_fill(dx, (size_t)in, &r, 1.0f); /* accumulated into: start from something */
    tu_fill(dw, wlen, &r, 1.0f);
    tu_fill(db, OUT, &r, 1.0f);
    tu_fill(dy, NROWS, &r, 1.0f);
    dy[3] = 0.0f; /* skipped, and must change nothing */
    for (int j = 0; j < NROWS; j++) rows[j] = (int)xq_rng_below(&r, OUT); /* repeats too */
    rows[5] = rows[2];
    for (int i = 0; i < in; i++) rdx[i] = dx[i];
    for (size_t i = 0; i < wlen; i++) rdw[i] = dw[i];
    for (int o = 0; o < OUT; o++) rdb[o] = db[o];
    for (int j = 0; j < NROWS; j++) {
      size_t row = (size_t)rows[j];
      rdb[row] += dy[j];
      for (int i = 0; i < in; i++) {
        rdx[i] += (double)dy[j] * w[row * in + i];
        rdw[row * in + i] += (double)dy[j] * x[i];
      }
    }
    nn_fc_rows_backward(dx, dw, db, dy, x, w, in, rows, NROWS);
    for (int i = 0; i < in; i++)
      if (fabs(dx[i] - rdx[i]) > 1e-5 * (1 + fabs(rdx[i])))
        fail_msg("in %d: dx[%d] %.9g, want %.9g", in, i, dx[i], rdx[i]);
    for (size_t i = 0; i < wlen; i++)
      if (fabs(dw[i] - rdw[i]) > 1e-5 * (1 + fabs(rdw[i])))
        fail_msg("in %d: dw[%zu] %.9g, want %.9g", in, i, dw[i], rdw[i]);
    for (int o = 0; o < OUT; o++)
      if (fabs(db[o] - rdb[o]) > 1e-5 * (1 + fabs(rdb[o])))
        fail_msg("in %d: db[%d] %.9g, want %.9g", in, o, db[o], rdb[o]);
    free(x), free(w), free(dx), free(dw), free(rdx), free(rdw);
  }
}

/* |a - b| within tol of the largest |a| (a gradient's scale is its tensor's, and the
 * whole array mixes tensors: judged per array, so the bound is loose for small tensors
 * but still catches a missing or doubled term). */
static void check_close(const char *what, const float *a, const float *b, size_t n,
                        double tol) {
  double scale = 0;
  for (size_t i = 0; i < n; i++)
    if (fabs(a[i]) > scale) scale = fabs(a[i]);
  for (size_t i = 0; i < n; i++)
    if (!(fabs((double)a[i] - b[i]) <= tol * scale)) /* NaN fails too */
      fail_msg("%s[%zu]: %.9g against %.9g (scale %.3g)", what, i, b[i], a[i], scale);
}

static void run_gradients_match(const char *size) {
  nn_arch_t a;
  nn_model_t *m;
  assert_int_equal(nn_arch_preset(size, &a), 0);
  assert_int_equal(nn_model_new(&m, &a, NULL), 0);
  nn_model_init(m, 31);
  xq_rng_t r;
  xq_rng_seed(&r, 32);
  tu_fill_block_biases(m, &r, 0.1f);
  const int n = 12;
  tu_batch_t tb;
  tu_batch_make_planes(&tb, n, nn_arch_input_planes(&a), 37, 5, &r);
  nn_plan_t *p;
  assert_int_equal(nn_plan_new(&p, &a, n, true, NULL), 0);
  nn_loss_cfg_t cfg = {.policy_weight = 1, .value_weight = 1, .l2 = 1e-4f};
  size_t len = (size_t)n * NN_POLICY_SIZE;
  float *g_whole = malloc(m->nparams * 4), *lg_whole = malloc(len * 4);
  nn_loss_t whole, legal;
  nn_compute_gradients(m, p, &tb.b, &cfg, &whole);
  memcpy(g_whole, m->grads, m->nparams * 4);
  memcpy(lg_whole, p->logits, len * 4);
  cfg.legal_policy = true;
  nn_compute_gradients(m, p, &tb.b, &cfg, &legal);
  assert_null(p->policy_mask); /* the batch's mask does not outlive the step */
  if (!(fabs(legal.policy - whole.policy) <= 1e-6 * whole.policy) ||
      legal.value != whole.value || legal.l2 != whole.l2)
    fail_msg("%s: losses %.9g %.9g %.9g, whole FC %.9g %.9g %.9g", size, legal.policy,
             legal.value, legal.l2, whole.policy, whole.value, whole.l2);
  for (size_t i = 0; i < len; i++) {
    if (tb.mask[i]) {
      if (!(fabs(p->logits[i] - lg_whole[i]) <= 1e-5 * (1 + fabs(lg_whole[i]))))
        fail_msg("%s: logit %zu %.9g, whole FC %.9g", size, i, p->logits[i], lg_whole[i]);
    } else if (p->logits[i] != -INFINITY) {
      fail_msg("%s: illegal logit %zu is %g, want -inf", size, i, p->logits[i]);
    }
  }
  check_close(size, g_whole, m->grads, m->nparams, 1e-5);
  /* Without a mask the option changes nothing: the whole FC, bit for bit. */
  tb.b.mask = NULL;
  cfg.legal_policy = false;
  nn_compute_gradients(m, p, &tb.b, &cfg, &whole);
  memcpy(g_whole, m->grads, m->nparams * 4);
  cfg.legal_policy = true;
  nn_compute_gradients(m, p, &tb.b, &cfg, &legal);
  if (memcmp(g_whole, m->grads, m->nparams * 4))
    fail_msg("%s: without a mask, legal_policy changed the gradients", size);
  free(g_whole), free(lg_whole);
  nn_plan_free(&p);
  tu_batch_free(&tb);
  nn_model_free(&m);
}

static void test_gradients_tiny(void **state) {
  (void)state;
  run_gradients_match("tiny");
}

static void test_gradients_pooling(void **state) {
  (void)state;
  run_gradients_match("2x16g");
}

/* A tiny net, SGD and a two-thread pool for batches of up to max_n, and a batch of n
 * samples with 30 legal moves each. */
typedef struct {
  nn_model_t *m;
  nn_sgd_t opt;
  nn_train_pool_t *pool;
  tu_batch_t tb;
} pool_run_t;

enum { POOL_TARGETS = 4 };

static void pool_open(pool_run_t *r, int n, uint64_t seed) {
  nn_arch_t a;
  assert_int_equal(nn_arch_preset("tiny", &a), 0);
  assert_int_equal(nn_model_new(&r->m, &a, NULL), 0);
  nn_model_init(r->m, seed);
  memset(&r->opt, 0, sizeof r->opt);
  assert_int_equal(nn_sgd_init(&r->opt, r->m, NULL), 0);
  r->opt.momentum = 0.9f;
  assert_int_equal(nn_lr_parse(&r->opt.schedule, "0:0.05", NULL), 0);
  assert_int_equal(nn_train_pool_new(&r->pool, r->m, 2, n, POOL_TARGETS, NULL), 0);
  xq_rng_t g;
  xq_rng_seed(&g, seed + 1);
  tu_batch_make(&r->tb, n, 30, POOL_TARGETS, &g);
}

static void pool_step(pool_run_t *r, const nn_loss_cfg_t *cfg) {
  nn_loss_t loss;
  assert_int_equal(nn_train_pool_step(r->pool, &r->opt, r->tb.b.n, nn_shard_fill_from_batch,
                                      &r->tb.b, cfg, &loss),
                   r->tb.b.n);
}

static void pool_close(pool_run_t *r) {
  tu_batch_free(&r->tb);
  nn_train_pool_free(&r->pool);
  nn_sgd_close(&r->opt);
  nn_model_free(&r->m);
}

/* One two-thread pool step from the same weights, with and without: the same weights. */
static void test_pool_step(void **state) {
  (void)state;
  float *after[2];
  for (int legal = 0; legal < 2; legal++) {
    pool_run_t r;
    pool_open(&r, 16, 41);
    nn_loss_cfg_t cfg = {.policy_weight = 1, .value_weight = 1, .l2 = 1e-4f,
                         .legal_policy = legal};
    pool_step(&r, &cfg);
    after[legal] = malloc(r.m->nparams * 4);
    memcpy(after[legal], r.m->params, r.m->nparams * 4);
    if (legal) check_close("pool step weights", after[0], after[1], r.m->nparams, 1e-6);
    pool_close(&r);
  }
  free(after[0]), free(after[1]);
}

/*
 * The pool takes the legal path: a policy FC row illegal in every sample is set to NaN.
 * The whole FC multiplies it by a zero gradient and gets NaN (0 * NaN) in the tower's
 * gradients; the legal path never reads it, so every other weight stays finite.
 */
static void test_pool_reads_no_illegal_row(void **state) {
  (void)state;
  enum { BATCH = 8 };
  for (int legal = 0; legal < 2; legal++) {
    pool_run_t r;
    pool_open(&r, BATCH, 43);
    const uint8_t *mask = r.tb.mask;
    int row = -1;
    for (int i = 0; i < NN_POLICY_SIZE && row < 0; i++) {
      bool anywhere = false;
      for (int s = 0; s < BATCH; s++) anywhere |= mask[(size_t)s * NN_POLICY_SIZE + i];
      if (!anywhere) row = i;
    }
    assert_true(row >= 0);
    int pin = r.m->arch.policy_channels * NN_HW;
    for (int i = 0; i < pin; i++) r.m->p.pol_fc_w[(size_t)row * pin + i] = NAN;
    nn_loss_cfg_t cfg = {.policy_weight = 1, .value_weight = 1, .l2 = 0,
                         .legal_policy = legal};
    pool_step(&r, &cfg);
    const nn_convbn_t *stem = &r.m->p.tower[0];
    size_t nonfinite = 0, wlen = (size_t)stem->cout * stem->cin * 9;
    for (size_t i = 0; i < wlen; i++) nonfinite += !isfinite(stem->w[i]);
    if (legal && nonfinite)
      fail_msg("the legal path read the illegal row: %zu stem weights not finite", nonfinite);
    if (!legal && !nonfinite) fail_msg("the whole FC should have spread the NaN row");
    pool_close(&r);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_fc_rows_backward_reference),
      cmocka_unit_test(test_gradients_tiny),
      cmocka_unit_test(test_gradients_pooling),
      cmocka_unit_test(test_pool_step),
      cmocka_unit_test(test_pool_reads_no_illegal_row),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
