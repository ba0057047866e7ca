/*
 * nn_test_util.h: shared helpers of the network tests (random tensors, a random training
 * batch, a finite-difference gradient check). Header-only, included after cmocka.h.
 */
#ifndef XQZ_NN_TEST_UTIL_H
#define XQZ_NN_TEST_UTIL_H

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nn/nn_loss.h"
#include "nn/nn_model.h"
#include "support/rng.h"

static inline void tu_fill(float *x, size_t n, xq_rng_t *r, float scale) {
  for (size_t i = 0; i < n; i++) x[i] = (float)(scale * xq_rng_normal(r));
}

/* Draws random weights (std scale) for a net's block biases, which start at zero: global
 * pooling, and rank and file (nn_lines.h), so their paths carry gradient from the first
 * step. Draws nothing for a net without them. */
static inline void tu_fill_block_biases(nn_model_t *m, xq_rng_t *r, float scale) {
  size_t cc = (size_t)m->arch.channels * m->arch.channels;
  for (int b = 0; b < m->arch.blocks; b++) {
    if (m->p.gpool_w[b]) tu_fill(m->p.gpool_w[b], 2 * cc, r, scale);
    if (m->p.rank_w[b]) {
      tu_fill(m->p.rank_w[b], 9 * cc, r, scale);
      tu_fill(m->p.file_w[b], 10 * cc, r, scale);
    }
  }
}

/* Fills values away from 0 (|x| >= 0.2) so a ReLU kink is never crossed by a probe. */
static inline void tu_fill_away(float *x, size_t n, xq_rng_t *r) {
  for (size_t i = 0; i < n; i++) {
    float v = (float)xq_rng_normal(r);
    x[i] = v >= 0 ? v + 0.2f : v - 0.2f;
  }
}

static inline double tu_dot(const float *a, const float *b, size_t n) {
  double s = 0;
  for (size_t i = 0; i < n; i++) s += (double)a[i] * b[i];
  return s;
}

/* An owned random batch: planes like real ones (0/1 piece planes, scalars), a random
 * mask with `legal` legal moves per sample, a sparse pi over some of them, random z. */
typedef struct {
  nn_batch_t b;
  float *planes;
  uint8_t *mask;
  int32_t *off;
  nn_pi_entry_t *pi;
  float *z;
  uint8_t *surv_mask, *surv_target; /* NULL until tu_batch_add_survival */
  int16_t *reply;                   /* NULL until tu_batch_add_reply */
} tu_batch_t;

/* A random batch for a net reading nplanes input planes (with the attack planes when
 * NN_INPUT_PLANES_MAX: each square attacked with probability 1/3, from a generator of
 * their own, so the rest of the batch is the one tu_batch_make draws). */
static inline void tu_batch_make_planes(tu_batch_t *t, int n, int nplanes, int legal,
                                        int targets, xq_rng_t *r) {
  t->planes = calloc((size_t)n * nplanes * NN_HW, sizeof(float));
  xq_rng_t ar;
  xq_rng_seed(&ar, 3);
  t->mask = calloc((size_t)n * NN_POLICY_SIZE, 1);
  t->off = calloc((size_t)n + 1, sizeof(int32_t));
  t->pi = calloc((size_t)n * targets, sizeof(nn_pi_entry_t));
  t->z = calloc((size_t)n, sizeof(float));
  for (int s = 0; s < n; s++) {
    float *p = t->planes + (size_t)s * nplanes * NN_HW;
    for (int sq = 0; sq < NN_HW; sq++) {
      uint64_t k = xq_rng_below(r, 4);
      if (k == 0) p[xq_rng_below(r, 14) * NN_HW + sq] = 1.0f;
    }
    float stm = (float)(s & 1), r60 = (float)xq_rng_uniform(r), rep = (float)(s % 3 == 0);
    for (int sq = 0; sq < NN_HW; sq++) {
      p[14 * NN_HW + sq] = stm;
      p[15 * NN_HW + sq] = r60;
      p[16 * NN_HW + sq] = rep;
      p[17 * NN_HW + sq] = 1.0f;
      for (int a = NN_INPUT_PLANES; a < nplanes; a++)
        p[a * NN_HW + sq] = (float)(xq_rng_below(&ar, 3) == 0);
    }
    uint8_t *mk = t->mask + (size_t)s * NN_POLICY_SIZE;
    int idx[256], cnt = 0;
    while (cnt < legal) {
      int k = (int)xq_rng_below(r, NN_POLICY_SIZE);
      if (mk[k]) continue;
      mk[k] = 1;
      idx[cnt++] = k;
    }
    t->off[s + 1] = t->off[s] + targets;
    double sum = 0;
    for (int e = 0; e < targets; e++) sum += (t->pi[s * targets + e].prob = (float)(xq_rng_uniform(r) + 0.1));
    for (int e = 0; e < targets; e++) {
      t->pi[s * targets + e].index = idx[e];
      t->pi[s * targets + e].prob = (float)(t->pi[s * targets + e].prob / sum);
    }
    t->z[s] = (float)((int)xq_rng_below(r, 3) - 1);
  }
  t->surv_mask = t->surv_target = NULL;
  t->reply = NULL;
  t->b = (nn_batch_t){n, t->planes, t->mask, t->off, t->pi, t->z, NULL, NULL, NULL};
}

