/*
 * test_trainer_member.c: the trainer's side of a population member (trainer/member.h,
 * issue 48) and its --value-weight and --max-batch options.
 *
 * --value-weight reaches the loss configuration the trainer builds and scales the value
 * head's gradient; out of its range it is refused, naming it. A member's settings out of
 * range are refused naming the setting; applied, they change the effective learning rate,
 * L2, value weight and batch. A copy of a donor's checkpoint leaves the member's weights,
 * BN statistics, momentum buffer, step and average equal to the donor's bit for bit, and
 * a training step from each on the same batch gives the same bits; a damaged byte,
 * another architecture or another campaign is refused with a reason and leaves the
 * member untouched. --max-batch is --batch's value unless given, and below --batch it is
 * refused, naming both.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <fcntl.h>
#include <unistd.h>

#include "member.h"
#include "nn/nn_checkpoint.h"
#include "nn/nn_plan.h"
#include "options.h"
#include "support/atomic_file.h"
#include "support/crc32.h"
#include "nn_test_util.h"

enum { BATCH = 8 };

static char tmpdir[64];

/* trainer_opts_parse on the words of argv, its stderr into err. */
static int parse(trainer_opts_t *o, char *err, size_t cap, int argc, char **argv) {
  char path[128];
  snprintf(path, sizeof path, "%s/stderr", tmpdir);
  fflush(stderr);
  int saved = dup(2);
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  assert_true(saved >= 0 && fd >= 0);
  dup2(fd, 2);
  close(fd);
  int rc = trainer_opts_parse(o, argc, argv);
  fflush(stderr);
  dup2(saved, 2);
  close(saved);
  FILE *f = fopen(path, "r");
  assert_non_null(f);
  size_t n = fread(err, 1, cap - 1, f);
  err[n] = 0;
  fclose(f);
  unlink(path);
  return rc;
}

/* The option sets the loss's value weight (default 1), which scales dL/dv exactly. */
static void test_value_weight_option(void **state) {
  (void)state;
  trainer_opts_t o;
  char err[512];
  char *dflt[] = {"xqz-trainer", "--dir", tmpdir};
  assert_int_equal(parse(&o, err, sizeof err, 3, dflt), 0);
  nn_loss_cfg_t one;
  trainer_opts_loss_cfg(&o, &one);
  assert_true(one.value_weight == 1.0f && one.policy_weight == 1.0f && one.legal_policy);
  assert_true(one.l2 == (float)1e-4);
  char *two_argv[] = {"xqz-trainer", "--dir", tmpdir, "--value-weight", "2"};
  assert_int_equal(parse(&o, err, sizeof err, 5, two_argv), 0);
  nn_loss_cfg_t two;
  trainer_opts_loss_cfg(&o, &two);
  assert_true(two.value_weight == 2.0f);

  xq_rng_t r;
  xq_rng_seed(&r, 5);
  tu_batch_t tb;
  tu_batch_make(&tb, BATCH, 20, 5, &r);
  float *logits = malloc(sizeof(float) * BATCH * NN_POLICY_SIZE);
  float *dl1 = malloc(sizeof(float) * BATCH * NN_POLICY_SIZE);
  float *dl2 = malloc(sizeof(float) * BATCH * NN_POLICY_SIZE);
  float value[BATCH], dv1[BATCH], dv2[BATCH];
  tu_fill(logits, (size_t)BATCH * NN_POLICY_SIZE, &r, 1.0f);
  for (int i = 0; i < BATCH; i++) value[i] = (float)(xq_rng_uniform(&r) * 1.8 - 0.9);
  nn_loss_t l1, l2;
  nn_loss_heads(dl1, dv1, logits, value, &tb.b, &one, &l1);
  nn_loss_heads(dl2, dv2, logits, value, &tb.b, &two, &l2);
  for (int i = 0; i < BATCH; i++) {
    assert_true(dv1[i] != 0.0f);
    assert_true(dv2[i] == 2.0f * dv1[i]); /* a power of two scales exactly */
  }
  assert_memory_equal(dl1, dl2, sizeof(float) * BATCH * NN_POLICY_SIZE);
  assert_true(l1.value == l2.value);
  assert_true(fabs((l2.total - l1.total) - l1.value) < 1e-9 * (1 + l1.total));
  free(logits);
  free(dl1);
  free(dl2);
  tu_batch_free(&tb);

  const char *bad[] = {"0", "100.5", "nan", "x"};
  for (int k = 0; k < 4; k++) {
    char *argv[] = {"xqz-trainer", "--dir", tmpdir, "--value-weight", (char *)bad[k]};
    assert_int_equal(parse(&o, err, sizeof err, 5, argv), -1);
    print_message("--value-weight %s: %s", bad[k], err);
    assert_non_null(strstr(err, "value-weight"));
  }
}

