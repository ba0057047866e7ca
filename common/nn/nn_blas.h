/*
 * nn_blas.h: the one door from common/nn to BLAS matrix multiply. Every GEMM of the
 * network (convolutions, 1x1 convolutions, fully connected layers, forward and backward)
 * goes through nn_sgemm, a row-major GEMM with cblas_sgemm's arguments, so a bench can
 * count the time spent in it without touching the shipped binary's symbols.
 *
 * Small calls (nn_gemm_small_fits: the Winograd GEMMs of nets of up to 64 channels, the 1x1
 * head convolutions, the policy FC on an inference batch) go to nn_gemm_small, a kernel
 * without OpenBLAS's packing; the rest to cblas_sgemm.
 *
 * Counting is off by default; then nn_sgemm costs a shape test and two relaxed atomic
 * loads more than the GEMM itself. While it is on, each call adds its time and itself to
 * process-wide totals with atomic additions, so GEMMs running on several threads at once
 * (nn_train_pool.c, self-play threads) are all counted, none twice.
 */
#ifndef NN_BLAS_H
#define NN_BLAS_H

#include <cblas.h>
#include <stdbool.h>
#include <stdint.h>

/* C (m, n) = alpha op(A) op(B) + beta C, row-major; op(A) is (m, k), op(B) (k, n). */
void nn_sgemm(enum CBLAS_TRANSPOSE ta, enum CBLAS_TRANSPOSE tb, int m, int n, int k,
              float alpha, const float *a, int lda, const float *b, int ldb, float beta,
              float *c, int ldc);

/* Whether nn_sgemm sends small calls to nn_gemm_small (on at start). Off, every call goes
 * to OpenBLAS: `xqz bench nn` compares the two, tests check that they agree. */
void nn_sgemm_small(bool on);

typedef struct {
  uint64_t calls;       /* nn_sgemm calls counted */
  uint64_t small_calls; /* those of them that nn_gemm_small served */
  double seconds;       /* wall time inside them, summed over threads */
} nn_sgemm_stats_t;

/* Turns counting on or off for every thread (it is off at start). Turning it on does not
 * clear the totals; nn_sgemm_stats_reset does. */
void nn_sgemm_count(bool on);
/* Zeroes the totals. */
void nn_sgemm_stats_reset(void);
/* The totals so far. Exact once the GEMMs being counted have returned. */
nn_sgemm_stats_t nn_sgemm_stats(void);

#endif
