/*
 * test_fen.c: FEN round trips and one test per way a FEN can be wrong, each checking that
 * the error message names the problem.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "rules/fen.h"

static xq_pos_t pos;

static void test_round_trip(void **state) {
  (void)state;
  static const char *fens[] = {
      XQ_START_FEN,
      "r1bakab1r/9/1cn3nc1/p1p1p1p1p/9/2P6/P3P1P1P/1C2C1N2/9/RNBAKAB1R b - - 3 7",
      "3k5/4a4/4b4/9/9/9/9/4B4/4A4/4K4 w - - 118 60",
  };
  char buf[XQ_FEN_MAX];
  for (size_t i = 0; i < sizeof fens / sizeof fens[0]; i++) {
    assert_int_equal(xq_fen_parse(&pos, fens[i], NULL), 0);
    xq_fen_print(&pos, buf);
    assert_string_equal(buf, fens[i]);
  }
}

static void test_lenient_forms(void **state) {
  (void)state;
  char buf[XQ_FEN_MAX];
  /* 'r' for Red, E/H letters for elephant/horse, counters omitted. */
  assert_int_equal(xq_fen_parse(&pos, "rheakaehr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RHEAKAEHR r", NULL), 0);
  xq_fen_print(&pos, buf);
  assert_string_equal(buf, XQ_START_FEN);
  assert_int_equal(xq_fen_parse(&pos, "  " XQ_START_FEN "  ", NULL), 0);
}

static const struct {
  const char *fen, *expect; /* expect: a fragment the error message must contain */
} bad[] = {
    {"", "empty"},
    {"rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/RNBAKABNR w", "9 ranks"},
    {"rnbakabnr/9/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w", "more than 10 ranks"},
    {"rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNRR w", "more than 9 files"},
    {"rnbakabnr/8/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w", "has 8 files"},
    {"rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNX w", "unknown piece 'X'"},
    {"rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBA1ABNR w", "red king is missing"},
    {"rnba1abnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w", "black king is missing"},
    {"rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/4K4/RNBAKABNR w", "2 kings"},
    {"3k5/9/9/9/9/9/9/9/9/K8 w", "red king on a0"},
    {"3k5/9/9/9/9/9/9/9/9/A3K4 w", "red advisor on a0"},
    {"3k5/9/9/2B6/9/9/9/9/9/4K4 w", "red elephant on c6"},
    {"3k5/9/9/9/9/9/9/9/3P5/4K4 w", "red pawn on d1"},
    {"RRRk5/9/9/9/9/9/9/9/9/4K4 b", "3 rooks"},
    {"3k5/9/9/9/9/9/PPPPPP3/9/9/4K4 w", "6 pawns"},
    {"4k4/9/9/9/9/9/9/9/9/4K4 w", "black (not to move) is in check"},
    {"3k5/9/9/9/9/9/9/9/9/3RK4 w", "black (not to move) is in check"},
    {"4k4/9/9/9/9/9/9/9/9/3K1r3 b", "red (not to move) is in check"},
    {NULL, NULL},
};

static void test_errors_name_the_problem(void **state) {
  (void)state;
  for (size_t i = 0; bad[i].fen; i++) {
    xq_errbuf_t eb = {{0}};
    int rc = xq_fen_parse(&pos, bad[i].fen, &eb);
    if (rc != XQ_EFEN) fail_msg("accepted a bad FEN: %s", bad[i].fen);
    if (!strstr(eb.msg, bad[i].expect))
      fail_msg("FEN %s: message '%s' does not mention '%s'", bad[i].fen, eb.msg, bad[i].expect);
  }
}

static void test_field_errors(void **state) {
  (void)state;
  static const char *board = "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR";
  static const struct {
    const char *tail, *expect;
  } cases[] = {
      {"", "side to move is missing"},
      {" x", "bad side to move 'x'"},
      {" wb", "single letter"},
      {" w - - x 1", "no-capture counter"},
      {" w - - 5 0", "fullmove"},
      {" w - - 5 1 extra", "unexpected text"},
      {" w - - 99999999999999999999 1", "no-capture counter"},
      {" w - - 5000 1", "out of range"},
  };
  char fen[256];
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    snprintf(fen, sizeof fen, "%s%s", board, cases[i].tail);
    xq_errbuf_t eb = {{0}};
    assert_int_equal(xq_fen_parse(&pos, fen, &eb), XQ_EFEN);
    if (!strstr(eb.msg, cases[i].expect))
      fail_msg("FEN '%s': message '%s' does not mention '%s'", fen, eb.msg, cases[i].expect);
  }
  assert_int_equal(xq_fen_parse(&pos, NULL, NULL), XQ_EFEN);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_round_trip),
      cmocka_unit_test(test_lenient_forms),
      cmocka_unit_test(test_errors_name_the_problem),
      cmocka_unit_test(test_field_errors),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
