/*
 * pbt.c: exploit and explore (pbt.h).
 */
#include "population/pbt.h"

#include <math.h>
#include <string.h>

void xqc_pbt_rule_default(xqc_pbt_rule_t *rule) {
  rule->quantile = 0.25;
  rule->resample_p = 0.25;
  rule->factor_down = 0.8;
  rule->factor_up = 1.2;
}

int xqc_pbt_quantile_size(int n, double quantile) {
  if (n <= 0 || !(quantile > 0)) return 0;
  /* Ray Tune's rule: rounded up, so that a small population has a bottom at all (a
   * quarter of 3 members is one), but never more than half, so a member never copies a
   * member of its own half. */
  int q = (int)ceil((double)n * quantile - 1e-9);
  return q > n / 2 ? n / 2 : q;
}

static double clamp(double v, const xqc_pbt_range_t *r) {
  if (v < r->lo) v = r->lo;
  if (v > r->hi) v = r->hi;
  return v;
}

void xqc_pbt_explore(const double *from, double *to, int nsettings,
                     const xqc_pbt_range_t *range, const xqc_pbt_rule_t *rule, xq_rng_t *rng) {
  for (int s = 0; s < nsettings; s++) {
    const xqc_pbt_range_t *r = &range[s];
    double v;
    if (xq_rng_uniform(rng) < rule->resample_p) {
      double u = xq_rng_uniform(rng);
      v = r->log_scale ? exp(log(r->lo) + u * (log(r->hi) - log(r->lo)))
                       : r->lo + u * (r->hi - r->lo);
    } else {
      v = from[s] * (xq_rng_below(rng, 2) ? rule->factor_up : rule->factor_down);
    }
    v = clamp(v, r);
    if (r->whole) v = clamp(round(v), r);
    to[s] = v;
  }
}

int xqc_pbt_round(int n, const double *elo, const double (*settings)[XQC_PBT_MAX_SETTINGS],
                  int nsettings, const xqc_pbt_range_t *range, int control,
                  const xqc_pbt_rule_t *rule, xq_rng_t *rng, xqc_pbt_order_t *orders) {
  if (n <= 0 || n > XQC_PBT_MAX_MEMBERS || nsettings < 0 || nsettings > XQC_PBT_MAX_SETTINGS)
    return 0;
  /* Rank: best first; equal ratings keep the lower index first (insertion sort, stable). */
  int rank[XQC_PBT_MAX_MEMBERS], m = 0;
  for (int i = 0; i < n; i++) {
    if (i == control) continue;
    int j = m++;
    while (j > 0 && elo[rank[j - 1]] < elo[i]) {
      rank[j] = rank[j - 1];
      j--;
    }
    rank[j] = i;
  }
  int q = xqc_pbt_quantile_size(m, rule->quantile), norders = 0;
  for (int b = m - 1; b >= m - q; b--) {
    int member = rank[b], donors[XQC_PBT_MAX_MEMBERS], nd = 0;
    for (int t = 0; t < q; t++)
      if (elo[rank[t]] > elo[member]) donors[nd++] = rank[t];
    if (nd == 0) continue;
    xqc_pbt_order_t *o = &orders[norders++];
    memset(o, 0, sizeof *o);
    o->member = member;
    o->donor = donors[xq_rng_below(rng, (uint64_t)nd)];
    xqc_pbt_explore(settings[o->donor], o->settings, nsettings, range, rule, rng);
  }
  return norders;
}
