/*
 * nn_gemm_small.h: a register-blocked GEMM for the narrow matrices of small nets.
 *
 * The Winograd convolutions of the tiny net (16 channels) multiply 36 x 16 tiles by 16 x 16
 * filters, 35 GEMMs per layer and chunk of six images. On such shapes OpenBLAS spends more
 * time packing its operands and zeroing C than multiplying (half of its peak or less,
 * `xqz bench nn`). This kernel reads A and B where they lie and keeps a 6 x 16 block of C in
 * registers, so it needs no packing and no scratch. nn_sgemm (nn_blas.h) sends it the calls
 * nn_gemm_small_fits accepts and everything else to OpenBLAS.
 *
 * Each element of C is summed in order over k, whatever m and the blocking, so a row of C
 * does not depend on the other rows of the call (a batch of one gives the same numbers as
 * that image in a batch of many).
 */
#ifndef NN_GEMM_SMALL_H
#define NN_GEMM_SMALL_H

#include <stdbool.h>

/* The largest n and k the kernel takes: above them OpenBLAS is as fast (measured). */
#define NN_GEMM_SMALL_MAX_N 96
#define NN_GEMM_SMALL_MAX_K 64

/*
 * True when nn_gemm_small computes C = op(A) B + beta C for this call: B not transposed,
 * alpha 1, beta 0 or 1, 1 <= n <= NN_GEMM_SMALL_MAX_N, 1 <= k <= NN_GEMM_SMALL_MAX_K.
 */
bool nn_gemm_small_fits(bool trans_a, bool trans_b, int n, int k, float alpha, float beta);

/*
 * C (m, n) = op(A) (m, k) . B (k, n), plus C itself when accumulate; row-major with leading
 * dimensions lda, ldb, ldc. op(A) is A (m, k) or, with trans_a, the transpose of A (k, m).
 * With accumulate false C is only written, so it may hold garbage (NaN included).
 */
void nn_gemm_small(bool trans_a, int m, int n, int k, const float *a, int lda, const float *b,
                   int ldb, bool accumulate, float *c, int ldc);

#endif
