/*
 * ratings.c: the Davidson-Bradley-Terry fit of ratings.h. The parameters are the ratings
 * of every player but the anchor and, when some game was drawn, theta = ln nu. For one
 * pair of players with strengths a, b the three outcomes have log-weights a (win),
 * c = theta + (a + b) / 2 (draw) and b (loss), so the pair's log-likelihood is
 *   W a + D c + L b - N lse(a, c, b)
 * and its gradient and Hessian follow from the softmax q over the outcomes: the gradient
 * is (counts - N q) . f and the Hessian is -N Cov_q(f), f being each outcome's derivative
 * of its log-weight by the parameter (a: 1, 1/2, 0; b: 0, 1/2, 1; theta: 0, 1, 0).
 */
#include "search/ratings.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "search/elo.h"

#define ELO_PER_NAT (400.0 / 2.302585092994045684) /* 400 / ln 10 */
#define MAX_PARAMS (XQ_RATINGS_MAX + 1)
#define MAX_ITER 200
#define THETA_PRIOR_SD 5.0 /* ln nu within about e^+-10 when a prior is asked for */

typedef struct {
  int n, anchor, nres;
  const xq_ratings_result_t *res;
  bool draws;        /* some game was drawn: theta is a parameter */
  int np;            /* parameters: n - 1 ratings, then theta when draws */
  int slot[XQ_RATINGS_MAX]; /* player -> parameter index, -1 for the anchor */
  double prior_var;  /* per rating, in nats^2; 0: none */
} fit_t;

static double lse3(double a, double b, double c) {
  double m = fmax(a, fmax(b, c));
  return m + log(exp(a - m) + exp(b - m) + exp(c - m));
}

static double rating_of(const fit_t *f, const double *x, int player) {
  return f->slot[player] < 0 ? 0.0 : x[f->slot[player]];
}

static double theta_of(const fit_t *f, const double *x) {
  return f->draws ? x[f->np - 1] : -INFINITY;
}

/* The log-likelihood (with the prior's terms) at x; its gradient g and Hessian h (np x np,
 * row-major) when they are not NULL. */
static double evaluate(const fit_t *f, const double *x, double *g, double *h) {
  int np = f->np;
  if (g) memset(g, 0, sizeof(double) * (size_t)np);
  if (h) memset(h, 0, sizeof(double) * (size_t)np * (size_t)np);
  double theta = theta_of(f, x), ll = 0;
  for (int k = 0; k < f->nres; k++) {
    const xq_ratings_result_t *r = &f->res[k];
    double w = (double)r->wins, d = (double)r->draws, l = (double)r->losses, n = w + d + l;
    if (n == 0) continue;
    double a = rating_of(f, x, r->a), b = rating_of(f, x, r->b);
    double c = theta + (a + b) / 2, z = lse3(a, c, b);
    ll += w * a + (f->draws ? d * c : 0) + l * b - n * z;
    if (!g && !h) continue;
    double q[3] = {exp(a - z), exp(c - z), exp(b - z)};
    /* f per outcome (win, draw, loss) for the up-to-three parameters of this pair. */
    int idx[3] = {f->slot[r->a], f->slot[r->b], f->draws ? np - 1 : -1};
    static const double feat[3][3] = {{1, 0.5, 0}, {0, 0.5, 1}, {0, 1, 0}};
    double counts[3] = {w, d, l}, mean[3];
    for (int u = 0; u < 3; u++) {
      mean[u] = 0;
      for (int o = 0; o < 3; o++) mean[u] += q[o] * feat[u][o];
    }
    for (int u = 0; u < 3; u++) {
      if (idx[u] < 0) continue;
      if (g) {
        double gu = 0;
        for (int o = 0; o < 3; o++) gu += counts[o] * feat[u][o];
        g[idx[u]] += gu - n * mean[u];
      }
      if (h)
        for (int v = 0; v < 3; v++) {
          if (idx[v] < 0) continue;
          double cov = -mean[u] * mean[v];
          for (int o = 0; o < 3; o++) cov += q[o] * feat[u][o] * feat[v][o];
          h[idx[u] * np + idx[v]] -= n * cov;
        }
    }
  }
  if (f->prior_var > 0) {
    int nr = f->draws ? np - 1 : np;
    for (int i = 0; i < nr; i++) {
      ll -= x[i] * x[i] / (2 * f->prior_var);
      if (g) g[i] -= x[i] / f->prior_var;
      if (h) h[i * np + i] -= 1 / f->prior_var;
    }
    if (f->draws) {
      double t = x[np - 1], v = THETA_PRIOR_SD * THETA_PRIOR_SD;
      ll -= t * t / (2 * v);
      if (g) g[np - 1] -= t / v;
      if (h) h[(np - 1) * np + np - 1] -= 1 / v;
    }
  }
  return ll;
}

