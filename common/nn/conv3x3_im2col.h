/*
 * conv3x3_im2col.h: the plain im2col + cblas_sgemm 3x3 convolution (stride 1, zero
 * padding 1, 10x9 board, NCHW float32, raw weights (cout, cin, 3, 3)).
 *
 * This is the simple, obviously-correct path: the unit tests check the fast Winograd
 * kernels of conv3x3.c against it, and `xqz bench nn` times it as the baseline. It takes
 * raw (unprepared) weights. Scratch is caller-owned, sized by
 * nn_conv3x3_im2col_scratch_floats; nothing is allocated per call.
 */
#ifndef NN_CONV3X3_IM2COL_H
#define NN_CONV3X3_IM2COL_H

#include <stdbool.h>
#include <stddef.h>

/* Scratch floats any of the three im2col kernels needs for a batch of n. */
size_t nn_conv3x3_im2col_scratch_floats(int n, int cin, int cout);

/* Same contract as nn_conv3x3_forward, but w is raw: (cout, cin, 3, 3). */
void nn_conv3x3_im2col_forward(float *y, float *scratch, const float *x, const float *w,
                               const float *bias, const float *residual, bool relu,
                               int n, int cin, int cout);

/* Same contracts as nn_conv3x3_backward_data / _backward_weights. */
void nn_conv3x3_im2col_backward_data(float *dx, float *scratch, const float *dy,
                                     const float *w, int n, int cin, int cout);
void nn_conv3x3_im2col_backward_weights(float *dw, float *scratch, const float *dy,
                                        const float *x, int n, int cin, int cout);

#endif