/* --max-batch: the pool's size for a member's batch; --batch's value by default. */
static void test_max_batch_option(void **state) {
  (void)state;
  trainer_opts_t o;
  char err[512];
  char *dflt[] = {"xqz-trainer", "--dir", tmpdir, "--batch", "48"};
  assert_int_equal(parse(&o, err, sizeof err, 5, dflt), 0);
  assert_int_equal(o.max_batch, 48);
  char *more[] = {"xqz-trainer", "--dir", tmpdir, "--batch", "48", "--max-batch", "512"};
  assert_int_equal(parse(&o, err, sizeof err, 7, more), 0);
  assert_int_equal(o.max_batch, 512);
  char *less[] = {"xqz-trainer", "--dir", tmpdir, "--batch", "48", "--max-batch", "16"};
  assert_int_equal(parse(&o, err, sizeof err, 7, less), -1);
  assert_non_null(strstr(err, "--max-batch 16 is below --batch 48"));
}

/* A member's own state, as the trainer holds it. */
typedef struct {
  nn_model_t *m;
  nn_file_meta_t meta;
  nn_sgd_t opt;
  nn_ema_t ema;
  nn_loss_cfg_t cfg;
  nn_lr_schedule_t base;
  int batch;
  trainer_member_state_t st;
} member_t;

static void member_open(member_t *b, const char *size, uint64_t seed, uint64_t campaign) {
  memset(b, 0, sizeof *b);
  nn_arch_t a;
  assert_int_equal(nn_arch_preset(size, &a), 0);
  assert_int_equal(nn_model_new(&b->m, &a, NULL), 0);
  nn_model_init(b->m, seed);
  xq_rng_t r;
  xq_rng_seed(&r, seed);
  for (size_t i = 0; i < b->m->nstats; i++) b->m->stats[i] = 0.1f + (float)fabs(xq_rng_normal(&r));
  b->meta.campaign_id = campaign;
  assert_int_equal(nn_sgd_init(&b->opt, b->m, NULL), 0);
  b->opt.momentum = 0.9f;
  assert_int_equal(nn_lr_parse(&b->base, "0:0.02,100:0.002", NULL), 0);
  b->opt.schedule = b->base;
  assert_int_equal(nn_ema_init(&b->ema, b->m, 4, NULL), 0);
  b->cfg = (nn_loss_cfg_t){.policy_weight = 1, .value_weight = 1, .l2 = 1e-4f,
                           .legal_policy = true};
  b->batch = BATCH;
  b->st = (trainer_member_state_t){b->m, &b->meta, &b->opt, &b->ema, &b->cfg, &b->base,
                                   &b->batch, 2 * BATCH};
}

static void member_close(member_t *b) {
  nn_ema_close(&b->ema);
  nn_sgd_close(&b->opt);
  nn_model_free(&b->m);
}

/* Steps of training on fresh batches (drawn from r), the average following. */
static void train(member_t *b, int steps, xq_rng_t *r) {
  nn_plan_t *plan;
  assert_int_equal(nn_plan_new(&plan, &b->m->arch, BATCH, true, NULL), 0);
  for (int s = 0; s < steps; s++) {
    tu_batch_t tb;
    tu_batch_make(&tb, BATCH, 20, 5, r);
    nn_loss_t l;
    nn_train_step(b->m, plan, &b->opt, &tb.b, &b->cfg, &l);
    nn_ema_update(&b->ema, b->m);
    tu_batch_free(&tb);
  }
  nn_plan_free(&plan);
}

/* The member's checkpoint as bytes (nn_checkpoint_save), with their CRC-32. */
static unsigned char *image(member_t *b, size_t *len, uint32_t *crc) {
  char path[128];
  snprintf(path, sizeof path, "%s/donor.xqzc", tmpdir);
  xq_errbuf_t eb = {{0}};
  if (nn_checkpoint_save(path, b->m, &b->meta, &b->opt, &b->ema, &eb)) fail_msg("%s", eb.msg);
  unsigned char *bytes;
  assert_int_equal(xq_read_file(path, 1 << 26, &bytes, len, NULL), 0);
  unlink(path);
  *crc = xq_crc32(0, bytes, *len);
  return bytes;
}

static void assert_same_state(const member_t *a, const member_t *b) {
  assert_memory_equal(a->m->params, b->m->params, a->m->nparams * sizeof(float));
  assert_memory_equal(a->m->stats, b->m->stats, a->m->nstats * sizeof(float));
  assert_memory_equal(a->opt.velocity, b->opt.velocity, a->opt.n * sizeof(float));
  assert_int_equal(a->opt.step, b->opt.step);
  assert_int_equal(a->ema.count, b->ema.count);
  assert_memory_equal(a->ema.avg->params, b->ema.avg->params, a->m->nparams * sizeof(float));
  assert_memory_equal(a->ema.avg->stats, b->ema.avg->stats, a->m->nstats * sizeof(float));
}

