/*
 * conv3x3.h: the 3x3 convolutions of the residual tower, on the 10x9 Xiangqi board,
 * stride 1, zero padding 1, no bias inside the conv (batch norm follows it, or is folded
 * into a per-channel bias that the forward kernel adds).
 *
 * Layout: activations NCHW float32, (N, C, 10, 9); weights (Cout, Cin, 3, 3) as PyTorch
 * stores them. The forward kernel works on weights prepared once by
 * nn_conv3x3_prepare (the layout the fast algorithm wants, e.g. Winograd-transformed);
 * re-prepare after every optimiser step. All scratch memory is caller-owned and sized by
 * the *_floats functions, so nothing is allocated per call.
 *
 * BLAS calls made here are single-threaded per calling thread by policy (see
 * docs/tuning.md); the caller sets openblas_set_num_threads.
 */
#ifndef NN_CONV3X3_H
#define NN_CONV3X3_H

#include <stdbool.h>
#include <stddef.h>

#define NN_BOARD_H 10
#define NN_BOARD_W 9
#define NN_BOARD_HW 90

/* Floats needed for prepared weights of a (cout, cin) conv. */
size_t nn_conv3x3_prepared_floats(int cin, int cout);
/* w: (cout, cin, 3, 3) -> wp: (nn_conv3x3_prepared_floats) */
void nn_conv3x3_prepare(float *wp, const float *w, int cin, int cout);

/* Scratch floats any of the three kernels below needs for a batch of n. */
size_t nn_conv3x3_scratch_floats(int n, int cin, int cout);

/*
 * y = act(conv(x, w) + bias[c] + residual)
 *   y: (n, cout, 10, 9) output; may not alias x; may alias residual.
 *   x: (n, cin, 10, 9); wp: prepared weights; bias: (cout) or NULL;
 *   residual: (n, cout, 10, 9) or NULL; relu: apply max(0, .) last.
 */
void nn_conv3x3_forward(float *y, float *scratch, const float *x, const float *wp,
                        const float *bias, const float *residual, bool relu,
                        int n, int cin, int cout);

/* dx = gradient of the conv's input: (n, cin, 10, 9), overwritten.
 * dy: (n, cout, 10, 9); w: raw weights (cout, cin, 3, 3). */
void nn_conv3x3_backward_data(float *dx, float *scratch, const float *dy, const float *w,
                              int n, int cin, int cout);

/* dw += gradient of the weights: (cout, cin, 3, 3), accumulated (caller zeroes).
 * dy: (n, cout, 10, 9); x: the forward input (n, cin, 10, 9). */
void nn_conv3x3_backward_weights(float *dw, float *scratch, const float *dy, const float *x,
                                 int n, int cin, int cout);

#endif
