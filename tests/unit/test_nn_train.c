/*
 * test_nn_train.c: folded-BN inference equals the unfolded eval-mode forward (with and
 * without global pooling, and the survival head's nn_infer_survival); running
 * statistics follow PyTorch's rule; the tiny net overfits a small fixed batch; the
 * learning-rate schedule; inference is independent of the batch it is evaluated in.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "nn/nn_forward.h"
#include "nn/nn_optim.h"
#include "nn_test_util.h"

static nn_model_t *sized_model(const char *size, uint64_t seed, bool random_bn) {
  nn_arch_t a;
  nn_model_t *m;
  assert_int_equal(nn_arch_preset(size, &a), 0);
  assert_int_equal(nn_model_new(&m, &a, NULL), 0);
  nn_model_init(m, seed);
  if (random_bn) {
    xq_rng_t r;
    xq_rng_seed(&r, seed + 1000);
    for (int t = 0; t < m->ntensors; t++) {
      nn_param_info_t *ti = &m->table[t];
      if (!ti->decay)
        for (size_t i = 0; i < ti->size; i++) m->params[ti->offset + i] += (float)(0.3 * xq_rng_normal(&r));
    }
    for (size_t i = 0; i < m->nstats; i++) m->stats[i] = (float)(0.5 + xq_rng_uniform(&r));
    /* Pooling and line weights start at zero (they are decayed, so the loop above left
     * them). */
    tu_fill_block_biases(m, &r, 0.3f);
  }
  return m;
}

static nn_model_t *tiny_model(uint64_t seed, bool random_bn) {
  return sized_model("tiny", seed, random_bn);
}

static void run_fold_matches_eval(const char *size) {
  nn_model_t *m = sized_model(size, 11, true);
  xq_rng_t r;
  xq_rng_seed(&r, 12);
  int n = 5;
  tu_batch_t tb;
  tu_batch_make(&tb, n, 30, 3, &r);
  nn_plan_t *tp, *ip;
  assert_int_equal(nn_plan_new(&tp, &m->arch, n, true, NULL), 0);
  assert_int_equal(nn_plan_new(&ip, &m->arch, n, false, NULL), 0);
  nn_forward(tp, m, tb.planes, n, false);
  nn_model_fold(m);
  float *pol = malloc((size_t)n * NN_POLICY_SIZE * 4), *val = malloc((size_t)n * 4);
  nn_infer(pol, val, ip, m, tb.planes, tb.mask, n);
  double maxd = 0;
  for (size_t i = 0; i < (size_t)n * NN_POLICY_SIZE; i++) {
    double d = fabs(tp->logits[i] - ip->logits[i]) / (1.0 + fabs(tp->logits[i]));
    if (d > maxd) maxd = d;
  }
  for (int i = 0; i < n; i++) {
    double d = fabs(tp->value[i] - val[i]);
    if (d > maxd) maxd = d;
  }
  if (maxd > 1e-5) fail_msg("folded and unfolded eval outputs differ by %.3g (> 1e-5)", maxd);
  /* The survival head on request: sigmoid of the unfolded pass's logits, in (0, 1), and
   * the same whichever kind of plan nn_infer ran in. */
  float *surv = NULL, surv1[NN_HW];
  if (m->arch.survival) {
    surv = malloc((size_t)n * NN_HW * 4);
    nn_infer_survival(surv, ip, m, n);
    double sd = 0;
    for (size_t i = 0; i < (size_t)n * NN_HW; i++) {
      double want = 1.0 / (1.0 + exp(-(double)tp->surv[i]));
      if (!(surv[i] > 0.0f && surv[i] < 1.0f)) fail_msg("survival %zu is %g", i, surv[i]);
      if (fabs(surv[i] - want) > sd) sd = fabs(surv[i] - want);
    }
    if (sd > 1e-5) fail_msg("folded and unfolded survival differ by %.3g (> 1e-5)", sd);
    nn_plan_t *tp2;
    float *pol2 = malloc((size_t)n * NN_POLICY_SIZE * 4), *val2 = malloc((size_t)n * 4);
    float *surv2 = malloc((size_t)n * NN_HW * 4);
    assert_int_equal(nn_plan_new(&tp2, &m->arch, n, true, NULL), 0);
    nn_infer(pol2, val2, tp2, m, tb.planes, tb.mask, n);
    nn_infer_survival(surv2, tp2, m, n);
    assert_memory_equal(surv, surv2, (size_t)n * NN_HW * 4);
    free(pol2), free(val2), free(surv2);
    nn_plan_free(&tp2);
  } else {
    assert_null(tp->surv);
    assert_null(m->p.surv_w);
  }
  /* The probabilities are a proper distribution over the legal moves. */
  for (int s = 0; s < n; s++) {
    double sum = 0;
    for (int k = 0; k < NN_POLICY_SIZE; k++) {
      float p = pol[(size_t)s * NN_POLICY_SIZE + k];
      if (!tb.mask[(size_t)s * NN_POLICY_SIZE + k] && p != 0.0f) fail_msg("illegal move has p %g", p);
      sum += p;
    }
    assert_true(fabs(sum - 1.0) < 1e-5);
  }
  /* Batch independence: sample 3 alone gives the same outputs as in the batch. */
  float pol1[NN_POLICY_SIZE], val1;
  nn_infer(pol1, &val1, ip, m, tb.planes + 3 * NN_INPUT_PLANES * NN_HW,
           tb.mask + 3 * NN_POLICY_SIZE, 1);
  assert_true(fabs(val1 - val[3]) < 1e-6);
  for (int k = 0; k < NN_POLICY_SIZE; k++)
    assert_true(fabs(pol1[k] - pol[3 * NN_POLICY_SIZE + k]) < 1e-6);
  if (surv) {
    nn_infer_survival(surv1, ip, m, 1);
    for (int k = 0; k < NN_HW; k++) assert_true(fabs(surv1[k] - surv[3 * NN_HW + k]) < 1e-6);
  }
  free(pol), free(val), free(surv);
  tu_batch_free(&tb);
  nn_plan_free(&tp);
  nn_plan_free(&ip);
  nn_model_free(&m);
  nn_plan_free(&ip); /* NULL-safe */
}

