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
#include <stdint.h>

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

/*
 * The resident layout, for an inference tower that stays channels-last between its convs:
 * (n, 12, 11, round8(c)) floats, the 10x9 board at rows 1..10 and columns 1..9 of each
 * image's plane, channels last and padded to a multiple of 8. Every cell outside the board
 * (the border) must be zero, and stays so: nothing here writes it, so a buffer zeroed once
 * keeps it for any n up to the size it was zeroed for, as long as it is used with one c.
 * nn_conv3x3_forward converts NCHW into this layout and back around every call; a tower
 * in this layout does it once before its first conv and once after its last. Taken
 * nn_conv3x3_resident_chunk() images at a time through the whole tower, its buffers and
 * the kernels' scratch stay in L2.
 */
size_t nn_conv3x3_resident_floats(int n, int c);
int nn_conv3x3_resident_chunk(void);
/* The board cells of P (n, c) <- x (n, c, 10, 9) NCHW (padded channels get zeros). */
void nn_conv3x3_to_resident(float *P, const float *x, int n, int c);
/* x (n, c, 10, 9) NCHW <- the board cells of P. */
void nn_conv3x3_from_resident(float *x, const float *P, int n, int c);
/*
 * nn_conv3x3_forward's convolution, bits included, on the resident layout: the board cells
 * of Py (n, cout) = act(conv(Px (n, cin), w) + bias + Pres). Py may be Pres (n, cout) or
 * NULL; not Px. Padded channels come out zero when Pres's are.
 */
void nn_conv3x3_forward_resident(float *Py, float *scratch, const float *Px, const float *wp,
                                 const float *bias, const float *Pres, bool relu, int n,
                                 int cin, int cout);

/*
 * The two forward kernels with the GEMMs in bf16 (nn_bf16.h): wp16 is nn_bf16_prepare's copy
 * of the prepared weights; everything else as above, in fp32. The CPU must have
 * avx512_bf16 (nn_bf16_cpu_supported).
 */
void nn_conv3x3_forward_bf16(float *y, float *scratch, const float *x, const uint16_t *wp16,
                             const float *bias, const float *residual, bool relu, int n,
                             int cin, int cout);
void nn_conv3x3_forward_resident_bf16(float *Py, float *scratch, const float *Px,
                                      const uint16_t *wp16, const float *bias,
                                      const float *Pres, bool relu, int n, int cin, int cout);

/* dx = gradient of the conv's input: (n, cin, 10, 9), overwritten.
 * dy: (n, cout, 10, 9); w: raw weights (cout, cin, 3, 3). */
void nn_conv3x3_backward_data(float *dx, float *scratch, const float *dy, const float *w,
                              int n, int cin, int cout);

/* dw += gradient of the weights: (cout, cin, 3, 3), accumulated (caller zeroes).
 * dy: (n, cout, 10, 9); x: the forward input (n, cin, 10, 9). */
void nn_conv3x3_backward_weights(float *dw, float *scratch, const float *dy, const float *x,
                                 int n, int cin, int cout);

#endif
