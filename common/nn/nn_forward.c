/* nn_forward.c: folded inference and the training / eval-mode forward pass. */
#include "nn/nn_forward.h"

#include <assert.h>
#include <math.h>
#include <string.h>

#include "nn/conv3x3.h"
#include "nn/nn_bf16.h"
#include "nn/nn_fc_rows.h"
#include "nn/nn_layers.h"
#include "nn/nn_lines.h"
#include "nn/nn_loss.h"

/* The value head from vy (n, value_channels, 90) into p->value. */
static void value_tail(nn_plan_t *p, const nn_model_t *m, int n) {
  const nn_arch_t *a = &m->arch;
  int vin = a->value_channels * NN_HW;
  nn_fc_forward(p->vh, p->vy, m->p.val_fc1_w, m->p.val_fc1_b, true, n, vin, a->value_hidden);
  nn_fc_forward(p->value, p->vh, m->p.val_fc2_w, m->p.val_fc2_b, false, n, a->value_hidden, 1);
  nn_tanh_forward(p->value, p->value, (size_t)n);
}

/* Training's policy FC at each sample's legal rows (p->policy_mask), -inf elsewhere: the
 * masked loss reads no other logit. */
static void policy_fc_legal(nn_plan_t *p, const nn_model_t *m, int n) {
  int pin = m->arch.policy_channels * NN_HW;
  int rows[NN_POLICY_SIZE];
  float y[NN_POLICY_SIZE];
  for (int s = 0; s < n; s++) {
    float *lg = p->logits + (size_t)s * NN_POLICY_SIZE;
    int k = nn_fc_rows_of_mask(rows, p->policy_mask + (size_t)s * NN_POLICY_SIZE,
                               NN_POLICY_SIZE);
    nn_fc_rows(y, p->py + (size_t)s * pin, m->p.pol_fc_w, m->p.pol_fc_b, pin, rows, k);
    for (int i = 0; i < NN_POLICY_SIZE; i++) lg[i] = -INFINITY;
    for (int j = 0; j < k; j++) lg[rows[j]] = y[j];
  }
}

/* The heads from the tower output t (n, C, 90), once py and vy are computed. Inference
 * (folded) multiplies by the policy FC's transposed copy: the same product, faster. */
static void heads_tail(nn_plan_t *p, const nn_model_t *m, int n, bool folded) {
  int pin = m->arch.policy_channels * NN_HW;
  if (!folded && p->policy_mask)
    policy_fc_legal(p, m, n);
  else if (folded)
    nn_fc_forward_wt(p->logits, p->py, m->fold.pol_fc_wt, m->p.pol_fc_b, false, n, pin,
                     NN_POLICY_SIZE);
  else
    nn_fc_forward(p->logits, p->py, m->p.pol_fc_w, m->p.pol_fc_b, false, n, pin,
                  NN_POLICY_SIZE);
  value_tail(p, m, n);
}

/* Folded tower conv l, in bf16 when the model has its bf16 copy (nn_bf16.h), NCHW or in the
 * resident layout. */
static void tower_conv(float *y, float *scratch, const float *x, const nn_model_t *m, int l,
                       const float *res, bool resident, int n, int cin) {
  const int C = m->arch.channels;
  const float *b = m->fold.tower_b[l];
  if (m->bf16 && resident)
    nn_conv3x3_forward_resident_bf16(y, scratch, x, m->bf16->wp[l], b, res, true, n, cin, C);
  else if (m->bf16)
    nn_conv3x3_forward_bf16(y, scratch, x, m->bf16->wp[l], b, res, true, n, cin, C);
  else if (resident)
    nn_conv3x3_forward_resident(y, scratch, x, m->fold.tower_wp[l], b, res, true, n, cin, C);
  else
    nn_conv3x3_forward(y, scratch, x, m->fold.tower_wp[l], b, res, true, n, cin, C);
}

/*
 * The folded tower of plain blocks in the resident layout, into act[0] (NCHW): one
 * conversion in and one out instead of two around each conv, and a chunk of images at a
 * time through every layer, so that its buffers stay in L2. The same bits as
 * infer_tower_nchw (test_conv3x3_resident).
 */