static void test_fold_matches_eval(void **state) {
  (void)state;
  run_fold_matches_eval("tiny");
}

/* The pooling bias sits between the two convs of a block, after BN and ReLU, so folding
 * BN into the convs must leave the pooled net's outputs unchanged too. */
static void test_fold_matches_eval_gpool(void **state) {
  (void)state;
  run_fold_matches_eval("tiny-g");
}

/* The rank and file bias sits where the pooling bias does: folding leaves it unchanged. */
static void test_fold_matches_eval_lines(void **state) {
  (void)state;
  run_fold_matches_eval("tiny-l");
  run_fold_matches_eval("tiny-ls");
}

/* The survival head has no BN, so folding leaves it as it is; nn_infer_survival reads
 * the tower output nn_infer leaves behind. With pooling too. */
static void test_fold_matches_eval_survival(void **state) {
  (void)state;
  run_fold_matches_eval("tiny-s");
  run_fold_matches_eval("tiny-gs");
}

static void test_running_stats(void **state) {
  (void)state;
  nn_model_t *m = tiny_model(13, false);
  xq_rng_t r;
  xq_rng_seed(&r, 14);
  int n = 3;
  tu_batch_t tb;
  tu_batch_make(&tb, n, 10, 2, &r);
  nn_plan_t *tp;
  assert_int_equal(nn_plan_new(&tp, &m->arch, n, true, NULL), 0);
  nn_forward(tp, m, tb.planes, n, true);
  /* After one step from mean 0, var 1: mean = 0.1 * batch mean, var = 0.9 + 0.1 * unbiased. */
  double cnt = (double)n * NN_HW;
  for (int c = 0; c < m->arch.channels; c++) {
    double em = 0.1 * tp->bn_mean[0][c];
    double ev = 0.9 + 0.1 * tp->bn_var[0][c] * cnt / (cnt - 1);
    assert_true(fabs(m->p.tower[0].mean[c] - em) < 1e-6);
    assert_true(fabs(m->p.tower[0].var[c] - ev) < 1e-5 * ev);
  }
  tu_batch_free(&tb);
  nn_plan_free(&tp);
  nn_model_free(&m);
}

