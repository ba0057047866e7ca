/*
 * nn_model.c: architecture presets, the parameter table and its carving into named
 * tensors, initialisation, and BN folding for inference.
 */
#include "nn/nn_model.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nn/conv3x3.h"
#include "nn/nn_bf16.h"
#include "support/rng.h"

nn_arch_t nn_arch_make(int blocks, int channels) {
  nn_arch_t a = {blocks, channels, 2, 1, 2 * channels, 0, 0, 0, 0, 0};
  return a;
}

int nn_arch_wide_value_channels(int channels) { return channels / 4 > 2 ? channels / 4 : 2; }

bool nn_arch_pools(const nn_arch_t *a, int b) {
  assert(b >= 0 && b < a->blocks);
  return a->gpool_every > 0 && (a->blocks - 1 - b) % a->gpool_every == 0;
}

void nn_arch_name(const nn_arch_t *a, char *buf, size_t n) {
  char k[16] = "";
  if (a->gpool_every > 1) snprintf(k, sizeof k, "%d", a->gpool_every);
  snprintf(buf, n, "%dx%d%s%s%s%s%s%s", a->blocks, a->channels,
           a->lines ? "l" : a->gpool_every ? "g" : "", k, a->attacks ? "a" : "",
           a->value_channels > 1 ? "v" : "", a->survival ? "s" : "", a->reply ? "r" : "");
}

/* Consumes the character c at name[*i] when it is there. */
static int take(const char *name, int *i, char c) {
  if (name[*i] != c) return 0;
  ++*i;
  return 1;
}

/* "BxC", e.g. "4x16": B residual blocks of C channels, both in range, optionally
 * followed by "g" (every block pools), "gK" (every K-th block from the last pools) or "l"
 * (line convolutions in every block), then optionally by "a" (the attack planes), then
 * by "v" (the wide value head), then by "s" (the survival head), then by "r" (the
 * opponent-reply head); anything else is rejected (no signs, spaces, leading zeros in K or
 * trailing text). */
static int nn_arch_parse_bxc(const char *name, nn_arch_t *out) {
  int b = 0, c = 0, k = 0, i = 0;
  if (name[i] < '0' || name[i] > '9') return XQ_EINVAL;
  while (name[i] >= '0' && name[i] <= '9' && b <= NN_MAX_BLOCKS) b = 10 * b + (name[i++] - '0');
  if (name[i++] != 'x' || name[i] < '0' || name[i] > '9') return XQ_EINVAL;
  while (name[i] >= '0' && name[i] <= '9' && c <= NN_MAX_CHANNELS) c = 10 * c + (name[i++] - '0');
  int lines = 0;
  if (take(name, &i, 'g')) {
    k = 1;
    if (name[i] >= '0' && name[i] <= '9') {
      if (name[i] == '0') return XQ_EINVAL;
      k = 0;
      while (name[i] >= '0' && name[i] <= '9' && k <= NN_MAX_BLOCKS) k = 10 * k + (name[i++] - '0');
    }
  } else {
    lines = take(name, &i, 'l');
  }
  int attacks = take(name, &i, 'a');
  int wide_value = take(name, &i, 'v');
  int surv = take(name, &i, 's');
  int reply = take(name, &i, 'r');
  if (name[i] || b > NN_MAX_BLOCKS || c < 1 || c > NN_MAX_CHANNELS || k > NN_MAX_BLOCKS)
    return XQ_EINVAL;
  if ((k > 0 || lines) && b == 0) return XQ_EINVAL; /* no block to pool in or line */
  *out = nn_arch_make(b, c);
  out->gpool_every = k;
  out->survival = surv;
  out->lines = lines;
  out->attacks = attacks;
  out->reply = reply;
  if (wide_value) out->value_channels = nn_arch_wide_value_channels(c);
  return 0;
}

