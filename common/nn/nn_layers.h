/*
 * nn_layers.h: the layer kernels of the network other than the 3x3 convolution
 * (conv3x3.h): batch norm, 1x1 convolution, fully connected, global pooling bias, ReLU
 * and tanh, each with its backward twin. Arguments follow one order: outputs, caches, inputs (const), sizes.
 * Activations are NCHW float32; hw is the spatial size (90 on the board).
 *
 * Backward kernels *accumulate* parameter gradients (dw, dgamma, dbeta, db: +=) so a
 * whole-net backward pass needs only one zeroing of the gradient array. Input gradients
 * are overwritten (dx =) unless a comment says otherwise.
 */
#ifndef NN_LAYERS_H
#define NN_LAYERS_H

#include <stdbool.h>
#include <stddef.h>

/*
 * An all-reduce across the shards of one data-parallel batch (nn_train_pool.h): sum
 * adds v (len doubles) over every shard, in a fixed shard order, and writes the total
 * back to v in each shard, so every shard sees the same bits. rank 0 is the shard that
 * owns the model's running statistics. Batch norm takes NULL for one unsharded batch.
 */
typedef struct nn_reduce nn_reduce_t;
struct nn_reduce {
  void (*sum)(nn_reduce_t *r, double *v, int len);
  int rank;
};

/*
 * Batch norm in training mode, fused with an optional skip and ReLU:
 *   y = act(gamma * (x - mean) / sqrt(var + eps) + beta + skip)
 * mean, var: (c) written, the batch statistics over (n, hw) (var biased, as used for
 * normalising). y: (n, c, hw) may alias x or skip; x: (n, c, hw); skip: (n, c, hw) or NULL.
 * With a reducer r, the statistics are those of every shard's (n, hw) together (n may
 * be 0 in a shard). Returns the count of values they cover (n * hw over all shards).
 */
double nn_bn_train_forward(float *y, float *mean, float *var, const float *x,
                           const float *gamma, const float *beta, const float *skip,
                           bool relu, int n, int c, int hw, nn_reduce_t *r);
/* Batch norm with given statistics (eval mode: running mean and var), same fusion. */
void nn_bn_eval_forward(float *y, const float *x, const float *gamma, const float *beta,
                        const float *mean, const float *var, const float *skip, bool relu,
                        int n, int c, int hw);
/* Running statistics update, PyTorch style (momentum NN_BN_MOMENTUM, unbiased variance
 * var * count / (count - 1) folded into run_var). count = n * hw. */
void nn_bn_update_running(float *run_mean, float *run_var, const float *mean,
                          const float *var, int c, size_t count);
/* dx (n, c, hw) = dL/dx of the training-mode BN (may alias dy); dgamma, dbeta (c) +=.
 * dy: gradient of the BN output (before skip and ReLU); x: the BN input. With a reducer
 * r (the one given to the forward pass), dx uses the sums over every shard, while
 * dgamma and dbeta get this shard's share (the shards' gradients are summed later). */
void nn_bn_backward(float *dx, float *dgamma, float *dbeta, const float *dy, const float *x,
                    const float *mean, const float *var, const float *gamma, int n, int c,
                    int hw, nn_reduce_t *r);

/* y (n, cout, hw) = act(w (cout, cin) . x (n, cin, hw) + bias[cout]); bias may be NULL. */
void nn_conv1x1_forward(float *y, const float *x, const float *w, const float *bias,
                        bool relu, int n, int cin, int cout, int hw);
/* dx (n, cin, hw) += w^T . dy (dx may be NULL); dw (cout, cin) += dy . x^T. */
void nn_conv1x1_backward(float *dx, float *dw, const float *dy, const float *x,
                         const float *w, int n, int cin, int cout, int hw);

/* y (n, out) = act(x (n, in) . w^T + b); w: (out, in); b: (out) or NULL. */
void nn_fc_forward(float *y, const float *x, const float *w, const float *b, bool relu,
                   int n, int in, int out);
/* The same with the weights stored transposed: wt (in, out). */
void nn_fc_forward_wt(float *y, const float *x, const float *wt, const float *b, bool relu,
                      int n, int in, int out);
/* dx (n, in) += dy . w (dx may be NULL); dw (out, in) += dy^T . x; db (out) += sum dy. */
void nn_fc_backward(float *dx, float *dw, float *db, const float *dy, const float *x,
                    const float *w, int n, int in, int out);

/*
 * Global pooling bias (KataGo's, reduced to one FC): per sample, the channel means and
 * maxima of x over the board, g = [mean_hw(x), max_hw(x)] (2c), pass through w and come
 * back as one bias per channel, broadcast over the board:
 *   y[s, ch, i] = x[s, ch, i] + sum_j w[ch, j] g[s, j]
 * y, x: (n, c, hw), y may alias x; w: (c, 2c). Per sample: nothing crosses the batch.
 */
void nn_gpool_forward(float *y, const float *x, const float *w, int n, int c, int hw);
/* dx (n, c, hw) = dL/dx from dy = dL/dy (dx may alias dy); dw (c, 2c) +=. x: the forward
 * input. The max's gradient goes to the first square (lowest index) holding the maximum,
 * as PyTorch's max(dim) with indices routes it; exact ties are otherwise measure zero. */
void nn_gpool_backward(float *dx, float *dw, const float *dy, const float *x, const float *w,
                       int n, int c, int hw);

/* dx = dy where y > 0, else 0 (y is the ReLU output); dx may alias dy. */
void nn_relu_backward(float *dx, const float *dy, const float *y, size_t len);
/* y = tanh(x); dx = dy * (1 - y^2) from the output y. Both may work in place. */
void nn_tanh_forward(float *y, const float *x, size_t len);
void nn_tanh_backward(float *dx, const float *dy, const float *y, size_t len);

#endif
