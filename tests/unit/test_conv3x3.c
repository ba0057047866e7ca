/*
 * test_conv3x3.c: the 3x3 convolution kernels (conv3x3.h, fast path, and the im2col
 * reference) against a naive direct convolution in double precision, on random inputs,
 * for several (n, cin, cout) including cin != cout and the 18-plane input stem.
 *
 * Errors are judged relative to the sum of |x|*|w| terms feeding each output, so the
 * tolerance does not depend on the number of channels or on cancellation.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "nn/conv3x3.h"
#include "nn/conv3x3_im2col.h"

#define H NN_BOARD_H
#define W NN_BOARD_W
#define HW NN_BOARD_HW

typedef struct {
  int n, cin, cout;
} shape_t;

static const shape_t shapes[] = {
    {1, 1, 1}, {2, 3, 5}, {3, 18, 16}, {2, 16, 18}, {5, 18, 64},
    {4, 64, 64}, {1, 64, 32}, {2, 128, 128}, {7, 32, 64},
    {37, 8, 16}, {20, 18, 12}, /* more than one chunk of images */
    {8, 16, 16}, {13, 8, 8},   /* ... and a shorter last chunk, cin == cout */
    {5, 8, 8}, {5, 16, 16}, {11, 8, 8},
};

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;

static float frand(void) { /* uniform in [-1, 1) */
  rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
  return (float)((double)(rng_state >> 40) / (double)(1ull << 23) - 1.0);
}

static float *rand_floats(size_t count) {
  float *p = malloc(sizeof(float) * (count ? count : 1));
  assert_non_null(p);
  for (size_t i = 0; i < count; i++) p[i] = frand();
  return p;
}

static float *alloc_floats(size_t count) {
  float *p = malloc(sizeof(float) * (count ? count : 1));
  assert_non_null(p);
  return p;
}

/* Scratch full of garbage: a kernel must not rely on what a previous call left there. */
static float *alloc_scratch(size_t count) {
  float *p = alloc_floats(count);
  for (size_t i = 0; i < count; i++) p[i] = 1e3f * (float)(i % 7 + 1);
  return p;
}

/* Direct convolution in double: out (n, cout, 90) = conv(x, w); out_abs = conv(|x|, |w|). */
static void naive_forward(double *out, double *out_abs, const float *x, const float *w,
                          int n, int cin, int cout) {
  for (int i = 0; i < n; i++)
    for (int co = 0; co < cout; co++)
      for (int h = 0; h < H; h++)
        for (int ww = 0; ww < W; ww++) {
          double s = 0, a = 0;
          for (int ci = 0; ci < cin; ci++)
            for (int ky = 0; ky < 3; ky++)
              for (int kx = 0; kx < 3; kx++) {
                int sh = h + ky - 1, sw = ww + kx - 1;
                if (sh < 0 || sh >= H || sw < 0 || sw >= W) continue;
                double xv = x[((size_t)i * cin + ci) * HW + sh * W + sw];
                double wv = w[(((size_t)co * cin + ci) * 3 + ky) * 3 + kx];
                s += xv * wv;
                a += fabs(xv * wv);
              }
          size_t o = ((size_t)i * cout + co) * HW + h * W + ww;
          out[o] = s;
          out_abs[o] = a;
        }
}

/* dx (n, cin, 90) = gradient of sum(dy * conv(x, w)) wrt x; dx_abs with |dy|, |w|. */
static void naive_backward_data(double *dx, double *dx_abs, const float *dy, const float *w,
                                int n, int cin, int cout) {
  size_t total = (size_t)n * cin * HW;
  for (size_t k = 0; k < total; k++) dx[k] = dx_abs[k] = 0;
  for (int i = 0; i < n; i++)
    for (int co = 0; co < cout; co++)
      for (int h = 0; h < H; h++)
        for (int ww = 0; ww < W; ww++) {
          double g = dy[((size_t)i * cout + co) * HW + h * W + ww];
          for (int ci = 0; ci < cin; ci++)
            for (int ky = 0; ky < 3; ky++)
              for (int kx = 0; kx < 3; kx++) {
                int sh = h + ky - 1, sw = ww + kx - 1;
                if (sh < 0 || sh >= H || sw < 0 || sw >= W) continue;
                double wv = w[(((size_t)co * cin + ci) * 3 + ky) * 3 + kx];
                size_t o = ((size_t)i * cin + ci) * HW + sh * W + sw;
                dx[o] += g * wv;
                dx_abs[o] += fabs(g * wv);
              }
        }
}

