/*
 * gumbel.c: Gumbel AlphaZero's root search (gumbel.h).
 */
#include "search/gumbel.h"

#include <math.h>
#include <string.h>

#include "search/mcts_tree.h"

/* Stand-in for log 0: a prior the net (or the cache's rounding) gave as 0. */
#define LOGIT_FLOOR -30.0f

int xqg_considered_visit(int m, int n, int k) {
  if (m <= 1) return k;
  if (k >= n) k = n - 1;
  int log2max = 0;
  while ((1 << log2max) < m) log2max++;
  int considered = m, base = 0, pos = 0;
  for (;;) {
    int extra = n / (log2max * considered);
    if (extra < 1) extra = 1;
    int len = extra * considered;
    if (k < pos + len) return base + (k - pos) / considered;
    pos += len;
    base += extra;
    considered = considered / 2 > 2 ? considered / 2 : 2;
  }
}

static float logit(float prior) {
  return prior > 0.0f ? fmaxf(logf(prior), LOGIT_FLOOR) : LOGIT_FLOOR;
}

/* Gumbel(0, 1) by inversion. */
static float gumbel_sample(xq_rng_t *rng) {
  double u = xq_rng_uniform(rng);
  if (u <= 0.0) u = 1e-300;
  return (float)-log(-log(u));
}

void xqg_begin(xqt_tree_t *t, xq_rng_t *rng, int budget) {
  xqg_state_t *s = &t->gumbel;
  const xqt_node_t *r = &t->nodes[0];
  s->active = false;
  if (!(r->flags & XQT_EXPANDED) || !r->nchild || budget < 1) return;
  s->budget = budget;
  s->m = t->cfg.gumbel_actions < r->nchild ? t->cfg.gumbel_actions : r->nchild;
  if (s->m < 1) s->m = 1;
  s->sims = 0;
  for (int i = 0; i < r->nchild; i++) {
    s->g[i] = rng ? gumbel_sample(rng) : 0.0f;
    s->logit[i] = logit(t->nodes[r->first + i].prior);
    s->visits[i] = 0;
  }
  s->active = true;
}

/* The completed Q-values of node's children (view of the side to move at node) into q. */
static void completed_q(const xqt_tree_t *t, int32_t node, float *q) {
  const xqt_node_t *r = &t->nodes[node];
  double sum_n = 0.0, sum_p = 0.0, sum_pq = 0.0;
  for (int i = 0; i < r->nchild; i++) {
    const xqt_node_t *c = &t->nodes[r->first + i];
    if (c->n <= 0) continue;
    float qi = c->w / (float)c->n;
    sum_n += c->n;
    sum_p += c->prior;
    sum_pq += (double)c->prior * qi;
  }
  /* v_mix: the net's value of the node mixed with the prior-weighted Q of the visited
   * actions (the paper's equation 33). */
  double v = r->tvalue;
  if (sum_n > 0.0) {
    double wq = sum_p > 1e-12 ? sum_pq / sum_p : 0.0;
    v = (v + sum_n * wq) / (1.0 + sum_n);
  }
  for (int i = 0; i < r->nchild; i++) {
    const xqt_node_t *c = &t->nodes[r->first + i];
    q[i] = c->n > 0 ? c->w / (float)c->n : (float)v;
  }
}

void xqg_completed_q(const xqt_tree_t *t, float *q) { completed_q(t, 0, q); }

/* sigma(completed Q) of every child of node into out. */
static void sigma_q(const xqt_tree_t *t, int32_t node, float *out) {
  const xqt_node_t *r = &t->nodes[node];
  completed_q(t, node, out);
  float lo = out[0], hi = out[0];
  int32_t nmax = 0;
  for (int i = 0; i < r->nchild; i++) {
    lo = fminf(lo, out[i]);
    hi = fmaxf(hi, out[i]);
    const xqt_node_t *c = &t->nodes[r->first + i];
    if (c->n > nmax) nmax = c->n;
  }
  float span = hi - lo > 1e-8f ? hi - lo : 1e-8f;
  float scale = (t->cfg.gumbel_c_visit + (float)nmax) * t->cfg.gumbel_c_scale;
  for (int i = 0; i < r->nchild; i++) out[i] = scale * (out[i] - lo) / span;
}

