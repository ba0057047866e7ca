/*
 * nn_gemm_small.c: the narrow-matrix GEMM (contract in nn_gemm_small.h).
 *
 * C is cut into panels of 16 columns (two 8-float vectors), then one of 8, then the last
 * n % 8 columns; each panel into blocks of 6 rows. A block's 6 x 16 sums stay in 12 vector
 * registers for the whole k loop: per k it loads one row of B (two vectors), broadcasts six
 * elements of op(A) and does twelve multiply-adds. Rows past the last multiple of 6 form
 * one shorter block (a call of 28 rows is four blocks of 6 and one of 4); columns past the
 * last multiple of 8 go in scalar code. Every element is summed in order over k with the
 * same operation whichever way it is reached, so its bits do not depend on the block, panel
 * or call it falls in.
 *
 * That operation is written out (gs_madd, gs_madd1): a fused multiply-add where the target
 * has one, a multiply then an add where it does not. It is not left to contraction
 * (-ffp-contract=fast): GCC fuses each inlined copy of the block on its own, and for
 * AVX-512 it fused the copies for 1 and for 6 rows differently, so a row's last bits
 * depended on how many rows shared its block.
 */
#include "nn/nn_gemm_small.h"

#include <assert.h>
#include <math.h>
#include <stddef.h>

#if defined(__FMA__)
#include <immintrin.h>
#endif

enum {
  GS_VEC = 8, /* floats per vector */
  GS_MR = 6,  /* rows per block: 6 x 2 sums + 2 of B + 1 broadcast = 15 of 16 AVX registers */
};

typedef float gs_v8 __attribute__((vector_size(32)));
/* Unaligned, may_alias access (GCC's idiom, as in conv3x3.c). */
typedef float gs_v8u __attribute__((vector_size(32), aligned(4), may_alias));

bool nn_gemm_small_fits(bool trans_a, bool trans_b, int m, int n, int k, float alpha,
                        float beta) {
  (void)trans_a;
  if (trans_b || alpha != 1.0f || (beta != 0.0f && beta != 1.0f) || m < 1 || n < 1 || k < 1)
    return false;
  const bool narrow = n <= NN_GEMM_SMALL_MAX_N && k <= NN_GEMM_SMALL_MAX_K;
  const bool wide = m <= NN_GEMM_SMALL_WIDE_MAX_M && n >= NN_GEMM_SMALL_WIDE_MIN_N &&
                    k <= NN_GEMM_SMALL_WIDE_MAX_K;
  return narrow || wide;
}

/* *s += x * b, elementwise. Vectors go by pointer: by value, their ABI would depend on
 * whether AVX is enabled (GCC's -Wpsabi, an error in builds for any x86-64). */
static inline __attribute__((always_inline)) void gs_madd(gs_v8 *s, const gs_v8 *x,
                                                          const gs_v8 *b) {
#if defined(__FMA__)
  *s = (gs_v8)_mm256_fmadd_ps((__m256)*x, (__m256)*b, (__m256)*s);
#else
  *s = *s + *x * *b; /* ISO C11: GCC rounds the product, then the sum */
#endif
}

/* The same for one float (the last n % 8 columns). */
static inline __attribute__((always_inline)) float gs_madd1(float s, float x, float b) {
#if defined(__FMA__)
  return fmaf(x, b, s); /* one instruction where __FMA__ is set */
#else
  return s + x * b;
#endif
}

/* Element (r, kk) of op(A), A starting at the block's first row. */
static inline __attribute__((always_inline)) float gs_a(bool ta, const float *a, int lda,
                                                        int r, int kk) {
  return ta ? a[(size_t)kk * lda + r] : a[(size_t)r * lda + kk];
}

