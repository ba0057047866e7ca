/*
 * test_nn_gemm_small.c: the narrow-matrix GEMM (nn_gemm_small.h) and its place behind
 * nn_sgemm (nn_blas.h).
 *
 * Over shapes that cover every blocking path (rows in blocks of 6 and the shorter last
 * block, columns in panels of 16, of 8 and the scalar tail), both layouts of A, padded
 * leading dimensions and both beta, C equals a double-precision reference within rounding,
 * and nothing outside C's m x n elements is written. With beta 0 the old C is never read (NaN stays out). A row
 * of C is the same bits whether it is computed alone or among others. nn_sgemm sends exactly
 * the calls nn_gemm_small_fits accepts to the kernel, and every call to OpenBLAS when
 * switched off (its counters say which served a call).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nn/nn_blas.h"
#include "nn/nn_gemm_small.h"

static const float SENTINEL = -12345.0f;

static float *rand_floats(size_t count, uint32_t *seed) {
  float *p = malloc(sizeof(float) * (count ? count : 1));
  assert_non_null(p);
  for (size_t i = 0; i < count; i++) {
    *seed = *seed * 1664525u + 1013904223u;
    p[i] = (float)(*seed >> 8) / (float)(1u << 24) * 2.0f - 1.0f;
  }
  return p;
}

/* op(A) (i, kk) of a row-major A with leading dimension lda. */
static float at(const float *a, bool ta, int lda, int i, int kk) {
  return ta ? a[(size_t)kk * lda + i] : a[(size_t)i * lda + kk];
}

/* One call of nn_gemm_small against doubles; every padding element of C keeps SENTINEL. */
static void check_shape(bool ta, int m, int n, int k, bool accumulate, uint32_t *seed) {
  const int lda = (ta ? m : k) + 3, ldb = n + 5, ldc = n + 2;
  const int arows = ta ? k : m;
  float *a = rand_floats((size_t)arows * lda, seed);
  float *b = rand_floats((size_t)k * ldb, seed);
  float *c0 = rand_floats((size_t)m * ldc, seed); /* C before the call */
  float *c = malloc(sizeof(float) * (size_t)(m ? m : 1) * ldc);
  assert_non_null(c);
  for (int i = 0; i < m; i++)
    for (int j = 0; j < ldc; j++)
      c[(size_t)i * ldc + j] = j >= n ? SENTINEL : accumulate ? c0[(size_t)i * ldc + j] : NAN;
  nn_gemm_small(ta, m, n, k, a, lda, b, ldb, accumulate, c, ldc);
  for (int i = 0; i < m; i++)
    for (int j = 0; j < ldc; j++) {
      const float got = c[(size_t)i * ldc + j];
      if (j >= n) {
        if (got != SENTINEL)
          fail_msg("ta=%d m=%d n=%d k=%d: padding (%d, %d) written", ta, m, n, k, i, j);
        continue;
      }
      double want = accumulate ? c0[(size_t)i * ldc + j] : 0.0, scale = fabs(want);
      for (int kk = 0; kk < k; kk++) {
        const double p = (double)at(a, ta, lda, i, kk) * b[(size_t)kk * ldb + j];
        want += p, scale += fabs(p);
      }
      if (!(fabs(got - want) <= 1e-6 * (scale + 1.0)))
        fail_msg("ta=%d m=%d n=%d k=%d acc=%d: C(%d, %d) = %.9g, want %.9g", ta, m, n, k,
                 accumulate, i, j, (double)got, want);
    }
  free(a), free(b), free(c0), free(c);
}

static void test_matches_reference(void **state) {
  (void)state;
  static const int ms[] = {0, 1, 2, 3, 4, 5, 6, 7, 13, 28, 36};
  static const int ns[] = {1, 3, 8, 9, 15, 16, 17, 24, 31, 40, 64, 90};
  static const int ks[] = {1, 2, 9, 16, 36, 64, 180};
  uint32_t seed = 11;
  for (int ta = 0; ta < 2; ta++)
    for (size_t mi = 0; mi < sizeof ms / sizeof ms[0]; mi++)
      for (size_t ni = 0; ni < sizeof ns / sizeof ns[0]; ni++)
        for (size_t ki = 0; ki < sizeof ks / sizeof ks[0]; ki++)
          for (int acc = 0; acc < 2; acc++)
            check_shape(ta, ms[mi], ns[ni], ks[ki], acc, &seed);
  /* The wide shape: the policy FC (180 inputs, 2,086 moves) on 28 positions. */
  check_shape(false, 28, 2086, 180, false, &seed);
  check_shape(true, 28, 2086, 180, true, &seed);
}

/* Each row of a 13-row call is, bit for bit, the same row computed alone. */
static void test_rows_independent(void **state) {
  (void)state;
  enum { M = 13, N = 40, K = 18 };
  uint32_t seed = 5;
  for (int ta = 0; ta < 2; ta++) {
    const int lda = ta ? M : K;
    float *a = rand_floats((size_t)(ta ? K : M) * lda, &seed);
    float *b = rand_floats((size_t)K * N, &seed);
    float all[M * N], one[N];
    nn_gemm_small(ta, M, N, K, a, lda, b, N, false, all, N);
    for (int i = 0; i < M; i++) {
      nn_gemm_small(ta, 1, N, K, ta ? a + i : a + (size_t)i * lda, lda, b, N, false, one, N);
      assert_memory_equal(one, all + (size_t)i * N, sizeof one);
    }
    free(a), free(b);
  }
}