/* g + logits + sigma(q^) of every root child into score. */
static void scores(const xqt_tree_t *t, float *score) {
  const xqt_node_t *r = &t->nodes[0];
  sigma_q(t, 0, score);
  for (int i = 0; i < r->nchild; i++)
    score[i] += t->gumbel.g[i] + t->gumbel.logit[i];
}

/* The best score among the children whose visits in this search equal want; -1 if none. */
static int best_with_visits(const xqt_tree_t *t, const float *score, int32_t want) {
  int best = -1;
  for (int i = 0; i < t->nodes[0].nchild; i++)
    if (t->gumbel.visits[i] == want && (best < 0 || score[i] > score[best])) best = i;
  return best;
}

int xqg_select_root(xqt_tree_t *t) {
  xqg_state_t *s = &t->gumbel;
  float score[XQ_MAX_MOVES];
  scores(t, score);
  int want = xqg_considered_visit(s->m, s->budget, s->sims);
  int i = best_with_visits(t, score, want);
  if (i < 0) {
    /* Only when more simulations run than the budget: the least visited considered one. */
    int32_t least = INT32_MAX;
    for (int k = 0; k < t->nodes[0].nchild; k++)
      if (s->visits[k] > 0 && s->visits[k] < least) least = s->visits[k];
    i = best_with_visits(t, score, least == INT32_MAX ? 0 : least);
  }
  s->visits[i]++;
  s->sims++;
  return i;
}

void xqg_cancel(xqt_tree_t *t, int i) {
  xqg_state_t *s = &t->gumbel;
  if (!s->active || i < 0 || i >= t->nodes[0].nchild || s->visits[i] <= 0) return;
  s->visits[i]--;
  s->sims--;
}

void xqg_improved_policy(const xqt_tree_t *t, float *pi) {
  if (t->nodes[0].nchild) xqg_node_policy(t, 0, pi);
}

int xqg_best(const xqt_tree_t *t) {
  const xqg_state_t *s = &t->gumbel;
  if (!s->active) return -1;
  int32_t most = 0;
  for (int i = 0; i < t->nodes[0].nchild; i++)
    if (s->visits[i] > most) most = s->visits[i];
  float score[XQ_MAX_MOVES];
  scores(t, score);
  return best_with_visits(t, score, most);
}

void xqg_node_policy(const xqt_tree_t *t, int32_t node, float *pi) {
  const xqt_node_t *p = &t->nodes[node];
  sigma_q(t, node, pi);
  float top = -1e30f;
  for (int i = 0; i < p->nchild; i++) top = fmaxf(top, pi[i]);
  /* softmax(logits + sigma) with logit = log prior: prior x exp(sigma), normalized. */
  double sum = 0.0;
  for (int i = 0; i < p->nchild; i++)
    sum += pi[i] = t->nodes[p->first + i].prior * expf(pi[i] - top);
  for (int i = 0; i < p->nchild; i++)
    pi[i] = sum > 0.0 ? (float)(pi[i] / sum) : 1.0f / (float)p->nchild;
}

int xqg_select_interior(const xqt_tree_t *t, int32_t node) {
  const xqt_node_t *p = &t->nodes[node];
  float pi[XQ_MAX_MOVES];
  xqg_node_policy(t, node, pi);
  double total = 0.0;
  for (int i = 0; i < p->nchild; i++) total += t->nodes[p->first + i].n;
  int best = 0;
  float bs = -1e30f;
  for (int i = 0; i < p->nchild; i++) {
    float s = pi[i] - (float)(t->nodes[p->first + i].n / (1.0 + total));
    if (s > bs) {
      bs = s;
      best = i;
    }
  }
  return best;
}
