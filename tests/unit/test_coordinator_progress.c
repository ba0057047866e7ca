/*
 * test_coordinator_progress.c: the rates behind Status.progress (coordinator/progress.c) on
 * made-up timelines: the trainer's step rate (measured over 5 minutes, unknown before 10 s
 * of samples or after 2 minutes of silence, measured afresh when the step goes back), the
 * arena pair rate (a stall lowers it; a match seen first counts no pairs), and the times
 * made of them (unknown, never a guess, when a rate is).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <math.h>
#include <string.h>

#include "progress.h"

static void test_step_rate(void **state) {
  (void)state;
  xqc_progress_t p;
  memset(&p, 0, sizeof p);
  assert_true(isnan(xqc_progress_step_rate(&p, 1000)));
  /* 2 steps a second for a minute, a report every 500 ms. */
  for (uint64_t ms = 0; ms <= 60000; ms += 500)
    xqc_progress_trainer(&p, 1000 + ms, ms / 500, 100, 0);
  assert_int_equal(p.candidate_every, 100);
  assert_int_equal(p.max_steps, 0);
  assert_true(fabs(xqc_progress_step_rate(&p, 61000) - 2.0) < 0.05);
  /* An older trainer (candidate_every 0) leaves the plan as it was. */
  xqc_progress_trainer(&p, 61500, 121, 0, 0);
  assert_int_equal(p.candidate_every, 100);
  /* Silent for more than 2 minutes: unknown. */
  assert_true(isnan(xqc_progress_step_rate(&p, 61500 + XQC_PROGRESS_STEP_STALE_MS + 1)));
  /* The step goes back (a resumed trainer): measured afresh, unknown until 10 s pass. */
  xqc_progress_trainer(&p, 70000, 50, 100, 500);
  assert_int_equal(p.max_steps, 500);
  xqc_progress_trainer(&p, 75000, 60, 100, 500);
  assert_true(isnan(xqc_progress_step_rate(&p, 75000)));
  xqc_progress_trainer(&p, 80000, 70, 100, 500);
  assert_true(fabs(xqc_progress_step_rate(&p, 80000) - 2.0) < 1e-9);
}

static void test_step_rate_window(void **state) {
  (void)state;
  xqc_progress_t p;
  memset(&p, 0, sizeof p);
  /* 1 step/s for 10 minutes, then 4 steps/s for 5: the rate is the last 5 minutes'. */
  uint64_t step = 0, ms = 0;
  for (; ms < 600000; ms += 5000, step += 5) xqc_progress_trainer(&p, ms, step, 10, 0);
  for (; ms <= 900000; ms += 5000, step += 20) xqc_progress_trainer(&p, ms, step, 10, 0);
  assert_true(fabs(xqc_progress_step_rate(&p, 900000) - 4.0) < 0.1);
}

static void test_pair_rate(void **state) {
  (void)state;
  xqc_progress_t p;
  memset(&p, 0, sizeof p);
  /* A match resumed with 5 pairs done counts none of them. */
  xqc_progress_pairs(&p, 0, 7, 5, 1000);
  assert_int_equal(p.pair_n, 0);
  /* One pair every 10 s from then on. */
  for (int i = 1; i <= 10; i++) xqc_progress_pairs(&p, 0, 7, 5 + i, 1000 + 10000 * (uint64_t)i);
  assert_int_equal(p.pair_n, 10);
  assert_true(fabs(xqc_progress_pair_rate(&p, 101000) - 0.1) < 1e-9);
  /* A stall of 90 s lowers it: 9 intervals over 180 s. */
  assert_true(fabs(xqc_progress_pair_rate(&p, 191000) - 0.05) < 1e-9);
  /* The anchor match counts into the same rate; the same match again counts nothing. */
  xqc_progress_pairs(&p, 1, 9, 0, 191000);
  xqc_progress_pairs(&p, 1, 9, 2, 191000);
  xqc_progress_pairs(&p, 1, 9, 2, 192000);
  assert_int_equal(p.pair_n, 12);
  /* Pairs older than 30 minutes are forgotten: unknown. */
  assert_true(isnan(xqc_progress_pair_rate(&p, 192000 + XQC_PROGRESS_PAIR_SPAN_MS + 1)));
}

static void test_times(void **state) {
  (void)state;
  assert_int_equal(xqc_progress_next_multiple(0, 100), 100);
  assert_int_equal(xqc_progress_next_multiple(99, 100), 100);
  assert_int_equal(xqc_progress_next_multiple(100, 100), 200); /* uploaded at 100 already */
  assert_int_equal(xqc_progress_next_multiple(5, 0), 0);       /* unknown */
  assert_true(fabs(xqc_progress_eta(30, 2.0) - 15.0) < 1e-12);
  assert_true(xqc_progress_eta(-3, 2.0) == 0.0);
  assert_true(isnan(xqc_progress_eta(30, NAN)));
  assert_true(isnan(xqc_progress_eta(30, 0.0)));
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_step_rate),
                                     cmocka_unit_test(test_step_rate_window),
                                     cmocka_unit_test(test_pair_rate),
                                     cmocka_unit_test(test_times)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
