/*
 * test_board.c: make/unmake and the incremental Zobrist key: along random games the key
 * equals a full recomputation, unmake restores every field, piece counts and king squares
 * stay right, and move notation round-trips.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "rules/movegen.h"
#include "rules/rules.h"
#include "test_helpers.h"

static void check_consistent(const xq_pos_t *pos) {
  assert_int_equal(pos->key, xq_pos_compute_key(pos));
  int count[16] = {0};
  for (int sq = 0; sq < XQ_SQUARES; sq++) count[pos->board[sq]]++;
  for (int pc = 1; pc < 16; pc++)
    if (pc != 8) assert_int_equal(count[pc], pos->count[pc]);
  assert_int_equal(pos->board[pos->king[XQ_RED]], xq_pc_make(XQ_RED, XQ_KING));
  assert_int_equal(pos->board[pos->king[XQ_BLACK]], xq_pc_make(XQ_BLACK, XQ_KING));
  assert_int_equal(pos->in_check, xq_in_check(pos));
}

static void test_make_unmake_random_games(void **state) {
  (void)state;
  static xq_pos_t pos, copy;
  uint64_t rng = 7;
  for (int g = 0; g < 100; g++) {
    xq_pos_startpos(&pos);
    for (int ply = 0; ply < 300; ply++) {
      if (xq_adjudicate(&pos, 0).result != XQ_RESULT_NONE) break;
      xq_move_t moves[XQ_MAX_MOVES];
      int n = xq_gen_legal(&pos, moves);
      /* Every legal move made and unmade restores the position exactly. */
      memcpy(&copy, &pos, sizeof pos);
      for (int i = 0; i < n; i++) {
        xq_pos_make(&pos, moves[i]);
        check_consistent(&pos);
        assert_false(xq_attacked(&pos, pos.king[pos.side ^ 1], pos.side));
        xq_pos_unmake(&pos);
        assert_memory_equal(pos.board, copy.board, sizeof pos.board);
        assert_int_equal(pos.key, copy.key);
        assert_int_equal(pos.rule60, copy.rule60);
        assert_int_equal(pos.in_check, copy.in_check);
      }
      rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
      xq_pos_make(&pos, moves[rng % (uint64_t)n]);
    }
  }
}

static void test_side_key_and_transposition(void **state) {
  (void)state;
  static xq_pos_t a, b;
  th_parse(&a, XQ_START_FEN);
  th_parse(&b, "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR b - - 0 1");
  assert_int_equal(a.key ^ b.key, xq_zobrist_side());
  /* Two move orders reaching the same position give the same key. */
  th_parse(&a, XQ_START_FEN);
  th_parse(&b, XQ_START_FEN);
  th_play(&a, "h2e2 h9g7 b0c2");
  th_play(&b, "b0c2 h9g7 h2e2");
  assert_int_equal(a.key, b.key);
  char fa[XQ_FEN_MAX], fb[XQ_FEN_MAX];
  xq_fen_print(&a, fa);
  xq_fen_print(&b, fb);
  assert_string_equal(fa, fb);
  assert_string_equal(fa, "rnbakab1r/9/1c4nc1/p1p1p1p1p/9/9/P1P1P1P1P/1CN1C4/9/R1BAKABNR b - - 3 2");
}

static void test_notation(void **state) {
  (void)state;
  xq_move_t m;
  char buf[5];
  assert_int_equal(xq_move_parse("h2e2", &m, NULL), 0);
  assert_int_equal(xq_mv_from(m), xq_sq(7, 2));
  assert_int_equal(xq_mv_to(m), xq_sq(4, 2));
  xq_move_print(m, buf);
  assert_string_equal(buf, "h2e2");
  static const char *bad[] = {"", "h2", "h2e", "j2e2", "h2e:", "h2h2", "h2e22", "zzzz"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    xq_errbuf_t eb = {{0}};
    assert_int_equal(xq_move_parse(bad[i], &m, &eb), XQ_EMOVE);
    assert_true(eb.msg[0] != 0);
  }
  static xq_pos_t pos;
  xq_pos_startpos(&pos);
  /* Cannon captures over exactly one screen: h2xh9 (screen h7) is legal, h2xh7 is not. */
  assert_int_equal(xq_move_parse_legal(&pos, "h2h9", &m, NULL), 0);
  assert_int_equal(xq_move_parse_legal(&pos, "b2b9", &m, NULL), 0);
  static const char *illegal[] = {"h2h7", "h2h8", "e3e5", "e3d3", "e0e2", "a5a6", "a9a8"};
  for (size_t i = 0; i < sizeof illegal / sizeof illegal[0]; i++) {
    xq_errbuf_t eb = {{0}};
    if (xq_move_parse_legal(&pos, illegal[i], &m, &eb) != XQ_EMOVE)
      fail_msg("%s accepted in the start position", illegal[i]);
    assert_non_null(strstr(eb.msg, "not a legal move"));
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_make_unmake_random_games),
      cmocka_unit_test(test_side_key_and_transposition),
      cmocka_unit_test(test_notation),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
