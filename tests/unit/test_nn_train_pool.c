/*
 * test_nn_train_pool.c: the data-parallel training step. One thread is exactly
 * nn_train_step; N threads compute the same step within float tolerance (weights and
 * batch-norm running statistics after each of several steps, each from the same state); a
 * fixed N is bit-for-bit reproducible, also across a checkpoint; empty and rejected shards;
 * bad thread counts. The first two and the empty shard also with global pooling in both
 * blocks (its weights' gradients are per shard and summed with the rest), and with the
 * survival head (its loss is a sum of per-sample terms, so the shards need no new
 * reduction).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "nn/nn_checkpoint.h"
#include "nn/nn_train_pool.h"
#include "nn_test_util.h"

#define STEPS 4
#define BATCH 24
#define TARGETS 4

static const nn_loss_cfg_t cfg = {1.0f, 1.0f, 1e-4f, 1.0f, 1.0f, false};

/* Global pooling in the nets model() makes: 0 (none) or 1 (every block). */
static int gpool_every;
/* The survival head in the nets model() makes, and survival targets in batch()'s. */
static int survival;
/* Line convolutions in the nets model() makes: 0 (none) or 1 (every block). */
static int lines;
/* The opponent-reply head in the nets model() makes, and reply targets in batch()'s. */
static int reply;

/* A tiny 2x8 net: small enough for many steps under the sanitizers. */
static nn_model_t *model(uint64_t seed) {
  nn_arch_t a = nn_arch_make(2, 8);
  a.gpool_every = gpool_every;
  a.survival = survival;
  a.lines = lines;
  a.reply = reply;
  nn_model_t *m;
  assert_int_equal(nn_model_new(&m, &a, NULL), 0);
  nn_model_init(m, seed);
  /* Pooling and line weights start at zero; random ones make them act from the first
   * step. */
  xq_rng_t g;
  xq_rng_seed(&g, seed + 100);
  tu_fill_block_biases(m, &g, 0.2f);
  return m;
}

static void sgd(nn_sgd_t *o, const nn_model_t *m) {
  memset(o, 0, sizeof *o);
  assert_int_equal(nn_sgd_init(o, m, NULL), 0);
  o->momentum = 0.9f;
  assert_int_equal(nn_lr_parse(&o->schedule, "0:0.05", NULL), 0);
}

typedef struct {
  nn_model_t *m;
  nn_sgd_t opt;
  nn_train_pool_t *pool;
} run_t;

static void run_open(run_t *r, int threads) {
  r->m = model(7);
  sgd(&r->opt, r->m);
  assert_int_equal(nn_train_pool_new(&r->pool, r->m, threads, BATCH, TARGETS, NULL), 0);
}

static void run_close(run_t *r) {
  nn_train_pool_free(&r->pool);
  assert_null(r->pool);
  nn_sgd_close(&r->opt);
  nn_model_free(&r->m);
}

/* A batch with continuous planes. The 0/1 planes of tu_batch_make give many positions
 * the same conv output, so a BN channel can hold values whose distance from the batch mean
 * is rounding noise; the ReLU after it then flips with the order of the sums, a real
 * (and harmless) difference between thread counts that would hide a real bug here. */
static void batch(tu_batch_t *tb, int n, uint64_t seed) {
  xq_rng_t g;
  xq_rng_seed(&g, seed);
  tu_batch_make(tb, n, 20, TARGETS, &g);
  for (size_t i = 0; i < (size_t)n * NN_INPUT_PLANES * NN_HW; i++)
    tb->planes[i] += (float)(0.5 * xq_rng_uniform(&g));
  if (survival) tu_batch_add_survival(tb, &g);
  if (reply) tu_batch_add_reply(tb, &g);
}

/* STEPS steps on STEPS different batches (the same for every run). */
static void run_steps(run_t *r, nn_loss_t *last) {
  for (int k = 0; k < STEPS; k++) {
    tu_batch_t tb;
    batch(&tb, BATCH, 100 + (uint64_t)k);
    int n = nn_train_pool_step(r->pool, &r->opt, BATCH, nn_shard_fill_from_batch, &tb.b, &cfg,
                               last);
    assert_int_equal(n, BATCH);
    tu_batch_free(&tb);
  }
}

