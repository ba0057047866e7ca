/*
 * nn_fc_rows.c: the FC at chosen outputs (contract in nn_fc_rows.h).
 *
 * Four rows at a time, each summed in eight vector lanes over i (so four independent
 * chains of multiply-adds share every load of x), then the lanes added; the last in % 8
 * inputs in a plain loop. The last nrows % 4 rows go through the same code, padded with
 * copies of the last row, so a row's sum is the same whichever group it falls in, however
 * the compiler contracts multiply-adds into FMAs (GCC -O3 for AVX-512 contracted a one-row
 * loop differently and changed the last bit). The backward twin goes one row at a time,
 * eight lanes wide.
 */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("fp-contract=fast")
#endif

#include "nn/nn_fc_rows.h"

#include <stddef.h>

enum { FR_VEC = 8, FR_ROWS = 4 };

typedef float fr_v8 __attribute__((vector_size(32)));
/* Unaligned, may_alias access (GCC's idiom, as in nn_gemm_small.c). */
typedef float fr_v8u __attribute__((vector_size(32), aligned(4), may_alias));

static inline float fr_hsum(fr_v8 v) {
  return ((v[0] + v[4]) + (v[1] + v[5])) + ((v[2] + v[6]) + (v[3] + v[7]));
}

/* Four rows' dot products with x, sharing the loads of x. Not inlined: one compiled body
 * for both callers, so one way of contracting its multiply-adds. */
__attribute__((noinline)) static void fr_group(float *y, const float *x,
                                               const float *const w[FR_ROWS], int in) {
  int iv = in - in % FR_VEC;
  fr_v8 s[FR_ROWS] = {{0}};
  for (int i = 0; i < iv; i += FR_VEC) {
    fr_v8 xv = *(const fr_v8u *)(x + i);
    for (int r = 0; r < FR_ROWS; r++) s[r] += xv * *(const fr_v8u *)(w[r] + i);
  }
  for (int r = 0; r < FR_ROWS; r++) {
    float t = fr_hsum(s[r]);
    for (int i = iv; i < in; i++) t += x[i] * w[r][i];
    y[r] = t;
  }
}

int nn_fc_rows_of_mask(int *rows, const uint8_t *mask, int out) {
  int k = 0;
  for (int i = 0; i < out; i++)
    if (mask[i]) rows[k++] = i;
  return k;
}

void nn_fc_rows(float *y, const float *x, const float *w, const float *b, int in,
                const int *rows, int nrows) {
  int j = 0;
  for (; j + FR_ROWS <= nrows; j += FR_ROWS) {
    const float *wr[FR_ROWS];
    for (int r = 0; r < FR_ROWS; r++) wr[r] = w + (size_t)rows[j + r] * in;
    fr_group(y + j, x, wr, in);
  }
  if (j < nrows) { /* the last rows, padded with copies of the last, through the same code */
    const float *wr[FR_ROWS];
    float t[FR_ROWS];
    for (int r = 0; r < FR_ROWS; r++)
      wr[r] = w + (size_t)rows[j + r < nrows ? j + r : nrows - 1] * in;
    fr_group(t, x, wr, in);
    for (int r = 0; j + r < nrows; r++) y[j + r] = t[r];
  }
  if (b)
    for (j = 0; j < nrows; j++) y[j] += b[rows[j]];
}

void nn_fc_rows_backward(float *dx, float *dw, float *db, const float *dy, const float *x,
                         const float *w, int in, const int *rows, int nrows) {
  int iv = in - in % FR_VEC;
  for (int j = 0; j < nrows; j++) {
    const float d = dy[j];
    if (d == 0.0f) continue;
    const size_t r = (size_t)rows[j];
    if (db) db[r] += d;
    const float *wr = w + r * in;
    float *dwr = dw + r * in;
    const fr_v8 dv = {d, d, d, d, d, d, d, d};
    for (int i = 0; i < iv; i += FR_VEC) {
      *(fr_v8u *)(dx + i) += dv * *(const fr_v8u *)(wr + i);
      *(fr_v8u *)(dwr + i) += dv * *(const fr_v8u *)(x + i);
    }
    for (int i = iv; i < in; i++) {
      dx[i] += d * wr[i];
      dwr[i] += d * x[i];
    }
  }
}