static const float *infer_tower_resident(nn_plan_t *p, const nn_model_t *m,
                                         const float *planes, int n) {
  const nn_arch_t *a = &m->arch;
  int C = a->channels, cin = nn_arch_input_planes(a), chunk = nn_conv3x3_resident_chunk();
  float *cur = p->res[0], *tmp = p->res[1];
  for (int n0 = 0; n0 < n; n0 += chunk) {
    int nc = n - n0 < chunk ? n - n0 : chunk;
    nn_conv3x3_to_resident(p->res_in, planes + (size_t)n0 * cin * NN_HW, nc, cin);
    tower_conv(cur, p->scratch, p->res_in, m, 0, NULL, true, nc, cin);
    for (int b = 0; b < a->blocks; b++) {
      tower_conv(tmp, p->scratch, cur, m, 1 + 2 * b, NULL, true, nc, C);
      tower_conv(cur, p->scratch, tmp, m, 2 + 2 * b, cur, true, nc, C);
    }
    nn_conv3x3_from_resident(p->act[0] + (size_t)n0 * C * NN_HW, cur, nc, C);
  }
  return p->act[0];
}

/* The folded tower, NCHW between convs (any blocks; training plans too). */
static const float *infer_tower_nchw(nn_plan_t *p, const nn_model_t *m, const float *planes,
                                     int n) {
  const nn_arch_t *a = &m->arch;
  int C = a->channels;
  /* A training plan has no act[] buffers; its first two layer caches serve instead.
   * The tower output ends in cur (infer_tower_output, which nn_infer_survival reads). */
  float *cur = p->training ? p->y[0] : p->act[0];
  float *tmp = p->training ? p->z[0] : p->act[1];
  tower_conv(cur, p->scratch, planes, m, 0, NULL, false, n, nn_arch_input_planes(a));
  for (int b = 0; b < a->blocks; b++) {
    tower_conv(tmp, p->scratch, cur, m, 1 + 2 * b, NULL, false, n, C);
    /* Global pooling reads the block's inner activation after BN and ReLU, so folding
     * BN into the convs leaves it unchanged. */
    if (m->p.gpool_w[b]) nn_gpool_forward(tmp, tmp, m->p.gpool_w[b], n, C, NN_HW);
    if (m->p.rank_w[b]) nn_lines_forward(tmp, p->scratch, tmp, m->p.rank_w[b], m->p.file_w[b], n, C);
    /* The block's output overwrites its input, which is also the residual. */
    tower_conv(cur, p->scratch, tmp, m, 2 + 2 * b, cur, false, n, C);
  }
  return cur;
}

/* The folded tower and the heads' 1x1 convolutions: py and vy of n positions. */
static void infer_trunk(nn_plan_t *p, const nn_model_t *m, const float *planes, int n) {
  assert(m->fold.valid && n >= 1 && n <= p->max_n);
  /* The plan's buffers (the resident ones included) are sized for the model's shape. */
  assert(memcmp(&p->arch, &m->arch, sizeof p->arch) == 0);
  const nn_arch_t *a = &m->arch;
  const float *t = p->res[0] ? infer_tower_resident(p, m, planes, n)
                             : infer_tower_nchw(p, m, planes, n);
  nn_conv1x1_forward(p->py, t, m->fold.pol_w, m->fold.pol_b, true, n, a->channels,
                     a->policy_channels, NN_HW);
  nn_conv1x1_forward(p->vy, t, m->fold.val_w, m->fold.val_b, true, n, a->channels,
                     a->value_channels, NN_HW);
}

void nn_infer(float *policy, float *value, nn_plan_t *p, const nn_model_t *m,
              const float *planes, const uint8_t *mask, int n) {
  infer_trunk(p, m, planes, n);
  heads_tail(p, m, n, true);
  if (policy) nn_masked_softmax(policy, p->logits, mask, n);
  if (value)
    for (int i = 0; i < n; i++) value[i] = p->value[i];
}

void nn_infer_legal(float *policy, float *value, nn_plan_t *p, const nn_model_t *m,
                    const float *planes, const int *const *legal, const int *nlegal, int n) {
  assert(policy);
  infer_trunk(p, m, planes, n);
  value_tail(p, m, n);
  int pin = m->arch.policy_channels * NN_HW;
  for (int s = 0; s < n; s++) {
    float *ps = policy + (size_t)s * NN_POLICY_SIZE;
    float *lg = p->logits + (size_t)s * NN_POLICY_SIZE; /* the listed moves' logits */
    const int *rows = legal[s];
    int k = nlegal[s];
    assert(k >= 0 && k <= NN_POLICY_SIZE);
    memset(ps, 0, NN_POLICY_SIZE * sizeof(float));
    nn_fc_rows(lg, p->py + (size_t)s * pin, m->p.pol_fc_w, m->p.pol_fc_b, pin, rows, k);
    /* nn_masked_softmax's arithmetic over the listed moves, its all-zero row included for
     * a position with none (or none above -inf). */
    float mx = -INFINITY;
    for (int j = 0; j < k; j++)
      if (lg[j] > mx) mx = lg[j];
    if (mx == -INFINITY) continue;
    double sum = 0;
    for (int j = 0; j < k; j++) sum += lg[j] = expf(lg[j] - mx);
    float inv = (float)(1.0 / sum);
    for (int j = 0; j < k; j++) ps[rows[j]] = lg[j] * inv;
  }
  if (value)
    for (int i = 0; i < n; i++) value[i] = p->value[i];
}

