/*
 * test_coordinator_gating.c: decisions of a gating match (coordinator/gating.c, from
 * libxqzcoord): SPRT accepts a clearly stronger candidate and rejects a weaker one early, the
 * game cap decides an undecided match by the sign of its LLR (a truncated SPRT), threshold and none modes decide after N games, bad
 * or repeated pair reports are refused, handed-out pairs are re-issued after a timeout, and
 * the pairs of a match never share an opening.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <string.h>

#include "gating.h"

static xqc_config_t cfg_for(xqc_gating_t mode) {
  xqc_config_t c;
  memset(&c, 0, sizeof c);
  c.gating = mode;
  c.gating_max_games = 200;
  c.threshold_games = 10;
  c.threshold_score = 0.55;
  c.sprt_elo0 = 0;
  c.sprt_elo1 = 35;
  c.sprt_alpha = 0.05;
  c.sprt_beta = 0.05;
  return c;
}

static xqc_gate_decision_t play(xqc_gate_t *g, const xqc_config_t *c, int red, int black) {
  xqc_gate_decision_t d = XQC_GATE_OPEN;
  for (int i = 0; i < g->npairs && d == XQC_GATE_OPEN; i++) {
    int p = xqc_gate_next_pair(g, 0, 1000);
    assert_int_equal(p, i);
    g->state[p] = 1;
    assert_int_equal(xqc_gate_result(g, p, red, black), 0);
    d = xqc_gate_decide(g, c);
  }
  return d;
}

static void test_sprt(void **state) {
  (void)state;
  xqc_config_t c = cfg_for(XQC_GATING_SPRT);
  xqc_gate_t g;
  assert_int_equal(xqc_gate_open(&g, &c, 1, 2, 3, 3, 100, NULL), 0);
  assert_int_equal(play(&g, &c, 1, 1), XQC_GATE_PROMOTE);
  assert_true(g.w < 200); /* decided early */
  double score, elo;
  xqc_gate_score(&g, &score, &elo);
  assert_true(score == 1.0 && elo == 800);
  xqc_gate_close(&g);
  assert_int_equal(xqc_gate_open(&g, &c, 1, 2, 3, 3, 100, NULL), 0);
  assert_int_equal(play(&g, &c, -1, 0), XQC_GATE_REJECT);
  assert_true(g.l + g.d < 200);
  xqc_gate_close(&g);
  /* Even results: undecided until the cap, then rejected. */
  c.gating_max_games = 20;
  assert_int_equal(xqc_gate_open(&g, &c, 1, 2, 3, 3, 100, NULL), 0);
  assert_int_equal(play(&g, &c, 1, -1), XQC_GATE_REJECT);
  assert_int_equal(g.w + g.d + g.l, 20);
  xqc_gate_close(&g);
  /* Undecided at the cap but leaning: the sign of the LLR decides. */
  const int up[4][2] = {{1, 0}, {0, 0}, {1, -1}, {0, 0}};   /* W-D-L 2-5-1 per four pairs */
  const int down[4][2] = {{-1, 0}, {0, 0}, {1, -1}, {0, 0}}; /* 1-5-2 */
  for (int k = 0; k < 2; k++) {
    const int (*seq)[2] = k == 0 ? up : down;
    assert_int_equal(xqc_gate_open(&g, &c, 1, 2, 3, 3, 100, NULL), 0);
    xqc_gate_decision_t d = XQC_GATE_OPEN;
    for (int i = 0; i < g.npairs; i++) {
      int p = xqc_gate_next_pair(&g, 0, 1000);
      g.state[p] = 1;
      assert_int_equal(xqc_gate_result(&g, p, seq[i % 4][0], seq[i % 4][1]), 0);
      d = xqc_gate_decide(&g, &c);
      if (i < g.npairs - 1) assert_int_equal(d, XQC_GATE_OPEN); /* never decided early */
    }
    double llr = xq_sprt_llr_pentanomial(g.penta, c.sprt_elo0, c.sprt_elo1);
    print_message("cap at 20 games, %s: LLR %.2f\n", k == 0 ? "ahead" : "behind", llr);
    assert_true(k == 0 ? llr > 0 : llr < 0);
    assert_int_equal(d, k == 0 ? XQC_GATE_PROMOTE : XQC_GATE_REJECT);
    xqc_gate_close(&g);
  }
}

