/*
 * test_conv3x3_resident.c: the inference tower's resident layout (conv3x3.h) and the
 * inference plans that use it (nn_plan.h, nn_infer).
 *
 * The resident conv gives nn_conv3x3_forward's bits exactly, with and without bias,
 * residual and ReLU, for channel counts on and off the vector width and batches of one or
 * more chunks of images; it writes no cell of the border and leaves padded channels zero;
 * NCHW -> resident -> NCHW is the identity. nn_infer on an inference plan (the resident
 * tower) gives the same bits as on a training plan (the NCHW tower) for the tiny net and
 * the attack-plane input; the default net (its weights over the budget) and pooling or
 * line nets have no resident buffers.
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

#include "nn/conv3x3.h"
#include "nn/nn_forward.h"
#include "nn/nn_model.h"
#include "nn/nn_plan.h"
#include "nn_test_util.h"

enum { PH = 12, PW = 11 }; /* the padded plane: the board at rows 1..10, columns 1..9 */

static int round8(int c) { return (c + 7) / 8 * 8; }

/* Whether cell (r, q) of a padded plane is off the board. */
static bool border_cell(int r, int q) { return r < 1 || r > 10 || q < 1 || q > 9; }

/* Fails unless every border cell and padded channel of P (n, c) holds 0. */
static void check_border_zero(const float *P, int n, int c, const char *what) {
  int cp = round8(c);
  for (int i = 0; i < n; i++)
    for (int r = 0; r < PH; r++)
      for (int q = 0; q < PW; q++)
        for (int k = 0; k < cp; k++) {
          float v = P[(((size_t)i * PH + r) * PW + q) * cp + k];
          if ((border_cell(r, q) || k >= c) && v != 0.0f)
            fail_msg("%s: image %d cell (%d, %d) channel %d holds %g, want 0", what, i, r, q,
                     k, v);
        }
}

typedef struct {
  int n, cin, cout;
} shape_t;

static void run_conv_matches(shape_t s, xq_rng_t *r) {
  size_t xin = (size_t)s.n * s.cin * NN_BOARD_HW, xout = (size_t)s.n * s.cout * NN_BOARD_HW;
  size_t rin = nn_conv3x3_resident_floats(s.n, s.cin);
  size_t rout = nn_conv3x3_resident_floats(s.n, s.cout);
  float *x = malloc(xin * 4), *w = malloc((size_t)s.cout * s.cin * 9 * 4);
  float *bias = malloc((size_t)s.cout * 4), *res = malloc(xout * 4);
  float *wp = malloc(nn_conv3x3_prepared_floats(s.cin, s.cout) * 4);
  float *scratch = malloc(nn_conv3x3_scratch_floats(s.n, s.cin, s.cout) * 4);
  float *want = malloc(xout * 4), *got = malloc(xout * 4), *back = malloc(xin * 4);
  float *Px = calloc(rin, 4), *Py = calloc(rout, 4), *Pr = calloc(rout, 4);
  tu_fill(x, xin, r, 1.0f);
  tu_fill(w, (size_t)s.cout * s.cin * 9, r, 0.3f);
  tu_fill(bias, (size_t)s.cout, r, 0.5f);
  tu_fill(res, xout, r, 1.0f);
  nn_conv3x3_prepare(wp, w, s.cin, s.cout);

  /* NCHW -> resident -> NCHW is the identity, and the border stays zero. */
  nn_conv3x3_to_resident(Px, x, s.n, s.cin);
  check_border_zero(Px, s.n, s.cin, "to_resident");
  nn_conv3x3_from_resident(back, Px, s.n, s.cin);
  if (memcmp(back, x, xin * 4)) fail_msg("n %d c %d: the round trip changed x", s.n, s.cin);
  nn_conv3x3_to_resident(Pr, res, s.n, s.cout);

  for (int with_bias = 0; with_bias < 2; with_bias++)
    for (int with_res = 0; with_res < 2; with_res++)
      for (int relu = 0; relu < 2; relu++) {
        const float *b = with_bias ? bias : NULL;
        nn_conv3x3_forward(want, scratch, x, wp, b, with_res ? res : NULL, relu, s.n, s.cin,
                           s.cout);
        nn_conv3x3_forward_resident(Py, scratch, Px, wp, b, with_res ? Pr : NULL, relu, s.n,
                                    s.cin, s.cout);
        check_border_zero(Py, s.n, s.cout, "forward_resident");
        nn_conv3x3_from_resident(got, Py, s.n, s.cout);
        for (size_t i = 0; i < xout; i++)
          if (memcmp(&got[i], &want[i], 4))
            fail_msg("n %d cin %d cout %d bias %d res %d relu %d: at %zu %.9g, NCHW %.9g",
                     s.n, s.cin, s.cout, with_bias, with_res, relu, i, got[i], want[i]);
      }
  /* The output over its own residual, as a residual block writes it. */
  if (s.cin == s.cout) {
    nn_conv3x3_forward(want, scratch, x, wp, bias, res, true, s.n, s.cin, s.cout);
    nn_conv3x3_forward_resident(Pr, scratch, Px, wp, bias, Pr, true, s.n, s.cin, s.cout);
    nn_conv3x3_from_resident(got, Pr, s.n, s.cout);
    if (memcmp(got, want, xout * 4))
      fail_msg("n %d c %d: the output written over its residual differs", s.n, s.cin);
  }
  free(x), free(w), free(bias), free(res), free(wp), free(scratch);
  free(want), free(got), free(back), free(Px), free(Py), free(Pr);
}