static double max_rel_diff(const float *a, const float *b, size_t n) {
  double worst = 0;
  for (size_t i = 0; i < n; i++) {
    double d = fabs((double)a[i] - b[i]) / (1e-3 + fabs((double)a[i]));
    if (d > worst) worst = d;
  }
  return worst;
}

/* One pool thread is nn_train_step, bit for bit. */
static void test_one_thread_is_train_step(void **state) {
  (void)state;
  run_t r;
  run_open(&r, 1);
  nn_loss_t lp;
  run_steps(&r, &lp);
  nn_model_t *m = model(7);
  nn_sgd_t o;
  sgd(&o, m);
  nn_plan_t *plan;
  assert_int_equal(nn_plan_new(&plan, &m->arch, BATCH, true, NULL), 0);
  nn_loss_t ls;
  for (int k = 0; k < STEPS; k++) {
    tu_batch_t tb;
    batch(&tb, BATCH, 100 + (uint64_t)k);
    nn_train_step(m, plan, &o, &tb.b, &cfg, &ls);
    tu_batch_free(&tb);
  }
  assert_memory_equal(m->params, r.m->params, m->nparams * sizeof(float));
  assert_memory_equal(m->stats, r.m->stats, m->nstats * sizeof(float));
  assert_memory_equal(o.velocity, r.opt.velocity, o.n * sizeof(float));
  assert_true(ls.total == lp.total && ls.policy == lp.policy && ls.value == lp.value);
  assert_true(ls.survival == lp.survival && ls.reply == lp.reply);
  assert_int_equal(o.step, r.opt.step);
  nn_plan_free(&plan);
  nn_sgd_close(&o);
  nn_model_free(&m);
  run_close(&r);
}

/* from's weights, running statistics and momentum, copied into r. */
static void copy_state(run_t *r, const run_t *from) {
  memcpy(r->m->params, from->m->params, from->m->nparams * sizeof(float));
  memcpy(r->m->stats, from->m->stats, from->m->nstats * sizeof(float));
  memcpy(r->opt.velocity, from->opt.velocity, from->opt.n * sizeof(float));
}

/* N threads take the step one thread takes: from the same state, the weights, running
 * statistics and loss after the step agree to float rounding. 5 does not divide the batch;
 * 24 gives one sample a shard. Each of the STEPS steps starts from the one-thread run's
 * state: compared only at the end, the runs drift apart by more than any tolerance a
 * single step deserves (with momentum 0.9 and a rate of 0.05, the last bits of a GEMM's
 * rounding grew over 4 steps to 1.9e-4 in the running statistics with the old contracted
 * kernel, and to 0.39 relative in one weight with an explicit-FMA one, both in a Release
 * build for AVX-512), and a comparison that passes by rounding luck tests nothing. */
static void test_threads_match_one(void **state) {
  (void)state;
  const int counts[] = {2, 3, 5, 24};
  for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
    run_t one, r;
    run_open(&one, 1);
    run_open(&r, counts[c]);
    assert_int_equal(nn_train_pool_threads(r.pool), counts[c]);
    for (int k = 0; k < STEPS; k++) {
      copy_state(&r, &one);
      tu_batch_t tb;
      batch(&tb, BATCH, 100 + (uint64_t)k);
      nn_loss_t l1, ln;
      assert_int_equal(nn_train_pool_step(one.pool, &one.opt, BATCH, nn_shard_fill_from_batch,
                                          &tb.b, &cfg, &l1), BATCH);
      assert_int_equal(nn_train_pool_step(r.pool, &r.opt, BATCH, nn_shard_fill_from_batch,
                                          &tb.b, &cfg, &ln), BATCH);
      tu_batch_free(&tb);
      double dw = max_rel_diff(one.m->params, r.m->params, one.m->nparams);
      double ds = max_rel_diff(one.m->stats, r.m->stats, one.m->nstats);
      double dl = fabs(l1.total - ln.total) / l1.total;
      /* The pooled run's trajectory leaves two stem running means near 2.7e-4, where the
       * 1e-3 floor of max_rel_diff reads their float rounding (1.8e-7) as 1.4e-4. */
      double ds_tol = gpool_every ? 1e-3 : 1e-4;
      if (dw > 1e-3 || ds > ds_tol || dl > 1e-6)
        fail_msg("%d threads differ from 1 after step %d: weights %.3g, running stats %.3g, "
                 "loss %.3g", counts[c], k + 1, dw, ds, dl);
    }
    /* Not the same bits (the sums run in another order), but the same steps. */
    assert_int_equal(r.opt.step, STEPS);
    run_close(&r);
    run_close(&one);
  }
}