/* dw (cout, cin, 3, 3) = gradient of sum(dy * conv(x, w)) wrt w. */
static void naive_backward_weights(double *dw, double *dw_abs, const float *dy,
                                   const float *x, int n, int cin, int cout) {
  for (int co = 0; co < cout; co++)
    for (int ci = 0; ci < cin; ci++)
      for (int ky = 0; ky < 3; ky++)
        for (int kx = 0; kx < 3; kx++) {
          double s = 0, a = 0;
          for (int i = 0; i < n; i++)
            for (int h = 0; h < H; h++)
              for (int ww = 0; ww < W; ww++) {
                int sh = h + ky - 1, sw = ww + kx - 1;
                if (sh < 0 || sh >= H || sw < 0 || sw >= W) continue;
                double g = dy[((size_t)i * cout + co) * HW + h * W + ww];
                double xv = x[((size_t)i * cin + ci) * HW + sh * W + sw];
                s += g * xv;
                a += fabs(g * xv);
              }
          size_t o = (((size_t)co * cin + ci) * 3 + ky) * 3 + kx;
          dw[o] = s;
          dw_abs[o] = a;
        }
}

/* Fails, printing both values, when |got - want| > tol * (abs_scale + 1e-3). */
static void check_close(const char *what, const shape_t *s, const float *got,
                        const double *want, const double *abs_scale, size_t count,
                        double tol) {
  for (size_t k = 0; k < count; k++) {
    double err = fabs((double)got[k] - want[k]);
    if (!(err <= tol * (abs_scale[k] + 1e-3))) {
      fail_msg("%s n=%d cin=%d cout=%d: element %zu got %.9g want %.9g (scale %.4g)",
               what, s->n, s->cin, s->cout, k, (double)got[k], want[k], abs_scale[k]);
    }
  }
}

/* The im2col reference is exact up to float rounding; the fast path may be Winograd. */
#define TOL_REF 1e-5
#define TOL_FAST 1e-4

typedef enum { PATH_FAST, PATH_IM2COL } path_t;

static void run_forward(path_t path, const shape_t *s, bool use_bias, bool use_res,
                        bool alias_res, bool relu) {
  const int n = s->n, cin = s->cin, cout = s->cout;
  const size_t nx = (size_t)n * cin * HW, ny = (size_t)n * cout * HW;
  float *x = rand_floats(nx);                           /* (n, cin, 10, 9) */
  float *w = rand_floats((size_t)cout * cin * 9);       /* (cout, cin, 3, 3) */
  float *bias = rand_floats((size_t)cout);              /* (cout) */
  float *res = rand_floats(ny);                         /* (n, cout, 10, 9) */
  float *y = alloc_floats(ny);                          /* (n, cout, 10, 9) */
  double *ref = malloc(sizeof(double) * ny), *ref_abs = malloc(sizeof(double) * ny);
  assert_non_null(ref);
  assert_non_null(ref_abs);
  naive_forward(ref, ref_abs, x, w, n, cin, cout);
  for (size_t k = 0; k < ny; k++) {
    size_t co = (k / HW) % (size_t)cout;
    if (use_bias) ref[k] += bias[co], ref_abs[k] += fabs(bias[co]);
    if (use_res) ref[k] += res[k], ref_abs[k] += fabs(res[k]);
    if (relu && ref[k] < 0) ref[k] = 0;
  }
  const float *resp = NULL;
  if (use_res && alias_res) {
    memcpy(y, res, sizeof(float) * ny);
    resp = y;
  } else if (use_res) {
    resp = res;
  }
  if (path == PATH_FAST) {
    float *wp = alloc_floats(nn_conv3x3_prepared_floats(cin, cout));
    float *scratch = alloc_scratch(nn_conv3x3_scratch_floats(n, cin, cout));
    nn_conv3x3_prepare(wp, w, cin, cout);
    nn_conv3x3_forward(y, scratch, x, wp, use_bias ? bias : NULL, resp, relu, n, cin, cout);
    free(wp);
    free(scratch);
  } else {
    float *scratch = alloc_floats(nn_conv3x3_im2col_scratch_floats(n, cin, cout));
    nn_conv3x3_im2col_forward(y, scratch, x, w, use_bias ? bias : NULL, resp, relu, n, cin,
                              cout);
    free(scratch);
  }
  check_close(path == PATH_FAST ? "forward" : "im2col forward", s, y, ref, ref_abs, ny,
              path == PATH_FAST ? TOL_FAST : TOL_REF);
  free(x), free(w), free(bias), free(res), free(y), free(ref), free(ref_abs);
}

static void forward_variants(path_t path) {
  for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
    const shape_t *s = &shapes[i];
    run_forward(path, s, false, false, false, false);
    run_forward(path, s, true, false, false, false);
    run_forward(path, s, true, false, false, true);
    run_forward(path, s, false, true, false, true);
    run_forward(path, s, true, true, false, true);
    run_forward(path, s, true, true, true, true);
    run_forward(path, s, true, true, true, false);
  }
}

static void test_forward(void **state) {
  (void)state;
  forward_variants(PATH_FAST);
}

static void test_im2col_forward(void **state) {
  (void)state;
  forward_variants(PATH_IM2COL);
}

