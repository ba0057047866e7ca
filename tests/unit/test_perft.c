/*
 * test_perft.c: perft of the start position (depths 1-4) and of hand-made positions for
 * every special rule. The expected counts of the hand-made positions come from
 * fairy-stockfish (an independent engine), not from our own generator.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "rules/movegen.h"
#include "test_helpers.h"

static xq_pos_t pos;

static void test_startpos(void **state) {
  (void)state;
  static const uint64_t expected[] = {1, 44, 1920, 79666, 3290240};
  th_parse(&pos, XQ_START_FEN);
  for (int d = 1; d <= 4; d++) assert_int_equal(xq_perft(&pos, d), expected[d]);
  /* xq_pos_startpos builds the same position as the FEN. */
  xq_pos_t sp;
  xq_pos_startpos(&sp);
  assert_int_equal(sp.key, pos.key);
  assert_memory_equal(sp.board, pos.board, sizeof sp.board);
}

static const struct {
  const char *what, *fen;
  uint64_t n[3]; /* perft 1, 2, 3 */
} special[] = {
    {"horse legs blocked both ways", "4k4/9/9/9/9/4n4/3N5/9/9/4K4 w - - 0 1", {11, 62, 445}},
    {"horse leg blocked by enemy pawn", "3k5/9/9/9/4p4/4N4/9/9/9/5K3 w - - 0 1", {8, 24, 220}},
    {"elephant eye blocked", "3k5/9/9/9/9/9/9/4B4/3N5/4K4 w - - 0 1", {12, 21, 196}},
    {"elephant may not cross the river", "3k5/9/9/9/9/2B6/9/9/9/4K4 w - - 0 1", {4, 6, 25}},
    {"advisors stay in the palace", "3k5/9/9/9/9/9/9/9/4A4/3AK4 w - - 0 1", {4, 5, 19}},
    {"flying general limits the king", "3k5/9/9/9/9/9/9/9/9/4K4 w - - 0 1", {2, 3, 6}},
    {"cannon captures over one screen", "4k4/9/9/9/1C2p4/9/9/9/9/3K5 w - - 0 1", {14, 44, 736}},
    {"pawns sideways only across the river", "4k4/9/9/P8/9/4P4/9/9/9/3K5 w - - 0 1", {5, 11, 64}},
    {"advisor pinned against its king", "4k4/4a4/4R4/9/9/9/9/9/9/3K5 b - - 0 1", {1, 18, 82}},
    {"checkmate by two rooks", "R2k5/1R7/9/9/9/9/9/9/9/4K4 b - - 0 1", {0, 0, 0}},
    {"stalemate by a pawn", "3k5/4P4/9/9/9/9/9/9/9/5K3 b - - 0 1", {0, 0, 0}},
    {"defenders only", "3k5/4a4/4b4/9/9/9/9/4B4/4A4/4K4 w - - 0 1", {9, 81, 597}},
    {"rook beside the king", "4k4/9/9/9/9/9/9/9/9/3K1R3 w - - 0 1", {14, 17, 266}},
    {"king beside the open file", "3k5/9/4n4/9/9/9/9/9/9/4K4 w - - 0 1", {2, 18, 47}},
    {"cannons and screens", "3k5/9/9/9/9/9/2c6/9/3C5/4K4 w - - 0 1", {19, 332, 5659}},
    {"horse next to an enemy cannon", "5k3/9/9/9/9/9/9/4c4/4N4/3K5 w - - 0 1", {5, 87, 607}},
};

static void test_special_rules(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof special / sizeof special[0]; i++) {
    th_parse(&pos, special[i].fen);
    for (int d = 1; d <= 3; d++) {
      uint64_t got = xq_perft(&pos, d);
      if (got != special[i].n[d - 1])
        fail_msg("%s: %s perft(%d) = %llu, expected %llu", special[i].what, special[i].fen, d,
                 (unsigned long long)got, (unsigned long long)special[i].n[d - 1]);
    }
  }
}

/* Check status: in_check agrees with the move counts above and with gives_check. */
static void test_check_detection(void **state) {
  (void)state;
  th_parse(&pos, "R2k5/1R7/9/9/9/9/9/9/9/4K4 b - - 0 1");
  assert_true(xq_in_check(&pos));
  assert_true(pos.in_check);
  th_parse(&pos, "4k4/4a4/4R4/9/9/9/9/9/9/3K5 b - - 0 1");
  assert_false(xq_in_check(&pos)); /* the advisor blocks the rook */
  th_parse(&pos, "3k5/4P4/9/9/9/9/9/9/9/5K3 b - - 0 1");
  assert_false(xq_in_check(&pos));
  /* Red rook f0 to d0 checks the black king on d9 along the open d-file. */
  th_parse(&pos, "3k5/9/9/9/9/9/9/9/9/4KR3 w - - 0 1");
  xq_move_t m;
  assert_int_equal(xq_move_parse_legal(&pos, "f0f9", &m, NULL), 0);
  assert_true(xq_gives_check(&pos, m));
  assert_int_equal(xq_move_parse_legal(&pos, "f0f5", &m, NULL), 0);
  assert_false(xq_gives_check(&pos, m));
  /* Moving the king off the file exposes nothing; moving onto the open file is illegal. */
  assert_int_equal(xq_move_parse_legal(&pos, "e0d0", &m, NULL), XQ_EMOVE);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_startpos),
      cmocka_unit_test(test_special_rules),
      cmocka_unit_test(test_check_detection),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
