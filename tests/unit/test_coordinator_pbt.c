/*
 * test_coordinator_pbt.c: population-based training's exploit and explore
 * (coordinator/population/pbt.h): who copies whom, the control member, ties, the
 * perturbation's factors, ranges, resampling and whole numbers, and determinism.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "population/pbt.h"

static const xqc_pbt_range_t RANGES[] = {
    {"lr_scale", 0.1, 10, true, false},
    {"batch", 64, 1024, true, true},
    {"value_weight", 0, 4, false, false},
};
#define NS 3

static void fill(double (*s)[XQC_PBT_MAX_SETTINGS], int n) {
  for (int i = 0; i < n; i++) {
    s[i][0] = 1.0 + i;
    s[i][1] = 256;
    s[i][2] = 1.0;
  }
}

static void test_quantile_size(void **state) {
  (void)state;
  assert_int_equal(xqc_pbt_quantile_size(4, 0.25), 1);
  assert_int_equal(xqc_pbt_quantile_size(3, 0.25), 1); /* rounded up: a bottom of one */
  assert_int_equal(xqc_pbt_quantile_size(2, 0.25), 1);
  assert_int_equal(xqc_pbt_quantile_size(1, 0.25), 0); /* no half to copy from */
  assert_int_equal(xqc_pbt_quantile_size(5, 0.25), 2);
  assert_int_equal(xqc_pbt_quantile_size(8, 0.25), 2);
  assert_int_equal(xqc_pbt_quantile_size(10, 0.2), 2); /* 10 * 0.2 is 2, not 1.999... */
  assert_int_equal(xqc_pbt_quantile_size(4, 0.9), 2);  /* capped at half */
  assert_int_equal(xqc_pbt_quantile_size(4, 0), 0);
}

/* Eight members rated 0..7 (index = rating): the two worst copy from the two best. */
static void test_bottom_copies_top(void **state) {
  (void)state;
  double elo[8], s[8][XQC_PBT_MAX_SETTINGS];
  for (int i = 0; i < 8; i++) elo[i] = 100.0 * i;
  fill(s, 8);
  xqc_pbt_rule_t rule;
  xqc_pbt_rule_default(&rule);
  bool donor_seen[8] = {false};
  for (uint64_t seed = 1; seed <= 200; seed++) {
    xq_rng_t rng;
    xq_rng_seed(&rng, seed);
    xqc_pbt_order_t o[8];
    int k = xqc_pbt_round(8, elo, (const double(*)[XQC_PBT_MAX_SETTINGS])s, NS, RANGES, -1,
                          &rule, &rng, o);
    assert_int_equal(k, 2);
    assert_int_equal(o[0].member, 0); /* the worst first */
    assert_int_equal(o[1].member, 1);
    for (int j = 0; j < k; j++) {
      assert_true(o[j].donor == 6 || o[j].donor == 7);
      donor_seen[o[j].donor] = true;
    }
  }
  assert_true(donor_seen[6] && donor_seen[7]); /* drawn, not always the best */
}

/* The control member is neither ranked, copied nor copied from, however it is rated. */
static void test_control_member(void **state) {
  (void)state;
  double elo[5] = {-500, 10, 20, 30, 900}, s[5][XQC_PBT_MAX_SETTINGS];
  fill(s, 5);
  xqc_pbt_rule_t rule;
  xqc_pbt_rule_default(&rule);
  for (int control = 0; control < 5; control += 4) {
    xq_rng_t rng;
    xq_rng_seed(&rng, 7);
    xqc_pbt_order_t o[5];
    int k = xqc_pbt_round(5, elo, (const double(*)[XQC_PBT_MAX_SETTINGS])s, NS, RANGES, control,
                          &rule, &rng, o);
    assert_int_equal(k, 1); /* four ranked members: a quantile of one */
    assert_int_not_equal(o[0].member, control);
    assert_int_not_equal(o[0].donor, control);
    assert_int_equal(o[0].member, control == 0 ? 1 : 0);
    assert_int_equal(o[0].donor, control == 0 ? 4 : 3);
  }
}

/* Equal ratings: nobody copies (a donor must be rated above the member). Too few members
 * for a quantile (one): nothing happens; three at the default quantile: one copy. */