/* rows x (nv * 8) of C, at c; a at the block's first row of op(A), b at its first column. */
static inline __attribute__((always_inline)) void gs_block(int rows, int nv, bool ta, int k,
                                                           const float *a, int lda,
                                                           const float *b, int ldb,
                                                           bool accumulate, float *c,
                                                           int ldc) {
  gs_v8 s[GS_MR][2];
  for (int r = 0; r < rows; r++)
    for (int v = 0; v < nv; v++)
      s[r][v] = accumulate ? (gs_v8) * (const gs_v8u *)(c + (size_t)r * ldc + v * GS_VEC)
                           : (gs_v8){0};
  for (int kk = 0; kk < k; kk++) {
    gs_v8 bv[2];
    for (int v = 0; v < nv; v++) bv[v] = *(const gs_v8u *)(b + (size_t)kk * ldb + v * GS_VEC);
    for (int r = 0; r < rows; r++) {
      const float x = gs_a(ta, a, lda, r, kk);
      const gs_v8 xv = {x, x, x, x, x, x, x, x};
      for (int v = 0; v < nv; v++) gs_madd(&s[r][v], &xv, &bv[v]);
    }
  }
  for (int r = 0; r < rows; r++)
    for (int v = 0; v < nv; v++) *(gs_v8u *)(c + (size_t)r * ldc + v * GS_VEC) = s[r][v];
}

/* Every row of one panel of nv vectors of columns. */
static inline __attribute__((always_inline)) void gs_panel(int nv, bool ta, int m, int k,
                                                           const float *a, int lda,
                                                           const float *b, int ldb,
                                                           bool accumulate, float *c,
                                                           int ldc) {
  int i = 0;
  for (; i + GS_MR <= m; i += GS_MR)
    gs_block(GS_MR, nv, ta, k, ta ? a + i : a + (size_t)i * lda, lda, b, ldb, accumulate,
             c + (size_t)i * ldc, ldc);
  const float *ai = ta ? a + i : a + (size_t)i * lda;
  float *ci = c + (size_t)i * ldc;
  /* The last m % 6 rows, one block with its row count a constant. */
  switch (m - i) {
  case 5: gs_block(5, nv, ta, k, ai, lda, b, ldb, accumulate, ci, ldc); break;
  case 4: gs_block(4, nv, ta, k, ai, lda, b, ldb, accumulate, ci, ldc); break;
  case 3: gs_block(3, nv, ta, k, ai, lda, b, ldb, accumulate, ci, ldc); break;
  case 2: gs_block(2, nv, ta, k, ai, lda, b, ldb, accumulate, ci, ldc); break;
  case 1: gs_block(1, nv, ta, k, ai, lda, b, ldb, accumulate, ci, ldc); break;
  default: break;
  }
}

static inline __attribute__((always_inline)) void gs_gemm(bool ta, int m, int n, int k,
                                                          const float *a, int lda,
                                                          const float *b, int ldb,
                                                          bool accumulate, float *c,
                                                          int ldc) {
  int j = 0;
  for (; j + 2 * GS_VEC <= n; j += 2 * GS_VEC)
    gs_panel(2, ta, m, k, a, lda, b + j, ldb, accumulate, c + j, ldc);
  if (j + GS_VEC <= n) {
    gs_panel(1, ta, m, k, a, lda, b + j, ldb, accumulate, c + j, ldc);
    j += GS_VEC;
  }
  for (; j < n; j++)
    for (int i = 0; i < m; i++) {
      const float *ai = ta ? a + i : a + (size_t)i * lda;
      float s = accumulate ? c[(size_t)i * ldc + j] : 0.0f;
      for (int kk = 0; kk < k; kk++)
        s = gs_madd1(s, gs_a(ta, ai, lda, 0, kk), b[(size_t)kk * ldb + j]);
      c[(size_t)i * ldc + j] = s;
    }
}

void nn_gemm_small(bool trans_a, int m, int n, int k, const float *a, int lda, const float *b,
                   int ldb, bool accumulate, float *c, int ldc) {
  assert(m >= 0 && n >= 0 && k >= 0 && a && b && c);
  assert(ldb >= n && ldc >= n && lda >= (trans_a ? m : k));
  /* Two copies, each with op(A)'s layout a constant the compiler folds. */
  if (trans_a) gs_gemm(true, m, n, k, a, lda, b, ldb, accumulate, c, ldc);
  else gs_gemm(false, m, n, k, a, lda, b, ldb, accumulate, c, ldc);
}
