/*
 * test_coordinator_self_balance.c: the optional self_balance setting on made-up
 * timelines: off, jobs carry `sims`; on, a campaign that stays trainer-bound raises the
 * simulations by a quarter per dwell up to sims_max, one that stays worker-bound lowers
 * them by a fifth down to sims, and no change comes sooner than a dwell after the last.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "self_balance.h"

#define DWELL 300000u /* ms */

static void test_off_keeps_sims(void **state) {
  (void)state;
  xqc_self_balance_t sb = {0};
  xqc_self_balance_cfg_t cfg = {false, 64, 256, DWELL};
  for (uint64_t t = 0; t < 10 * DWELL; t += 1000)
    assert_int_equal(xqc_self_balance_tick(&sb, &cfg, XQC_BALANCE_TRAINER_BOUND, 0, t), 0);
  assert_int_equal(xqc_self_balance_sims(&sb, &cfg), 64);
}

/* Runs the state for `ms` in 1 s ticks from *t; returns the changes made. */
static int run(xqc_self_balance_t *sb, const xqc_self_balance_cfg_t *cfg,
               xqc_balance_state_t st, uint64_t since, uint64_t *t, uint64_t ms) {
  int changes = 0;
  for (uint64_t end = *t + ms; *t < end; *t += 1000)
    changes += xqc_self_balance_tick(sb, cfg, st, since, *t) != 0;
  return changes;
}

static void test_follows_the_balance(void **state) {
  (void)state;
  xqc_self_balance_t sb = {0};
  xqc_self_balance_cfg_t cfg = {true, 64, 256, DWELL};
  uint64_t t = 1000;
  /* Balanced: nothing moves. */
  assert_int_equal(run(&sb, &cfg, XQC_BALANCE_BALANCED, 0, &t, 3 * DWELL), 0);
  assert_int_equal(xqc_self_balance_sims(&sb, &cfg), 64);
  /* Trainer-bound: 64 -> 80 -> 100 -> 125 -> 157 -> 197 -> 247 -> 256, one per dwell. */
  uint64_t since = t;
  assert_int_equal(run(&sb, &cfg, XQC_BALANCE_TRAINER_BOUND, since, &t, DWELL / 2), 1);
  assert_int_equal(xqc_self_balance_sims(&sb, &cfg), 80);
  assert_int_equal(run(&sb, &cfg, XQC_BALANCE_TRAINER_BOUND, since, &t, DWELL), 1);
  assert_int_equal(xqc_self_balance_sims(&sb, &cfg), 100);
  run(&sb, &cfg, XQC_BALANCE_TRAINER_BOUND, since, &t, 10 * DWELL);
  assert_int_equal(xqc_self_balance_sims(&sb, &cfg), 256); /* the cap */
  /* Worker-bound, but only just: a dwell in the state before the first step down. */
  since = t;
  assert_int_equal(run(&sb, &cfg, XQC_BALANCE_WORKER_BOUND, since, &t, DWELL - 1000), 0);
  assert_int_equal(run(&sb, &cfg, XQC_BALANCE_WORKER_BOUND, since, &t, 2000), 1);
  assert_int_equal(xqc_self_balance_sims(&sb, &cfg), 256 - 52);
  run(&sb, &cfg, XQC_BALANCE_WORKER_BOUND, since, &t, 20 * DWELL);
  assert_int_equal(xqc_self_balance_sims(&sb, &cfg), 64); /* the floor */
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_off_keeps_sims),
      cmocka_unit_test(test_follows_the_balance),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
