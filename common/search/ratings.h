/*
 * ratings.h: one maximum-likelihood rating of many players from their games against each
 * other (a round robin of a population's candidates and the best net, issue 48), draws
 * included, with a 95% interval for each rating.
 *
 * Model: Davidson's extension of Bradley-Terry. Player i has strength r_i (natural units);
 * against player j it wins, draws or loses with probabilities proportional to
 *   e^{r_i},  nu * e^{(r_i + r_j) / 2},  e^{r_j},
 * one draw parameter nu > 0 for the whole table. Without draws this is the logistic Elo
 * model the arena uses (elo.h): Elo = r * 400 / ln 10. With two players the fit is the
 * closed form r_1 - r_2 = ln(W / L), nu = D / sqrt(W L).
 *
 * One player is the anchor (its rating is 0; the others are relative to it). The fit is
 * Newton's method on the log-likelihood over the other ratings and log nu, with halved
 * steps until the likelihood rises. The intervals are +-1.96 standard errors from the
 * inverse of the observed information (the negated Hessian) at the optimum: the normal
 * approximation, honest with tens of games a pair, loose with few.
 *
 * The bare likelihood has a finite maximum only when the graph of wins is strongly
 * connected: no group of players won every decisive game against the rest (a player
 * without a win, or without a loss, is the simplest case; draws do not help, as nu grows
 * with the gap). prior_elo > 0 adds a normal prior of that standard deviation (in Elo) on
 * every rating but the anchor's, and a weak one (sd 5) on ln nu, which keeps every
 * estimate finite (a penalized fit); 0 fits the bare likelihood and refuses such results
 * (XQ_ERANGE). A player with no games, or no chain of games to the anchor, is always
 * refused.
 */
#ifndef XQ_RATINGS_H
#define XQ_RATINGS_H

#include <stdint.h>

#include "support/error.h"

#define XQ_RATINGS_MAX 64 /* players in one fit */

/* Games between two players, from a's side. */
typedef struct {
  int a, b;            /* player indices, a != b */
  int64_t wins, draws, losses;
} xq_ratings_result_t;

typedef struct {
  double elo[XQ_RATINGS_MAX];    /* relative to the anchor, whose rating is 0 */
  double lo[XQ_RATINGS_MAX], hi[XQ_RATINGS_MAX]; /* 95% interval (the anchor's is [0, 0]) */
  double draw_nu;                /* the fitted draw parameter */
  double log_likelihood;         /* at the optimum (with the prior's term, if any) */
  int iterations;
} xq_ratings_t;

/* Fits n players (2..XQ_RATINGS_MAX) from nres results. 0 on success; XQ_EINVAL for bad
 * arguments or a player with no games, XQ_ERANGE when the bare likelihood (prior_elo 0) has
 * no finite maximum, naming a player in eb. */
int xq_ratings_fit(int n, int anchor, const xq_ratings_result_t *res, int nres,
                   double prior_elo, xq_ratings_t *out, xq_errbuf_t *eb);

#endif
