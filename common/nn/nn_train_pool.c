/*
 * nn_train_pool.c: the data-parallel step (nn_train_pool.h). Every rank runs the same
 * sequence of barrier waits: "go", the shard counts, one per batch-norm reduction, the
 * end of the backward pass and the end of the gradient sum. A reduction writes into one
 * of two slot arrays, alternating, so it needs one barrier: a rank cannot come back to a
 * slot array before every rank has passed the barrier of the reduction after, by which
 * time every rank has finished reading it.
 */
#define _GNU_SOURCE
#include "nn/nn_train_pool.h"

#include <assert.h>
#include <cblas.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "nn/nn_backward.h"
#include "nn/nn_forward.h"
#include "nn/nn_plan.h"

/*
 * The ranks' barrier. A step waits at about 3 barriers per batch-norm layer, each a few
 * microseconds of work apart, so a waiter first spins a short while (the others are
 * usually about to arrive) and only then sleeps on a condition variable; a box whose
 * cores are taken by other work loses at most the spin to each wait. On the 2-core test
 * box the tiny net's 2-thread speed-up was 1.65-1.70x with pthread_barrier_wait and
 * 1.70-1.73x with 4,000 spins (xqz bench train --sizes tiny --threads 1,2: docs/results.md).
 */
#define BARRIER_SPINS 4000

typedef struct {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  atomic_uint arrived;
  atomic_uint generation;
  unsigned n;
} barrier_t;

static void barrier_init(barrier_t *b, unsigned n) {
  pthread_mutex_init(&b->mu, NULL);
  pthread_cond_init(&b->cv, NULL);
  atomic_init(&b->arrived, 0);
  atomic_init(&b->generation, 0);
  b->n = n;
}

static void barrier_destroy(barrier_t *b) {
  pthread_mutex_destroy(&b->mu);
  pthread_cond_destroy(&b->cv);
}

static void barrier_wait(barrier_t *b) {
  unsigned gen = atomic_load_explicit(&b->generation, memory_order_acquire);
  if (atomic_fetch_add_explicit(&b->arrived, 1, memory_order_acq_rel) + 1 == b->n) {
    atomic_store_explicit(&b->arrived, 0, memory_order_relaxed);
    pthread_mutex_lock(&b->mu);
    atomic_fetch_add_explicit(&b->generation, 1, memory_order_release);
    pthread_cond_broadcast(&b->cv);
    pthread_mutex_unlock(&b->mu);
    return;
  }
  for (int i = 0; i < BARRIER_SPINS; i++) {
    if (atomic_load_explicit(&b->generation, memory_order_acquire) != gen) return;
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
  }
  pthread_mutex_lock(&b->mu);
  while (atomic_load_explicit(&b->generation, memory_order_acquire) == gen)
    pthread_cond_wait(&b->cv, &b->mu);
  pthread_mutex_unlock(&b->mu);
}

/* The longest vector a reduction carries: nn_bn_backward's 2 C + 1. */
#define SLOT_DOUBLES (2 * NN_MAX_CHANNELS + 1)

typedef struct {
  nn_reduce_t red;      /* first member: the reducer hands back its shard */
  struct nn_train_pool *pool;
  unsigned nreduce;     /* reductions so far: picks the slot array */
  nn_model_t *view;     /* rank 0: the model itself; others: a gradient view */
  float *grads;         /* (nparams) the view's gradients (NULL for rank 0) */
  nn_plan_t *plan;      /* training plan for buf.max_n */
  nn_shard_t buf;
  int n;                /* samples in this step's shard */
  double loss[4];       /* this shard's cross-entropy, squared-error, survival and reply sums */
  double l2;            /* sum of w^2 over this rank's slice of the decayed weights */
} shard_t;

struct nn_train_pool {
  nn_model_t *m;
  int T;
  int max_n;
  shard_t *sh;                 /* (T) */
  pthread_t *tid;              /* (T - 1) ranks 1.. */
  int nthreads_started;        /* ranks 1.. running rank_main */
  bool have_barrier;
  barrier_t bar;
  /* Start-up: the ranks wait for every thread to exist (start = 1) or for a failed
   * creation (start = -1) before they enter the barriers. */
  pthread_mutex_t start_mu;
  pthread_cond_t start_cv;
  int start;
  double *slots[2];            /* (T, SLOT_DOUBLES) each */
  /* the step in progress, written by rank 0 before "go" */
  int count;
  nn_shard_fill_fn fill;
  void *ctx;
  const nn_loss_cfg_t *cfg;
  const nn_sgd_t *opt;
  int n_total;
  double l2;                   /* the step's L2 term, from rank 0 */
  int quit;
};