/* A fixed thread count is reproducible bit for bit. */
static void test_fixed_threads_deterministic(void **state) {
  (void)state;
  run_t a, b;
  run_open(&a, 3);
  run_open(&b, 3);
  nn_loss_t la, lb;
  run_steps(&a, &la);
  run_steps(&b, &lb);
  assert_memory_equal(a.m->params, b.m->params, a.m->nparams * sizeof(float));
  assert_memory_equal(a.m->stats, b.m->stats, a.m->nstats * sizeof(float));
  assert_memory_equal(a.opt.velocity, b.opt.velocity, a.opt.n * sizeof(float));
  assert_true(la.total == lb.total);
  run_close(&a);
  run_close(&b);
}

/* Training on after a checkpoint equals training on without it, bit for bit. */
static void test_checkpoint_resume_exact(void **state) {
  (void)state;
  char dir[256], path[300];
  snprintf(dir, sizeof dir, "%s/train_pool_XXXXXX", XQZ_BINARY_DIR);
  assert_non_null(mkdtemp(dir));
  snprintf(path, sizeof path, "%s/t.xqzc", dir);
  run_t a;
  run_open(&a, 2);
  nn_loss_t l;
  run_steps(&a, &l);
  nn_file_meta_t meta = {0};
  meta.input_version = NN_INPUT_VERSION;
  assert_int_equal(nn_checkpoint_save(path, a.m, &meta, &a.opt, NULL, NULL), 0);
  run_steps(&a, &l); /* STEPS more on the same batches as the first STEPS */

  run_t b;
  nn_file_meta_t mb;
  memset(&b, 0, sizeof b);
  assert_int_equal(nn_checkpoint_load(path, &b.m, &mb, &b.opt, NULL, NULL), 0);
  assert_int_equal(nn_lr_parse(&b.opt.schedule, "0:0.05", NULL), 0);
  b.opt.momentum = 0.9f;
  assert_int_equal(nn_train_pool_new(&b.pool, b.m, 2, BATCH, TARGETS, NULL), 0);
  run_steps(&b, &l);
  assert_memory_equal(a.m->params, b.m->params, a.m->nparams * sizeof(float));
  assert_memory_equal(a.m->stats, b.m->stats, a.m->nstats * sizeof(float));
  assert_memory_equal(a.opt.velocity, b.opt.velocity, a.opt.n * sizeof(float));
  assert_int_equal(b.opt.step, 2 * STEPS);
  run_close(&a);
  run_close(&b);
  unlink(path);
  rmdir(dir);
}

/* Rejects every item of rank 1's shard (the trainer's fill drops bad samples). */
static int fill_drop_rank1(void *ctx, int rank, int lo, int hi, nn_shard_t *shard) {
  if (rank == 1) return 0;
  return nn_shard_fill_from_batch(ctx, rank, lo, hi, shard);
}

static int fill_drop_all(void *ctx, int rank, int lo, int hi, nn_shard_t *shard) {
  (void)ctx, (void)rank, (void)lo, (void)hi, (void)shard;
  return 0;
}

/* A shard left empty by its fill still takes part in every reduction: the step is the
 * one-thread step on the samples that remain; a batch with no sample takes no step. */
