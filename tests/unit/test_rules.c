/*
 * test_rules.c: game adjudication: mate, stalemate, each repetition outcome, the
 * no-capture rule, the length cap and the no-attackers draw.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "rules/material.h"
#include "rules/rules.h"
#include "test_helpers.h"

static xq_pos_t pos;

static void expect(xq_result_t result, xq_reason_t reason) {
  xq_outcome_t o = xq_adjudicate(&pos, 0);
  if (o.result != result || o.reason != reason)
    fail_msg("got %s (%s), expected %s (%s)", xq_result_name(o.result), xq_reason_name(o.reason),
             xq_result_name(result), xq_reason_name(reason));
}

static void test_mate_and_stalemate(void **state) {
  (void)state;
  th_parse(&pos, "R2k5/1R7/9/9/9/9/9/9/9/4K4 b - - 0 1");
  expect(XQ_RESULT_RED_WIN, XQ_REASON_CHECKMATE);
  th_parse(&pos, "3k5/4P4/9/9/9/9/9/9/9/5K3 b - - 0 1");
  expect(XQ_RESULT_RED_WIN, XQ_REASON_STALEMATE);
  /* Mate delivered by a move: red plays a9 rook to rank 9 for mate. */
  th_parse(&pos, "3k5/1R7/9/9/9/9/9/9/9/R3K4 w - - 0 1");
  expect(XQ_RESULT_NONE, XQ_REASON_NONE);
  th_play(&pos, "a0a9");
  expect(XQ_RESULT_RED_WIN, XQ_REASON_CHECKMATE);
}

/* Rook a5-a6-a5 and king e9-e8-e9, no checks: threefold repetition is a draw. */
static void test_repetition_draw(void **state) {
  (void)state;
  th_parse(&pos, "4k4/9/9/9/R8/9/9/9/9/3K5 w - - 0 1");
  th_play(&pos, "a5a6 e9e8 a6a5 e8e9");
  expect(XQ_RESULT_NONE, XQ_REASON_NONE); /* twice is not yet a repetition */
  th_play(&pos, "a5a6 e9e8 a6a5");
  expect(XQ_RESULT_NONE, XQ_REASON_NONE);
  th_play(&pos, "e8e9");
  expect(XQ_RESULT_DRAW, XQ_REASON_REPETITION);
}

/* Red checks on every move (rook a9/a8 against king e9/e8): red loses. */
static void test_perpetual_check_loses(void **state) {
  (void)state;
  th_parse(&pos, "4k4/R8/9/9/9/9/9/9/9/3K5 w - - 0 1");
  th_play(&pos, "a8a9 e9e8 a9a8 e8e9 a8a9 e9e8 a9a8");
  expect(XQ_RESULT_NONE, XQ_REASON_NONE);
  th_play(&pos, "e8e9");
  expect(XQ_RESULT_BLACK_WIN, XQ_REASON_PERPETUAL_CHECK);
  /* The same for Black checking Red. */
  th_parse(&pos, "5k3/9/9/9/9/9/9/9/r8/4K4 b - - 0 1");
  th_play(&pos, "a1a0 e0e1 a0a1 e1e0 a1a0 e0e1 a0a1 e1e0");
  expect(XQ_RESULT_RED_WIN, XQ_REASON_PERPETUAL_CHECK);
}

/* When both sides check throughout the cycle it is a draw. Real mutual perpetual checks
 * need a long construction; the adjudicator reads only the per-ply check flags, so this
 * white-box test marks the black moves of a perpetual-check cycle as checks too. */
static void test_mutual_perpetual_check_draws(void **state) {
  (void)state;
  th_parse(&pos, "4k4/R8/9/9/9/9/9/9/9/3K5 w - - 0 1");
  th_play(&pos, "a8a9 e9e8 a9a8 e8e9 a8a9 e9e8 a9a8 e8e9");
  for (int j = 1; j < pos.ply; j += 2) pos.hist[j].check = 1;
  expect(XQ_RESULT_DRAW, XQ_REASON_REPETITION);
}

/* Shuffles around a capture: the occurrences before it differ in material and do not
 * count towards the repetition after it. */
static void test_capture_resets_repetition(void **state) {
  (void)state;
  th_parse(&pos, "4k4/9/9/9/R8/9/9/p8/9/3K5 w - - 0 1");
  th_play(&pos, "a5a6 e9e8 a6a5 e8e9 a5a2 e9e8 a2a5 e8e9 a5a6 e9e8 a6a5 e8e9");
  /* a2 held a black pawn, captured on the 5th ply: after it the position occurred twice. */
  expect(XQ_RESULT_NONE, XQ_REASON_NONE);
}

