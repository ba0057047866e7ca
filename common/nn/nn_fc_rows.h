/*
 * nn_fc_rows.h: a fully connected layer evaluated at chosen outputs only.
 *
 * The policy FC maps 180 inputs (the tiny net) to 2,086 move logits, but a position has
 * about 40 legal moves and the search reads only theirs. Computing those rows of W x
 * alone costs about a fiftieth of the whole product, which was a quarter of a self-play
 * inference (docs/network-performance.md, "Legal moves only").
 */
#ifndef NN_FC_ROWS_H
#define NN_FC_ROWS_H

#include <stdint.h>

/* rows <- the indices of mask's nonzero entries among its first out, in order; returns
 * how many (rows has room for out). */
int nn_fc_rows_of_mask(int *rows, const uint8_t *mask, int out);

/*
 * y[j] = b[rows[j]] + sum_i w[rows[j] * in + i] x[i], for j < nrows.
 *   x: (in); w: (out, in) row-major, the FC's own layout; b: (out) or NULL;
 *   rows: nrows indices into the outputs, any order, repeats allowed.
 * Each y[j] depends only on x and its own row of w (not on the other rows asked for).
 */
void nn_fc_rows(float *y, const float *x, const float *w, const float *b, int in,
                const int *rows, int nrows);

/*
 * The backward twin at the same rows, for a loss whose gradient is zero at every other
 * output (the policy's masked cross-entropy): for j < nrows, with d = dy[j] and r = rows[j],
 *   dx[i] += d w[r * in + i],   dw[r * in + i] += d x[i],   db[r] += d (db may be NULL).
 * dx (in) and dw, db are accumulated; rows with d == 0 are skipped.
 */
void nn_fc_rows_backward(float *dx, float *dw, float *db, const float *dy, const float *x,
                         const float *w, int in, const int *rows, int nrows);

#endif