static void test_conv_matches_nchw(void **state) {
  (void)state;
  static const shape_t shapes[] = {
      {1, 15, 16}, {1, 16, 16}, {3, 29, 16}, {7, 16, 16}, /* 7: a chunk of 6 and one */
      {13, 16, 16}, {2, 5, 12}, {4, 12, 12}, {6, 20, 24}, {9, 64, 64}, {1, 3, 1},
  };
  xq_rng_t r;
  xq_rng_seed(&r, 71);
  for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) run_conv_matches(shapes[i], &r);
}

/* nn_infer through an inference plan (the resident tower) and through a training plan
 * (the NCHW tower, which keeps the layer caches): the same bits. */
static void run_infer_matches(const char *size, bool want_resident) {
  nn_arch_t a;
  nn_model_t *m;
  assert_int_equal(nn_arch_preset(size, &a), 0);
  assert_int_equal(nn_model_new(&m, &a, NULL), 0);
  nn_model_init(m, 23);
  xq_rng_t r;
  xq_rng_seed(&r, 24);
  tu_fill_block_biases(m, &r, 0.1f);
  /* A fresh net's BN folds to zero biases; these make every conv's bias count. */
  for (int l = 0; l < m->nconvs; l++) {
    nn_convbn_t *cb = &m->p.tower[l];
    tu_fill(cb->beta, (size_t)cb->cout, &r, 0.3f);
    tu_fill(cb->mean, (size_t)cb->cout, &r, 0.3f);
    for (int c = 0; c < cb->cout; c++) cb->var[c] = 0.5f + (float)xq_rng_below(&r, 100) / 100;
  }
  nn_model_fold(m);
  const int n = 9;
  tu_batch_t tb;
  tu_batch_make_planes(&tb, n, nn_arch_input_planes(&a), 37, 3, &r);
  nn_plan_t *pi, *pt;
  assert_int_equal(nn_plan_new(&pi, &a, 16, false, NULL), 0);
  assert_int_equal(nn_plan_new(&pt, &a, n, true, NULL), 0);
  if ((pi->res[0] != NULL) != want_resident)
    fail_msg("%s: the inference plan %s resident buffers", size,
             want_resident ? "has no" : "has");
  size_t len = (size_t)n * NN_POLICY_SIZE;
  float *p1 = malloc(len * 4), *p2 = malloc(len * 4), v1[9], v2[9];
  /* Twice on the inference plan, the second with fewer positions: buffers reused. */
  for (int rep = 0; rep < 2; rep++) {
    int k = rep ? 4 : n;
    nn_infer(p1, v1, pi, m, tb.planes, tb.mask, k);
    nn_infer(p2, v2, pt, m, tb.planes, tb.mask, k);
    if (memcmp(v1, v2, (size_t)k * 4) || memcmp(p1, p2, (size_t)k * NN_POLICY_SIZE * 4))
      fail_msg("%s, %d positions: the resident tower's output differs from the NCHW one's",
               size, k);
  }
  free(p1), free(p2);
  nn_plan_free(&pi);
  nn_plan_free(&pt);
  tu_batch_free(&tb);
  nn_model_free(&m);
}

static void test_infer_tiny(void **state) {
  (void)state;
  run_infer_matches("tiny", true);
}

/* The default net's weights do not fit the budget: one layer at a time, NCHW. */
static void test_infer_default(void **state) {
  (void)state;
  run_infer_matches("default", false);
  nn_arch_t a;
  assert_int_equal(nn_arch_preset("3x16", &a), 0); /* 249 KiB of prepared weights */
  assert_true(nn_plan_resident_tower(&a));
  assert_int_equal(nn_arch_preset("4x16", &a), 0); /* 319 KiB */
  assert_false(nn_plan_resident_tower(&a));
}

static void test_infer_attack(void **state) {
  (void)state;
  run_infer_matches("2x16a", true);
}

static void test_pooling_net_stays_nchw(void **state) {
  (void)state;
  run_infer_matches("2x16g", false);
  run_infer_matches("2x16l", false);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_conv_matches_nchw),
      cmocka_unit_test(test_infer_tiny),
      cmocka_unit_test(test_infer_default),
      cmocka_unit_test(test_infer_attack),
      cmocka_unit_test(test_pooling_net_stays_nchw),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