static void reduce_sum(nn_reduce_t *r, double *v, int len) {
  shard_t *s = (shard_t *)r;
  struct nn_train_pool *p = s->pool;
  assert(len <= SLOT_DOUBLES);
  double *slots = p->slots[s->nreduce++ & 1u];
  memcpy(slots + (size_t)r->rank * SLOT_DOUBLES, v, (size_t)len * sizeof(double));
  barrier_wait(&p->bar);
  for (int i = 0; i < len; i++) {
    double acc = 0;
    for (int t = 0; t < p->T; t++) acc += slots[(size_t)t * SLOT_DOUBLES + i];
    v[i] = acc;
  }
}

/* The items [lo, hi) of shard `rank` out of `count`: contiguous, sizes differing by <= 1. */
static void shard_range(int count, int T, int rank, int *lo, int *hi) {
  *lo = (int)((int64_t)count * rank / T);
  *hi = (int)((int64_t)count * (rank + 1) / T);
}

/* One rank's share of a step, from the fill to the end of the gradient sum. */
static void rank_step(struct nn_train_pool *p, int rank) {
  shard_t *s = &p->sh[rank];
  int lo, hi;
  shard_range(p->count, p->T, rank, &lo, &hi);
  s->n = 0;
  if (hi > lo) s->n = p->fill(p->ctx, rank, lo, hi, &s->buf);
  assert(s->n >= 0 && s->n <= hi - lo);
  if (p->T > 1) barrier_wait(&p->bar);
  int n_total = 0;
  for (int t = 0; t < p->T; t++) n_total += p->sh[t].n;
  if (rank == 0) p->n_total = n_total;
  s->loss[0] = s->loss[1] = s->loss[2] = s->loss[3] = 0;
  if (n_total == 0) return; /* every rank sees it: nobody waits on a reduction */
  nn_batch_t b = {s->n, s->buf.planes, s->buf.mask, s->buf.pi_offset, s->buf.pi, s->buf.z,
                  s->buf.surv_mask, s->buf.surv_target, s->buf.reply};
  nn_model_t *v = s->view;
  s->plan->policy_mask = p->cfg->legal_policy ? b.mask : NULL;
  nn_forward(s->plan, v, b.planes, b.n, true);
  nn_model_zero_grad(v);
  nn_loss_heads_shard(s->plan->dlogits, s->plan->dvalue, s->plan->logits, s->plan->value,
                      &b, p->cfg, n_total, s->loss);
  if (v->arch.survival)
    s->loss[2] = nn_loss_survival_shard(s->plan->dsurv, s->plan->surv, &b, p->cfg, n_total);
  if (v->arch.reply)
    s->loss[3] = nn_loss_reply_shard(s->plan->dreply, s->plan->reply, &b, p->cfg, n_total);
  if (p->T == 1) { /* the L2 gradient in the model's own array, as nn_train_step */
    nn_loss_t l2 = {0};
    nn_loss_l2(v, p->cfg, &l2);
    p->l2 = l2.l2;
  }
  nn_backward(s->plan, v, b.planes, b.n);
  s->plan->policy_mask = NULL;
  if (p->T == 1) return;
  barrier_wait(&p->bar);
  /* Sum the gradients of ranks 1.. into the model's, in rank order, over this rank's
   * slice of the parameters. */
  size_t P = p->m->nparams;
  size_t a = P * (size_t)rank / (size_t)p->T, e = P * (size_t)(rank + 1) / (size_t)p->T;
  float *g = p->m->grads;
  for (int t = 1; t < p->T; t++) {
    const float *gt = p->sh[t].grads;
    for (size_t i = a; i < e; i++) g[i] += gt[i];
  }
  /* Then the slice's L2 gradient and its update: rank 0 sums the L2 terms and counts the
   * step once every slice is done. */
  s->l2 = nn_loss_l2_range(p->m, p->cfg, a, e);
  nn_sgd_update_range(p->opt, p->m, a, e);
  barrier_wait(&p->bar);
}

static void *rank_main(void *arg) {
  shard_t *s = arg;
  struct nn_train_pool *p = s->pool;
  pthread_mutex_lock(&p->start_mu);
  while (p->start == 0) pthread_cond_wait(&p->start_cv, &p->start_mu);
  int start = p->start;
  pthread_mutex_unlock(&p->start_mu);
  if (start < 0) return NULL;
  for (;;) {
    barrier_wait(&p->bar); /* "go" */
    if (p->quit) return NULL;
    rank_step(p, s->red.rank);
  }
}

int nn_train_default_threads(void) {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) {
    int n = CPU_COUNT(&set);
    if (n >= 1) return n > NN_TRAIN_MAX_THREADS ? NN_TRAIN_MAX_THREADS : n;
  }
  return 1;
}