int nn_arch_preset(const char *name, nn_arch_t *out) {
  static const struct {
    const char *name, *bxc;
  } presets[] = {{"tiny", "2x16"}, {"default", "6x64"}, {"large", "10x128"}};
  for (size_t i = 0; i < sizeof presets / sizeof presets[0]; i++) {
    size_t len = strlen(presets[i].name);
    if (strncmp(name, presets[i].name, len)) continue;
    const char *suffix = name + len;
    if (!*suffix) return nn_arch_parse_bxc(presets[i].bxc, out);
    /* "tiny-ls" is "2x16ls": a dash, then at least one of the suffixes of BxC, without
     * gK's number (a preset pools every block or none). */
    if (suffix[0] != '-' || !suffix[1] || strpbrk(suffix, "0123456789")) return XQ_EINVAL;
    char bxc[64];
    if (snprintf(bxc, sizeof bxc, "%s%s", presets[i].bxc, suffix + 1) >= (int)sizeof bxc)
      return XQ_EINVAL;
    return nn_arch_parse_bxc(bxc, out);
  }
  return nn_arch_parse_bxc(name, out);
}

int nn_arch_validate(const nn_arch_t *a, xq_errbuf_t *eb) {
  if (a->blocks < 0 || a->blocks > NN_MAX_BLOCKS)
    return xq_err_set(eb, XQ_ERANGE, "blocks %d out of range 0..%d", a->blocks, NN_MAX_BLOCKS);
  if (a->channels < 1 || a->channels > NN_MAX_CHANNELS)
    return xq_err_set(eb, XQ_ERANGE, "channels %d out of range 1..%d", a->channels,
                      NN_MAX_CHANNELS);
  if (a->policy_channels != 2)
    return xq_err_set(eb, XQ_ERANGE, "policy head channels %d, expected 2", a->policy_channels);
  if (a->value_channels != 1 && a->value_channels != nn_arch_wide_value_channels(a->channels))
    return xq_err_set(eb, XQ_ERANGE,
                      "value head channels %d, expected 1 or %d (the wide value head of a "
                      "%d-channel net)",
                      a->value_channels, nn_arch_wide_value_channels(a->channels), a->channels);
  if (a->value_hidden < 1 || a->value_hidden > NN_MAX_HIDDEN)
    return xq_err_set(eb, XQ_ERANGE, "value hidden %d out of range 1..%d", a->value_hidden,
                      NN_MAX_HIDDEN);
  if (a->gpool_every < 0 || a->gpool_every > NN_MAX_BLOCKS)
    return xq_err_set(eb, XQ_ERANGE, "global pooling every %d blocks out of range 0..%d",
                      a->gpool_every, NN_MAX_BLOCKS);
  if (a->survival != 0 && a->survival != 1)
    return xq_err_set(eb, XQ_ERANGE, "survival head %d, expected 0 or 1", a->survival);
  if (a->lines != 0 && a->lines != 1)
    return xq_err_set(eb, XQ_ERANGE, "line convolutions %d, expected 0 or 1", a->lines);
  if (a->lines && a->gpool_every)
    return xq_err_set(eb, XQ_ERANGE, "line convolutions and global pooling together; "
                      "a net has one or the other");
  if (a->lines && a->blocks == 0)
    return xq_err_set(eb, XQ_ERANGE, "line convolutions without a block to put them in");
  if (a->attacks != 0 && a->attacks != 1)
    return xq_err_set(eb, XQ_ERANGE, "attack planes %d, expected 0 or 1", a->attacks);
  if (a->reply != 0 && a->reply != 1)
    return xq_err_set(eb, XQ_ERANGE, "opponent-reply head %d, expected 0 or 1", a->reply);
  return 0;
}

static int pooling_blocks(const nn_arch_t *a) {
  int k = 0;
  for (int b = 0; b < a->blocks; b++) k += nn_arch_pools(a, b);
  return k;
}