static void test_empty_shard(void **state) {
  (void)state;
  tu_batch_t tb;
  batch(&tb, 9, 5);
  /* Ranks of 3 over 9 items: [0,3) [3,6) [6,9); rank 1's are dropped. */
  run_t r;
  run_open(&r, 3);
  nn_loss_t l3;
  assert_int_equal(nn_train_pool_step(r.pool, &r.opt, 9, fill_drop_rank1, &tb.b, &cfg, &l3), 6);
  /* The same six samples in one thread. */
  tu_batch_t keep;
  batch(&keep, 6, 6);
  size_t pl = (size_t)NN_INPUT_PLANES * NN_HW;
  for (int i = 0; i < 6; i++) {
    int src = i < 3 ? i : i + 3;
    memcpy(keep.planes + i * pl, tb.planes + src * pl, pl * sizeof(float));
    memcpy(keep.mask + (size_t)i * NN_POLICY_SIZE, tb.mask + (size_t)src * NN_POLICY_SIZE,
           NN_POLICY_SIZE);
    memcpy(keep.pi + i * TARGETS, tb.pi + src * TARGETS, TARGETS * sizeof(nn_pi_entry_t));
    keep.z[i] = tb.z[src];
    if (survival) {
      memcpy(keep.surv_mask + (size_t)i * NN_HW, tb.surv_mask + (size_t)src * NN_HW, NN_HW);
      memcpy(keep.surv_target + (size_t)i * NN_HW, tb.surv_target + (size_t)src * NN_HW, NN_HW);
    }
    if (reply) memcpy(keep.reply + 2 * i, tb.reply + 2 * src, 2 * sizeof *keep.reply);
  }
  run_t one;
  run_open(&one, 1);
  nn_loss_t l1;
  assert_int_equal(nn_train_pool_step(one.pool, &one.opt, 6, nn_shard_fill_from_batch,
                                      &keep.b, &cfg, &l1), 6);
  double dw = max_rel_diff(one.m->params, r.m->params, one.m->nparams);
  /* The line weights' GEMMs sum over each shard's samples, so the split changes their
   * float rounding (1.0e-4 measured); a lost or doubled sample moves them by far more. */
  double dw_tol = lines ? 1e-3 : 1e-4;
  if (dw > dw_tol) fail_msg("an empty shard changed the step: weights differ by %.3g", dw);
  /* Two items over three ranks: rank 0 gets none, rank 1 one (dropped), rank 2 one. */
  int64_t step = r.opt.step;
  nn_loss_t l0;
  assert_int_equal(nn_train_pool_step(r.pool, &r.opt, 2, fill_drop_rank1, &tb.b, &cfg, &l0), 1);
  assert_int_equal(r.opt.step, step + 1);
  /* Nothing left: no step, no change. */
  step = r.opt.step;
  float w0 = r.m->params[0];
  assert_int_equal(nn_train_pool_step(r.pool, &r.opt, 9, fill_drop_all, &tb.b, &cfg, &l0), 0);
  assert_int_equal(r.opt.step, step);
  assert_true(r.m->params[0] == w0 && l0.total == 0.0);
  run_close(&one);
  run_close(&r);
  tu_batch_free(&keep);
  tu_batch_free(&tb);
}

/* The three tests above on the nets model() now makes, then STEPS steps of a run on
 * `threads` threads (*r, closed by the caller) and the net it started from (*start). */
static void shard_tests_then_train(void **state, int threads, run_t *r, nn_model_t **start,
                                   nn_loss_t *l) {
  test_one_thread_is_train_step(state);
  test_threads_match_one(state);
  test_empty_shard(state);
  run_open(r, threads);
  run_steps(r, l);
  *start = model(7);
}

/* How far the tensors whose names contain part moved from a to b (sum of |change|). */
static double moved(const nn_model_t *a, const nn_model_t *b, const char *part) {
  double sum = 0;
  int found = 0;
  for (int t = 0; t < a->ntensors; t++) {
    const nn_param_info_t *ti = &a->table[t];
    if (!strstr(ti->name, part)) continue;
    found++;
    for (size_t i = 0; i < ti->size; i++)
      sum += fabs(a->params[ti->offset + i] - b->params[ti->offset + i]);
  }
  if (!found) fail_msg("the net has no tensor named *%s*", part);
  return sum;
}

