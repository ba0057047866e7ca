/*
 * test_coordinator_replay.c: the replay window's removal by source (coordinator/replay.c,
 * used by bans). A wrapped ring of tagged samples loses every sample of one source; the
 * survivors keep their order, pushing goes on after them (and wraps again), and sampling
 * draws only survivors, each about equally often.
 */
#define _DEFAULT_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <string.h>

#include "replay.h"

/* A sample identified by n: its z carries n (z = n / 1000 keeps it exact in a float). */
static xq_sample_t sample(int n) {
  xq_sample_t s;
  memset(&s, 0, sizeof s);
  s.npi = 1;
  s.pi_index[0] = 1;
  s.pi_prob[0] = 1.0f;
  s.z = (float)n / 1000.0f;
  return s;
}

static int id_at(const xqc_replay_t *r, uint64_t k) { /* k-th oldest */
  uint64_t slot = (r->head + r->cap - r->count + k) % r->cap;
  return (int)(r->ring[slot].z * 1000.0f + 0.5f);
}

static int drop_odd(uint32_t src, void *user) {
  (void)user;
  return src & 1;
}

static void test_remove_keeps_order_and_sampling_uniform(void **state) {
  (void)state;
  xqc_replay_t r;
  assert_int_equal(xqc_replay_init(&r, 10), 0);
  /* 25 pushes into 10 slots: the window holds 15..24; source = n % 4 (odd: to drop). */
  for (int n = 0; n < 25; n++) {
    xq_sample_t s = sample(n);
    xqc_replay_push(&r, &s, (uint32_t)(n % 4));
  }
  assert_int_equal(r.count, 10);
  assert_int_equal(id_at(&r, 0), 15);
  assert_int_equal(xqc_replay_remove(&r, drop_odd, NULL), 5);
  assert_int_equal(r.count, 5);
  const int kept[5] = {16, 18, 20, 22, 24};
  for (int k = 0; k < 5; k++) assert_int_equal(id_at(&r, (uint64_t)k), kept[k]);
  /* Pushing goes on after the survivors and wraps over the oldest again. */
  for (int n = 100; n < 107; n++) {
    xq_sample_t s = sample(n);
    xqc_replay_push(&r, &s, 0);
  }
  assert_int_equal(r.count, 10);
  const int now[10] = {20, 22, 24, 100, 101, 102, 103, 104, 105, 106};
  for (int k = 0; k < 10; k++) assert_int_equal(id_at(&r, (uint64_t)k), now[k]);
  /* Nothing to remove: nothing changes. */
  assert_int_equal(xqc_replay_remove(&r, drop_odd, NULL), 0);
  assert_int_equal(r.count, 10);

  /* Sampling after a removal draws survivors only, about uniformly. */
  xq_rng_t rng;
  xq_rng_seed(&rng, 3);
  int hits[200] = {0};
  xqc_batch_t b;
  assert_int_equal(xqc_replay_sample(&r, &rng, 5000, 0.0f, &b), 0);
  for (int i = 0; i < b.n; i++) {
    int n = (int)(b.msgs[i].z * 1000.0f + 0.5f); /* mirroring keeps z */
    assert_true(n >= 0 && n < 200);
    hits[n]++;
  }
  xqc_batch_free(&b);
  for (int k = 0; k < 10; k++) {
    int h = hits[now[k]];
    assert_true(h > 400 && h < 600); /* 500 expected; 4.5 sigma either side */
  }
  int total = 0;
  for (int k = 0; k < 10; k++) total += hits[now[k]];
  assert_int_equal(total, 5000);
  xqc_replay_close(&r);
}

/* The value target sent is (1 - w) z + w q: the game result, the root value, or a mix. */
static void test_value_target_mix(void **state) {
  (void)state;
  xqc_replay_t r;
  assert_int_equal(xqc_replay_init(&r, 4), 0);
  xq_sample_t s = sample(0);
  s.z = 1.0f;
  s.q = -0.5f;
  xqc_replay_push(&r, &s, 0);
  xq_rng_t rng;
  xq_rng_seed(&rng, 5);
  const float w[3] = {0.0f, 1.0f, 0.5f}, want[3] = {1.0f, -0.5f, 0.25f};
  for (int k = 0; k < 3; k++) {
    xqc_batch_t b;
    assert_int_equal(xqc_replay_sample(&r, &rng, 8, w[k], &b), 0);
    for (int i = 0; i < b.n; i++) assert_true(b.msgs[i].z == want[k]); /* mirrored too */
    xqc_batch_free(&b);
  }
  xqc_replay_close(&r);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_remove_keeps_order_and_sampling_uniform),
      cmocka_unit_test(test_value_target_mix)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