void nn_arch_counts(const nn_arch_t *a, size_t *nparams, size_t *nstats) {
  size_t c = (size_t)a->channels, pc = (size_t)a->policy_channels, vc = (size_t)a->value_channels;
  size_t h = (size_t)a->value_hidden, convs = 1 + 2 * (size_t)a->blocks;
  size_t p = c * (size_t)nn_arch_input_planes(a) * 9 + 2 * c; /* stem */
  p += (convs - 1) * (c * c * 9 + 2 * c);                     /* tower */
  p += (size_t)pooling_blocks(a) * 2 * c * c;                 /* global pooling biases */
  if (a->lines) p += (size_t)a->blocks * c * c * NN_LINE_TAPS;  /* rank and file biases */
  p += pc * c + 2 * pc + (size_t)NN_POLICY_SIZE * (pc * NN_HW + 1); /* policy head */
  p += vc * c + 2 * vc + h * (vc * NN_HW + 1) + h + 1;        /* value head */
  if (a->survival) p += c + 1;                                /* survival head */
  if (a->reply) p += 2 * c;                                   /* opponent-reply head */
  *nparams = p;
  *nstats = 2 * (convs * c + pc + vc);
}

double nn_arch_flops(const nn_arch_t *a) {
  double c = a->channels, hw = NN_HW;
  double f = hw * 9 * nn_arch_input_planes(a) * c + 2.0 * a->blocks * hw * 9 * c * c;
  f += pooling_blocks(a) * (2.0 * c * c + 2.0 * hw * c); /* FC, and pooling + broadcast */
  if (a->lines) f += a->blocks * (2.0 * hw * c * c + 2.0 * hw * c); /* lines + broadcast */
  f += hw * c * (a->policy_channels + a->value_channels);
  f += (double)a->policy_channels * hw * NN_POLICY_SIZE;
  f += (double)a->value_channels * hw * a->value_hidden + a->value_hidden;
  return 2.0 * f; /* multiply and add */
}

/* Carving context: walks the table in file order, assigning offsets and pointers. */
typedef struct {
  nn_model_t *m;
  size_t off, soff;
} carve_t;

static float *add(carve_t *c, const char *name, int ndim, const int *shape, bool decay) {
  nn_model_t *m = c->m;
  assert(m->ntensors < NN_MAX_TENSORS);
  nn_param_info_t *t = &m->table[m->ntensors++];
  snprintf(t->name, sizeof t->name, "%s", name);
  t->ndim = ndim;
  t->size = 1;
  for (int i = 0; i < 4; i++) t->shape[i] = i < ndim ? shape[i] : 1;
  for (int i = 0; i < ndim; i++) t->size *= (size_t)shape[i];
  t->decay = decay;
  t->offset = c->off;
  c->off += t->size;
  return (float *)(uintptr_t)t->offset; /* an offset; turned into pointers by carve() */
}

/* Records a conv + BN; stores offsets (as pointers) into cb, fixed up by carve(). */
static void add_convbn(carve_t *c, nn_convbn_t *cb, const char *prefix, int cin, int cout,
                       int k) {
  char name[24];
  int wshape[4] = {cout, cin, k, k}, cshape[1] = {cout};
  snprintf(name, sizeof name, "%s.w", prefix);
  cb->w = add(c, name, 4, wshape, true);
  snprintf(name, sizeof name, "%s.bn.g", prefix);
  cb->gamma = add(c, name, 1, cshape, false);
  snprintf(name, sizeof name, "%s.bn.b", prefix);
  cb->beta = add(c, name, 1, cshape, false);
  cb->mean = (float *)(uintptr_t)c->soff;
  cb->var = (float *)(uintptr_t)(c->soff + (size_t)cout);
  c->soff += 2 * (size_t)cout;
  cb->cin = cin;
  cb->cout = cout;
  cb->k = k;
}