static void test_lr_schedule(void **state) {
  (void)state;
  nn_lr_schedule_t s;
  xq_errbuf_t eb = {{0}};
  assert_int_equal(nn_lr_parse(&s, "0:0.1,100:0.01,200:0.001", &eb), 0);
  assert_int_equal(s.n, 3);
  assert_true(nn_lr_at(&s, 0) == 0.1f);
  assert_true(nn_lr_at(&s, 99) == 0.1f);
  assert_true(nn_lr_at(&s, 100) == 0.01f);
  assert_true(nn_lr_at(&s, 5000) == 0.001f);
  assert_int_equal(nn_lr_parse(&s, "0:0.1,0:0.2", &eb), XQ_EINVAL);
  assert_int_equal(nn_lr_parse(&s, "x", &eb), XQ_EINVAL);
  assert_int_equal(nn_lr_parse(&s, "", &eb), XQ_EINVAL);
  assert_int_equal(nn_lr_parse(&s, "0:-1", &eb), XQ_EINVAL);
}

/* 150 steps of SGD (Nesterov momentum 0.9, lr 0.05 then 0.02 from step 100) on one fixed
 * batch: the losses of the first step and of the last. */
static void overfit_steps(nn_model_t *m, tu_batch_t *tb, nn_loss_t *first, nn_loss_t *last) {
  nn_plan_t *tp;
  assert_int_equal(nn_plan_new(&tp, &m->arch, tb->b.n, true, NULL), 0);
  nn_sgd_t opt = {.momentum = 0.9f, .nesterov = true};
  assert_int_equal(nn_lr_parse(&opt.schedule, "0:0.05,100:0.02", NULL), 0);
  assert_int_equal(nn_sgd_init(&opt, m, NULL), 0);
  nn_loss_cfg_t cfg = {1.0f, 1.0f, 1e-5f, 1.0f, 1.0f, false};
  for (int step = 0; step < 150; step++) {
    nn_train_step(m, tp, &opt, &tb->b, &cfg, last);
    if (step == 0) *first = *last;
  }
  assert_int_equal(opt.step, 150);
  nn_sgd_close(&opt);
  nn_plan_free(&tp);
}

static void test_overfit(void **state) {
  (void)state;
  nn_model_t *m = tiny_model(15, false);
  xq_rng_t r;
  xq_rng_seed(&r, 16);
  int n = 8;
  tu_batch_t tb;
  tu_batch_make(&tb, n, 20, 1, &r); /* one-hot targets: CE can go to 0 */
  for (int i = 0; i < n; i++) tb.z[i] = (i & 1) ? 0.8f : -0.8f;
  nn_loss_t first, last;
  overfit_steps(m, &tb, &first, &last);
  printf("overfit: loss %.4f -> %.4f (policy %.4f, value %.4f)\n", first.total, last.total,
         last.policy, last.value);
  if (!(last.policy + last.value < 0.05))
    fail_msg("tiny net did not overfit: policy %.4f value %.4f after 150 steps (from %.4f)",
             last.policy, last.value, first.total);
  tu_batch_free(&tb);
  nn_model_free(&m);
}

/* A survival net learns its survival targets on a small fixed batch: the head's loss
 * falls from about log 2 well below it, in the same steps that fit the other heads. */
static void test_overfit_survival(void **state) {
  (void)state;
  nn_model_t *m = sized_model("tiny-s", 15, false);
  xq_rng_t r;
  xq_rng_seed(&r, 17);
  int n = 8;
  tu_batch_t tb;
  tu_batch_make(&tb, n, 20, 1, &r);
  tu_batch_add_survival(&tb, &r);
  nn_loss_t first, last;
  overfit_steps(m, &tb, &first, &last);
  printf("overfit survival: %.4f -> %.4f\n", first.survival, last.survival);
  if (!(first.survival > 0.3 && last.survival < 0.1))
    fail_msg("survival loss %.4f -> %.4f in 150 steps, expected to fall below 0.1",
             first.survival, last.survival);
  tu_batch_free(&tb);
  nn_model_free(&m);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_fold_matches_eval),
      cmocka_unit_test(test_fold_matches_eval_gpool),
      cmocka_unit_test(test_fold_matches_eval_lines),
      cmocka_unit_test(test_fold_matches_eval_survival),
      cmocka_unit_test(test_running_stats),
      cmocka_unit_test(test_lr_schedule),
      cmocka_unit_test(test_overfit),
      cmocka_unit_test(test_overfit_survival),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
