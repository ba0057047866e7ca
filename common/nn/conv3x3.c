/*
 * conv3x3.c: the fast 3x3 convolutions of the residual tower (see conv3x3.h).
 * Step 1: forwards to the im2col reference; prepared weights are a copy of the raw ones.
 */
#include "nn/conv3x3.h"

#include <string.h>

#include "nn/conv3x3_im2col.h"

size_t nn_conv3x3_prepared_floats(int cin, int cout) { return (size_t)cin * cout * 9; }

void nn_conv3x3_prepare(float *wp, const float *w, int cin, int cout) {
  memcpy(wp, w, sizeof(float) * nn_conv3x3_prepared_floats(cin, cout));
}

size_t nn_conv3x3_scratch_floats(int n, int cin, int cout) {
  size_t a = nn_conv3x3_im2col_scratch_floats(n, cin, cout);
  size_t b = nn_conv3x3_im2col_scratch_floats(n, cout, cin);
  return a > b ? a : b;
}

void nn_conv3x3_forward(float *y, float *scratch, const float *x, const float *wp,
                        const float *bias, const float *residual, bool relu, int n, int cin,
                        int cout) {
  nn_conv3x3_im2col_forward(y, scratch, x, wp, bias, residual, relu, n, cin, cout);
}

void nn_conv3x3_backward_data(float *dx, float *scratch, const float *dy, const float *w,
                              int n, int cin, int cout) {
  nn_conv3x3_im2col_backward_data(dx, scratch, dy, w, n, cin, cout);
}

void nn_conv3x3_backward_weights(float *dw, float *scratch, const float *dy, const float *x,
                                 int n, int cin, int cout) {
  nn_conv3x3_im2col_backward_weights(dw, scratch, dy, x, n, cin, cout);
}
