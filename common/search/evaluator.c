/*
 * evaluator.c: the two evaluators behind evaluator.h.
 *
 * The network evaluator owns a folded model, an inference plan for max_batch positions and
 * its encoding scratch (planes and legal move lists); one search thread uses it. It asks
 * the net for the legal moves' priors only (nn_infer_legal), with the lists the caller
 * has when it has them (eval_listed: a tree's leaves do), else its own. The uniform
 * evaluator gives every legal move the same prior and every position the value 0.
 */
#include "search/evaluator.h"

#include <cblas.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "nn/encode.h"
#include "nn/nn_bf16.h"
#include "nn/nn_file.h"
#include "nn/nn_forward.h"
#include "nn/nn_model.h"
#include "nn/nn_plan.h"
#include "rules/policy_index.h"

typedef struct {
  xq_evaluator_t base;
  nn_model_t *model;
  nn_plan_t *plan;
  int nplanes;    /* input planes the model reads (nn_arch_input_planes) */
  float *planes;  /* (max_batch, nplanes, 90) */
  int *legal;     /* (max_batch, XQ_MAX_MOVES): each position's legal policy indices */
  int *nlegal;    /* (max_batch) their counts */
  const int **rows; /* (max_batch) legal + i * XQ_MAX_MOVES */
  uint8_t *mask;  /* (max_batch, NN_POLICY_SIZE): for the whole policy (benchmarks) */
} net_eval_t;

static atomic_bool whole_policy; /* xq_evaluator_whole_policy */

void xq_evaluator_whole_policy(bool on) {
  atomic_store_explicit(&whole_policy, on, memory_order_relaxed);
}

/* The whole policy, masked (xq_evaluator_whole_policy). */
static void net_eval_whole(net_eval_t *ne, xq_pos_t *const *pos, int n, float *priors,
                           float *values) {
  for (int i = 0; i < n; i++) {
    nn_encode(ne->planes + (size_t)i * ne->nplanes * XQ_SQUARES, pos[i], ne->nplanes);
    nn_encode_legal(pos[i], ne->mask + (size_t)i * NN_POLICY_SIZE, NULL, NULL);
  }
  nn_infer(priors, values, ne->plan, ne->model, ne->planes, ne->mask, n);
}

static void net_eval_listed(xq_evaluator_t *ev, xq_pos_t *const *pos, int n,
                            const int *const *legal, const int *nlegal, float *priors,
                            float *values) {
  net_eval_t *ne = (net_eval_t *)ev;
  if (n <= 0) return;
  if (atomic_load_explicit(&whole_policy, memory_order_relaxed)) {
    net_eval_whole(ne, pos, n, priors, values);
    return;
  }
  for (int i = 0; i < n; i++)
    nn_encode(ne->planes + (size_t)i * ne->nplanes * XQ_SQUARES, pos[i], ne->nplanes);
  nn_infer_legal(priors, values, ne->plan, ne->model, ne->planes, legal, nlegal, n);
}

static void net_eval(xq_evaluator_t *ev, xq_pos_t *const *pos, int n, float *priors,
                     float *values) {
  net_eval_t *ne = (net_eval_t *)ev;
  if (atomic_load_explicit(&whole_policy, memory_order_relaxed)) {
    net_eval_whole(ne, pos, n, priors, values); /* finds the legal moves itself */
    return;
  }
  for (int i = 0; i < n; i++)
    ne->nlegal[i] = nn_encode_legal(pos[i], NULL, ne->legal + (size_t)i * XQ_MAX_MOVES, NULL);
  net_eval_listed(ev, pos, n, ne->rows, ne->nlegal, priors, values);
}

static void net_destroy(xq_evaluator_t *ev) {
  net_eval_t *ne = (net_eval_t *)ev;
  nn_plan_free(&ne->plan);
  nn_model_free(&ne->model);
  free(ne->planes);
  free(ne->legal);
  free(ne->nlegal);
  free(ne->rows);
  free(ne->mask);
  free(ne);
}

