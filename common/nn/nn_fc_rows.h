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

/*
 * y[j] = b[rows[j]] + sum_i w[rows[j] * in + i] x[i], for j < nrows.
 *   x: (in); w: (out, in) row-major, the FC's own layout; b: (out) or NULL;
 *   rows: nrows indices into the outputs, any order, repeats allowed.
 * Each y[j] depends only on x and its own row of w (not on the other rows asked for).
 */
void nn_fc_rows(float *y, const float *x, const float *w, const float *b, int in,
                const int *rows, int nrows);

#endif
