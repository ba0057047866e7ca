/*
 * nn_backward.c: backpropagation through the heads and the residual tower, mirroring
 * nn_forward. Three tower-sized buffers suffice: dA (gradient of the current layer's
 * output), dB (of the block's inner activation, first with its global pooling or line
 * bias if the block has one, then without) and dskip (the gradient the skip connection carries to
 * the block's input).
 */
#include "nn/nn_backward.h"

#include <assert.h>
#include <string.h>

#include "nn/conv3x3.h"
#include "nn/nn_fc_rows.h"
#include "nn/nn_forward.h"
#include "nn/nn_layers.h"
#include "nn/nn_lines.h"

/* The policy FC's backward at each sample's legal rows (p->policy_mask): the masked
 * loss's gradient is zero at every other logit. */
static void policy_fc_back_legal(nn_plan_t *p, nn_model_t *m, int n) {
  int pin = m->arch.policy_channels * NN_HW;
  int rows[NN_POLICY_SIZE];
  float d[NN_POLICY_SIZE];
  for (int s = 0; s < n; s++) {
    int k = nn_fc_rows_of_mask(rows, p->policy_mask + (size_t)s * NN_POLICY_SIZE,
                               NN_POLICY_SIZE);
    const float *dl = p->dlogits + (size_t)s * NN_POLICY_SIZE;
    for (int j = 0; j < k; j++) d[j] = dl[rows[j]];
    nn_fc_rows_backward(p->dpy + (size_t)s * pin, m->g.pol_fc_w, m->g.pol_fc_b, d,
                        p->py + (size_t)s * pin, m->p.pol_fc_w, pin, rows, k);
  }
}

/* Backward through "y = relu(bn(z))" of a head: dy (gradient of y, overwritten) -> the
 * head's 1x1 conv -> accumulated into dt (gradient of the tower output). */
static void head_back(nn_plan_t *p, float *dt, float *dy, nn_convbn_t *cp, nn_convbn_t *cg,
                      const float *y, const float *z, const float *mean, const float *var,
                      const float *t, int n) {
  size_t len = (size_t)n * cp->cout * NN_HW;
  nn_relu_backward(dy, dy, y, len);
  nn_bn_backward(dy, cg->gamma, cg->beta, dy, z, mean, var, cp->gamma, n, cp->cout, NN_HW,
                 p->reduce);
  nn_conv1x1_backward(dt, cg->w, dy, t, cp->w, n, cp->cin, cp->cout, NN_HW);
}

/* Backward through one tower layer l: d (gradient of the BN output, before ReLU it is
 * already applied by the caller) -> BN -> conv weights; data gradient into dx if non-NULL. */
static void conv_back(nn_plan_t *p, nn_model_t *m, int l, float *d, float *dx,
                      const float *x, int n) {
  nn_convbn_t *cp = &m->p.tower[l], *cg = &m->g.tower[l];
  nn_bn_backward(d, cg->gamma, cg->beta, d, p->z[l], p->bn_mean[l], p->bn_var[l], cp->gamma, n,
                 cp->cout, NN_HW, p->reduce);
  if (n == 0) return; /* an empty shard only takes part in the reductions */
  nn_conv3x3_backward_weights(cg->w, p->scratch, d, x, n, cp->cin, cp->cout);
  if (dx) nn_conv3x3_backward_data(dx, p->scratch, d, cp->w, n, cp->cin, cp->cout);
}

void nn_backward(nn_plan_t *p, nn_model_t *m, const float *planes, int n) {
  assert(p->training && n >= (p->reduce ? 0 : 1) && n <= p->max_n);
  const nn_arch_t *a = &m->arch;
  int C = a->channels, L = m->nconvs;
  int pin = a->policy_channels * NN_HW, vin = a->value_channels * NN_HW;
  size_t tower = (size_t)n * C * NN_HW;
  const float *t = p->y[L - 1];

  /* value head: tanh -> fc2 -> relu -> fc1 -> relu/BN/1x1 conv */
  nn_tanh_backward(p->dvalue, p->dvalue, p->value, (size_t)n);
  memset(p->dvh, 0, (size_t)n * a->value_hidden * sizeof(float));
  nn_fc_backward(p->dvh, m->g.val_fc2_w, m->g.val_fc2_b, p->dvalue, p->vh, m->p.val_fc2_w, n,
                 a->value_hidden, 1);
  nn_relu_backward(p->dvh, p->dvh, p->vh, (size_t)n * a->value_hidden);
  memset(p->dvy, 0, (size_t)n * vin * sizeof(float));
  nn_fc_backward(p->dvy, m->g.val_fc1_w, m->g.val_fc1_b, p->dvh, p->vy, m->p.val_fc1_w, n, vin,
                 a->value_hidden);
  memset(p->dA, 0, tower * sizeof(float));
  head_back(p, p->dA, p->dvy, &m->p.val, &m->g.val, p->vy, p->vz, p->vmean, p->vvar, t, n);

  /* policy head: fc -> relu/BN/1x1 conv */
  memset(p->dpy, 0, (size_t)n * pin * sizeof(float));
  if (p->policy_mask)
    policy_fc_back_legal(p, m, n);
  else
    nn_fc_backward(p->dpy, m->g.pol_fc_w, m->g.pol_fc_b, p->dlogits, p->py, m->p.pol_fc_w, n,
                   pin, NN_POLICY_SIZE);
  head_back(p, p->dA, p->dpy, &m->p.pol, &m->g.pol, p->py, p->pz, p->pmean, p->pvar, t, n);

  /* survival head: 1x1 conv with bias, straight from the tower output */
  if (m->p.surv_w && n > 0) {
    nn_conv1x1_backward(p->dA, m->g.surv_w, p->dsurv, t, m->p.surv_w, n, C, 1, NN_HW);
    double db = 0;
    for (size_t i = 0; i < (size_t)n * NN_HW; i++) db += p->dsurv[i];
    m->g.surv_b[0] += (float)db;
  }
  /* opponent-reply head: a 1x1 conv to two channels, no bias */
  if (m->p.reply_w && n > 0)
    nn_conv1x1_backward(p->dA, m->g.reply_w, p->dreply, t, m->p.reply_w, n, C, 2, NN_HW);

  /* tower, last block first; dA holds the gradient of the block's output */
  for (int b = a->blocks - 1; b >= 0; b--) {
    int l1 = 1 + 2 * b, l2 = 2 + 2 * b;
    nn_relu_backward(p->dA, p->dA, p->y[l2], tower);
    memcpy(p->dskip, p->dA, tower * sizeof(float));
    conv_back(p, m, l2, p->dA, p->dB, nn_forward_conv_input(p, planes, l2), n);
    if (p->gy[b] && m->p.gpool_w[b]) /* dB: gradient of y1 + bias -> of y1 */
      nn_gpool_backward(p->dB, m->g.gpool_w[b], p->dB, p->y[l1], m->p.gpool_w[b], n, C, NN_HW);
    else if (p->gy[b] && n > 0)
      nn_lines_backward(p->dB, m->g.rank_w[b], m->g.file_w[b], p->scratch, p->dB, p->y[l1],
                        m->p.rank_w[b], m->p.file_w[b], n, C);
    nn_relu_backward(p->dB, p->dB, p->y[l1], tower);
    conv_back(p, m, l1, p->dB, p->dA, p->y[l1 - 1], n);
    for (size_t i = 0; i < tower; i++) p->dA[i] += p->dskip[i];
  }
  nn_relu_backward(p->dA, p->dA, p->y[0], tower);
  conv_back(p, m, 0, p->dA, NULL, planes, n);
}