/* The temporary files the copy leaves in the directory: none. */
static void assert_dir_clean(void) {
  char cmd[160];
  snprintf(cmd, sizeof cmd, "ls %s/member-copy.* >/dev/null 2>&1", tmpdir);
  assert_int_not_equal(system(cmd), 0);
}

/* The copy: the donor's state bit for bit, and the next step identical. */
static void test_copy_bit_for_bit(void **state) {
  (void)state;
  member_t donor, m;
  member_open(&donor, "tiny", 1, 0x1234);
  member_open(&m, "tiny", 2, 0x1234);
  xq_rng_t r;
  xq_rng_seed(&r, 11);
  train(&donor, 5, &r);
  train(&m, 2, &r);
  size_t len;
  uint32_t crc;
  unsigned char *bytes = image(&donor, &len, &crc);
  xq_errbuf_t eb = {{0}};
  if (trainer_member_copy(&m.st, tmpdir, bytes, len, crc, &eb)) fail_msg("copy: %s", eb.msg);
  assert_dir_clean();
  assert_int_equal(m.opt.step, 5);
  assert_int_equal(m.meta.step, 5);
  assert_int_equal(m.ema.count, 5);
  assert_same_state(&donor, &m);
  /* One more step from each on the same batch. */
  xq_rng_t r1 = r, r2 = r;
  train(&donor, 1, &r1);
  train(&m, 1, &r2);
  assert_same_state(&donor, &m);
  free(bytes);

  /* A member of no campaign adopts the donor's; a member keeping no average keeps none;
   * a donor without one restarts the member's. */
  member_t fresh;
  member_open(&fresh, "tiny", 3, 0);
  nn_ema_close(&fresh.ema);
  bytes = image(&donor, &len, &crc);
  assert_int_equal(trainer_member_copy(&fresh.st, tmpdir, bytes, len, crc, &eb), 0);
  assert_true(fresh.meta.campaign_id == 0x1234);
  assert_null(fresh.ema.avg);
  assert_memory_equal(fresh.m->params, donor.m->params, donor.m->nparams * sizeof(float));
  free(bytes);
  nn_ema_close(&donor.ema);
  bytes = image(&donor, &len, &crc);
  assert_int_equal(trainer_member_copy(&m.st, tmpdir, bytes, len, crc, &eb), 0);
  assert_non_null(m.ema.avg);
  assert_int_equal(m.ema.count, 0);
  free(bytes);
  member_close(&fresh);
  member_close(&donor);
  member_close(&m);
}

/* Refusals name the reason and leave the member as it was. */
static void refused(member_t *m, const unsigned char *bytes, size_t len, uint32_t crc, int code,
                    const char *w1, const char *w2) {
  member_t before;
  member_open(&before, "tiny", 99, 0);
  memcpy(before.m->params, m->m->params, m->m->nparams * sizeof(float));
  memcpy(before.m->stats, m->m->stats, m->m->nstats * sizeof(float));
  memcpy(before.opt.velocity, m->opt.velocity, m->opt.n * sizeof(float));
  before.opt.step = m->opt.step;
  before.ema.count = m->ema.count;
  memcpy(before.ema.avg->params, m->ema.avg->params, m->m->nparams * sizeof(float));
  memcpy(before.ema.avg->stats, m->ema.avg->stats, m->m->nstats * sizeof(float));
  uint64_t campaign = m->meta.campaign_id;
  xq_errbuf_t eb = {{0}};
  assert_int_equal(trainer_member_copy(&m->st, tmpdir, bytes, len, crc, &eb), code);
  print_message("refused: %s\n", eb.msg);
  assert_non_null(strstr(eb.msg, w1));
  if (w2) assert_non_null(strstr(eb.msg, w2));
  assert_same_state(&before, m);
  assert_true(m->meta.campaign_id == campaign);
  assert_dir_clean();
  member_close(&before);
}

static void test_copy_refused(void **state) {
  (void)state;
  member_t m, donor, wide, other;
  member_open(&m, "tiny", 2, 0x1234);
  member_open(&donor, "tiny", 1, 0x1234);
  xq_rng_t r;
  xq_rng_seed(&r, 12);
  train(&m, 2, &r);
  train(&donor, 3, &r);
  size_t len;
  uint32_t crc;
  unsigned char *bytes = image(&donor, &len, &crc);
  /* A byte damaged in transit: the sender's checksum catches it. */
  bytes[len / 2] ^= 0x10;
  refused(&m, bytes, len, crc, XQ_ECHECKSUM, "CRC-32", "damaged");
  /* The same damage under a checksum of the damaged bytes: the checkpoint's own. */
  refused(&m, bytes, len, xq_crc32(0, bytes, len), XQ_ECHECKSUM, "does not load",
          "checksum");
  free(bytes);
  /* Another architecture, both named. */
  member_open(&wide, "2x16g", 1, 0x1234);
  bytes = image(&wide, &len, &crc);
  refused(&m, bytes, len, crc, XQ_EMISMATCH, "2x16g", "is 2x16:");
  free(bytes);
  /* Another campaign, both ids named. */
  member_open(&other, "tiny", 1, 0x5678);
  bytes = image(&other, &len, &crc);
  refused(&m, bytes, len, crc, XQ_EMISMATCH, "0000000000005678", "0000000000001234");
  free(bytes);
  member_close(&other);
  member_close(&wide);
  member_close(&donor);
  member_close(&m);
}

