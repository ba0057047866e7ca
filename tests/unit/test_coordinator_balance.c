/*
 * test_coordinator_balance.c: the balance of self-play against training
 * (coordinator/balance.c) on made-up timelines: the figures over the span (rates, achieved
 * reuse, turnover, the trainer's busy share from its request timing, two trainers told
 * apart, a trainer away for minutes counted neither way), and the states: filling,
 * no-trainer, trainer-bound only after balance_warn_s of low reuse and cleared as soon as
 * the reuse recovers, worker-bound when the pacing refuses batches.
 */
#define _DEFAULT_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <math.h>
#include <string.h>

#include "balance.h"

static const uint8_t RID_A[] = {0, 1, 2, 3, 4}, RID_B[] = {0, 9, 9, 9, 9};

/* R = 4, a 60 s span, trainer-bound after 30 s, the trainer presumed gone after 10 s. */
static xqc_balance_in_t input(uint64_t positions, uint64_t served) {
  xqc_balance_in_t in = {positions, served, 5000, 5000, 100, 4.0, 60000, 30000, 10000};
  return in;
}

/* A second of campaign: `ingest` positions and `served` samples in one served batch
 * request of trainer A, ten timer ticks. */
typedef struct {
  xqc_balance_t b;
  uint64_t now, positions, served;
} sim_t;

static void second(sim_t *s, uint64_t ingest, uint64_t served, xqc_batch_answer_t answer) {
  s->positions += ingest;
  if (answer == XQC_BATCH_SERVED) s->served += served;
  xqc_balance_request(&s->b, RID_A, sizeof RID_A, answer, s->now);
  for (int t = 0; t < 10; t++) {
    s->now += 100;
    xqc_balance_in_t in = input(s->positions, s->served);
    xqc_balance_tick(&s->b, &in, s->now);
  }
}

static xqc_balance_view_t view(const sim_t *s) {
  xqc_balance_view_t v;
  xqc_balance_in_t in = input(s->positions, s->served);
  xqc_balance_view(&s->b, &in, s->now, &v);
  return v;
}

static void test_trainer_bound_after_warn_and_cleared(void **state) {
  (void)state;
  sim_t s;
  memset(&s, 0, sizeof s);
  s.now = 1000000;
  /* 1000 positions/s, 1000 samples/s: reuse 1 < R/2 = 2. */
  int bound_at = -1;
  for (int i = 0; i < 70; i++) {
    second(&s, 1000, 1000, XQC_BATCH_SERVED);
    if (bound_at < 0 && s.b.state == XQC_BALANCE_TRAINER_BOUND) bound_at = i;
    if (bound_at < 0) assert_int_equal(s.b.state, XQC_BALANCE_BALANCED);
  }
  /* The first second gives the first sample; the reuse is low from the next on. */
  print_message("trainer-bound %d s after the first positions\n", bound_at);
  assert_true(bound_at >= 30 && bound_at <= 31); /* balance_warn_s = 30 */
  xqc_balance_view_t v = view(&s);
  assert_true(fabs(v.reuse - 1.0) < 0.05);
  /* 1000 positions arrive at once each second: the span sees 59 or 60 of them. */
  assert_true(fabs(v.positions_per_s - 1000.0) < 30.0);
  assert_true(fabs(v.samples_per_s - 1000.0) < 30.0);
  assert_true(fabs(v.turnover_s - 5.0) < 0.2); /* 5000 positions at 1000/s */
  assert_true(v.span_s > 59.0 && v.span_s <= 60.0);
  assert_true(fabs(v.trainer_busy - 1.0) < 1e-9);
  assert_int_equal(v.paced, 0);
  assert_string_equal(xqc_balance_state_name(v.state), "trainer-bound");
  assert_non_null(strstr(xqc_balance_advice(v.state), "xqz-trainer --threads"));
  /* The trainer speeds up to 8000 samples/s: once the span's reuse is >= 2 it clears. */
  int cleared_at = -1;
  for (int i = 0; i < 60 && cleared_at < 0; i++) {
    second(&s, 1000, 8000, XQC_BATCH_SERVED);
    if (s.b.state != XQC_BALANCE_TRAINER_BOUND) cleared_at = i;
  }
  v = view(&s);
  print_message("cleared after %d s at reuse %.2f\n", cleared_at + 1, v.reuse);
  assert_true(cleared_at >= 5 && cleared_at <= 12); /* (8x + (60 - x)) / 60 >= 2: x >= 8.6 */
  assert_true(v.reuse >= 2.0);
  assert_int_equal(s.b.state, XQC_BALANCE_BALANCED);
}

