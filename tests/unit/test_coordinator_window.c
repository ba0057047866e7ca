/*
 * test_coordinator_window.c: the growing replay window (coordinator/window/size.c, replay.c) and
 * the settings that shape it (config.c). The size function is checked against KataGo's
 * formula written as python/shuffle.py writes it (offset form, a different algebra from
 * ours); the replay ring grows across a wrap without losing or reordering a sample; the
 * settings table refuses a window that can never hold min_positions, naming the setting.
 */
#define _DEFAULT_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <math.h>
#include <string.h>

#include "config.h"
#include "window/replay.h"
#include "window/size.h"

/* KataGo's num_desired_rows() with min_rows = W0, window_taper_offset = min_rows, every row
 * post-random: x = N - min_rows + offset; (x^a - offset^a) / (a offset^(a-1)) * s + min. */
static double katago_rows(double n, double min_rows, double s, double a) {
  double offset = min_rows, x = n - min_rows + offset;
  double unscaled = pow(x, a) - pow(offset, a);
  return unscaled / (a * pow(offset, a - 1.0)) * s + min_rows;
}

static void test_size_follows_katago(void **state) {
  (void)state;
  const xqc_window_rule_t w = {50000, 2000000, 0.65, 0.4};
  const uint64_t ns[] = {50001, 60000, 100000, 1000000, 10000000, 100000000};
  for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++) {
    double want = katago_rows((double)ns[i], 50000, 0.4, 0.65);
    if (want > 2000000) want = 2000000;
    uint64_t got = xqc_window_size(&w, ns[i]);
    print_message("N %9llu: W %8llu (KataGo %.1f)\n", (unsigned long long)ns[i],
                  (unsigned long long)got, want);
    assert_true(fabs((double)got - want) <= 1.0);
  }
  /* Up to W0 the window is W0; the cap holds; the size never falls as N grows. */
  assert_int_equal(xqc_window_size(&w, 0), 50000);
  assert_int_equal(xqc_window_size(&w, 50000), 50000);
  assert_int_equal(xqc_window_size(&w, UINT64_MAX), 2000000);
  uint64_t prev = 0;
  for (uint64_t n = 1; n < 400000000; n = n * 3 / 2 + 1) {
    uint64_t s = xqc_window_size(&w, n);
    assert_true(s >= prev && s >= 50000 && s <= 2000000);
    prev = s;
  }
  /* It starts growing at window_slope positions per position ingested. */
  uint64_t a = xqc_window_size(&w, 50000 + 1000);
  assert_true(a >= 50000 + 390 && a <= 50000 + 400);
}

static void test_size_linear_and_fixed(void **state) {
  (void)state;
  /* Exponent 1: W = W0 + s (N - W0). */
  const xqc_window_rule_t lin = {100, 1000, 1.0, 0.5};
  assert_int_equal(xqc_window_size(&lin, 300), 200);
  assert_int_equal(xqc_window_size(&lin, 1100), 600);
  assert_int_equal(xqc_window_size(&lin, 5000), 1000);
  /* window_max 0 (or below W0): the window stays at W0. */
  const xqc_window_rule_t fixed = {100, 0, 0.65, 0.4}, below = {100, 50, 0.65, 0.4};
  assert_int_equal(xqc_window_size(&fixed, 1000000), 100);
  assert_int_equal(xqc_window_size(&below, 1000000), 100);
}

/* A sample identified by n (z = n / 1000 keeps it exact in a float). */
static void push_n(xqc_replay_t *r, int n) {
  xq_sample_t s;
  memset(&s, 0, sizeof s);
  s.npi = 1;
  s.pi_prob[0] = 1.0f;
  s.z = (float)n / 1000.0f;
  xqc_replay_push(r, &s, (uint32_t)n);
}

static int id_at(const xqc_replay_t *r, uint64_t k) {
  return (int)(r->ring[xqc_replay_slot(r, k)].z * 1000.0f + 0.5f);
}

static int drop_mult3(uint32_t src, void *user) {
  (void)user;
  return src % 3 == 0;
}

/* The window is the newest W(N) samples pushed, in order, as the ring grows and wraps. */
static void check_window(const xqc_replay_t *r, int last) {
  uint64_t w = xqc_window_size(&r->rule, r->total);
  assert_int_equal(r->cap, w);
  assert_int_equal(r->count, w);
  assert_true(r->slots >= r->cap && r->slots <= r->rule.max);
  for (uint64_t k = 0; k < r->count; k++)
    assert_int_equal(id_at(r, k), last - (int)r->count + 1 + (int)k);
}

