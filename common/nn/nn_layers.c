/*
 * nn_layers.c: batch norm, 1x1 convolution (one GEMM per sample), fully connected
 * (one GEMM for the batch), global pooling bias (plain loops: 2c^2 multiply-adds per
 * sample, nothing next to the convolutions), ReLU and tanh, forward and backward.
 * Batch statistics are accumulated in double: a channel of a batch of 256 sums 23040
 * values, and float accumulation would cost digits the gradient checks can see.
 */
#include "nn/nn_layers.h"

#include <assert.h>
#include <math.h>

#include "nn/nn_blas.h"
#include "nn/nn_model.h"

static inline float act(float v, bool relu) { return relu && v < 0.0f ? 0.0f : v; }

double nn_bn_train_forward(float *y, float *mean, float *var, const float *x,
                           const float *gamma, const float *beta, const float *skip,
                           bool relu, int n, int c, int hw, nn_reduce_t *r) {
  assert(c <= NN_MAX_CHANNELS);
  double acc[NN_MAX_CHANNELS + 1]; /* per-channel sums, then the count */
  for (int ch = 0; ch < c; ch++) {
    double s = 0;
    for (int b = 0; b < n; b++) {
      const float *xp = x + ((size_t)b * c + ch) * hw;
      for (int i = 0; i < hw; i++) s += xp[i];
    }
    acc[ch] = s;
  }
  acc[c] = (double)n * hw;
  if (r) r->sum(r, acc, c + 1);
  double count = acc[c];
  assert(count > 0);
  for (int ch = 0; ch < c; ch++) {
    double mu = acc[ch] / count, s2 = 0;
    for (int b = 0; b < n; b++) {
      const float *xp = x + ((size_t)b * c + ch) * hw;
      for (int i = 0; i < hw; i++) {
        double d = xp[i] - mu;
        s2 += d * d;
      }
    }
    mean[ch] = (float)mu;
    acc[ch] = s2;
  }
  if (r) r->sum(r, acc, c);
  for (int ch = 0; ch < c; ch++) var[ch] = (float)(acc[ch] / count);
  nn_bn_eval_forward(y, x, gamma, beta, mean, var, skip, relu, n, c, hw);
  return count;
}

void nn_bn_eval_forward(float *y, const float *x, const float *gamma, const float *beta,
                        const float *mean, const float *var, const float *skip, bool relu,
                        int n, int c, int hw) {
  for (int b = 0; b < n; b++) {
    for (int ch = 0; ch < c; ch++) {
      size_t o = ((size_t)b * c + ch) * hw;
      float s = gamma[ch] / sqrtf(var[ch] + NN_BN_EPS);
      float t = beta[ch] - mean[ch] * s;
      if (skip) {
        for (int i = 0; i < hw; i++) y[o + i] = act(x[o + i] * s + t + skip[o + i], relu);
      } else {
        for (int i = 0; i < hw; i++) y[o + i] = act(x[o + i] * s + t, relu);
      }
    }
  }
}

void nn_bn_update_running(float *run_mean, float *run_var, const float *mean,
                          const float *var, int c, size_t count) {
  float m = NN_BN_MOMENTUM;
  double unbias = count > 1 ? (double)count / (double)(count - 1) : 1.0;
  for (int ch = 0; ch < c; ch++) {
    run_mean[ch] = (1.0f - m) * run_mean[ch] + m * mean[ch];
    run_var[ch] = (1.0f - m) * run_var[ch] + m * (float)(var[ch] * unbias);
  }
}

