/*
 * nn_lines.h: the rank and file bias of a residual block (docs/network.md, "Line
 * convolutions"). A 1x9 convolution without padding reads a whole rank and a 10x1 one a
 * whole file, each giving one value per channel and line; both come back as a bias,
 * broadcast along their line:
 *   y[s, o, r, f] = x[s, o, r, f] + R[s, o, r] + F[s, o, f]
 *   R[s, o, r] = sum_{j, f'} wr[o, j, f'] x[s, j, r, f']     (wr: (c, c, 1, 9))
 *   F[s, o, f] = sum_{j, r'} wf[o, j, r'] x[s, j, r', f]     (wf: (c, c, 10, 1))
 * so every square sees its whole rank and file in one layer, where a 3x3 tower needs
 * four more layers to see a rook's line across the board. The weights depend on the
 * square along the line (f', r'), so the bias can tell the palace from the river.
 * Activations are NCHW on the 10 x 9 board (NN_HW); per sample, nothing crosses the batch.
 * Each direction is one GEMM over the batch (2 c^2 90 multiply-adds per sample in all,
 * 2/9 of one 3x3 convolution), on copies of x laid out by line in the caller's scratch.
 */
#ifndef NN_LINES_H
#define NN_LINES_H

#include <stddef.h>

/* Floats of scratch the two functions need for n samples of c channels. */
size_t nn_lines_scratch_floats(int n, int c);
/* y, x: (n, c, 90); y may alias x. scratch: nn_lines_scratch_floats(n, c) floats. */
void nn_lines_forward(float *y, float *scratch, const float *x, const float *wr,
                      const float *wf, int n, int c);
/* dx (n, c, 90) = dL/dx from dy = dL/dy (dx may alias dy); dwr, dwf +=. x: the forward
 * input. */
void nn_lines_backward(float *dx, float *dwr, float *dwf, float *scratch, const float *dy,
                       const float *x, const float *wr, const float *wf, int n, int c);

#endif