static void test_replay_grows_without_losing_samples(void **state) {
  (void)state;
  const xqc_window_rule_t rule = {10, 200, 0.5, 1.0};
  xqc_replay_t r;
  assert_int_equal(xqc_replay_init_rule(&r, &rule), 0);
  for (int n = 0; n < 5000; n++) {
    push_n(&r, n);
    if (n >= 9) check_window(&r, n);
  }
  assert_int_equal(r.cap, 200);
  assert_int_equal(r.slots, 200);
  assert_false(r.grow_failed);
  /* A ban after growth removes from every held sample and keeps the order of the rest. */
  uint64_t removed = xqc_replay_remove(&r, drop_mult3, NULL);
  assert_true(removed >= 66 && removed <= 67);
  assert_int_equal(r.count, 200 - removed);
  for (uint64_t k = 0; k + 1 < r.count; k++) {
    assert_true(id_at(&r, k) < id_at(&r, k + 1));
    assert_true(id_at(&r, k) % 3 != 0);
  }
  assert_int_equal(id_at(&r, r.count - 1), 4999);
  xqc_replay_close(&r);
}

/* The ring grows by doubling, so the copies are few; while W < slots, older held samples
 * wait outside the window and come in as W grows (never one that has left it). */
static void test_replay_doubles(void **state) {
  (void)state;
  const xqc_window_rule_t rule = {100, 100000, 0.65, 0.4};
  xqc_replay_t r;
  assert_int_equal(xqc_replay_init_rule(&r, &rule), 0);
  uint64_t last_slots = r.slots;
  int doublings = 0;
  for (int n = 0; n < 200000; n++) {
    push_n(&r, n);
    if (r.slots != last_slots) {
      assert_true(r.slots == last_slots * 2 || r.slots == rule.max);
      last_slots = r.slots;
      doublings++;
    }
  }
  print_message("W %llu after 200000 pushes; %d doublings to %llu slots\n",
                (unsigned long long)r.cap, doublings, (unsigned long long)r.slots);
  assert_true(doublings <= 9);
  check_window(&r, 199999);
  xqc_replay_close(&r);
}

static void expect_refused(xqc_config_t *c, const char *setting) {
  xq_errbuf_t eb;
  assert_int_equal(xqc_config_check(c, &eb), XQ_ERANGE);
  print_message("refused: %s\n", eb.msg);
  assert_true(strncmp(eb.msg, setting, strlen(setting)) == 0);
}

static void set(xqc_config_t *c, const char *k, const char *v) {
  xq_errbuf_t eb;
  assert_int_equal(xqc_config_set(c, k, v, &eb), 0);
}

static void test_config_refuses_unreachable_min_positions(void **state) {
  (void)state;
  xqc_config_t c;
  xqc_config_defaults(&c);
  xq_errbuf_t eb;
  assert_int_equal(xqc_config_check(&c, &eb), 0);
  assert_int_equal(c.window_max, 0); /* the fixed window is the default */
  /* A fixed window smaller than min_positions never starts training. */
  set(&c, "window", "1000");
  set(&c, "min_positions", "1001");
  expect_refused(&c, "min_positions: 1001 can never be reached");
  /* A growing window reaches window_max, so min_positions up to it is fine. */
  set(&c, "window_max", "5000");
  assert_int_equal(xqc_config_check(&c, &eb), 0);
  set(&c, "min_positions", "5001");
  expect_refused(&c, "min_positions: 5001 can never be reached");
  /* window_max below window is refused by name. */
  set(&c, "min_positions", "10");
  set(&c, "window_max", "999");
  expect_refused(&c, "window_max: 999 is below window (1000)");
  /* The shape's bounds: a slope above 1 would need positions the window has dropped. */
  assert_int_equal(xqc_config_set(&c, "window_slope", "1.5", &eb), XQ_ERANGE);
  assert_non_null(strstr(eb.msg, "window_slope"));
  assert_int_equal(xqc_config_set(&c, "window_exponent", "0", &eb), XQ_ERANGE);
  assert_non_null(strstr(eb.msg, "window_exponent"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_size_follows_katago),
      cmocka_unit_test(test_size_linear_and_fixed),
      cmocka_unit_test(test_replay_grows_without_losing_samples),
      cmocka_unit_test(test_replay_doubles),
      cmocka_unit_test(test_config_refuses_unreachable_min_positions)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