/* The tower output nn_infer leaves in a plan (its first buffer, see there). */
static const float *infer_tower_output(const nn_plan_t *p) {
  return p->training ? p->y[0] : p->act[0];
}

void nn_infer_survival(float *surv, const nn_plan_t *p, const nn_model_t *m, int n) {
  assert(m->arch.survival && m->p.surv_w && n >= 1 && n <= p->max_n);
  nn_conv1x1_forward(surv, infer_tower_output(p), m->p.surv_w, m->p.surv_b, false, n,
                     m->arch.channels, 1, NN_HW);
  for (size_t i = 0; i < (size_t)n * NN_HW; i++) surv[i] = 1.0f / (1.0f + expf(-surv[i]));
}

const float *nn_forward_conv_input(const nn_plan_t *p, const float *planes, int l) {
  assert(p->training && l >= 0 && l < 1 + 2 * p->arch.blocks);
  if (l == 0) return planes;
  if (l % 2 == 0 && p->gy[(l - 2) / 2]) return p->gy[(l - 2) / 2];
  return p->y[l - 1];
}

/* conv output z -> BN (batch or running statistics) -> (+ skip) -> ReLU into y. Of a
 * sharded batch, every shard computes the statistics and rank 0 keeps them. */
static void bn_apply(nn_plan_t *p, float *y, float *mean, float *var, const float *z,
                     nn_convbn_t *cb, const float *skip, bool train, int n) {
  if (train) {
    double count = nn_bn_train_forward(y, mean, var, z, cb->gamma, cb->beta, skip, true, n,
                                       cb->cout, NN_HW, p->reduce);
    if (!p->reduce || p->reduce->rank == 0)
      nn_bn_update_running(cb->mean, cb->var, mean, var, cb->cout, (size_t)count);
  } else {
    nn_bn_eval_forward(y, z, cb->gamma, cb->beta, cb->mean, cb->var, skip, true, n, cb->cout,
                       NN_HW);
  }
}

void nn_forward(nn_plan_t *p, nn_model_t *m, const float *planes, int n, bool train) {
  assert(p->training && n >= (p->reduce ? 0 : 1) && n <= p->max_n);
  assert(train || !p->reduce);
  /* The plan's pooling buffers (gy) must be the model's pooling blocks. */
  assert(memcmp(&p->arch, &m->arch, sizeof p->arch) == 0);
  const nn_arch_t *a = &m->arch;
  int C = a->channels;
  if (!p->reduce) nn_model_prepare_train(m);
  for (int l = 0; l < m->nconvs; l++) {
    const float *x = nn_forward_conv_input(p, planes, l);
    int cin = l == 0 ? nn_arch_input_planes(a) : C;
    const float *skip = (l >= 2 && l % 2 == 0) ? p->y[l - 2] : NULL;
    if (n > 0) /* an empty shard still takes part in every reduction */
      nn_conv3x3_forward(p->z[l], p->scratch, x, m->prepared[l], NULL, NULL, false, n, cin, C);
    bn_apply(p, p->y[l], p->bn_mean[l], p->bn_var[l], p->z[l], &m->p.tower[l], skip, train, n);
    int b = l / 2;
    if (l % 2 == 1 && p->gy[b] && n > 0) {
      if (m->p.gpool_w[b]) nn_gpool_forward(p->gy[b], p->y[l], m->p.gpool_w[b], n, C, NN_HW);
      else
        nn_lines_forward(p->gy[b], p->scratch, p->y[l], m->p.rank_w[b], m->p.file_w[b], n, C);
    }
  }
  const float *t = p->y[m->nconvs - 1];
  nn_conv1x1_forward(p->pz, t, m->p.pol.w, NULL, false, n, C, a->policy_channels, NN_HW);
  bn_apply(p, p->py, p->pmean, p->pvar, p->pz, &m->p.pol, NULL, train, n);
  nn_conv1x1_forward(p->vz, t, m->p.val.w, NULL, false, n, C, a->value_channels, NN_HW);
  bn_apply(p, p->vy, p->vmean, p->vvar, p->vz, &m->p.val, NULL, train, n);
  if (n > 0) heads_tail(p, m, n, false);
  if (m->p.surv_w && n > 0)
    nn_conv1x1_forward(p->surv, t, m->p.surv_w, m->p.surv_b, false, n, C, 1, NN_HW);
  if (m->p.reply_w && n > 0)
    nn_conv1x1_forward(p->reply, t, m->p.reply_w, NULL, false, n, C, 2, NN_HW);
}