static void test_no_change(void **state) {
  (void)state;
  double elo[4] = {50, 50, 50, 50}, s[4][XQC_PBT_MAX_SETTINGS];
  fill(s, 4);
  xqc_pbt_rule_t rule;
  xqc_pbt_rule_default(&rule);
  xq_rng_t rng;
  xq_rng_seed(&rng, 1);
  xqc_pbt_order_t o[4];
  assert_int_equal(xqc_pbt_round(4, elo, (const double(*)[XQC_PBT_MAX_SETTINGS])s, NS, RANGES,
                                 -1, &rule, &rng, o),
                   0);
  /* One ranked member has no half to copy from. */
  double one[1] = {0};
  assert_int_equal(xqc_pbt_round(1, one, (const double(*)[XQC_PBT_MAX_SETTINGS])s, NS, RANGES,
                                 -1, &rule, &rng, o),
                   0);
  /* Three at the default quantile (0.25): a bottom of one, the worst copying the best, as
   * a population of 4 with its control member has it. */
  double three[3] = {0, 100, 200};
  assert_int_equal(xqc_pbt_round(3, three, (const double(*)[XQC_PBT_MAX_SETTINGS])s, NS,
                                 RANGES, -1, &rule, &rng, o),
                   1);
  assert_int_equal(o[0].member, 0);
  assert_int_equal(o[0].donor, 2);
}

/* Without resampling every setting is the donor's times 0.8 or 1.2 (both seen), within
 * its range, whole numbers rounded. */
static void test_explore_factors(void **state) {
  (void)state;
  xqc_pbt_rule_t rule;
  xqc_pbt_rule_default(&rule);
  rule.resample_p = 0;
  xq_rng_t rng;
  xq_rng_seed(&rng, 3);
  const double from[NS] = {9.5, 100, 1.0};
  bool up = false, down = false;
  for (int t = 0; t < 500; t++) {
    double to[NS];
    xqc_pbt_explore(from, to, NS, RANGES, &rule, &rng);
    assert_true(fabs(to[0] - 7.6) < 1e-12 || to[0] == 10.0); /* 9.5 * 1.2 is capped at 10 */
    assert_true(to[1] == 80 || to[1] == 120);
    assert_true(fabs(to[2] - 0.8) < 1e-12 || fabs(to[2] - 1.2) < 1e-12);
    up |= to[2] > 1;
    down |= to[2] < 1;
  }
  assert_true(up && down);
}

/* With resampling every draw lies in its range, a log-scale one spread over the decades
 * (about half below the geometric middle), a whole one whole. */
static void test_explore_resample(void **state) {
  (void)state;
  xqc_pbt_rule_t rule;
  xqc_pbt_rule_default(&rule);
  rule.resample_p = 1;
  xq_rng_t rng;
  xq_rng_seed(&rng, 11);
  const double from[NS] = {1, 256, 1};
  int below_one = 0, n = 4000;
  for (int t = 0; t < n; t++) {
    double to[NS];
    xqc_pbt_explore(from, to, NS, RANGES, &rule, &rng);
    assert_true(to[0] >= 0.1 && to[0] <= 10);
    assert_true(to[1] >= 64 && to[1] <= 1024 && to[1] == round(to[1]));
    assert_true(to[2] >= 0 && to[2] <= 4);
    below_one += to[0] < 1;
  }
  assert_true(below_one > n * 45 / 100 && below_one < n * 55 / 100);
}

/* The same rng state gives the same orders. */
static void test_deterministic(void **state) {
  (void)state;
  double elo[8], s[8][XQC_PBT_MAX_SETTINGS];
  for (int i = 0; i < 8; i++) elo[i] = (double)((i * 37) % 8);
  fill(s, 8);
  xqc_pbt_rule_t rule;
  xqc_pbt_rule_default(&rule);
  xqc_pbt_order_t a[8], b[8];
  xq_rng_t r1, r2;
  xq_rng_seed(&r1, 99);
  xq_rng_seed(&r2, 99);
  int ka = xqc_pbt_round(8, elo, (const double(*)[XQC_PBT_MAX_SETTINGS])s, NS, RANGES, -1, &rule,
                         &r1, a);
  int kb = xqc_pbt_round(8, elo, (const double(*)[XQC_PBT_MAX_SETTINGS])s, NS, RANGES, -1, &rule,
                         &r2, b);
  assert_int_equal(ka, kb);
  assert_memory_equal(a, b, sizeof a[0] * (size_t)ka);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_quantile_size),  cmocka_unit_test(test_bottom_copies_top),
      cmocka_unit_test(test_control_member), cmocka_unit_test(test_no_change),
      cmocka_unit_test(test_explore_factors), cmocka_unit_test(test_explore_resample),
      cmocka_unit_test(test_deterministic),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