static void build_table(nn_model_t *m, nn_tensors_t *t) {
  const nn_arch_t *a = &m->arch;
  carve_t c = {m, 0, 0};
  char prefix[24];
  memset(t, 0, sizeof *t);
  m->ntensors = 0;
  m->nconvs = 1 + 2 * a->blocks;
  add_convbn(&c, &t->tower[0], "stem", nn_arch_input_planes(a), a->channels, 3);
  for (int b = 0; b < a->blocks; b++) {
    snprintf(prefix, sizeof prefix, "block%d.conv1", b);
    add_convbn(&c, &t->tower[1 + 2 * b], prefix, a->channels, a->channels, 3);
    if (nn_arch_pools(a, b)) {
      snprintf(prefix, sizeof prefix, "block%d.gpool.w", b);
      t->gpool_w[b] = add(&c, prefix, 2, (int[]){a->channels, 2 * a->channels}, true);
    }
    if (a->lines) {
      snprintf(prefix, sizeof prefix, "block%d.rank.w", b);
      t->rank_w[b] = add(&c, prefix, 4, (int[]){a->channels, a->channels, 1, 9}, true);
      snprintf(prefix, sizeof prefix, "block%d.file.w", b);
      t->file_w[b] = add(&c, prefix, 4, (int[]){a->channels, a->channels, 10, 1}, true);
    }
    snprintf(prefix, sizeof prefix, "block%d.conv2", b);
    add_convbn(&c, &t->tower[2 + 2 * b], prefix, a->channels, a->channels, 3);
  }
  int pin = a->policy_channels * NN_HW, vin = a->value_channels * NN_HW;
  add_convbn(&c, &t->pol, "policy.conv", a->channels, a->policy_channels, 1);
  t->pol_fc_w = add(&c, "policy.fc.w", 2, (int[]){NN_POLICY_SIZE, pin}, true);
  t->pol_fc_b = add(&c, "policy.fc.b", 1, (int[]){NN_POLICY_SIZE}, false);
  add_convbn(&c, &t->val, "value.conv", a->channels, a->value_channels, 1);
  t->val_fc1_w = add(&c, "value.fc1.w", 2, (int[]){a->value_hidden, vin}, true);
  t->val_fc1_b = add(&c, "value.fc1.b", 1, (int[]){a->value_hidden}, false);
  t->val_fc2_w = add(&c, "value.fc2.w", 2, (int[]){1, a->value_hidden}, true);
  t->val_fc2_b = add(&c, "value.fc2.b", 1, (int[]){1}, false);
  if (a->survival) {
    t->surv_w = add(&c, "survival.w", 4, (int[]){1, a->channels, 1, 1}, true);
    t->surv_b = add(&c, "survival.b", 1, (int[]){1}, false);
  }
  if (a->reply) {
    /* No bias: a softmax over the squares does not change when all of a channel's
     * logits shift, so a bias would get no gradient. */
    t->reply_w = add(&c, "reply.w", 4, (int[]){2, a->channels, 1, 1}, true);
  }
  m->nparams = c.off;
  m->nstats = c.soff;
}

#define FIX(p, base) ((p) = (base) + (size_t)(uintptr_t)(p))

static void fix_convbn(nn_convbn_t *cb, float *base, float *stats) {
  FIX(cb->w, base);
  FIX(cb->gamma, base);
  FIX(cb->beta, base);
  if (stats) {
    FIX(cb->mean, stats);
    FIX(cb->var, stats);
  } else {
    cb->mean = cb->var = NULL;
  }
}

/* Turns the offsets recorded in t into pointers into base (and stats, may be NULL). */
static void carve(nn_tensors_t *t, int nconvs, float *base, float *stats) {
  for (int i = 0; i < nconvs; i++) fix_convbn(&t->tower[i], base, stats);
  for (int b = 0; b < (nconvs - 1) / 2; b++) { /* offset 0 is the stem's: NULL = none */
    if (t->gpool_w[b]) FIX(t->gpool_w[b], base);
    if (t->rank_w[b]) {
      FIX(t->rank_w[b], base);
      FIX(t->file_w[b], base);
    }
  }
  fix_convbn(&t->pol, base, stats);
  fix_convbn(&t->val, base, stats);
  FIX(t->pol_fc_w, base);
  FIX(t->pol_fc_b, base);
  FIX(t->val_fc1_w, base);
  FIX(t->val_fc1_b, base);
  FIX(t->val_fc2_w, base);
  FIX(t->val_fc2_b, base);
  if (t->surv_w) { /* the head comes after the stem: a nonzero offset, NULL = no head */
    FIX(t->surv_w, base);
    FIX(t->surv_b, base);
  }
  if (t->reply_w) FIX(t->reply_w, base);
}

