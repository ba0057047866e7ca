/* nn_loss.c: masked softmax, cross-entropy + MSE head losses, the survival head's binary
 * cross-entropy, the reply head's two square cross-entropies and the L2 term. */
#include "nn/nn_loss.h"

#include <math.h>
#include <string.h>

void nn_masked_softmax(float *probs, const float *logits, const uint8_t *mask, int n) {
  for (int s = 0; s < n; s++) {
    const float *l = logits + (size_t)s * NN_POLICY_SIZE;
    float *p = probs + (size_t)s * NN_POLICY_SIZE;
    const uint8_t *mk = mask ? mask + (size_t)s * NN_POLICY_SIZE : NULL;
    float mx = -INFINITY;
    for (int k = 0; k < NN_POLICY_SIZE; k++)
      if ((!mk || mk[k]) && l[k] > mx) mx = l[k];
    if (mx == -INFINITY) { /* no legal move */
      memset(p, 0, NN_POLICY_SIZE * sizeof(float));
      continue;
    }
    double sum = 0;
    for (int k = 0; k < NN_POLICY_SIZE; k++) {
      float e = (!mk || mk[k]) ? expf(l[k] - mx) : 0.0f;
      p[k] = e;
      sum += e;
    }
    float inv = (float)(1.0 / sum);
    for (int k = 0; k < NN_POLICY_SIZE; k++) p[k] *= inv;
  }
}

void nn_loss_heads_shard(float *dlogits, float *dvalue, const float *logits,
                         const float *value, const nn_batch_t *b, const nn_loss_cfg_t *cfg,
                         int n_total, double sums[2]) {
  int n = b->n;
  double ce = 0, mse = 0;
  float wp = cfg->policy_weight / (float)n_total, wv = cfg->value_weight / (float)n_total;
  nn_masked_softmax(dlogits, logits, b->mask, n);
  for (int s = 0; s < n; s++) {
    float *d = dlogits + (size_t)s * NN_POLICY_SIZE;
    const float *l = logits + (size_t)s * NN_POLICY_SIZE;
    const uint8_t *mk = b->mask ? b->mask + (size_t)s * NN_POLICY_SIZE : NULL;
    /* log p_k = l_k - logsumexp over legal moves; recomputed in double for the loss. */
    float mx = -INFINITY;
    for (int k = 0; k < NN_POLICY_SIZE; k++)
      if ((!mk || mk[k]) && l[k] > mx) mx = l[k];
    double lse = 0;
    for (int k = 0; k < NN_POLICY_SIZE; k++)
      if (!mk || mk[k]) lse += exp((double)l[k] - mx);
    lse = log(lse) + mx;
    double pisum = 0;
    for (int32_t e = b->pi_offset[s]; e < b->pi_offset[s + 1]; e++) {
      int k = b->pi[e].index;
      if (k < 0 || k >= NN_POLICY_SIZE || (mk && !mk[k])) continue;
      pisum += b->pi[e].prob;
      ce -= b->pi[e].prob * ((double)l[k] - lse);
    }
    /* dL/dl_k = wp * (p_k * sum(pi) - pi_k) */
    for (int k = 0; k < NN_POLICY_SIZE; k++) d[k] *= (float)(wp * pisum);
    for (int32_t e = b->pi_offset[s]; e < b->pi_offset[s + 1]; e++) {
      int k = b->pi[e].index;
      if (k < 0 || k >= NN_POLICY_SIZE || (mk && !mk[k])) continue;
      d[k] -= wp * b->pi[e].prob;
    }
    double dv = (double)value[s] - b->z[s];
    mse += dv * dv;
    dvalue[s] = (float)(2.0 * wv * dv);
  }
  sums[0] = ce;
  sums[1] = mse;
}

void nn_loss_heads(float *dlogits, float *dvalue, const float *logits, const float *value,
                   const nn_batch_t *b, const nn_loss_cfg_t *cfg, nn_loss_t *out) {
  double sums[2];
  nn_loss_heads_shard(dlogits, dvalue, logits, value, b, cfg, b->n, sums);
  out->policy = sums[0] / b->n;
  out->value = sums[1] / b->n;
  out->l2 = 0;
  out->survival = 0;
  out->reply = 0;
  out->total = cfg->policy_weight * out->policy + cfg->value_weight * out->value;
}