static inline void tu_batch_make(tu_batch_t *t, int n, int legal, int targets, xq_rng_t *r) {
  tu_batch_make_planes(t, n, NN_INPUT_PLANES, legal, targets, r);
}

/* Random survival targets for the batch: about a third of the squares trained, each
 * surviving with probability 1/2, and sample 1 (when there is one) with none, as a
 * sample without pieces to train has. */
static inline void tu_batch_add_survival(tu_batch_t *t, xq_rng_t *r) {
  size_t len = (size_t)t->b.n * NN_HW;
  t->surv_mask = calloc(len, 1);
  t->surv_target = calloc(len, 1);
  for (size_t i = 0; i < len; i++) {
    t->surv_mask[i] = i / NN_HW != 1 && xq_rng_below(r, 3) == 0;
    t->surv_target[i] = t->surv_mask[i] && (xq_rng_next(r) & 1);
  }
  t->b.surv_mask = t->surv_mask;
  t->b.surv_target = t->surv_target;
}

/* Random reply targets: a from and a different to square per sample, and sample 1 (when
 * there is one) with none, as the last position of a game has. */
static inline void tu_batch_add_reply(tu_batch_t *t, xq_rng_t *r) {
  t->reply = calloc(2 * (size_t)t->b.n, sizeof(int16_t));
  for (int s = 0; s < t->b.n; s++) {
    int from = (int)xq_rng_below(r, NN_HW), to = (from + 1 + (int)xq_rng_below(r, NN_HW - 1)) % NN_HW;
    t->reply[2 * s] = (int16_t)(s == 1 ? -1 : from);
    t->reply[2 * s + 1] = (int16_t)(s == 1 ? -1 : to);
  }
  t->b.reply = t->reply;
}

static inline void tu_batch_free(tu_batch_t *t) {
  free(t->reply);
  free(t->surv_mask);
  free(t->surv_target);
  free(t->planes);
  free(t->mask);
  free(t->off);
  free(t->pi);
  free(t->z);
}

/*
 * Compares analytic gradient `an` (len) of a scalar function with central differences
 * over up to `probes` indices of x (evenly spread). f(ctx) evaluates the function at the
 * current x. Fails the test when the relative error of the probed vectors,
 * |an - num| / (|an| + |num|), exceeds tol, unless |an - num|_inf <= abs_floor.
 *
 * Kinks: through ReLUs a probe may cross a kink, and then no step size gives the
 * derivative. A probe whose central differences at h and h/2 disagree by more than 10%
 * (the function is not smooth there) is skipped; at most a quarter of the probes may
 * be skipped, so a systematically wrong gradient cannot hide behind this rule (a wrong
 * formula makes the two estimates agree with each other, not with the analytic value).
 *
 * A kink exactly at x (seen on the policy head of the whole-net checks: at h = 1e-3 and
 * 3e-4 the forward difference equals the analytic gradient, the backward one does not) fools
 * that rule: both central differences then give the mean of the two one-sided slopes,
 * whatever h, while the analytic gradient is one of them. So a probe whose central
 * difference misses the analytic value by more than 10%, while the forward and backward
 * differences disagree by more than 10% and one of them matches it within 10%, is held
 * to that one-sided slope (a wrong formula matches neither); such probes count against
 * the same quarter as the skipped ones.
 */
