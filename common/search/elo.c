/*
 * elo.c: Elo, confidence intervals and the GSPRT log-likelihood ratio (see elo.h for the
 * formulas and which model each function uses).
 */
#include "search/elo.h"

#include <assert.h>
#include <math.h>

double xq_elo_from_score(double s) {
  if (s <= 0) return -INFINITY;
  if (s >= 1) return INFINITY;
  return -400.0 * log10(1.0 / s - 1.0) + 0.0; /* + 0.0 turns -0 into 0 */
}

double xq_elo_to_score(double elo) { return 1.0 / (1.0 + pow(10.0, -elo / 400.0)); }

/* Mean and variance per observation of outcomes worth a[i] seen c[i] times. */
static void elo_estimate(const int64_t *c, const double *a, int k, xq_elo_est_t *out) {
  int64_t n = 0;
  double sum = 0;
  for (int i = 0; i < k; i++) {
    assert(c[i] >= 0);
    n += c[i];
    sum += (double)c[i] * a[i];
  }
  out->n = n;
  if (n == 0) {
    out->score = 0.5;
    out->elo = 0;
    out->elo_lo = -INFINITY;
    out->elo_hi = INFINITY;
    out->ci95 = INFINITY;
    return;
  }
  double s = sum / (double)n, var = 0;
  for (int i = 0; i < k; i++) var += (double)c[i] * (a[i] - s) * (a[i] - s);
  var /= (double)n;
  double half = XQ_Z95 * sqrt(var / (double)n);
  out->score = s;
  out->elo = xq_elo_from_score(s);
  out->elo_lo = xq_elo_from_score(s - half);
  out->elo_hi = xq_elo_from_score(s + half);
  out->ci95 = (out->elo_hi - out->elo_lo) / 2;
  if (half == 0) out->ci95 = isfinite(out->elo) ? 0 : INFINITY;
}

void xq_elo_trinomial(int64_t w, int64_t d, int64_t l, xq_elo_est_t *out) {
  const int64_t c[3] = {l, d, w};
  static const double a[3] = {0, 0.5, 1};
  elo_estimate(c, a, 3, out);
}

void xq_elo_pentanomial(const int64_t pairs[5], xq_elo_est_t *out) {
  static const double a[5] = {0, 0.25, 0.5, 0.75, 1};
  elo_estimate(pairs, a, 5, out);
}

/* The distribution q maximizing sum p_i log q_i subject to sum q_i a_i = s (Fishtest's
 * MLE_expected): q_i = p_i / (1 + theta (a_i - s)) with theta the root of
 * f(theta) = sum p_i (a_i - s) / (1 + theta (a_i - s)), which is decreasing on the interval
 * where every denominator is positive; found by bisection. */
static void elo_mle(const double *p, const double *a, int k, double s, double *q) {
  double dmin = 0, dmax = 0;
  for (int i = 0; i < k; i++) {
    double d = a[i] - s;
    if (d < dmin) dmin = d;
    if (d > dmax) dmax = d;
  }
  assert(dmin < 0 && dmax > 0);
  double lo = -1.0 / dmax, hi = -1.0 / dmin;
  for (int it = 0; it < 200; it++) {
    double mid = 0.5 * (lo + hi), f = 0;
    if (mid <= lo || mid >= hi) break;
    for (int i = 0; i < k; i++) f += p[i] * (a[i] - s) / (1 + mid * (a[i] - s));
    if (f > 0) lo = mid;
    else hi = mid;
  }
  double theta = 0.5 * (lo + hi);
  for (int i = 0; i < k; i++) q[i] = p[i] / (1 + theta * (a[i] - s));
}

static double elo_llr(const int64_t *c, const double *a, int k, double elo0, double elo1) {
  double p[5], q0[5], q1[5], n = 0;
  int64_t total = 0;
  for (int i = 0; i < k; i++) {
    total += c[i];
    p[i] = c[i] > 0 ? (double)c[i] : 1e-3; /* Fishtest's regularization of empty cells */
    n += p[i];
  }
  if (total == 0) return 0;
  for (int i = 0; i < k; i++) p[i] /= n;
  elo_mle(p, a, k, xq_elo_to_score(elo0), q0);
  elo_mle(p, a, k, xq_elo_to_score(elo1), q1);
  double llr = 0;
  for (int i = 0; i < k; i++) llr += p[i] * log(q1[i] / q0[i]);
  return n * llr;
}

double xq_sprt_llr_trinomial(int64_t w, int64_t d, int64_t l, double elo0, double elo1) {
  const int64_t c[3] = {l, d, w};
  static const double a[3] = {0, 0.5, 1};
  return elo_llr(c, a, 3, elo0, elo1);
}

double xq_sprt_llr_pentanomial(const int64_t pairs[5], double elo0, double elo1) {
  static const double a[5] = {0, 0.25, 0.5, 0.75, 1};
  return elo_llr(pairs, a, 5, elo0, elo1);
}

void xq_sprt_bounds(double alpha, double beta, double *lower, double *upper) {
  *lower = log(beta / (1 - alpha));
  *upper = log((1 - beta) / alpha);
}

xq_sprt_t xq_sprt_decide(double llr, double alpha, double beta) {
  double lo, hi;
  xq_sprt_bounds(alpha, beta, &lo, &hi);
  if (llr >= hi) return XQ_SPRT_ACCEPT;
  if (llr <= lo) return XQ_SPRT_REJECT;
  return XQ_SPRT_NONE;
}

const char *xq_sprt_name(xq_sprt_t d) {
  return d == XQ_SPRT_ACCEPT ? "accept" : d == XQ_SPRT_REJECT ? "reject" : "none";
}