double nn_loss_survival_shard(float *dsurv, const float *logits, const nn_batch_t *b,
                              const nn_loss_cfg_t *cfg, int n_total) {
  double sum = 0;
  memset(dsurv, 0, (size_t)b->n * NN_HW * sizeof(float));
  if (!b->surv_mask) return 0;
  for (int s = 0; s < b->n; s++) {
    const uint8_t *mk = b->surv_mask + (size_t)s * NN_HW, *y = b->surv_target + (size_t)s * NN_HW;
    const float *l = logits + (size_t)s * NN_HW;
    float *d = dsurv + (size_t)s * NN_HW;
    int k = 0;
    for (int i = 0; i < NN_HW; i++) k += mk[i] != 0;
    if (k == 0) continue;
    /* BCE with logits, stable for any x: max(x, 0) - x y + log(1 + exp(-|x|)); its
     * gradient is sigmoid(x) - y. */
    double bce = 0;
    float g = cfg->survival_weight / ((float)n_total * (float)k);
    for (int i = 0; i < NN_HW; i++) {
      if (!mk[i]) continue;
      double x = l[i], t = y[i] ? 1.0 : 0.0;
      bce += (x > 0 ? x : 0) - x * t + log1p(exp(-fabs(x)));
      d[i] = g * (float)(1.0 / (1.0 + exp(-x)) - t);
    }
    sum += bce / k;
  }
  return sum;
}

void nn_loss_survival(float *dsurv, const float *logits, const nn_batch_t *b,
                      const nn_loss_cfg_t *cfg, nn_loss_t *out) {
  out->survival = nn_loss_survival_shard(dsurv, logits, b, cfg, b->n) / b->n;
  out->total += cfg->survival_weight * out->survival;
}

/* Cross-entropy of the softmax over the 90 logits l against square y, with its gradient
 * g * (softmax - onehot(y)) into d. */
static double square_ce(float *d, const float *l, int y, float g) {
  double mx = l[0];
  for (int i = 1; i < NN_HW; i++)
    if (l[i] > mx) mx = l[i];
  double sum = 0;
  for (int i = 0; i < NN_HW; i++) sum += exp((double)l[i] - mx);
  double lse = log(sum) + mx;
  for (int i = 0; i < NN_HW; i++) d[i] = g * (float)exp((double)l[i] - lse);
  d[y] -= g;
  return lse - l[y];
}

double nn_loss_reply_shard(float *dreply, const float *logits, const nn_batch_t *b,
                           const nn_loss_cfg_t *cfg, int n_total) {
  double sum = 0;
  memset(dreply, 0, (size_t)b->n * 2 * NN_HW * sizeof(float));
  if (!b->reply) return 0;
  float g = cfg->reply_weight / (2.0f * (float)n_total);
  for (int s = 0; s < b->n; s++) {
    int from = b->reply[2 * s], to = b->reply[2 * s + 1];
    if (from < 0 || from >= NN_HW || to < 0 || to >= NN_HW) continue; /* no target */
    const float *l = logits + (size_t)s * 2 * NN_HW;
    float *d = dreply + (size_t)s * 2 * NN_HW;
    sum += (square_ce(d, l, from, g) + square_ce(d + NN_HW, l + NN_HW, to, g)) / 2;
  }
  return sum;
}

void nn_loss_reply(float *dreply, const float *logits, const nn_batch_t *b,
                   const nn_loss_cfg_t *cfg, nn_loss_t *out) {
  out->reply = nn_loss_reply_shard(dreply, logits, b, cfg, b->n) / b->n;
  out->total += cfg->reply_weight * out->reply;
}

double nn_loss_l2_range(nn_model_t *m, const nn_loss_cfg_t *cfg, size_t lo, size_t hi) {
  double s = 0;
  float c2 = 2.0f * cfg->l2;
  for (int t = 0; t < m->ntensors; t++) {
    const nn_param_info_t *ti = &m->table[t];
    size_t a = ti->offset > lo ? ti->offset : lo;
    size_t e = ti->offset + ti->size < hi ? ti->offset + ti->size : hi;
    if (!ti->decay || a >= e) continue;
    const float *w = m->params;
    float *g = m->grads;
    for (size_t i = a; i < e; i++) {
      s += (double)w[i] * w[i];
      g[i] += c2 * w[i];
    }
  }
  return s;
}

void nn_loss_l2(nn_model_t *m, const nn_loss_cfg_t *cfg, nn_loss_t *out) {
  out->l2 = cfg->l2 * nn_loss_l2_range(m, cfg, 0, m->nparams);
  out->total += out->l2;
}