/* Solves a x = b (n x n, row-major) by Gaussian elimination with partial pivoting, in
 * aug (n rows of 2n + 1); with inv != NULL also writes a's inverse there. false when a is
 * singular. */
static bool solve(int n, const double *a, double *b, double *inv, double (*aug)[2 * MAX_PARAMS + 1]) {
  int w = 2 * n + 1;
  for (int i = 0; i < n; i++) {
    for (int j = 0; j < n; j++) aug[i][j] = a[i * n + j];
    for (int j = 0; j < n; j++) aug[i][n + j] = i == j;
    aug[i][2 * n] = b[i];
  }
  for (int col = 0; col < n; col++) {
    int piv = col;
    for (int i = col + 1; i < n; i++)
      if (fabs(aug[i][col]) > fabs(aug[piv][col])) piv = i;
    if (!(fabs(aug[piv][col]) > 1e-12)) return false;
    if (piv != col)
      for (int j = 0; j < w; j++) {
        double t = aug[piv][j];
        aug[piv][j] = aug[col][j];
        aug[col][j] = t;
      }
    for (int i = 0; i < n; i++) {
      if (i == col) continue;
      double m = aug[i][col] / aug[col][col];
      if (m != 0)
        for (int j = col; j < w; j++) aug[i][j] -= m * aug[col][j];
    }
  }
  for (int i = 0; i < n; i++) {
    b[i] = aug[i][2 * n] / aug[i][i];
    if (inv)
      for (int j = 0; j < n; j++) inv[i * n + j] = aug[i][n + j] / aug[i][i];
  }
  return true;
}

/* Whether every player is reached from the anchor through results (any game, wins only,
 * or losses only: a game counts as an edge a -> b when a won it against b). */
typedef enum { BY_GAMES, BY_WINS, BY_LOSSES } edge_t;

static int unreached(const fit_t *f, edge_t how) {
  bool reached[XQ_RATINGS_MAX] = {false};
  reached[f->anchor] = true;
  for (bool grew = true; grew;) {
    grew = false;
    for (int k = 0; k < f->nres; k++) {
      const xq_ratings_result_t *r = &f->res[k];
      int64_t ab = how == BY_GAMES ? r->wins + r->draws + r->losses
                   : how == BY_WINS ? r->wins : r->losses; /* an edge a -> b */
      int64_t ba = how == BY_GAMES ? ab : how == BY_WINS ? r->losses : r->wins;
      if (ab > 0 && reached[r->a] && !reached[r->b]) reached[r->b] = grew = true;
      if (ba > 0 && reached[r->b] && !reached[r->a]) reached[r->a] = grew = true;
    }
  }
  for (int i = 0; i < f->n; i++)
    if (!reached[i]) return i;
  return -1;
}

