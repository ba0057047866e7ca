/*
 * test_nn_blas.c: nn_sgemm, the network's one door to BLAS. It computes what cblas_sgemm
 * computes (every transpose combination); its counting is off until switched on; while
 * on, GEMMs from several threads at once are each counted exactly once; switched off,
 * nothing more is counted.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <string.h>

#include "nn/nn_blas.h"

#define M 7
#define N 5
#define K 9
#define THREADS 4
#define CALLS 50

static void fill(float *v, int len, float seed) {
  for (int i = 0; i < len; i++) v[i] = seed + 0.25f * (float)(i % 11) - 0.1f * (float)(i % 3);
}

/* One small GEMM: C (M, N) = A (M, K) . B (K, N). */
static void small_gemm(float *c) {
  float a[M * K], b[K * N];
  fill(a, M * K, 0.5f);
  fill(b, K * N, -0.3f);
  nn_sgemm(CblasNoTrans, CblasNoTrans, M, N, K, 1.0f, a, K, b, N, 0.0f, c, N);
}

static void test_same_as_cblas(void **state) {
  (void)state;
  float a[M * K], b[K * N], c0[M * N], c1[M * N];
  fill(a, M * K, 0.5f);
  fill(b, K * N, -0.3f);
  const enum CBLAS_TRANSPOSE t[2] = {CblasNoTrans, CblasTrans};
  for (int ta = 0; ta < 2; ta++)
    for (int tb = 0; tb < 2; tb++) {
      /* The same buffers read as (K, M) or (N, K) when transposed. */
      int lda = ta ? M : K, ldb = tb ? K : N;
      fill(c0, M * N, 1.0f);
      memcpy(c1, c0, sizeof c0);
      cblas_sgemm(CblasRowMajor, t[ta], t[tb], M, N, K, 0.5f, a, lda, b, ldb, 2.0f, c0, N);
      nn_sgemm(t[ta], t[tb], M, N, K, 0.5f, a, lda, b, ldb, 2.0f, c1, N);
      assert_memory_equal(c0, c1, sizeof c0);
    }
}

static void test_off_by_default(void **state) {
  (void)state;
  float c[M * N];
  small_gemm(c);
  nn_sgemm_stats_t s = nn_sgemm_stats();
  assert_int_equal(s.calls, 0);
  assert_true(s.seconds == 0.0);
}

static void *gemm_thread(void *arg) {
  (void)arg;
  float c[M * N];
  for (int i = 0; i < CALLS; i++) small_gemm(c);
  return NULL;
}

static void test_threads_counted_once(void **state) {
  (void)state;
  nn_sgemm_stats_reset();
  nn_sgemm_count(true);
  pthread_t th[THREADS];
  for (int i = 0; i < THREADS; i++)
    assert_int_equal(pthread_create(&th[i], NULL, gemm_thread, NULL), 0);
  for (int i = 0; i < THREADS; i++) assert_int_equal(pthread_join(th[i], NULL), 0);
  nn_sgemm_count(false);
  nn_sgemm_stats_t s = nn_sgemm_stats();
  assert_int_equal(s.calls, THREADS * CALLS);
  /* A 7 x 5 x 9 product with alpha 1 and beta 0 is one nn_gemm_small serves. */
  assert_int_equal(s.small_calls, THREADS * CALLS);
  assert_true(s.seconds > 0.0);
  /* Off again: more GEMMs leave the totals as they are. */
  gemm_thread(NULL);
  nn_sgemm_stats_t after = nn_sgemm_stats();
  assert_int_equal(after.calls, s.calls);
  assert_true(after.seconds == s.seconds);
  nn_sgemm_stats_reset();
  assert_int_equal(nn_sgemm_stats().calls, 0);
  assert_int_equal(nn_sgemm_stats().small_calls, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_off_by_default), /* first: nothing has switched counting on */
      cmocka_unit_test(test_same_as_cblas),
      cmocka_unit_test(test_threads_counted_once),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