static void test_fits(void **state) {
  (void)state;
  /* Narrow: a Winograd GEMM of the tiny net, forward and backward_weights; any m. */
  assert_true(nn_gemm_small_fits(false, false, 36, 16, 16, 1.0f, 0.0f));
  assert_true(nn_gemm_small_fits(true, false, 16, 16, 36, 1.0f, 1.0f));
  assert_true(nn_gemm_small_fits(false, false, 100000, NN_GEMM_SMALL_MAX_N,
                                 NN_GEMM_SMALL_MAX_K, 1.0f, 0.0f));
  assert_false(nn_gemm_small_fits(false, true, 36, 16, 16, 1.0f, 0.0f));  /* B transposed */
  assert_false(nn_gemm_small_fits(false, false, 36, 16, 16, 0.5f, 0.0f)); /* alpha */
  assert_false(nn_gemm_small_fits(false, false, 36, 16, 16, 1.0f, 2.0f)); /* beta */
  assert_false(nn_gemm_small_fits(false, false, 36, NN_GEMM_SMALL_MAX_N + 1, 16, 1.0f, 0.0f));
  assert_false(nn_gemm_small_fits(false, false, 36, 16, NN_GEMM_SMALL_MAX_K + 1, 1.0f, 0.0f));
  assert_false(nn_gemm_small_fits(false, false, 0, 16, 16, 1.0f, 0.0f));
  assert_false(nn_gemm_small_fits(false, false, 36, 0, 16, 1.0f, 0.0f));
  assert_false(nn_gemm_small_fits(false, false, 36, 16, 0, 1.0f, 0.0f));
  /* Wide: the policy FC (180 inputs, 2,086 moves) on an inference batch, not on a
   * training batch. */
  assert_true(nn_gemm_small_fits(false, false, 28, 2086, 180, 1.0f, 0.0f));
  assert_true(nn_gemm_small_fits(false, false, NN_GEMM_SMALL_WIDE_MAX_M,
                                 NN_GEMM_SMALL_WIDE_MIN_N, NN_GEMM_SMALL_WIDE_MAX_K, 1.0f,
                                 0.0f));
  assert_false(nn_gemm_small_fits(false, false, 256, 2086, 180, 1.0f, 0.0f));
  assert_false(nn_gemm_small_fits(false, false, 28, NN_GEMM_SMALL_WIDE_MIN_N - 1, 180, 1.0f,
                                  0.0f));
  assert_false(nn_gemm_small_fits(false, false, 28, 2086, NN_GEMM_SMALL_WIDE_MAX_K + 1, 1.0f,
                                  0.0f));
}

/* Which path served the one nn_sgemm call f makes, by the counters of nn_blas.h. */
static bool served_small(void (*f)(const float *, const float *, float *), const float *a,
                         const float *b, float *c) {
  nn_sgemm_stats_reset();
  nn_sgemm_count(true);
  f(a, b, c);
  nn_sgemm_count(false);
  const nn_sgemm_stats_t s = nn_sgemm_stats();
  assert_int_equal(s.calls, 1);
  return s.small_calls == 1;
}

enum { DM = 36, DN = 16, DK = 16 };

static void gemm_alpha1(const float *a, const float *b, float *c) {
  nn_sgemm(CblasNoTrans, CblasNoTrans, DM, DN, DK, 1.0f, a, DK, b, DN, 0.0f, c, DN);
}

static void gemm_alpha_half(const float *a, const float *b, float *c) {
  nn_sgemm(CblasNoTrans, CblasNoTrans, DM, DN, DK, 0.5f, a, DK, b, DN, 0.0f, c, DN);
}

/* nn_sgemm on a narrow call goes to the kernel and gives its bits; switched off, or with an
 * alpha the kernel does not take (0.5), the call goes to OpenBLAS and gives its bits. (Where
 * both sum in k order with fused multiply-adds the bits are the same, so the counters say
 * which ran.) */
static void test_sgemm_dispatch(void **state) {
  (void)state;
  uint32_t seed = 3;
  float *a = rand_floats(DM * DK, &seed), *b = rand_floats(DK * DN, &seed);
  float kern[DM * DN], blas[DM * DN], c[DM * DN];
  nn_gemm_small(false, DM, DN, DK, a, DK, b, DN, false, kern, DN);
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, DM, DN, DK, 1.0f, a, DK, b, DN, 0.0f,
              blas, DN);
  assert_true(served_small(gemm_alpha1, a, b, c));
  assert_memory_equal(c, kern, sizeof c);
  nn_sgemm_small(false);
  assert_false(served_small(gemm_alpha1, a, b, c));
  nn_sgemm_small(true);
  assert_memory_equal(c, blas, sizeof c);
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, DM, DN, DK, 0.5f, a, DK, b, DN, 0.0f,
              blas, DN);
  assert_false(served_small(gemm_alpha_half, a, b, c));
  assert_memory_equal(c, blas, sizeof c);
  nn_sgemm_stats_reset();
  free(a), free(b);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_matches_reference),
      cmocka_unit_test(test_rows_independent),
      cmocka_unit_test(test_fits),
      cmocka_unit_test(test_sgemm_dispatch),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