void nn_bn_backward(float *dx, float *dgamma, float *dbeta, const float *dy, const float *x,
                    const float *mean, const float *var, const float *gamma, int n, int c,
                    int hw, nn_reduce_t *r) {
  assert(c <= NN_MAX_CHANNELS);
  double acc[2 * NN_MAX_CHANNELS + 1]; /* sum dy (c), sum dy * xhat (c), the count */
  for (int ch = 0; ch < c; ch++) {
    float invstd = 1.0f / sqrtf(var[ch] + NN_BN_EPS);
    float mu = mean[ch];
    double sdy = 0, sdyx = 0;
    for (int b = 0; b < n; b++) {
      size_t o = ((size_t)b * c + ch) * hw;
      for (int i = 0; i < hw; i++) {
        sdy += dy[o + i];
        sdyx += (double)dy[o + i] * ((x[o + i] - mu) * invstd);
      }
    }
    dgamma[ch] += (float)sdyx;
    dbeta[ch] += (float)sdy;
    acc[ch] = sdy;
    acc[c + ch] = sdyx;
  }
  acc[2 * c] = (double)n * hw;
  if (r) r->sum(r, acc, 2 * c + 1);
  double count = acc[2 * c];
  /* dx = gamma * invstd / M * (M * dy - sum dy - xhat * sum(dy * xhat)) */
  for (int ch = 0; ch < c; ch++) {
    float invstd = 1.0f / sqrtf(var[ch] + NN_BN_EPS);
    float mu = mean[ch];
    float k = gamma[ch] * invstd;
    float mdy = (float)(acc[ch] / count), mdyx = (float)(acc[c + ch] / count);
    for (int b = 0; b < n; b++) {
      size_t o = ((size_t)b * c + ch) * hw;
      for (int i = 0; i < hw; i++) {
        float xhat = (x[o + i] - mu) * invstd;
        dx[o + i] = k * (dy[o + i] - mdy - xhat * mdyx);
      }
    }
  }
}

void nn_conv1x1_forward(float *y, const float *x, const float *w, const float *bias,
                        bool relu, int n, int cin, int cout, int hw) {
  for (int b = 0; b < n; b++) {
    float *yb = y + (size_t)b * cout * hw;
    nn_sgemm(CblasNoTrans, CblasNoTrans, cout, hw, cin, 1.0f, w, cin,
                x + (size_t)b * cin * hw, hw, 0.0f, yb, hw);
    if (bias || relu) {
      for (int co = 0; co < cout; co++) {
        float bv = bias ? bias[co] : 0.0f;
        for (int i = 0; i < hw; i++) yb[co * hw + i] = act(yb[co * hw + i] + bv, relu);
      }
    }
  }
}

void nn_conv1x1_backward(float *dx, float *dw, const float *dy, const float *x,
                         const float *w, int n, int cin, int cout, int hw) {
  for (int b = 0; b < n; b++) {
    const float *dyb = dy + (size_t)b * cout * hw;
    nn_sgemm(CblasNoTrans, CblasTrans, cout, cin, hw, 1.0f, dyb, hw,
                x + (size_t)b * cin * hw, hw, 1.0f, dw, cin);
    if (dx)
      nn_sgemm(CblasTrans, CblasNoTrans, cin, hw, cout, 1.0f, w, cin, dyb,
                  hw, 1.0f, dx + (size_t)b * cin * hw, hw);
  }
}

/* y (n, out) = act(y + b), the FC layers' epilogue. */
static void fc_bias_act(float *y, const float *b, bool relu, int n, int out) {
  if (!b && !relu) return;
  for (int s = 0; s < n; s++)
    for (int o = 0; o < out; o++)
      y[(size_t)s * out + o] = act(y[(size_t)s * out + o] + (b ? b[o] : 0.0f), relu);
}

void nn_fc_forward(float *y, const float *x, const float *w, const float *b, bool relu,
                   int n, int in, int out) {
  nn_sgemm(CblasNoTrans, CblasTrans, n, out, in, 1.0f, x, in, w, in, 0.0f,
              y, out);
  fc_bias_act(y, b, relu, n, out);
}

void nn_fc_forward_wt(float *y, const float *x, const float *wt, const float *b, bool relu,
                      int n, int in, int out) {
  nn_sgemm(CblasNoTrans, CblasNoTrans, n, out, in, 1.0f, x, in, wt, out, 0.0f, y, out);
  fc_bias_act(y, b, relu, n, out);
}