/* One evaluator in bf16 or fp32 (xq_evaluator_net_new and its pinned twin). */
static int net_new(xq_evaluator_t **out, const char *net_path, int max_batch, bool bf16,
                   xq_errbuf_t *eb) {
  *out = NULL;
  if (max_batch < 1) return xq_err_set(eb, XQ_EINVAL, "max_batch %d < 1", max_batch);
  /* Policy (docs/network-performance.md): one single-threaded BLAS per search thread. */
  openblas_set_num_threads(1);
  net_eval_t *ne = calloc(1, sizeof *ne);
  if (!ne) return xq_err_set(eb, XQ_ENOMEM, "evaluator");
  nn_file_meta_t meta;
  int rc = nn_file_load(net_path, &ne->model, &meta, eb);
  if (rc) goto fail;
  nn_model_fold(ne->model);
  /* The tower's weights converted once per net (nn_bf16.h). */
  if (bf16 && (rc = nn_bf16_attach(ne->model, eb))) goto fail;
  rc = nn_plan_new(&ne->plan, &ne->model->arch, max_batch, false, eb);
  if (rc) goto fail;
  ne->nplanes = nn_arch_input_planes(&ne->model->arch);
  ne->planes = malloc((size_t)max_batch * ne->nplanes * XQ_SQUARES * sizeof(float));
  ne->legal = malloc((size_t)max_batch * XQ_MAX_MOVES * sizeof(int));
  ne->nlegal = malloc((size_t)max_batch * sizeof(int));
  ne->rows = malloc((size_t)max_batch * sizeof *ne->rows);
  ne->mask = malloc((size_t)max_batch * NN_POLICY_SIZE);
  if (!ne->planes || !ne->legal || !ne->nlegal || !ne->rows || !ne->mask) {
    rc = xq_err_set(eb, XQ_ENOMEM, "evaluator scratch for batch %d", max_batch);
    goto fail;
  }
  for (int i = 0; i < max_batch; i++) ne->rows[i] = ne->legal + (size_t)i * XQ_MAX_MOVES;
  ne->base.eval = net_eval;
  ne->base.eval_listed = net_eval_listed;
  ne->base.destroy = net_destroy;
  ne->base.max_batch = max_batch;
  ne->base.net_id = meta.net_id;
  *out = &ne->base;
  return 0;
fail:
  net_destroy(&ne->base);
  return rc;
}

int xq_evaluator_net_new(xq_evaluator_t **out, const char *net_path, int max_batch,
                         xq_errbuf_t *eb) {
  return net_new(out, net_path, max_batch, nn_precision_current() == NN_PRECISION_BF16, eb);
}

int xq_evaluator_net_new_pinned(xq_evaluator_t **out, const char *net_path, int max_batch,
                                bool bf16, xq_errbuf_t *eb) {
  return net_new(out, net_path, max_batch, bf16, eb);
}

static void uniform_eval(xq_evaluator_t *ev, xq_pos_t *const *pos, int n, float *priors,
                         float *values) {
  (void)ev;
  int index[XQ_MAX_MOVES];
  for (int i = 0; i < n; i++) {
    float *p = priors + (size_t)i * XQ_POLICY_SIZE;
    memset(p, 0, XQ_POLICY_SIZE * sizeof(float));
    int k = nn_encode_legal(pos[i], NULL, index, NULL);
    for (int j = 0; j < k; j++) p[index[j]] = 1.0f / (float)k;
    values[i] = 0.0f;
  }
}

static void uniform_destroy(xq_evaluator_t *ev) { free(ev); }

int xq_evaluator_uniform_new(xq_evaluator_t **out, int max_batch) {
  *out = NULL;
  if (max_batch < 1) return XQ_EINVAL;
  xq_evaluator_t *ev = calloc(1, sizeof *ev);
  if (!ev) return XQ_ENOMEM;
  ev->eval = uniform_eval;
  ev->destroy = uniform_destroy;
  ev->max_batch = max_batch;
  ev->net_id = 0;
  *out = ev;
  return 0;
}

void xq_evaluator_free(xq_evaluator_t **ev) {
  if (!ev || !*ev) return;
  (*ev)->destroy(*ev);
  *ev = NULL;
}
