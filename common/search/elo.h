/*
 * elo.h: match statistics for the arena: Elo difference from a score with a 95%
 * confidence interval, and the generalized SPRT (GSPRT) that Fishtest uses to stop a
 * match early.
 *
 * Models: trinomial (each game is a win, draw or loss, scored 1, 1/2, 0) and pentanomial
 * (each pair of games on one opening with colours swapped scores 0, 1/2, 1, 3/2 or 2;
 * pairs[k] counts the pairs that scored k/2 points). The pentanomial model accounts for
 * the correlation that paired openings create and gives a tighter, honest interval.
 *
 * Elo is logistic: score s = 1 / (1 + 10^(-elo/400)). The interval is the normal
 * approximation on the mean score, s +- 1.959964 * sigma/sqrt(n), mapped through the
 * logistic; ci95 is half its width (Fishtest's "elo +- ci95").
 *
 * SPRT: the hypotheses are logistic Elo differences elo0 (H0) and elo1 (H1) (Fishtest's
 * "logistic" formulation, not normalized Elo). The log-likelihood ratio is the GSPRT one
 * of Fishtest's LLRcalc: LLR = n * sum_i p_i log(q1_i / q0_i), where p is the observed
 * distribution of outcomes (every count floored at 1e-3 as Fishtest does) and q0, q1 are
 * the maximum-likelihood distributions whose mean score is s(elo0), s(elo1).
 */
#ifndef XQ_ELO_H
#define XQ_ELO_H

#include <stdint.h>

#define XQ_Z95 1.959963984540054 /* two-sided 95% normal quantile */

typedef struct {
  int64_t n;     /* games (trinomial) or game pairs (pentanomial) */
  double score;  /* mean score per game in [0, 1]; 0.5 when n == 0 */
  double elo;    /* +-INFINITY when score is 1 or 0 */
  double elo_lo, elo_hi; /* 95% interval (may be infinite) */
  double ci95;   /* (elo_hi - elo_lo) / 2; INFINITY when n == 0 or the interval is open */
} xq_elo_est_t;

typedef enum { XQ_SPRT_NONE = 0, XQ_SPRT_ACCEPT, XQ_SPRT_REJECT } xq_sprt_t;

/* Logistic Elo of a score in [0, 1] (+-INFINITY at the ends) and its inverse. */
double xq_elo_from_score(double s);
double xq_elo_to_score(double elo);

/* Estimates from wins, draws and losses. */
void xq_elo_trinomial(int64_t w, int64_t d, int64_t l, xq_elo_est_t *out);
/* Estimates from pair counts (pairs[k] = pairs scoring k/2 points, k = 0..4). */
void xq_elo_pentanomial(const int64_t pairs[5], xq_elo_est_t *out);

/* GSPRT log-likelihood ratio of H1 (elo1) against H0 (elo0); 0 when there is no data. */
double xq_sprt_llr_trinomial(int64_t w, int64_t d, int64_t l, double elo0, double elo1);
double xq_sprt_llr_pentanomial(const int64_t pairs[5], double elo0, double elo1);
/* Wald's bounds: lower = log(beta / (1 - alpha)), upper = log((1 - beta) / alpha). */
void xq_sprt_bounds(double alpha, double beta, double *lower, double *upper);
/* accept (H1) when llr >= upper, reject (H0) when llr <= lower, else none. */
xq_sprt_t xq_sprt_decide(double llr, double alpha, double beta);
const char *xq_sprt_name(xq_sprt_t d); /* "accept", "reject", "none" */

#endif