/* The same two, and the empty shard, with global pooling, whose weights must learn. */
static void test_pooled(void **state) {
  gpool_every = 1;
  run_t r;
  nn_model_t *start;
  nn_loss_t l;
  shard_tests_then_train(state, 3, &r, &start, &l);
  double d = moved(r.m, start, ".gpool.");
  if (!(d > 1e-3)) fail_msg("the pooling weights moved by %.3g in %d steps", d, STEPS);
  nn_model_free(&start);
  run_close(&r);
  gpool_every = 0;
}

/* The same three with line convolutions, whose rank and file weights must learn. */
static void test_lines(void **state) {
  lines = 1;
  run_t r;
  nn_model_t *start;
  nn_loss_t l;
  shard_tests_then_train(state, 3, &r, &start, &l);
  double dr = moved(r.m, start, ".rank."), df = moved(r.m, start, ".file.");
  if (!(dr > 1e-3 && df > 1e-3))
    fail_msg("the line weights moved by %.3g (rank) and %.3g (file) in %d steps", dr, df, STEPS);
  nn_model_free(&start);
  run_close(&r);
  lines = 0;
}

/* The three shard tests on the nets model() now makes, then a run on `threads` threads:
 * the tensors named *part* must learn, and the loss at offset loss_off of nn_loss_t must
 * lie in (lo, hi). */
static void head_learns(void **state, int threads, const char *part, size_t loss_off,
                        double lo, double hi) {
  run_t r;
  nn_model_t *start;
  nn_loss_t l;
  shard_tests_then_train(state, threads, &r, &start, &l);
  double d = moved(r.m, start, part);
  if (!(d > 1e-3)) fail_msg("the %s head moved by %.3g in %d steps", part, d, STEPS);
  double v;
  memcpy(&v, (const char *)&l + loss_off, sizeof v);
  if (!(v > lo && v < hi)) fail_msg("%s loss %g, expected within (%g, %g)", part, v, lo, hi);
  nn_model_free(&start);
  run_close(&r);
}

/* The survival head: its weights learn, its loss is reported. */
static void test_survival(void **state) {
  survival = 1;
  head_learns(state, 2, "survival.", offsetof(nn_loss_t, survival), 0.1, 2.0);
  survival = 0;
}

/* The opponent-reply head (beside the survival head) the same way; untrained, each
 * square's cross-entropy is about log 90 = 4.5. */
static void test_reply(void **state) {
  survival = reply = 1;
  head_learns(state, 3, "reply.", offsetof(nn_loss_t, reply), 1.0, 6.0);
  survival = reply = 0;
}

static void test_bad_thread_counts(void **state) {
  (void)state;
  nn_model_t *m = model(1);
  nn_train_pool_t *p = NULL;
  xq_errbuf_t eb = {{0}};
  assert_int_equal(nn_train_pool_new(&p, m, 0, BATCH, TARGETS, &eb), XQ_ERANGE);
  assert_non_null(strstr(eb.msg, "1..1024"));
  assert_int_equal(nn_train_pool_new(&p, m, 1025, BATCH, TARGETS, &eb), XQ_ERANGE);
  assert_null(p);
  /* More threads than samples: one sample a shard. */
  assert_int_equal(nn_train_pool_new(&p, m, 64, 4, TARGETS, &eb), 0);
  assert_int_equal(nn_train_pool_threads(p), 4);
  nn_train_pool_free(&p);
  assert_true(nn_train_default_threads() >= 1);
  nn_model_free(&m);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_one_thread_is_train_step),
      cmocka_unit_test(test_threads_match_one),
      cmocka_unit_test(test_fixed_threads_deterministic),
      cmocka_unit_test(test_checkpoint_resume_exact),
      cmocka_unit_test(test_empty_shard),
      cmocka_unit_test(test_bad_thread_counts),
      cmocka_unit_test(test_pooled),
      cmocka_unit_test(test_survival),
      cmocka_unit_test(test_reply),
      cmocka_unit_test(test_lines),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