void nn_fc_backward(float *dx, float *dw, float *db, const float *dy, const float *x,
                    const float *w, int n, int in, int out) {
  nn_sgemm(CblasTrans, CblasNoTrans, out, in, n, 1.0f, dy, out, x, in, 1.0f,
              dw, in);
  for (int s = 0; s < n; s++)
    for (int o = 0; o < out; o++) db[o] += dy[(size_t)s * out + o];
  if (dx)
    nn_sgemm(CblasNoTrans, CblasNoTrans, n, in, out, 1.0f, dy, out, w, in,
                1.0f, dx, in);
}

/* The first index of the largest of v[0..hw-1] (the tie rule nn_gpool_backward documents). */
static int first_argmax(const float *v, int hw) {
  int at = 0;
  for (int i = 1; i < hw; i++)
    if (v[i] > v[at]) at = i;
  return at;
}

/* g (2c) = [mean over hw, max over hw] of one sample's x (c, hw). */
static void gpool_features(float *g, const float *x, int c, int hw) {
  for (int ch = 0; ch < c; ch++) {
    const float *xc = x + (size_t)ch * hw;
    double s = 0;
    for (int i = 0; i < hw; i++) s += xc[i];
    g[ch] = (float)(s / hw);
    g[c + ch] = xc[first_argmax(xc, hw)];
  }
}

void nn_gpool_forward(float *y, const float *x, const float *w, int n, int c, int hw) {
  assert(c <= NN_MAX_CHANNELS);
  float g[2 * NN_MAX_CHANNELS];
  for (int s = 0; s < n; s++) {
    const float *xs = x + (size_t)s * c * hw;
    float *ys = y + (size_t)s * c * hw;
    gpool_features(g, xs, c, hw); /* before any write: y may alias x */
    for (int ch = 0; ch < c; ch++) {
      const float *wc = w + (size_t)ch * 2 * c;
      double bias = 0;
      for (int j = 0; j < 2 * c; j++) bias += (double)wc[j] * g[j];
      float bv = (float)bias;
      for (int i = 0; i < hw; i++) ys[ch * hw + i] = xs[ch * hw + i] + bv;
    }
  }
}

void nn_gpool_backward(float *dx, float *dw, const float *dy, const float *x, const float *w,
                       int n, int c, int hw) {
  assert(c <= NN_MAX_CHANNELS);
  float g[2 * NN_MAX_CHANNELS], db[NN_MAX_CHANNELS];
  for (int s = 0; s < n; s++) {
    const float *xs = x + (size_t)s * c * hw, *dys = dy + (size_t)s * c * hw;
    float *dxs = dx + (size_t)s * c * hw;
    gpool_features(g, xs, c, hw);
    for (int ch = 0; ch < c; ch++) { /* db: the bias is broadcast, so its gradient sums */
      double sum = 0;
      for (int i = 0; i < hw; i++) sum += dys[ch * hw + i];
      db[ch] = (float)sum;
    }
    for (int ch = 0; ch < c; ch++)
      for (int j = 0; j < 2 * c; j++) dw[(size_t)ch * 2 * c + j] += db[ch] * g[j];
    for (int ch = 0; ch < c; ch++) {
      /* dg[j] = sum over output channels of w[o, j] db[o]: j = ch (mean), c + ch (max) */
      double dmean = 0, dmax = 0;
      for (int o = 0; o < c; o++) {
        dmean += (double)w[(size_t)o * 2 * c + ch] * db[o];
        dmax += (double)w[(size_t)o * 2 * c + c + ch] * db[o];
      }
      float km = (float)(dmean / hw);
      int am = first_argmax(xs + (size_t)ch * hw, hw);
      for (int i = 0; i < hw; i++) dxs[ch * hw + i] = dys[ch * hw + i] + km;
      dxs[ch * hw + am] += (float)dmax;
    }
  }
}

void nn_relu_backward(float *dx, const float *dy, const float *y, size_t len) {
  for (size_t i = 0; i < len; i++) dx[i] = y[i] > 0.0f ? dy[i] : 0.0f;
}

void nn_tanh_forward(float *y, const float *x, size_t len) {
  for (size_t i = 0; i < len; i++) y[i] = tanhf(x[i]);
}

void nn_tanh_backward(float *dx, const float *dy, const float *y, size_t len) {
  for (size_t i = 0; i < len; i++) dx[i] = dy[i] * (1.0f - y[i] * y[i]);
}