int nn_model_new(nn_model_t **out, const nn_arch_t *arch, xq_errbuf_t *eb) {
  *out = NULL;
  int rc = nn_arch_validate(arch, eb);
  if (rc) return rc;
  nn_model_t *m = calloc(1, sizeof *m);
  if (!m) return xq_err_set(eb, XQ_ENOMEM, "cannot allocate the model");
  m->arch = *arch;
  nn_tensors_t offsets;
  build_table(m, &offsets);
  const nn_arch_t *a = arch;
  size_t nprep = 0, nfold = 0;
  for (int i = 0; i < m->nconvs; i++) {
    int cin = i == 0 ? nn_arch_input_planes(a) : a->channels;
    nprep += nn_conv3x3_prepared_floats(cin, a->channels);
    nfold += (size_t)a->channels;
  }
  nfold += nprep + (size_t)(a->policy_channels + a->value_channels) * (a->channels + 1);
  nfold += (size_t)a->policy_channels * NN_HW * NN_POLICY_SIZE; /* pol_fc_wt */
  m->params = calloc(m->nparams, sizeof(float));
  m->grads = calloc(m->nparams, sizeof(float));
  m->stats = calloc(m->nstats, sizeof(float));
  m->prepared_mem = calloc(nprep, sizeof(float));
  m->fold_mem = calloc(nfold, sizeof(float));
  int planes = nn_arch_input_planes(a);
  size_t cmax = (size_t)(a->channels > planes ? a->channels : planes);
  m->fold_tmp = calloc(cmax * (size_t)a->channels * 9, sizeof(float));
  if (!m->params || !m->grads || !m->stats || !m->prepared_mem || !m->fold_mem ||
      !m->fold_tmp) {
    size_t np = m->nparams;
    nn_model_free(&m);
    return xq_err_set(eb, XQ_ENOMEM, "cannot allocate %zu parameters", np);
  }
  m->p = offsets;
  m->g = offsets;
  carve(&m->p, m->nconvs, m->params, m->stats);
  carve(&m->g, m->nconvs, m->grads, NULL);
  float *pp = m->prepared_mem, *fp = m->fold_mem;
  for (int i = 0; i < m->nconvs; i++) {
    int cin = i == 0 ? nn_arch_input_planes(a) : a->channels;
    size_t sz = nn_conv3x3_prepared_floats(cin, a->channels);
    m->prepared[i] = pp;
    pp += sz;
    m->fold.tower_wp[i] = fp;
    fp += sz;
    m->fold.tower_b[i] = fp;
    fp += a->channels;
  }
  m->fold.pol_w = fp;
  fp += (size_t)a->policy_channels * a->channels;
  m->fold.pol_b = fp;
  fp += a->policy_channels;
  m->fold.val_w = fp;
  fp += (size_t)a->value_channels * a->channels;
  m->fold.val_b = fp;
  fp += a->value_channels;
  m->fold.pol_fc_wt = fp;
  fp += (size_t)a->policy_channels * NN_HW * NN_POLICY_SIZE;
  assert((size_t)(fp - m->fold_mem) == nfold);
#ifndef NDEBUG
  size_t np, ns;
  nn_arch_counts(arch, &np, &ns);
  assert(np == m->nparams && ns == m->nstats);
#endif
  /* Parameters start at zero; running variances at 1 so an uninitialised net is finite. */
  for (int l = 0; l < m->nconvs + 2; l++) {
    nn_convbn_t *cb = l < m->nconvs ? &m->p.tower[l] : l == m->nconvs ? &m->p.pol : &m->p.val;
    for (int c = 0; c < cb->cout; c++) cb->var[c] = 1.0f;
  }
  *out = m;
  return 0;
}