static int shard_alloc(shard_t *s, int max_n, int max_pi, int nplanes) {
  size_t n = (size_t)max_n;
  s->buf.max_n = max_n;
  s->buf.max_pi = max_pi;
  s->buf.nplanes = nplanes;
  s->buf.planes = malloc(n * (size_t)nplanes * NN_HW * sizeof(float));
  s->buf.mask = malloc(n * NN_POLICY_SIZE);
  s->buf.pi_offset = malloc((n + 1) * sizeof(int32_t));
  s->buf.pi = malloc(n * (size_t)max_pi * sizeof(nn_pi_entry_t));
  s->buf.z = malloc(n * sizeof(float));
  s->buf.surv_mask = malloc(n * NN_HW);
  s->buf.surv_target = malloc(n * NN_HW);
  s->buf.reply = malloc(n * 2 * sizeof(int16_t));
  return s->buf.planes && s->buf.mask && s->buf.pi_offset && s->buf.pi && s->buf.z &&
                 s->buf.surv_mask && s->buf.surv_target && s->buf.reply
             ? 0
             : -1;
}

int nn_train_pool_new(nn_train_pool_t **out, nn_model_t *m, int threads, int max_n,
                      int max_pi, xq_errbuf_t *eb) {
  *out = NULL;
  if (threads < 1 || threads > NN_TRAIN_MAX_THREADS)
    return xq_err_set(eb, XQ_ERANGE, "training threads %d: must be 1..%d", threads,
                      NN_TRAIN_MAX_THREADS);
  if (max_n < 1 || max_pi < 1)
    return xq_err_set(eb, XQ_ERANGE, "training batch %d: must be at least 1", max_n);
  if (threads > max_n) threads = max_n; /* a shard holds at least one item */
  /* Each rank calls BLAS on its own shard; BLAS threads on top of them only contend. */
  openblas_set_num_threads(1);
  nn_train_pool_t *p = calloc(1, sizeof *p);
  if (!p) return xq_err_set(eb, XQ_ENOMEM, "cannot allocate the training pool");
  p->m = m;
  p->T = threads;
  p->max_n = max_n;
  p->sh = calloc((size_t)threads, sizeof *p->sh);
  p->tid = calloc((size_t)threads, sizeof *p->tid);
  p->slots[0] = calloc((size_t)threads * SLOT_DOUBLES, sizeof(double));
  p->slots[1] = calloc((size_t)threads * SLOT_DOUBLES, sizeof(double));
  if (!p->sh || !p->tid || !p->slots[0] || !p->slots[1]) goto oom;
  int per = (max_n + threads - 1) / threads;
  for (int t = 0; t < threads; t++) {
    shard_t *s = &p->sh[t];
    s->pool = p;
    s->red.sum = reduce_sum;
    s->red.rank = t;
    if (shard_alloc(s, per, max_pi, nn_arch_input_planes(&m->arch))) goto oom;
    int rc = nn_plan_new(&s->plan, &m->arch, per, true, eb);
    if (rc) {
      nn_train_pool_free(&p);
      return rc;
    }
    if (threads > 1) s->plan->reduce = &s->red;
    if (t == 0) {
      s->view = m;
    } else {
      s->view = malloc(sizeof *s->view);
      s->grads = calloc(m->nparams, sizeof(float));
      if (!s->view || !s->grads) goto oom;
      nn_model_grad_view(s->view, m, s->grads);
    }
  }
  barrier_init(&p->bar, (unsigned)threads);
  p->have_barrier = true;
  pthread_mutex_init(&p->start_mu, NULL);
  pthread_cond_init(&p->start_cv, NULL);
  int created = 0;
  for (int t = 1; t < threads; t++) {
    if (pthread_create(&p->tid[t - 1], NULL, rank_main, &p->sh[t])) break;
    created++;
  }
  pthread_mutex_lock(&p->start_mu);
  p->start = created == threads - 1 ? 1 : -1;
  pthread_cond_broadcast(&p->start_cv);
  pthread_mutex_unlock(&p->start_mu);
  p->nthreads_started = created;
  if (p->start < 0) {
    nn_train_pool_free(&p);
    return xq_err_set(eb, XQ_ENOMEM, "cannot start training thread %d of %d (a limit on "
                      "threads? try fewer --threads)", created + 1, threads);
  }
  *out = p;
  return 0;
oom:
  nn_train_pool_free(&p);
  return xq_err_set(eb, XQ_ENOMEM, "cannot allocate the training pool (%d threads, batch %d)",
                    threads, max_n);
}