typedef double (*tu_fn_t)(void *ctx);

/* Central difference at x; with f0 = f at x, also the forward and backward ones. */
typedef struct {
  double central, fwd, bwd;
} tu_diff_t;

static inline tu_diff_t tu_diffs(float *x, float h, tu_fn_t f, void *ctx, double f0) {
  float save = *x;
  *x = save + h;
  double fp = f(ctx);
  float up = *x;
  *x = save - h;
  double fm = f(ctx);
  float down = *x;
  *x = save;
  /* the steps actually taken, as float rounding sees them */
  return (tu_diff_t){(fp - fm) / ((double)up - (double)down), (fp - f0) / ((double)up - save),
                     (f0 - fm) / ((double)save - down)};
}

/* The central difference alone (it does not use f0, so none is needed). */
static inline double tu_central(float *x, float h, tu_fn_t f, void *ctx) {
  return tu_diffs(x, h, f, ctx, 0.0).central;
}

static inline void tu_gradcheck(const char *what, float *x, const float *an, size_t len,
                                tu_fn_t f, void *ctx, float h, size_t probes, double tol,
                                double abs_floor) {
  double dd = 0, na = 0, nn = 0, maxdiff = 0;
  size_t step = len > probes ? len / probes : 1, worst = 0, used = 0, skipped = 0;
  size_t onesided = 0;
  bool kinks = getenv("XQZ_TEST_NO_KINK_SKIP") == NULL;
  double f0 = f(ctx);
  for (size_t i = 0; i < len; i += step) {
    tu_diff_t d = tu_diffs(&x[i], h, f, ctx, f0);
    double num = d.central, a = an[i];
    if (kinks) {
      double num2 = tu_central(&x[i], h / 2, f, ctx);
      if (fabs(num - num2) > 0.1 * fabs(num2) + abs_floor) {
        skipped++;
        continue;
      }
      double near = fabs(a - d.fwd) < fabs(a - d.bwd) ? d.fwd : d.bwd;
      if (fabs(a - num) > 0.1 * fabs(num) + abs_floor &&
          fabs(a - near) <= 0.1 * fabs(near) + abs_floor &&
          fabs(d.fwd - d.bwd) > 0.1 * fabs(num) + abs_floor) {
        num = near;
        onesided++;
      }
    }
    used++;
    dd += (a - num) * (a - num);
    na += a * a;
    nn += num * num;
    if (fabs(a - num) > maxdiff) {
      maxdiff = fabs(a - num);
      worst = i;
    }
  }
  double rel = sqrt(dd) / (sqrt(na) + sqrt(nn) + 1e-30);
  if (getenv("XQZ_TEST_VERBOSE"))
    printf("  %-22s rel %.3g max|diff| %.3g |an| %.3g probes %zu skipped %zu one-sided %zu\n",
           what, rel, maxdiff, sqrt(na), used, skipped, onesided);
  if ((skipped + onesided) * 4 > used + skipped)
    fail_msg("%s: %zu of %zu probes are not smooth; the check proves nothing", what,
             skipped + onesided, used + skipped);
  if (rel > tol && maxdiff > abs_floor)
    fail_msg("%s: gradient mismatch, relative error %.3g (tol %.3g), max |diff| %.3g at %zu "
             "(analytic %.6g)", what, rel, tol, maxdiff, worst, (double)an[worst]);
  if (na == 0 && nn == 0 && len > 0)
    fail_msg("%s: gradient is identically zero on the probes; the check proves nothing", what);
}

#endif