int xq_ratings_fit(int n, int anchor, const xq_ratings_result_t *res, int nres,
                   double prior_elo, xq_ratings_t *out, xq_errbuf_t *eb) {
  if (n < 2 || n > XQ_RATINGS_MAX || anchor < 0 || anchor >= n || nres < 0 ||
      (nres > 0 && !res) || !out || !(prior_elo >= 0))
    return xq_err_set(eb, XQ_EINVAL, "ratings: bad arguments (%d players, anchor %d)", n,
                      anchor);
  fit_t f = {.n = n, .anchor = anchor, .nres = nres, .res = res};
  int64_t games[XQ_RATINGS_MAX] = {0}, wins[XQ_RATINGS_MAX] = {0},
          decided[XQ_RATINGS_MAX] = {0}, decisive = 0, draws = 0;
  for (int k = 0; k < nres; k++) {
    const xq_ratings_result_t *r = &res[k];
    if (r->a < 0 || r->a >= n || r->b < 0 || r->b >= n || r->a == r->b || r->wins < 0 ||
        r->draws < 0 || r->losses < 0)
      return xq_err_set(eb, XQ_EINVAL, "ratings: result %d names players %d and %d of %d", k,
                        r->a, r->b, n);
    int64_t g = r->wins + r->draws + r->losses;
    games[r->a] += g;
    games[r->b] += g;
    wins[r->a] += r->wins;
    wins[r->b] += r->losses;
    decided[r->a] += r->wins + r->losses;
    decided[r->b] += r->wins + r->losses;
    decisive += r->wins + r->losses;
    draws += r->draws;
  }
  for (int i = 0; i < n; i++)
    if (games[i] == 0) return xq_err_set(eb, XQ_EINVAL, "ratings: player %d has no games", i);
  int lost = unreached(&f, BY_GAMES);
  if (lost >= 0)
    return xq_err_set(eb, XQ_EINVAL,
                      "ratings: player %d has no chain of games to the anchor (player %d)",
                      lost, anchor);
  /* The bare likelihood has a finite maximum when the graph of wins is strongly connected
   * (Hunter 2004; draws do not help: nu grows with the gap). */
  if (prior_elo == 0) {
    if (decisive == 0)
      return xq_err_set(eb, XQ_ERANGE, "ratings: every game was drawn: nothing to rate");
    for (int i = 0; i < n; i++)
      if (wins[i] == 0 || wins[i] == decided[i])
        return xq_err_set(eb, XQ_ERANGE,
                          "ratings: player %d %s: no finite rating without a prior", i,
                          wins[i] == 0 ? "won no game" : "lost no game");
    int i = unreached(&f, BY_WINS);
    if (i < 0) i = unreached(&f, BY_LOSSES);
    if (i >= 0)
      return xq_err_set(eb, XQ_ERANGE,
                        "ratings: the players split into two groups, one of which won every "
                        "decisive game against the other (player %d): no finite rating "
                        "without a prior",
                        i);
  }
  f.draws = draws > 0;
  for (int i = 0, p = 0; i < n; i++) f.slot[i] = i == anchor ? -1 : p++;
  f.np = n - 1 + (f.draws ? 1 : 0);
  f.prior_var = prior_elo > 0 ? pow(prior_elo / ELO_PER_NAT, 2) : 0;

  int np = f.np;
  double x[MAX_PARAMS] = {0}, g[MAX_PARAMS], step[MAX_PARAMS], trial[MAX_PARAMS];
  /* The matrices, on the heap: about 200 KB at 64 players. */
  struct work {
    double h[MAX_PARAMS * MAX_PARAMS], neg[MAX_PARAMS * MAX_PARAMS],
        cov[MAX_PARAMS * MAX_PARAMS], aug[MAX_PARAMS][2 * MAX_PARAMS + 1];
  } *wk = malloc(sizeof *wk);
  if (!wk) return xq_err_set(eb, XQ_ENOMEM, "ratings: out of memory");
  double *h = wk->h, *neg = wk->neg, *cov = wk->cov;
  if (f.draws) /* start nu at the draw rate's odds, the two-equal-players value */
    x[np - 1] = log(fmax((double)draws, 0.5) / (double)(decisive > 0 ? decisive : 1) * 2);
  double ll = evaluate(&f, x, g, h);
  int it = 0;
  bool done = false;
  for (; it < MAX_ITER && !done; it++) {
    for (int i = 0; i < np * np; i++) neg[i] = -h[i];
    memcpy(step, g, sizeof(double) * (size_t)np);
    if (!solve(np, neg, step, NULL, wk->aug)) break;
    double scale = 1, next = -INFINITY;
    for (int half = 0; half < 60; half++, scale /= 2) {
      for (int i = 0; i < np; i++) trial[i] = x[i] + scale * step[i];
      next = evaluate(&f, trial, NULL, NULL);
      if (next >= ll) break;
    }
    if (!(next >= ll)) break;
    double moved = 0;
    for (int i = 0; i < np; i++) moved = fmax(moved, fabs(trial[i] - x[i]));
    memcpy(x, trial, sizeof(double) * (size_t)np);
    ll = evaluate(&f, x, g, h);
    double gmax = 0;
    for (int i = 0; i < np; i++) gmax = fmax(gmax, fabs(g[i]));
    done = gmax < 1e-9 || moved < 1e-12;
  }
  double rhs[MAX_PARAMS] = {0};
  for (int i = 0; i < np * np; i++) neg[i] = -h[i];
  if (!done || !solve(np, neg, rhs, cov, wk->aug)) {
    free(wk);
    return xq_err_set(eb, XQ_ERANGE,
                      "ratings: the fit did not converge in %d steps (a player beat or lost "
                      "to a whole group?); fit with a prior",
                      it);
  }
  memset(out, 0, sizeof *out);
  for (int i = 0; i < n; i++) {
    int s = f.slot[i];
    if (s < 0) continue;
    double var = cov[s * np + s], half = XQ_Z95 * sqrt(var > 0 ? var : 0);
    out->elo[i] = x[s] * ELO_PER_NAT;
    out->lo[i] = (x[s] - half) * ELO_PER_NAT;
    out->hi[i] = (x[s] + half) * ELO_PER_NAT;
  }
  out->draw_nu = f.draws ? exp(x[np - 1]) : 0;
  out->log_likelihood = ll;
  out->iterations = it;
  free(wk);
  return 0;
}