void nn_train_pool_free(nn_train_pool_t **pp) {
  if (!pp || !*pp) return;
  nn_train_pool_t *p = *pp;
  if (p->have_barrier) {
    if (p->start > 0 && p->T > 1) { /* running: release them from "go" to quit */
      p->quit = 1;
      barrier_wait(&p->bar);
    }
    for (int t = 0; t < p->nthreads_started; t++) pthread_join(p->tid[t], NULL);
    barrier_destroy(&p->bar);
    pthread_mutex_destroy(&p->start_mu);
    pthread_cond_destroy(&p->start_cv);
  }
  for (int t = 0; p->sh && t < p->T; t++) {
    shard_t *s = &p->sh[t];
    nn_plan_free(&s->plan);
    free(s->buf.planes);
    free(s->buf.mask);
    free(s->buf.pi_offset);
    free(s->buf.pi);
    free(s->buf.z);
    free(s->buf.surv_mask);
    free(s->buf.surv_target);
    free(s->buf.reply);
    if (t > 0) free(s->view);
    free(s->grads);
  }
  free(p->sh);
  free(p->tid);
  free(p->slots[0]);
  free(p->slots[1]);
  free(p);
  *pp = NULL;
}

int nn_train_pool_threads(const nn_train_pool_t *p) { return p->T; }

int nn_train_pool_step(nn_train_pool_t *p, nn_sgd_t *opt, int count, nn_shard_fill_fn fill,
                       void *ctx, const nn_loss_cfg_t *cfg, nn_loss_t *out) {
  assert(count >= 0 && count <= p->max_n);
  memset(out, 0, sizeof *out);
  if (count == 0) return 0;
  p->count = count;
  p->fill = fill;
  p->ctx = ctx;
  p->cfg = cfg;
  p->opt = opt;
  /* The shards skip the preparation of the 3x3 weights: done once, here, while the other
   * ranks wait for "go" (the parameters change only in the update below). */
  if (p->T > 1) {
    nn_model_prepare_train(p->m);
    barrier_wait(&p->bar);
  }
  rank_step(p, 0);
  if (p->n_total == 0) return 0;
  double ce = 0, mse = 0, surv = 0, reply = 0;
  for (int t = 0; t < p->T; t++) {
    ce += p->sh[t].loss[0];
    mse += p->sh[t].loss[1];
    surv += p->sh[t].loss[2];
    reply += p->sh[t].loss[3];
  }
  out->policy = ce / p->n_total;
  out->value = mse / p->n_total;
  out->survival = surv / p->n_total;
  out->reply = reply / p->n_total;
  if (p->T > 1) {
    double l2 = 0;
    for (int t = 0; t < p->T; t++) l2 += p->sh[t].l2;
    p->l2 = cfg->l2 * l2;
  }
  out->l2 = p->l2;
  /* Summed in nn_compute_gradients' order: heads, survival, reply, L2. */
  out->total = cfg->policy_weight * out->policy + cfg->value_weight * out->value;
  if (p->m->arch.survival) out->total += cfg->survival_weight * out->survival;
  if (p->m->arch.reply) out->total += cfg->reply_weight * out->reply;
  out->total += out->l2;
  if (p->T == 1) nn_sgd_step(opt, p->m);
  else nn_sgd_advance(opt, p->m); /* the slices were updated by their ranks */
  return p->n_total;
}

int nn_shard_fill_from_batch(void *ctx, int rank, int lo, int hi, nn_shard_t *shard) {
  (void)rank;
  const nn_batch_t *b = ctx;
  int n = hi - lo;
  assert(lo >= 0 && hi <= b->n && n <= shard->max_n);
  size_t per = (size_t)shard->nplanes * NN_HW;
  memcpy(shard->planes, b->planes + (size_t)lo * per, (size_t)n * per * sizeof(float));
  if (b->mask)
    memcpy(shard->mask, b->mask + (size_t)lo * NN_POLICY_SIZE, (size_t)n * NN_POLICY_SIZE);
  else
    memset(shard->mask, 1, (size_t)n * NN_POLICY_SIZE);
  shard->pi_offset[0] = 0;
  for (int i = 0; i < n; i++) {
    int32_t a = b->pi_offset[lo + i], e = b->pi_offset[lo + i + 1];
    assert(e - a <= shard->max_pi);
    memcpy(shard->pi + shard->pi_offset[i], b->pi + a, (size_t)(e - a) * sizeof *b->pi);
    shard->pi_offset[i + 1] = shard->pi_offset[i] + (e - a);
    shard->z[i] = b->z[lo + i];
  }
  if (b->surv_mask) {
    memcpy(shard->surv_mask, b->surv_mask + (size_t)lo * NN_HW, (size_t)n * NN_HW);
    memcpy(shard->surv_target, b->surv_target + (size_t)lo * NN_HW, (size_t)n * NN_HW);
  } else {
    memset(shard->surv_mask, 0, (size_t)n * NN_HW);
    memset(shard->surv_target, 0, (size_t)n * NN_HW);
  }
  for (int i = 0; i < 2 * n; i++) shard->reply[i] = b->reply ? b->reply[2 * lo + i] : -1;
  return n;
}