/* Settings: read from the options, checked naming the bad one, applied. */
static void test_settings(void **state) {
  (void)state;
  trainer_opts_t o;
  char err[512];
  char *argv[] = {"xqz-trainer", "--dir", tmpdir, "--l2", "3e-4", "--value-weight", "0.5",
                  "--batch", "128"};
  assert_int_equal(parse(&o, err, sizeof err, 9, argv), 0);
  trainer_member_settings_t s;
  trainer_member_settings_from_opts(&s, &o);
  assert_true(s.lr_scale == 1.0 && s.l2 == 3e-4 && s.value_weight == 0.5 && s.batch == 128);
  xq_errbuf_t eb = {{0}};
  assert_int_equal(trainer_member_settings_check(&s, &eb), 0);
  struct {
    trainer_member_settings_t s;
    const char *name;
  } bad[] = {
      {{0, 1e-4, 1, 64}, "lr_scale"},       {{NAN, 1e-4, 1, 64}, "lr_scale"},
      {{1e4, 1e-4, 1, 64}, "lr_scale"},     {{1, -1e-4, 1, 64}, "l2"},
      {{1, 2, 1, 64}, "l2"},                {{1, 1e-4, 0.001, 64}, "value_weight"},
      {{1, 1e-4, INFINITY, 64}, "value_weight"}, {{1, 1e-4, 1, 0}, "batch"},
      {{1, 1e-4, 1, 8193}, "batch"},
  };
  for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
    assert_int_equal(trainer_member_settings_check(&bad[k].s, &eb), XQ_ERANGE);
    assert_non_null(strstr(eb.msg, bad[k].name));
  }

  member_t m;
  member_open(&m, "tiny", 1, 0);
  trainer_member_settings_t t = {0.5, 2e-4, 4, BATCH + 3};
  assert_int_equal(trainer_member_apply(&m.st, &t, &eb), 0);
  assert_true(nn_lr_at(&m.opt.schedule, 0) == 0.01f);
  assert_true(nn_lr_at(&m.opt.schedule, 150) == 0.001f);
  assert_true(m.cfg.l2 == 2e-4f && m.cfg.value_weight == 4.0f && m.batch == BATCH + 3);
  assert_true(m.cfg.policy_weight == 1.0f); /* the rest stays */
  /* Scaled from the schedule as given, not from the last scaled one. */
  t.lr_scale = 2;
  assert_int_equal(trainer_member_apply(&m.st, &t, &eb), 0);
  assert_true(nn_lr_at(&m.opt.schedule, 0) == 0.04f);
  /* Refused (nothing changes): out of range, a batch above the threads' capacity, a rate
   * of 100 or more. */
  trainer_member_settings_t no[] = {{2, 2e-4, 200, BATCH}, {2, 2e-4, 4, 2 * BATCH + 1},
                                    {5000, 2e-4, 4, BATCH}};
  const char *why[] = {"value_weight", "batch", "lr_scale"};
  m.base.e[0].lr = 50; /* 5000 is in range; 50 * 5000 is not a rate */
  no[2].lr_scale = 2;
  for (int k = 0; k < 3; k++) {
    assert_int_equal(trainer_member_apply(&m.st, &no[k], &eb), XQ_ERANGE);
    print_message("apply refused: %s\n", eb.msg);
    assert_non_null(strstr(eb.msg, why[k]));
    assert_true(nn_lr_at(&m.opt.schedule, 0) == 0.04f);
    assert_true(m.cfg.value_weight == 4.0f && m.batch == BATCH + 3);
  }
  member_close(&m);
}

static int setup(void **state) {
  (void)state;
  snprintf(tmpdir, sizeof tmpdir, "/tmp/xqz-member-test-XXXXXX");
  return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state) {
  (void)state;
  return rmdir(tmpdir);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_value_weight_option),
      cmocka_unit_test(test_max_batch_option),
      cmocka_unit_test(test_settings),
      cmocka_unit_test(test_copy_bit_for_bit),
      cmocka_unit_test(test_copy_refused),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
