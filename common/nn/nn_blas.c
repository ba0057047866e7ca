/*
 * nn_blas.c: nn_sgemm and its optional time accounting (see nn_blas.h). The totals are
 * atomics updated with relaxed order: they are sums read after the counted work has been
 * joined, so no ordering with other memory is needed, only that no addition is lost.
 */
#include "nn/nn_blas.h"

#include <stdatomic.h>
#include <time.h>

#include "nn/nn_gemm_small.h"

static atomic_bool counting;
static atomic_bool small_off; /* nn_sgemm_small(false) */
static atomic_uint_fast64_t total_calls;
static atomic_uint_fast64_t total_small;
static atomic_uint_fast64_t total_ns;

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void nn_sgemm(enum CBLAS_TRANSPOSE ta, enum CBLAS_TRANSPOSE tb, int m, int n, int k,
              float alpha, const float *a, int lda, const float *b, int ldb, float beta,
              float *c, int ldc) {
  const bool small =
      nn_gemm_small_fits(ta == CblasTrans, tb == CblasTrans, m, n, k, alpha, beta) &&
      !atomic_load_explicit(&small_off, memory_order_relaxed);
  const bool count = atomic_load_explicit(&counting, memory_order_relaxed);
  const uint64_t t0 = count ? now_ns() : 0;
  if (small) nn_gemm_small(ta == CblasTrans, m, n, k, a, lda, b, ldb, beta == 1.0f, c, ldc);
  else cblas_sgemm(CblasRowMajor, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  if (!count) return;
  atomic_fetch_add_explicit(&total_ns, now_ns() - t0, memory_order_relaxed);
  atomic_fetch_add_explicit(&total_calls, 1, memory_order_relaxed);
  if (small) atomic_fetch_add_explicit(&total_small, 1, memory_order_relaxed);
}

void nn_sgemm_small(bool on) { atomic_store_explicit(&small_off, !on, memory_order_relaxed); }

void nn_sgemm_count(bool on) { atomic_store_explicit(&counting, on, memory_order_relaxed); }

void nn_sgemm_stats_reset(void) {
  atomic_store_explicit(&total_calls, 0, memory_order_relaxed);
  atomic_store_explicit(&total_small, 0, memory_order_relaxed);
  atomic_store_explicit(&total_ns, 0, memory_order_relaxed);
}

nn_sgemm_stats_t nn_sgemm_stats(void) {
  return (nn_sgemm_stats_t){
      .calls = atomic_load_explicit(&total_calls, memory_order_relaxed),
      .small_calls = atomic_load_explicit(&total_small, memory_order_relaxed),
      .seconds = 1e-9 * (double)atomic_load_explicit(&total_ns, memory_order_relaxed)};
}