static void test_threshold_and_none(void **state) {
  (void)state;
  xqc_config_t c = cfg_for(XQC_GATING_THRESHOLD);
  xqc_gate_t g;
  assert_int_equal(xqc_gate_open(&g, &c, 1, 2, 3, 3, 100, NULL), 0);
  assert_int_equal(g.npairs, 5);
  assert_int_equal(play(&g, &c, 1, 0), XQC_GATE_PROMOTE); /* 0.75 >= 0.55 */
  xqc_gate_close(&g);
  assert_int_equal(xqc_gate_open(&g, &c, 1, 2, 3, 3, 100, NULL), 0);
  assert_int_equal(play(&g, &c, 1, -1), XQC_GATE_REJECT); /* 0.5 < 0.55 */
  xqc_gate_close(&g);
  c = cfg_for(XQC_GATING_NONE);
  assert_int_equal(xqc_gate_open(&g, &c, 1, 2, 3, 3, 100, NULL), 0);
  assert_int_equal(play(&g, &c, -1, -1), XQC_GATE_PROMOTE); /* always, still measured */
  assert_int_equal(g.l, 10);
  xqc_gate_close(&g);
}

static void test_bad_reports_and_reissue(void **state) {
  (void)state;
  xqc_config_t c = cfg_for(XQC_GATING_THRESHOLD);
  xqc_gate_t g;
  assert_int_equal(xqc_gate_open(&g, &c, 1, 2, 3, 3, 100, NULL), 0);
  assert_int_equal(xqc_gate_result(&g, -1, 1, 1), XQ_EINVAL);
  assert_int_equal(xqc_gate_result(&g, 5, 1, 1), XQ_EINVAL);
  assert_int_equal(xqc_gate_result(&g, 0, 2, 1), XQ_EINVAL);
  assert_int_equal(xqc_gate_result(&g, 0, 1, 1), 0);
  assert_int_equal(xqc_gate_result(&g, 0, 1, 1), XQ_EINVAL); /* reported twice */
  for (int i = 1; i < 5; i++) {
    g.state[i] = 1;
    g.issued_ms[i] = 1000;
  }
  assert_int_equal(xqc_gate_next_pair(&g, 1500, 1000), -1);
  assert_int_equal(xqc_gate_next_pair(&g, 2001, 1000), 1); /* lost pair handed out again */
  char fen[128];
  assert_int_equal(xqc_gate_opening_fen(&g, 3, fen, NULL), 0);
  assert_true(strchr(fen, '/') != NULL);
  xqc_gate_close(&g);
}

/* Gating nets play without noise, so a pair on an opening already played repeats its two
 * games and the SPRT would count the same evidence again (it did with the old set of 8
 * openings: a 100-game match was 16 distinct games). The 88 pairs a match can have get
 * 88 distinct openings, and the next match starts elsewhere. */
static void test_openings_distinct(void **state) {
  (void)state;
  xqc_config_t c = cfg_for(XQC_GATING_SPRT);
  c.gating_max_games = 176;
  xqc_gate_t g;
  static char fens[88][128];
  assert_int_equal(xqc_gate_open(&g, &c, 7, 2, 3, 3, 100, NULL), 0);
  assert_int_equal(g.npairs, 88);
  for (int i = 0; i < 88; i++) {
    assert_int_equal(xqc_gate_opening_fen(&g, i, fens[i], NULL), 0);
    for (int j = 0; j < i; j++)
      if (!strcmp(fens[i], fens[j])) fail_msg("pairs %d and %d share the opening %s", j, i, fens[i]);
  }
  xqc_gate_close(&g);
  char next[128];
  assert_int_equal(xqc_gate_open(&g, &c, 8, 2, 3, 3, 100, NULL), 0);
  assert_int_equal(xqc_gate_opening_fen(&g, 0, next, NULL), 0);
  assert_string_not_equal(next, fens[0]);
  assert_string_equal(next, fens[1]);
  xqc_gate_close(&g);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_sprt),
      cmocka_unit_test(test_threshold_and_none),
      cmocka_unit_test(test_bad_reports_and_reissue),
      cmocka_unit_test(test_openings_distinct),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