static void test_no_capture_rule(void **state) {
  (void)state;
  th_parse(&pos, "4k4/9/9/9/R8/9/9/9/9/3K5 w - - 119 80");
  expect(XQ_RESULT_NONE, XQ_REASON_NONE);
  th_play(&pos, "a5a4");
  expect(XQ_RESULT_DRAW, XQ_REASON_NO_CAPTURE);
  /* A capture resets the counter. */
  th_parse(&pos, "4k4/9/9/9/R8/p8/9/9/9/3K5 w - - 119 80");
  th_play(&pos, "a5a4");
  assert_int_equal(pos.rule60, 0);
  expect(XQ_RESULT_NONE, XQ_REASON_NONE);
  /* Mate on the 120th ply is still mate. */
  th_parse(&pos, "3k5/1R7/9/9/9/9/9/9/9/R3K4 w - - 119 80");
  th_play(&pos, "a0a9");
  expect(XQ_RESULT_RED_WIN, XQ_REASON_CHECKMATE);
}

static void test_length_cap(void **state) {
  (void)state;
  th_parse(&pos, XQ_START_FEN);
  th_play(&pos, "h2e2 h9g7 h0g2 i9h9");
  xq_outcome_t o = xq_adjudicate(&pos, 5);
  assert_int_equal(o.result, XQ_RESULT_NONE);
  th_play(&pos, "i0h0");
  o = xq_adjudicate(&pos, 5);
  assert_int_equal(o.result, XQ_RESULT_DRAW);
  assert_int_equal(o.reason, XQ_REASON_LENGTH_CAP);
}

static void test_no_attackers(void **state) {
  (void)state;
  th_parse(&pos, "3k5/4a4/4b4/9/9/9/9/4B4/4A4/4K4 w - - 0 1");
  expect(XQ_RESULT_DRAW, XQ_REASON_NO_ATTACKERS);
  /* reached on the ply of the length cap: the rules' reason, as the ingest check sees it */
  th_play(&pos, "e0f0");
  xq_outcome_t o = xq_adjudicate(&pos, 1);
  assert_int_equal(o.result, XQ_RESULT_DRAW);
  assert_int_equal(o.reason, XQ_REASON_NO_ATTACKERS);
  th_parse(&pos, "3k5/4a4/4b4/9/9/9/P8/4B4/4A4/4K4 w - - 0 1");
  expect(XQ_RESULT_NONE, XQ_REASON_NONE);
}

/* The material count scores length-capped games (a training option, never the rules). */
static void test_material(void **state) {
  (void)state;
  th_parse(&pos, XQ_START_FEN);
  assert_int_equal(xq_material_balance(pos.board), 0);
  assert_int_equal(xq_material_result(pos.board, 3.0), XQ_RESULT_DRAW);
  /* Red without its a0 rook and h2 cannon, Black without two pawns: -27 + 4 half-pawns. */
  th_parse(&pos, "rnbakabnr/9/1c5c1/4p1p1p/9/9/P1P1P1P1P/1C7/9/1NBAKABNR w - - 0 1");
  assert_int_equal(xq_material_balance(pos.board), -23);
  assert_int_equal(xq_material_result(pos.board, 11.5), XQ_RESULT_BLACK_WIN);
  assert_int_equal(xq_material_result(pos.board, 12.0), XQ_RESULT_DRAW);
  assert_int_equal(xq_material_result(pos.board, 0.0), XQ_RESULT_DRAW);
  assert_int_equal(xq_material_result(pos.board, -5.0), XQ_RESULT_DRAW);
  /* A red horse and two advisors against a black elephant: +16 - 4 = 12 half-pawns. */
  th_parse(&pos, "2b1k4/9/9/9/9/9/9/4N4/4K4/3A1A3 w - - 0 1");
  assert_int_equal(xq_material_balance(pos.board), 12);
  assert_int_equal(xq_material_result(pos.board, 6.0), XQ_RESULT_RED_WIN);
  assert_int_equal(xq_material_result(pos.board, 6.5), XQ_RESULT_DRAW);
}

static void test_names(void **state) {
  (void)state;
  assert_string_equal(xq_result_name(XQ_RESULT_RED_WIN), "1-0");
  assert_string_equal(xq_result_name(XQ_RESULT_DRAW), "1/2-1/2");
  assert_string_equal(xq_reason_name(XQ_REASON_PERPETUAL_CHECK), "perpetual-check");
  assert_string_equal(xq_reason_name((xq_reason_t)99), "unknown");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_mate_and_stalemate),
      cmocka_unit_test(test_repetition_draw),
      cmocka_unit_test(test_perpetual_check_loses),
      cmocka_unit_test(test_mutual_perpetual_check_draws),
      cmocka_unit_test(test_capture_resets_repetition),
      cmocka_unit_test(test_no_capture_rule),
      cmocka_unit_test(test_length_cap),
      cmocka_unit_test(test_no_attackers),
      cmocka_unit_test(test_material),
      cmocka_unit_test(test_names),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