static void backward_data(path_t path) {
  for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
    const shape_t *s = &shapes[i];
    const int n = s->n, cin = s->cin, cout = s->cout;
    const size_t nx = (size_t)n * cin * HW, ny = (size_t)n * cout * HW;
    float *dy = rand_floats(ny);                     /* (n, cout, 10, 9) */
    float *w = rand_floats((size_t)cout * cin * 9);  /* (cout, cin, 3, 3) */
    float *dx = rand_floats(nx);                     /* (n, cin, 10, 9), garbage in */
    double *ref = malloc(sizeof(double) * nx), *ref_abs = malloc(sizeof(double) * nx);
    assert_non_null(ref);
    assert_non_null(ref_abs);
    naive_backward_data(ref, ref_abs, dy, w, n, cin, cout);
    if (path == PATH_FAST) {
      float *scratch = alloc_scratch(nn_conv3x3_scratch_floats(n, cin, cout));
      nn_conv3x3_backward_data(dx, scratch, dy, w, n, cin, cout);
      free(scratch);
    } else {
      float *scratch = alloc_floats(nn_conv3x3_im2col_scratch_floats(n, cin, cout));
      nn_conv3x3_im2col_backward_data(dx, scratch, dy, w, n, cin, cout);
      free(scratch);
    }
    check_close(path == PATH_FAST ? "backward_data" : "im2col backward_data", s, dx, ref,
                ref_abs, nx, path == PATH_FAST ? TOL_FAST : TOL_REF);
    free(dy), free(w), free(dx), free(ref), free(ref_abs);
  }
}

static void test_backward_data(void **state) {
  (void)state;
  backward_data(PATH_FAST);
}

static void test_im2col_backward_data(void **state) {
  (void)state;
  backward_data(PATH_IM2COL);
}

static void backward_weights(path_t path) {
  for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
    const shape_t *s = &shapes[i];
    const int n = s->n, cin = s->cin, cout = s->cout;
    const size_t nx = (size_t)n * cin * HW, ny = (size_t)n * cout * HW;
    const size_t nw = (size_t)cout * cin * 9;
    float *dy = rand_floats(ny); /* (n, cout, 10, 9) */
    float *x = rand_floats(nx);  /* (n, cin, 10, 9) */
    float *dw = rand_floats(nw); /* (cout, cin, 3, 3): accumulated onto */
    double *ref = malloc(sizeof(double) * nw), *ref_abs = malloc(sizeof(double) * nw);
    assert_non_null(ref);
    assert_non_null(ref_abs);
    naive_backward_weights(ref, ref_abs, dy, x, n, cin, cout);
    for (size_t k = 0; k < nw; k++) ref[k] += dw[k], ref_abs[k] += fabs(dw[k]);
    if (path == PATH_FAST) {
      float *scratch = alloc_scratch(nn_conv3x3_scratch_floats(n, cin, cout));
      nn_conv3x3_backward_weights(dw, scratch, dy, x, n, cin, cout);
      free(scratch);
    } else {
      float *scratch = alloc_floats(nn_conv3x3_im2col_scratch_floats(n, cin, cout));
      nn_conv3x3_im2col_backward_weights(dw, scratch, dy, x, n, cin, cout);
      free(scratch);
    }
    check_close(path == PATH_FAST ? "backward_weights" : "im2col backward_weights", s, dw,
                ref, ref_abs, nw, path == PATH_FAST ? TOL_FAST : TOL_REF);
    free(dy), free(x), free(dw), free(ref), free(ref_abs);
  }
}

static void test_backward_weights(void **state) {
  (void)state;
  backward_weights(PATH_FAST);
}

static void test_im2col_backward_weights(void **state) {
  (void)state;
  backward_weights(PATH_IM2COL);
}

/* An empty batch touches nothing: outputs and the accumulated dw stay as they were. */
static void test_empty_batch(void **state) {
  (void)state;
  const int cin = 16, cout = 8;
  float *w = rand_floats((size_t)cout * cin * 9);
  float *dw = rand_floats((size_t)cout * cin * 9);
  float *dw0 = alloc_floats((size_t)cout * cin * 9);
  float *wp = alloc_floats(nn_conv3x3_prepared_floats(cin, cout));
  float *scratch = alloc_floats(nn_conv3x3_scratch_floats(0, cin, cout));
  float one = 1.0f, out = 7.0f, dx = 7.0f;
  memcpy(dw0, dw, sizeof(float) * (size_t)cout * cin * 9);
  nn_conv3x3_prepare(wp, w, cin, cout);
  nn_conv3x3_forward(&out, scratch, &one, wp, NULL, NULL, true, 0, cin, cout);
  nn_conv3x3_backward_data(&dx, scratch, &one, w, 0, cin, cout);
  nn_conv3x3_backward_weights(dw, scratch, &one, &one, 0, cin, cout);
  assert_true(out == 7.0f);
  assert_true(dx == 7.0f);
  assert_memory_equal(dw, dw0, sizeof(float) * (size_t)cout * cin * 9);
  free(w), free(dw), free(dw0), free(wp), free(scratch);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_im2col_forward),
      cmocka_unit_test(test_im2col_backward_data),
      cmocka_unit_test(test_im2col_backward_weights),
      cmocka_unit_test(test_forward),
      cmocka_unit_test(test_backward_data),
      cmocka_unit_test(test_backward_weights),
      cmocka_unit_test(test_empty_batch),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
