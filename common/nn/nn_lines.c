/*
 * nn_lines.c: the rank and file bias (nn_lines.h), forward and backward.
 *
 * Layouts, for n samples of c channels (s sample, j input and o output channel, r rank,
 * f file):
 *   V (9c, 10n): V[j*9 + f][s*10 + r] = x[s, j, r, f]    x by rank: R = wr . V  (c, 10n)
 *   U (10c, 9n): U[j*10 + r][s*9 + f] = x[s, j, r, f]    x by file: F = wf . U  (c, 9n)
 * wr (c, c, 1, 9) is then the row-major matrix (c, 9c) and wf (c, c, 10, 1) is (c, 10c),
 * so each direction is one GEMM, and the backward pass two more each (weights: dR . V^T;
 * data: wr^T . dR, scattered back onto the board).
 */
#include "nn/nn_lines.h"

#include <assert.h>

#include "nn/nn_blas.h"
#include "nn/nn_model.h"

enum { RANKS = 10, FILES = 9 };
_Static_assert(RANKS * FILES == NN_HW, "the board is 10 ranks of 9 files");

typedef struct {
  float *V, *U, *R, *F; /* (9c, 10n), (10c, 9n), (c, 10n), (c, 9n) */
} lines_scratch_t;

size_t nn_lines_scratch_floats(int n, int c) {
  return (size_t)n * c * (2 * NN_HW + RANKS + FILES);
}

static lines_scratch_t carve(float *scratch, int n, int c) {
  size_t board = (size_t)n * c * NN_HW;
  lines_scratch_t s = {scratch, scratch + board, scratch + 2 * board, NULL};
  s.F = s.R + (size_t)n * c * RANKS;
  return s;
}

/* V and U from x. */
static void by_line(lines_scratch_t *s, const float *x, int n, int c) {
  size_t ldv = (size_t)RANKS * n, ldu = (size_t)FILES * n;
  for (int b = 0; b < n; b++)
    for (int j = 0; j < c; j++) {
      const float *xj = x + ((size_t)b * c + j) * NN_HW;
      for (int r = 0; r < RANKS; r++)
        for (int f = 0; f < FILES; f++) {
          float v = xj[r * FILES + f];
          s->V[((size_t)j * FILES + f) * ldv + (size_t)b * RANKS + r] = v;
          s->U[((size_t)j * RANKS + r) * ldu + (size_t)b * FILES + f] = v;
        }
    }
}

void nn_lines_forward(float *y, float *scratch, const float *x, const float *wr,
                      const float *wf, int n, int c) {
  assert(n >= 1 && c >= 1);
  lines_scratch_t s = carve(scratch, n, c);
  by_line(&s, x, n, c); /* before any write: y may alias x */
  int ldv = RANKS * n, ldu = FILES * n;
  nn_sgemm(CblasNoTrans, CblasNoTrans, c, ldv, FILES * c, 1.0f, wr, FILES * c, s.V, ldv, 0.0f,
           s.R, ldv);
  nn_sgemm(CblasNoTrans, CblasNoTrans, c, ldu, RANKS * c, 1.0f, wf, RANKS * c, s.U, ldu, 0.0f,
           s.F, ldu);
  for (int b = 0; b < n; b++)
    for (int o = 0; o < c; o++) {
      const float *R = s.R + (size_t)o * ldv + (size_t)b * RANKS;
      const float *F = s.F + (size_t)o * ldu + (size_t)b * FILES;
      size_t at = ((size_t)b * c + o) * NN_HW;
      for (int r = 0; r < RANKS; r++)
        for (int f = 0; f < FILES; f++)
          y[at + r * FILES + f] = x[at + r * FILES + f] + R[r] + F[f];
    }
}

void nn_lines_backward(float *dx, float *dwr, float *dwf, float *scratch, const float *dy,
                       const float *x, const float *wr, const float *wf, int n, int c) {
  assert(n >= 1 && c >= 1);
  lines_scratch_t s = carve(scratch, n, c);
  int ldv = RANKS * n, ldu = FILES * n;
  /* dR, dF: the biases are broadcast along their lines, so their gradients sum there. */
  for (int b = 0; b < n; b++)
    for (int o = 0; o < c; o++) {
      float *dR = s.R + (size_t)o * ldv + (size_t)b * RANKS;
      float *dF = s.F + (size_t)o * ldu + (size_t)b * FILES;
      const float *g = dy + ((size_t)b * c + o) * NN_HW;
      for (int f = 0; f < FILES; f++) dF[f] = 0.0f;
      for (int r = 0; r < RANKS; r++) {
        float sum = 0.0f;
        for (int f = 0; f < FILES; f++) {
          sum += g[r * FILES + f];
          dF[f] += g[r * FILES + f];
        }
        dR[r] = sum;
      }
    }
  by_line(&s, x, n, c);
  nn_sgemm(CblasNoTrans, CblasTrans, c, FILES * c, ldv, 1.0f, s.R, ldv, s.V, ldv, 1.0f, dwr,
           FILES * c);
  nn_sgemm(CblasNoTrans, CblasTrans, c, RANKS * c, ldu, 1.0f, s.F, ldu, s.U, ldu, 1.0f, dwf,
           RANKS * c);
  /* The data gradients by line, over V and U (no longer needed), then back on the board. */
  nn_sgemm(CblasTrans, CblasNoTrans, FILES * c, ldv, c, 1.0f, wr, FILES * c, s.R, ldv, 0.0f,
           s.V, ldv);
  nn_sgemm(CblasTrans, CblasNoTrans, RANKS * c, ldu, c, 1.0f, wf, RANKS * c, s.F, ldu, 0.0f,
           s.U, ldu);
  for (int b = 0; b < n; b++)
    for (int j = 0; j < c; j++) {
      size_t at = ((size_t)b * c + j) * NN_HW;
      for (int r = 0; r < RANKS; r++)
        for (int f = 0; f < FILES; f++)
          dx[at + r * FILES + f] =
              dy[at + r * FILES + f] +
              s.V[((size_t)j * FILES + f) * ldv + (size_t)b * RANKS + r] +
              s.U[((size_t)j * RANKS + r) * ldu + (size_t)b * FILES + f];
    }
}
