/*
 * test_nn_ema.c: the trainer's averaged weights (nn_ema.h) and their place in the
 * checkpoint (nn_checkpoint.h).
 *
 * The average is the plain mean of the first `horizon` models, then an exponential
 * average with weight 1 / horizon, over parameters and BN running statistics alike
 * (checked in doubles against the formula). A checkpoint keeps it bit for bit with its
 * count; one written without it loads with an empty average; a file whose average is cut
 * short, whose count disagrees with its flags, or whose average is rotten is refused with
 * a reason (every model and buffer freed: the run is leak-checked).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <unistd.h>

#include "nn/nn_checkpoint.h"
#include "nn/nn_ema.h"
#include "nn/nn_optim.h"
#include "support/atomic_file.h"
#include "support/crc32.h"
#include "support/le.h"
#include "nn_test_util.h"

static nn_model_t *tiny(uint64_t seed) {
  nn_arch_t a;
  nn_model_t *m = NULL;
  assert_int_equal(nn_arch_preset("tiny", &a), 0);
  assert_int_equal(nn_model_new(&m, &a, NULL), 0);
  nn_model_init(m, seed);
  xq_rng_t r;
  xq_rng_seed(&r, seed);
  for (size_t i = 0; i < m->nstats; i++) /* statistics that differ between models (means */
    m->stats[i] = 0.1f + (float)fabs(xq_rng_normal(&r)); /* too are positive: harmless) */
  return m;
}

/* Averages of seven models with horizon 3 follow the formula in doubles. */
static void test_average_formula(void **state) {
  (void)state;
  enum { N = 7, H = 3 };
  nn_model_t *m[N];
  for (int i = 0; i < N; i++) m[i] = tiny(100 + (uint64_t)i);
  nn_ema_t e;
  assert_int_equal(nn_ema_init(&e, m[0], H, NULL), 0);
  assert_int_equal(e.count, 0);
  size_t np = m[0]->nparams, ns = m[0]->nstats;
  double *ref = calloc(np + ns, sizeof *ref);
  double want_w[N] = {1.0, 1.0 / 2, 1.0 / 3, 1.0 / 3, 1.0 / 3, 1.0 / 3, 1.0 / 3};
  for (int i = 0; i < N; i++) {
    assert_true(fabs(nn_ema_next_weight(&e) - want_w[i]) < 1e-15);
    nn_ema_update(&e, m[i]);
    assert_int_equal(e.count, i + 1);
    for (size_t k = 0; k < np + ns; k++) {
      double x = k < np ? m[i]->params[k] : m[i]->stats[k - np];
      ref[k] += want_w[i] * (x - ref[k]);
    }
    double worst = 0;
    for (size_t k = 0; k < np + ns; k++) {
      double got = k < np ? e.avg->params[k] : e.avg->stats[k - np];
      double d = fabs(got - ref[k]);
      if (d > worst) worst = d;
    }
    assert_true(worst < 1e-5);
  }
  /* After three, the plain mean: an unweighted average, not pulled towards the first. */
  nn_ema_t mean;
  assert_int_equal(nn_ema_init(&mean, m[0], 1000, NULL), 0);
  for (int i = 0; i < 3; i++) nn_ema_update(&mean, m[i]);
  for (size_t k = 0; k < np; k += 97) {
    double want = ((double)m[0]->params[k] + m[1]->params[k] + m[2]->params[k]) / 3;
    assert_true(fabs(mean.avg->params[k] - want) < 1e-5);
  }
  nn_ema_close(&mean);
  /* Horizon 1 is the last model, exactly. */
  nn_ema_t last;
  assert_int_equal(nn_ema_init(&last, m[0], 1, NULL), 0);
  for (int i = 0; i < 3; i++) nn_ema_update(&last, m[i]);
  assert_memory_equal(last.avg->params, m[2]->params, np * sizeof(float));
  assert_memory_equal(last.avg->stats, m[2]->stats, ns * sizeof(float));
  nn_ema_close(&last);
  xq_errbuf_t eb = {{0}};
  assert_int_equal(nn_ema_init(&last, m[0], 0, &eb), XQ_EINVAL);
  assert_non_null(strstr(eb.msg, "horizon"));
  nn_ema_close(&e);
  nn_ema_close(&e); /* closing twice is safe */
  free(ref);
  for (int i = 0; i < N; i++) nn_model_free(&m[i]);
}

static char tmpdir[64];

static void ckpt_path(char *path, size_t n, const char *name) {
  snprintf(path, n, "%s/%s", tmpdir, name);
}

/* Saves model m with a momentum buffer, at step 42, and e (NULL: no average). */
static void save(const char *path, const nn_model_t *m, const nn_ema_t *e) {
  nn_sgd_t o = {.momentum = 0.9f};
  nn_file_meta_t meta = {0};
  xq_errbuf_t eb = {{0}};
  assert_int_equal(nn_sgd_init(&o, m, NULL), 0);
  o.step = 42;
  for (size_t i = 0; i < o.n; i++) o.velocity[i] = (float)i * 1e-6f;
  if (nn_checkpoint_save(path, m, &meta, &o, e, &eb)) fail_msg("save: %s", eb.msg);
  nn_sgd_close(&o);
}

