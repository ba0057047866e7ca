/*
 * conv3x3_im2col.c: the reference 3x3 convolution by im2col + GEMM, one image at
 * a time. Per image n the column matrix is col (cin*9, 90): row ci*9 + ky*3 + kx holds
 * x[n][ci] shifted by (ky-1, kx-1) with zeros outside the board, so that
 *   forward:          y_n (cout, 90)    = W (cout, cin*9) . col (cin*9, 90)
 *   backward data:    dcol (cin*9, 90)  = W^T . dy_n, then col2im sums it into dx_n
 *   backward weights: dW (cout, cin*9) += dy_n (cout, 90) . col^T
 * Simple and correct; the fast path is Winograd in conv3x3.c.
 */
#include "nn/conv3x3_im2col.h"

#include "nn/conv3x3.h"

#include <assert.h>
#include <string.h>

#include "nn/nn_blas.h"

#define HW NN_BOARD_HW

size_t nn_conv3x3_im2col_scratch_floats(int n, int cin, int cout) {
  (void)n;
  (void)cout;
  return (size_t)cin * 9 * HW;
}

/* col: (cin*9, 90) <- x: (cin, 10, 9) of one image. */
static void im2col(float *col, const float *x, int cin) {
  for (int ci = 0; ci < cin; ci++) {
    const float *xc = x + (size_t)ci * HW; /* (10, 9) */
    for (int ky = 0; ky < 3; ky++)
      for (int kx = 0; kx < 3; kx++) {
        float *row = col + ((size_t)ci * 9 + ky * 3 + kx) * HW; /* (10, 9) */
        for (int h = 0; h < NN_BOARD_H; h++) {
          int sh = h + ky - 1;
          for (int w = 0; w < NN_BOARD_W; w++) {
            int sw = w + kx - 1;
            bool in = sh >= 0 && sh < NN_BOARD_H && sw >= 0 && sw < NN_BOARD_W;
            row[h * NN_BOARD_W + w] = in ? xc[sh * NN_BOARD_W + sw] : 0.0f;
          }
        }
      }
  }
}

/* dx: (cin, 10, 9) of one image, overwritten <- sum of the shifted rows of dcol. */
static void col2im(float *dx, const float *dcol, int cin) {
  memset(dx, 0, sizeof(float) * (size_t)cin * HW);
  for (int ci = 0; ci < cin; ci++) {
    float *dxc = dx + (size_t)ci * HW; /* (10, 9) */
    for (int ky = 0; ky < 3; ky++)
      for (int kx = 0; kx < 3; kx++) {
        const float *row = dcol + ((size_t)ci * 9 + ky * 3 + kx) * HW; /* (10, 9) */
        for (int h = 0; h < NN_BOARD_H; h++) {
          int sh = h + ky - 1;
          if (sh < 0 || sh >= NN_BOARD_H) continue;
          for (int w = 0; w < NN_BOARD_W; w++) {
            int sw = w + kx - 1;
            if (sw < 0 || sw >= NN_BOARD_W) continue;
            dxc[sh * NN_BOARD_W + sw] += row[h * NN_BOARD_W + w];
          }
        }
      }
  }
}

void nn_conv3x3_im2col_forward(float *y, float *scratch, const float *x, const float *w,
                               const float *bias, const float *residual, bool relu,
                               int n, int cin, int cout) {
  assert(y && scratch && x && w && n >= 0 && cin > 0 && cout > 0);
  assert(y != x);
  float *col = scratch; /* (cin*9, 90) */
  const size_t img_in = (size_t)cin * HW, img_out = (size_t)cout * HW;
  for (int i = 0; i < n; i++) {
    float *yi = y + i * img_out; /* (cout, 90) */
    float beta = 0.0f;
    if (residual) {
      /* Accumulate onto the residual; y may alias it, so copy only when distinct. */
      const float *ri = residual + i * img_out;
      if (ri != yi) memcpy(yi, ri, sizeof(float) * img_out);
      beta = 1.0f;
    }
    im2col(col, x + i * img_in, cin);
    nn_sgemm(CblasNoTrans, CblasNoTrans, cout, HW, cin * 9, 1.0f, w,
                cin * 9, col, HW, beta, yi, HW);
    for (int co = 0; co < cout; co++) {
      float *yc = yi + (size_t)co * HW; /* (90) */
      float b = bias ? bias[co] : 0.0f;
      if (relu)
        for (int p = 0; p < HW; p++) {
          float v = yc[p] + b;
          yc[p] = v > 0.0f ? v : 0.0f;
        }
      else if (bias)
        for (int p = 0; p < HW; p++) yc[p] += b;
    }
  }
}

void nn_conv3x3_im2col_backward_data(float *dx, float *scratch, const float *dy,
                                     const float *w, int n, int cin, int cout) {
  assert(dx && scratch && dy && w && n >= 0 && cin > 0 && cout > 0);
  float *dcol = scratch; /* (cin*9, 90) */
  const size_t img_in = (size_t)cin * HW, img_out = (size_t)cout * HW;
  for (int i = 0; i < n; i++) {
    nn_sgemm(CblasTrans, CblasNoTrans, cin * 9, HW, cout, 1.0f, w,
                cin * 9, dy + i * img_out, HW, 0.0f, dcol, HW);
    col2im(dx + i * img_in, dcol, cin);
  }
}

void nn_conv3x3_im2col_backward_weights(float *dw, float *scratch, const float *dy,
                                        const float *x, int n, int cin, int cout) {
  assert(dw && scratch && dy && x && n >= 0 && cin > 0 && cout > 0);
  float *col = scratch; /* (cin*9, 90) */
  const size_t img_in = (size_t)cin * HW, img_out = (size_t)cout * HW;
  for (int i = 0; i < n; i++) {
    im2col(col, x + i * img_in, cin);
    nn_sgemm(CblasNoTrans, CblasTrans, cout, cin * 9, HW, 1.0f,
                dy + i * img_out, HW, col, HW, 1.0f, dw, cin * 9);
  }
}