void nn_model_free(nn_model_t **pm) {
  if (!pm || !*pm) return;
  nn_model_t *m = *pm;
  free(m->params);
  free(m->grads);
  free(m->stats);
  free(m->prepared_mem);
  free(m->fold_mem);
  free(m->fold_tmp);
  nn_bf16_detach(m);
  free(m);
  *pm = NULL;
}

static void init_convbn(nn_convbn_t *cb, xq_rng_t *r) {
  int fan_in = cb->cin * cb->k * cb->k;
  double sd = sqrt(2.0 / fan_in);
  size_t n = (size_t)cb->cout * fan_in;
  for (size_t i = 0; i < n; i++) cb->w[i] = (float)(sd * xq_rng_normal(r));
  for (int c = 0; c < cb->cout; c++) {
    cb->gamma[c] = 1.0f;
    cb->beta[c] = 0.0f;
    cb->mean[c] = 0.0f;
    cb->var[c] = 1.0f;
  }
}

static void init_fc(float *w, float *b, int out, int in, double gain, xq_rng_t *r) {
  double sd = sqrt(gain / in);
  for (size_t i = 0; i < (size_t)out * in; i++) w[i] = (float)(sd * xq_rng_normal(r));
  memset(b, 0, (size_t)out * sizeof(float));
}

void nn_model_init(nn_model_t *m, uint64_t seed) {
  xq_rng_t r;
  xq_rng_seed(&r, seed);
  const nn_arch_t *a = &m->arch;
  for (int i = 0; i < m->nconvs; i++) init_convbn(&m->p.tower[i], &r);
  /* Zero pooling weights: the bias starts at 0 and grows only as the gradient (nonzero
   * from the first step: db * g) asks, and the rest of the net is drawn exactly as
   * without pooling (see the header). */
  size_t cc = (size_t)a->channels * a->channels;
  for (int b = 0; b < a->blocks; b++) {
    if (m->p.gpool_w[b]) memset(m->p.gpool_w[b], 0, 2 * cc * sizeof(float));
    if (m->p.rank_w[b]) { /* the same for the rank and file biases */
      memset(m->p.rank_w[b], 0, 9 * cc * sizeof(float));
      memset(m->p.file_w[b], 0, 10 * cc * sizeof(float));
    }
  }
  init_convbn(&m->p.pol, &r);
  init_fc(m->p.pol_fc_w, m->p.pol_fc_b, NN_POLICY_SIZE, a->policy_channels * NN_HW, 2.0, &r);
  init_convbn(&m->p.val, &r);
  init_fc(m->p.val_fc1_w, m->p.val_fc1_b, a->value_hidden, a->value_channels * NN_HW, 2.0, &r);
  init_fc(m->p.val_fc2_w, m->p.val_fc2_b, 1, a->value_hidden, 1.0, &r);
  if (m->p.surv_w) init_fc(m->p.surv_w, m->p.surv_b, 1, a->channels, 1.0, &r);
  if (m->p.reply_w) {
    double sd = sqrt(1.0 / a->channels);
    for (size_t i = 0; i < 2 * (size_t)a->channels; i++)
      m->p.reply_w[i] = (float)(sd * xq_rng_normal(&r));
  }
  m->fold.valid = false;
}

static void rebase_convbn(nn_convbn_t *cb, const float *from, float *to) {
  cb->w = to + (cb->w - from);
  cb->gamma = to + (cb->gamma - from);
  cb->beta = to + (cb->beta - from);
}

