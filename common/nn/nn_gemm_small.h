/*
 * nn_gemm_small.h: a register-blocked GEMM for the narrow matrices of small nets.
 *
 * The Winograd convolutions of the tiny net (16 channels) multiply 36 x 16 tiles by 16 x 16
 * filters, 35 GEMMs per layer and chunk of six images. On such shapes OpenBLAS runs at 42%
 * to 59% of its peak (`xqz bench nn`), much of its time spent packing operands and zeroing
 * C (`perf`). On the policy FC at self-play batch sizes (28 positions by 180 inputs by 2,086
 * moves) it packs the whole 1.5 MB weight matrix on every call.
 * This kernel reads A and B where they lie and keeps a 6 x 16 block of C in registers, so
 * it needs no packing and no scratch. nn_sgemm (nn_blas.h) sends it the calls
 * nn_gemm_small_fits accepts and everything else to OpenBLAS.
 *
 * Each element of C is summed in order over k, whatever m and the blocking, so a row of C
 * does not depend on the other rows of the call (a batch of one gives the same numbers as
 * that image in a batch of many).
 */
#ifndef NN_GEMM_SMALL_H
#define NN_GEMM_SMALL_H

#include <stdbool.h>

/*
 * The shapes the kernel takes, where it beats OpenBLAS (measured: the narrow-GEMM table of
 * `xqz bench nn`). Narrow: n <= NN_GEMM_SMALL_MAX_N and k <= NN_GEMM_SMALL_MAX_K, any m (the
 * convolutions of nets up to 64 channels and the 1x1 head convolutions of the board's 90
 * squares). Wide: m <= NN_GEMM_SMALL_WIDE_MAX_M, n >= NN_GEMM_SMALL_WIDE_MIN_N and
 * k <= NN_GEMM_SMALL_WIDE_MAX_K (the policy FC on an inference batch: a 16-column panel of
 * B, k rows, stays in L1 while the few rows of A pass over it).
 */
#define NN_GEMM_SMALL_MAX_N 96
#define NN_GEMM_SMALL_MAX_K 64
#define NN_GEMM_SMALL_WIDE_MAX_M 64
#define NN_GEMM_SMALL_WIDE_MIN_N 1024
#define NN_GEMM_SMALL_WIDE_MAX_K 256

/*
 * True when nn_gemm_small computes C = op(A) B + beta C for this call: B not transposed,
 * alpha 1, beta 0 or 1, m, n, k >= 1 and a narrow or wide shape (above).
 */
bool nn_gemm_small_fits(bool trans_a, bool trans_b, int m, int n, int k, float alpha,
                        float beta);

/*
 * C (m, n) = op(A) (m, k) . B (k, n), plus C itself when accumulate; row-major with leading
 * dimensions lda, ldb, ldc. op(A) is A (m, k) or, with trans_a, the transpose of A (k, m).
 * With accumulate false C is only written, so it may hold garbage (NaN included).
 */
void nn_gemm_small(bool trans_a, int m, int n, int k, const float *a, int lda, const float *b,
                   int ldb, bool accumulate, float *c, int ldc);

#endif
