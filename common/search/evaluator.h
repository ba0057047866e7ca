/*
 * evaluator.h: what the search asks of a network, behind one small interface, so the
 * tree code never sees nn_* types and tests can use a uniform evaluator.
 *
 * An evaluator scores a batch of positions: for each, priors over the policy index (only
 * legal moves non-zero, summing to 1; indices as seen by the side to move, see
 * xq_policy_index_for) and a value in [-1, 1] from the side to move's point of view.
 * One evaluator belongs to one search thread (it owns its scratch memory).
 */
#ifndef XQ_EVALUATOR_H
#define XQ_EVALUATOR_H

#include <stdbool.h>

#include "rules/board.h"
#include "support/error.h"

typedef struct xq_evaluator xq_evaluator_t;

struct xq_evaluator {
  /* pos[i] are positions with their history (the input planes read the repetition and
   * no-capture state). priors: (n, XQ_POLICY_SIZE); values: (n). n <= max_batch. */
  void (*eval)(xq_evaluator_t *ev, xq_pos_t *const *pos, int n, float *priors, float *values);
  /* Optional (NULL: eval serves; call through xq_evaluator_eval_listed): eval when the
   * caller already has each position's legal moves as nn_encode_legal lists their policy
   * indices, legal[i][0 .. nlegal[i] - 1] (a tree's leaf does). priors are then 0 off those
   * indices: a position listed with none gets a row of zeros. */
  void (*eval_listed)(xq_evaluator_t *ev, xq_pos_t *const *pos, int n,
                      const int *const *legal, const int *nlegal, float *priors,
                      float *values);
  void (*destroy)(xq_evaluator_t *ev);
  int max_batch;
  uint64_t net_id; /* 0 for evaluators without a net */
};

/* ev's eval_listed when it has one, else its eval (which finds the legal moves itself). */
static inline void xq_evaluator_eval_listed(xq_evaluator_t *ev, xq_pos_t *const *pos, int n,
                                            const int *const *legal, const int *nlegal,
                                            float *priors, float *values) {
  if (ev->eval_listed) ev->eval_listed(ev, pos, n, legal, nlegal, priors, values);
  else ev->eval(ev, pos, n, priors, values);
}

/* A network evaluator: loads FILE (validated), folds BN, plans for max_batch positions.
 * Single-threaded BLAS by policy (docs/network-performance.md). */
int xq_evaluator_net_new(xq_evaluator_t **out, const char *net_path, int max_batch,
                         xq_errbuf_t *eb);
/* The same with the arithmetic pinned instead of the process's (nn_precision_current):
 * bf16 false runs fp32, true runs the bf16 tower (XQ_EINVAL on a CPU without it). The
 * worker's arena games use it (the coordinator's arena_precision), so that self-play's
 * precision and an arena's are chosen apart. */
int xq_evaluator_net_new_pinned(xq_evaluator_t **out, const char *net_path, int max_batch,
                                bool bf16, xq_errbuf_t *eb);
/* Benchmarks only (`xqz bench selfplay --vs-dense`): with on, network evaluators made from
 * then on or before compute the whole policy and mask it (nn_infer), as before they asked
 * for the legal moves' logits alone (nn_infer_legal); the priors are the same up to
 * rounding. Process-wide; not for use while searches run. */
void xq_evaluator_whole_policy(bool on);
/* Uniform priors over the legal moves and value 0: tests and baselines. */
int xq_evaluator_uniform_new(xq_evaluator_t **out, int max_batch);
/* NULL-safe; sets *ev to NULL. */
void xq_evaluator_free(xq_evaluator_t **ev);

#endif