void nn_model_grad_view(nn_model_t *view, const nn_model_t *m, float *grads) {
  *view = *m;
  view->grads = grads;
  const float *g0 = m->grads;
  nn_tensors_t *t = &view->g;
  for (int i = 0; i < m->nconvs; i++) rebase_convbn(&t->tower[i], g0, grads);
  for (int b = 0; b < m->arch.blocks; b++) {
    if (t->gpool_w[b]) t->gpool_w[b] = grads + (t->gpool_w[b] - g0);
    if (t->rank_w[b]) {
      t->rank_w[b] = grads + (t->rank_w[b] - g0);
      t->file_w[b] = grads + (t->file_w[b] - g0);
    }
  }
  rebase_convbn(&t->pol, g0, grads);
  rebase_convbn(&t->val, g0, grads);
  float **fc[] = {&t->pol_fc_w, &t->pol_fc_b, &t->val_fc1_w, &t->val_fc1_b, &t->val_fc2_w,
                  &t->val_fc2_b};
  for (size_t i = 0; i < sizeof fc / sizeof fc[0]; i++) *fc[i] = grads + (*fc[i] - g0);
  if (t->surv_w) {
    t->surv_w = grads + (t->surv_w - g0);
    t->surv_b = grads + (t->surv_b - g0);
  }
  if (t->reply_w) t->reply_w = grads + (t->reply_w - g0);
  /* What the view must not touch: the folded weights and their scratch. */
  view->fold_mem = view->fold_tmp = NULL;
  view->bf16 = NULL;
  view->fold.valid = false;
}

void nn_model_zero_grad(nn_model_t *m) { memset(m->grads, 0, m->nparams * sizeof(float)); }

/* Folds BN into a conv: wf (cout, cin*k*k) and bf (cout). */
static void fold_convbn(float *wf, float *bf, const nn_convbn_t *cb) {
  size_t fan = (size_t)cb->cin * cb->k * cb->k;
  for (int c = 0; c < cb->cout; c++) {
    float s = cb->gamma[c] / sqrtf(cb->var[c] + NN_BN_EPS);
    for (size_t i = 0; i < fan; i++) wf[c * fan + i] = cb->w[c * fan + i] * s;
    bf[c] = cb->beta[c] - cb->mean[c] * s;
  }
}

void nn_model_fold(nn_model_t *m) {
  float *tmp = m->fold_tmp;
  for (int i = 0; i < m->nconvs; i++) {
    const nn_convbn_t *cb = &m->p.tower[i];
    fold_convbn(tmp, m->fold.tower_b[i], cb);
    nn_conv3x3_prepare(m->fold.tower_wp[i], tmp, cb->cin, cb->cout);
  }
  fold_convbn(m->fold.pol_w, m->fold.pol_b, &m->p.pol);
  fold_convbn(m->fold.val_w, m->fold.val_b, &m->p.val);
  const size_t in = (size_t)m->arch.policy_channels * NN_HW;
  for (size_t o = 0; o < NN_POLICY_SIZE; o++)
    for (size_t i = 0; i < in; i++)
      m->fold.pol_fc_wt[i * NN_POLICY_SIZE + o] = m->p.pol_fc_w[o * in + i];
  m->fold.valid = true;
  if (m->bf16) nn_bf16_refresh(m); /* the bf16 copy follows the folded weights */
}

void nn_model_prepare_train(nn_model_t *m) {
  for (int i = 0; i < m->nconvs; i++) {
    const nn_convbn_t *cb = &m->p.tower[i];
    nn_conv3x3_prepare(m->prepared[i], cb->w, cb->cin, cb->cout);
  }
}

double nn_model_l2(const nn_model_t *m) {
  double s = 0;
  for (int t = 0; t < m->ntensors; t++) {
    const nn_param_info_t *ti = &m->table[t];
    if (!ti->decay) continue;
    const float *w = m->params + ti->offset;
    for (size_t i = 0; i < ti->size; i++) s += (double)w[i] * w[i];
  }
  return s;
}