static void test_filling_no_trainer_worker_bound(void **state) {
  (void)state;
  xqc_balance_t b;
  memset(&b, 0, sizeof b);
  xqc_balance_in_t in = input(50, 0);
  in.window_count = 50; /* below min_positions */
  xqc_balance_tick(&b, &in, 1000);
  assert_int_equal(b.state, XQC_BALANCE_FILLING);
  in = input(1000, 0);
  xqc_balance_tick(&b, &in, 2000);
  assert_int_equal(b.state, XQC_BALANCE_NO_TRAINER); /* never a request */
  /* A trainer paced every other request: worker-bound, and the Waits are waiting time. */
  uint64_t now = 2000, served = 0;
  for (int i = 0; i < 20; i++) {
    xqc_balance_request(&b, RID_A, sizeof RID_A, XQC_BATCH_SERVED, now);
    now += 100; /* trains 100 ms */
    served += 256;
    xqc_balance_request(&b, RID_A, sizeof RID_A, XQC_BATCH_PACED, now);
    now += 300; /* waits 300 ms */
    in = input(1000 + (uint64_t)i * 64, served);
    xqc_balance_tick(&b, &in, now);
  }
  assert_int_equal(b.state, XQC_BALANCE_WORKER_BOUND);
  assert_non_null(strstr(xqc_balance_advice(b.state), "more workers"));
  xqc_balance_view_t v;
  xqc_balance_view(&b, &in, now, &v);
  print_message("busy %.3f paced %llu\n", v.trainer_busy, (unsigned long long)v.paced);
  assert_true(fabs(v.trainer_busy - 0.25) < 0.02);
  assert_true(v.paced >= 19 && v.paced <= 20);
  /* Silent past the trainer timeout: no-trainer. */
  in = input(5000, served);
  xqc_balance_tick(&b, &in, now + 10001);
  assert_int_equal(b.state, XQC_BALANCE_NO_TRAINER);
  assert_non_null(strstr(xqc_balance_advice(b.state), "start xqz-trainer"));
}

static void test_busy_two_trainers_and_gaps(void **state) {
  (void)state;
  xqc_balance_t b;
  memset(&b, 0, sizeof b);
  xqc_balance_in_t in = input(0, 0);
  xqc_balance_tick(&b, &in, 1000);
  /* A trains 400 ms per batch; B is paced, waiting 400 ms each time; interleaved. */
  uint64_t t = 1000;
  for (int i = 0; i < 10; i++) {
    xqc_balance_request(&b, RID_A, sizeof RID_A, XQC_BATCH_SERVED, t);
    xqc_balance_request(&b, RID_B, sizeof RID_B, XQC_BATCH_PACED, t + 200);
    t += 400;
  }
  xqc_balance_view_t v;
  xqc_balance_view(&b, &in, t, &v);
  assert_true(fabs(v.trainer_busy - 0.5) < 1e-9); /* 9 x 400 busy, 9 x 400 waiting */
  /* A away for two minutes: that gap counts neither way. */
  uint64_t busy = b.busy_ms, wait = b.wait_ms;
  xqc_balance_request(&b, RID_A, sizeof RID_A, XQC_BATCH_SERVED, t + 120000);
  assert_int_equal(b.busy_ms, busy);
  assert_int_equal(b.wait_ms, wait);
  /* Before any request the share is not measured (NaN, null in JSON). */
  xqc_balance_t fresh;
  memset(&fresh, 0, sizeof fresh);
  xqc_balance_tick(&fresh, &in, 1000);
  xqc_balance_view(&fresh, &in, 2000, &v);
  assert_true(isnan(v.trainer_busy));
  assert_true(v.reuse == 0.0 && v.turnover_s == 0.0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_trainer_bound_after_warn_and_cleared),
      cmocka_unit_test(test_filling_no_trainer_worker_bound),
      cmocka_unit_test(test_busy_two_trainers_and_gaps)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
