/*
 * gumbel.h (internal to common/search): Gumbel AlphaZero's root search (Danihelka, Guez,
 * Schrittwieser and Silver, "Policy improvement by planning with Gumbel", ICLR 2022; the
 * same choices as DeepMind's mctx, gumbel_muzero_policy). Prefix xqg_.
 *
 * At the root, instead of PUCT:
 *   - each root action a gets a Gumbel(0, 1) sample g(a) (0 when the search has no noise);
 *   - sequential halving spends the n simulations of the search: m = min(gumbel_actions,
 *     legal moves) actions, the top m by g + logits, get a visit each, then the best half
 *     by g + logits + sigma(q^) get more, and so on, so that the budget is spent exactly;
 *   - the move is, among the actions visited most, the one with the best
 *     g + logits + sigma(q^);
 *   - the policy target is softmax(logits + sigma(completed Q)), where an unvisited action's
 *     Q is the mixed value v_mix of the paper's appendix D.
 * sigma(q) = (c_visit + max_b N(b)) * c_scale * q, with q rescaled to [0, 1] by the
 * completed Q's min and max at the root. Below the root the tree is PUCT as before, or,
 * with XQ_SEARCH_GUMBEL_TREE, the paper's deterministic selection (its section 5; mctx's
 * gumbel_muzero_interior_action_selection): the child with the largest
 * pi'(a) - N(a) / (1 + sum_b N(b)), where pi' = softmax(logits + sigma(completed Q)) at
 * that node, so that the visits follow the node's improved policy.
 *
 * The state lives in the tree (xqt_tree_t.gumbel); xqt_select asks xqg_select_root for the
 * root action of each simulation while it is active.
 */
#ifndef XQ_GUMBEL_H
#define XQ_GUMBEL_H

#include <stdbool.h>
#include <stdint.h>

#include "rules/board.h"
#include "support/rng.h"

struct xqt_tree;

typedef struct {
  bool active;                   /* xqt_select takes the root action from xqg_select_root */
  int budget;                    /* simulations of this search (n) */
  int m;                         /* actions considered */
  int sims;                      /* simulations set out in this search */
  float g[XQ_MAX_MOVES];         /* Gumbel sample of each root child (0: no noise) */
  float logit[XQ_MAX_MOVES];     /* log prior of each root child (the priors stay fixed) */
  int32_t visits[XQ_MAX_MOVES];  /* this search's visits of each root child */
} xqg_state_t;

/* The visit count the action chosen for simulation k (0-based) of a sequential halving of
 * n simulations among m actions must have (mctx's get_sequence_of_considered_visits). */
int xqg_considered_visit(int m, int n, int k);

/* Starts a Gumbel root search of budget simulations on t's expanded root; rng NULL: no
 * Gumbel noise (play). Does nothing on an unexpanded root or a budget below 1. */
void xqg_begin(struct xqt_tree *t, xq_rng_t *rng, int budget);
/* The root child (index among the root's children) the next simulation takes; counts it. */
int xqg_select_root(struct xqt_tree *t);
/* Takes back a simulation through root child i that collided. */
void xqg_cancel(struct xqt_tree *t, int i);

/* The completed Q-values of the root children, side to move's view (visited: their mean;
 * unvisited: v_mix). */
void xqg_completed_q(const struct xqt_tree *t, float *q);
/* The improved policy softmax(logits + sigma(completed Q)) over the root children (sums to
 * 1), for the policy target. Only while a search is active (after xqg_begin). */
void xqg_improved_policy(const struct xqt_tree *t, float *pi);
/* The root child the search plays: among those visited most in this search, the best
 * g + logits + sigma(q^). -1 when the search is not active. */
int xqg_best(const struct xqt_tree *t);

/* The improved policy softmax(logits + sigma(completed Q)) over the children of the
 * expanded node (any node, the root included; sums to 1), into pi. */
void xqg_node_policy(const struct xqt_tree *t, int32_t node, float *pi);
/* The child (index among node's children) the deterministic selection below the root
 * takes: the largest pi'(a) - N(a) / (1 + sum_b N(b)). node must be expanded. */
int xqg_select_interior(const struct xqt_tree *t, int32_t node);

#endif
