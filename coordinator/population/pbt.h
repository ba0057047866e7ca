/*
 * pbt.h: the exploit-and-explore step of population-based training (issue 48; Jaderberg
 * et al. 2017, with Ray Tune's PopulationBasedTraining as the reference for its
 * semantics). Pure: ratings and settings in, copy orders out, no I/O.
 *
 * Each round, the members are ranked by rating (the control member, if any, takes no
 * part). Each member in the bottom quantile copies a member of the top quantile, drawn
 * uniformly, whose rating is higher than its own: its weights, optimizer state and
 * settings (the caller carries out the copy), and then perturbs the settings it took:
 * each one, with probability resample_p, is drawn afresh from its range (log-uniformly for
 * a setting on a log scale); otherwise it is multiplied by one of the two factors (0.8 or
 * 1.2 by default) drawn with equal odds, and kept within its range. A whole-number
 * setting is rounded after. A round changes nothing when the quantile holds no member
 * (fewer than two ranked members) or when every member is rated the same.
 */
#ifndef XQC_PBT_H
#define XQC_PBT_H

#include <stdbool.h>

#include "support/rng.h"

#define XQC_PBT_MAX_MEMBERS 64
#define XQC_PBT_MAX_SETTINGS 16

/* A setting's range. */
typedef struct {
  const char *name;
  double lo, hi;   /* lo > 0 when log_scale */
  bool log_scale;  /* resampled log-uniformly */
  bool whole;      /* rounded to a whole number */
} xqc_pbt_range_t;

typedef struct {
  double quantile;   /* bottom and top share of the ranked members, in (0, 0.5]; 0.25 */
  double resample_p; /* probability of a fresh draw for each setting, [0, 1]; 0.25 */
  double factor_down, factor_up; /* 0.8, 1.2 */
} xqc_pbt_rule_t;

/* One member's copy order: copy donor's weights, optimizer state and settings, then
 * train with settings[] (the donor's, perturbed). */
typedef struct {
  int member, donor;
  double settings[XQC_PBT_MAX_SETTINGS];
} xqc_pbt_order_t;

/* The defaults above. */
void xqc_pbt_rule_default(xqc_pbt_rule_t *rule);

/* The quantile's size for n ranked members: n * quantile rounded up, at most n / 2
 * rounded down (Ray Tune's rule): 1 of 3 or 4 members at 0.25, none of 1. */
int xqc_pbt_quantile_size(int n, double quantile);

/* One round over n members (n <= XQC_PBT_MAX_MEMBERS) with ratings elo[] and settings
 * settings[member][s] (nsettings <= XQC_PBT_MAX_SETTINGS, ranges range[s]); control is the
 * index of the control member, or -1. Writes at most n orders, each member at most once,
 * and returns how many; orders name the bottom members in rank order, the worst first.
 * Ties in rating rank the lower index first. Deterministic for a given rng state. */
int xqc_pbt_round(int n, const double *elo, const double (*settings)[XQC_PBT_MAX_SETTINGS],
                  int nsettings, const xqc_pbt_range_t *range, int control,
                  const xqc_pbt_rule_t *rule, xq_rng_t *rng, xqc_pbt_order_t *orders);

/* The explore step alone: from[] perturbed into to[] (also used by the round). */
void xqc_pbt_explore(const double *from, double *to, int nsettings,
                     const xqc_pbt_range_t *range, const xqc_pbt_rule_t *rule, xq_rng_t *rng);

#endif