/* Loads path; returns the error code, reason in eb; the average in e. */
static int load(const char *path, nn_ema_t *e, xq_errbuf_t *eb) {
  nn_model_t *l = NULL;
  nn_sgd_t oc = {0};
  int rc = nn_checkpoint_load(path, &l, NULL, &oc, e, eb);
  if (rc == 0) assert_int_equal(oc.step, 42);
  nn_sgd_close(&oc);
  nn_model_free(&l);
  return rc;
}

static unsigned char *slurp(const char *path, size_t *len) {
  unsigned char *b;
  assert_int_equal(xq_read_file(path, 1 << 26, &b, len, NULL), 0);
  return b;
}

static void write_image(const char *path, unsigned char *b, size_t len, bool fix_crcs) {
  if (fix_crcs) { /* a forged file: both checksums right, so the structure checks speak */
    xq_put_le32(b + 48, xq_crc32(0, b + NN_CKPT_HEADER_SIZE, len - NN_CKPT_HEADER_SIZE));
    xq_put_le32(b + 52, xq_crc32(0, b, 52));
  }
  const void *parts[1] = {b};
  assert_int_equal(xq_atomic_write(path, parts, &len, 1, NULL), 0);
}

static void expect_refused(const char *path, int code, const char *why) {
  nn_ema_t e = {0};
  xq_errbuf_t eb = {{0}};
  assert_int_equal(load(path, &e, &eb), code);
  if (!strstr(eb.msg, why)) fail_msg("reason '%s' lacks '%s'", eb.msg, why);
  assert_null(e.avg);
}

static void test_average_in_checkpoint(void **state) {
  (void)state;
  snprintf(tmpdir, sizeof tmpdir, "/tmp/xqz-ema-test-XXXXXX");
  assert_non_null(mkdtemp(tmpdir));
  nn_model_t *m = tiny(7), *a = tiny(8), *b = tiny(9);
  nn_ema_t e;
  assert_int_equal(nn_ema_init(&e, m, 500, NULL), 0);
  nn_ema_update(&e, a);
  nn_ema_update(&e, b);
  char with[300], without[300], bad[300];
  ckpt_path(with, sizeof with, "with.xqzc");
  ckpt_path(without, sizeof without, "without.xqzc");
  ckpt_path(bad, sizeof bad, "bad.xqzc");

  /* Kept bit for bit with its count; the horizon is the caller's. */
  save(with, m, &e);
  nn_ema_t got = {0};
  xq_errbuf_t eb = {{0}};
  if (load(with, &got, &eb)) fail_msg("load: %s", eb.msg);
  assert_non_null(got.avg);
  assert_int_equal(got.count, 2);
  assert_memory_equal(got.avg->params, e.avg->params, m->nparams * sizeof(float));
  assert_memory_equal(got.avg->stats, e.avg->stats, m->nstats * sizeof(float));
  nn_ema_close(&got);
  /* A caller that wants no average ignores it. */
  assert_int_equal(load(with, NULL, &eb), 0);

  /* Without an average (an empty one is not written): loads with an empty average. */
  nn_ema_t empty;
  assert_int_equal(nn_ema_init(&empty, m, 500, NULL), 0);
  save(without, m, &empty);
  nn_ema_close(&empty);
  size_t wlen, len;
  free(slurp(without, &wlen));
  unsigned char *img = slurp(with, &len);
  assert_int_equal(len - wlen, (m->nparams + m->nstats) * sizeof(float));
  got.count = 5;
  assert_int_equal(load(without, &got, &eb), 0);
  assert_null(got.avg);
  assert_int_equal(got.count, 0);

  /* Cut short by one float: named before any checksum, forged or not. */
  write_image(bad, img, len - 4, false);
  expect_refused(bad, XQ_ETRUNC, "averaged weights: ");
  unsigned char *cut = malloc(len);
  memcpy(cut, img, len);
  write_image(bad, cut, len - 4, true);
  expect_refused(bad, XQ_ETRUNC, "cut short");
  /* A flipped bit in the average: the body checksum. */
  memcpy(cut, img, len);
  cut[len - 1] ^= 0x10;
  write_image(bad, cut, len, false);
  expect_refused(bad, XQ_ECHECKSUM, "body checksum");
  /* The flag without a count, a count without the flag. */
  memcpy(cut, img, len);
  xq_put_le64(cut + 56, 0);
  write_image(bad, cut, len, true);
  expect_refused(bad, XQ_EFORMAT, "count of 0");
  unsigned char *plain = slurp(without, &wlen);
  xq_put_le64(plain + 56, 3);
  write_image(bad, plain, wlen, true);
  expect_refused(bad, XQ_EFORMAT, "no averaged weights");
  /* Trailing bytes after a checkpoint without an average stay garbage. */
  unsigned char *longer = calloc(1, wlen + 8);
  free(plain);
  plain = slurp(without, &wlen);
  memcpy(longer, plain, wlen);
  write_image(bad, longer, wlen + 8, true);
  expect_refused(bad, XQ_EFORMAT, "trailing garbage");

  free(longer);
  free(plain);
  free(cut);
  free(img);
  unlink(with);
  unlink(without);
  unlink(bad);
  rmdir(tmpdir);
  nn_ema_close(&e);
  nn_model_free(&m);
  nn_model_free(&a);
  nn_model_free(&b);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_average_formula),
                                     cmocka_unit_test(test_average_in_checkpoint)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
