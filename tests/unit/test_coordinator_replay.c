/*
 * test_coordinator_replay.c: the replay window's removal by source (coordinator/window/replay.c,
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

#include "window/replay.h"

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
  return (int)(r->ring[xqc_replay_slot(r, k)].z * 1000.0f + 0.5f);
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
  const xqc_sample_opts_t plain = {0.0f, 0.0f};
  assert_int_equal(xqc_replay_sample(&r, &rng, 5000, &plain, &b), 0);
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
    const xqc_sample_opts_t o = {w[k], 0.0f};
    assert_int_equal(xqc_replay_sample(&r, &rng, 8, &o, &b), 0);
    for (int i = 0; i < b.n; i++) assert_true(b.msgs[i].z == want[k]); /* mirrored too */
    xqc_batch_free(&b);
  }
  xqc_replay_close(&r);
}

/* colour_swap is the share of samples served with the colours swapped (side flipped). */
static void test_colour_swap_share(void **state) {
  (void)state;
  xqc_replay_t r;
  assert_int_equal(xqc_replay_init(&r, 4), 0);
  xq_sample_t s = sample(0);
  s.board[4] = (uint8_t)xq_pc_make(XQ_RED, XQ_KING);    /* e0 */
  s.board[85] = (uint8_t)xq_pc_make(XQ_BLACK, XQ_KING); /* e9 */
  s.board[13] = (uint8_t)xq_pc_make(XQ_RED, XQ_ROOK);   /* e1, between the kings */
  s.side = XQ_RED;
  xqc_replay_push(&r, &s, 0);
  xq_rng_t rng;
  xq_rng_seed(&rng, 9);
  const float share[3] = {0.0f, 1.0f, 0.5f};
  for (int k = 0; k < 3; k++) {
    xqc_batch_t b;
    const xqc_sample_opts_t o = {0.0f, share[k]};
    assert_int_equal(xqc_replay_sample(&r, &rng, 1000, &o, &b), 0);
    int black = 0;
    for (int i = 0; i < b.n; i++) {
      const uint8_t *bd = b.msgs[i].board.data;
      if (b.msgs[i].side == XQ_BLACK) {
        black++;
        assert_int_equal(bd[85], xq_pc_make(XQ_BLACK, XQ_KING)); /* Red's king, turned */
        assert_int_equal(bd[76], xq_pc_make(XQ_BLACK, XQ_ROOK)); /* e1 -> e8 */
      } else {
        assert_int_equal(bd[4], xq_pc_make(XQ_RED, XQ_KING));
      }
    }
    print_message("colour_swap %.1f: %d of 1000 served swapped\n", share[k], black);
    if (k == 0) assert_int_equal(black, 0);
    if (k == 1) assert_int_equal(black, 1000);
    if (k == 2) assert_true(black > 430 && black < 570); /* 500 expected, 4.4 sigma */
    xqc_batch_free(&b);
  }
  xqc_replay_close(&r);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_remove_keeps_order_and_sampling_uniform),
      cmocka_unit_test(test_value_target_mix), cmocka_unit_test(test_colour_swap_share)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
