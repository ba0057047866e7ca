/*
 * test_attack_map.c: xq_attack_map, the encoder's attack planes, against the rules' two
 * other views of an attack along random games: xq_attacked square by square (every
 * square, both colours), and the pseudo-legal move generator (a square held by the other
 * colour is attacked exactly when some pseudo-legal move captures there).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <string.h>

#include "rules/movegen.h"
#include "rules/rules.h"
#include "test_helpers.h"

/* Returns the number of attacked squares counted, so the caller can see the test bite. */
static int check_position(xq_pos_t *pos) {
  int marked = 0;
  for (int by = 0; by < 2; by++) {
    uint8_t map[XQ_SQUARES];
    xq_attack_map(pos->board, by, map);
    for (int sq = 0; sq < XQ_SQUARES; sq++) {
      assert_int_equal(map[sq], xq_attacked(pos, sq, by));
      marked += map[sq];
    }
    /* Captures of the generator: the side to move's pseudo-legal moves are by's when by
     * is to move; otherwise the same board with the other side to move. */
    uint8_t side = pos->side;
    pos->side = (uint8_t)by;
    xq_move_t mv[XQ_MAX_MOVES];
    int n = xq_gen_pseudo(pos, mv);
    uint8_t captures[XQ_SQUARES] = {0};
    for (int i = 0; i < n; i++) captures[xq_mv_to(mv[i])] = 1;
    for (int sq = 0; sq < XQ_SQUARES; sq++) {
      int pc = pos->board[sq];
      if (!pc || xq_pc_colour(pc) == by) continue;
      /* The generator lets a king take the other only by its own steps; xq_attacked also
       * counts the facing kings (the flying general), which no legal position shows. */
      if (xq_pc_type(pc) == XQ_KING) continue;
      assert_int_equal(map[sq], captures[sq]);
    }
    pos->side = side;
  }
  return marked;
}

static void test_attack_map_random_games(void **state) {
  (void)state;
  static xq_pos_t pos;
  uint64_t rng = 11;
  long positions = 0, marked = 0;
  for (int g = 0; g < 200; g++) {
    xq_pos_startpos(&pos);
    for (int ply = 0; ply < 200; ply++) {
      marked += check_position(&pos);
      positions++;
      if (xq_adjudicate(&pos, 0).result != XQ_RESULT_NONE) break;
      xq_move_t moves[XQ_MAX_MOVES];
      int n = xq_gen_legal(&pos, moves);
      rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
      xq_pos_make(&pos, moves[rng % (uint64_t)n]);
    }
  }
  assert_true(positions > 10000);
  assert_true(marked > positions * 20); /* the maps are far from empty */
}

/* Hand-checked squares of the start position (Red at the bottom, rank 0) and of facing
 * kings. */
static void test_attack_map_known_squares(void **state) {
  (void)state;
  static xq_pos_t pos;
  uint8_t map[XQ_SQUARES];
  th_parse(&pos, XQ_START_FEN);
  xq_attack_map(pos.board, XQ_RED, map);
  /* The cannon on b3 jumps Black's cannon on b8: b9 (empty) and b10's horse beyond. */
  assert_int_equal(map[xq_sq(1, 8)], 1);
  assert_int_equal(map[xq_sq(1, 9)], 1);
  assert_int_equal(map[xq_sq(1, 6)], 0); /* a cannon's move without a screen is no attack */
  assert_int_equal(map[xq_sq(4, 1)], 1); /* the king defends e2 */
  assert_int_equal(map[xq_sq(3, 0)], 1); /* and its advisor's square */
  assert_int_equal(map[xq_sq(4, 4)], 1); /* the pawn on e4 attacks e5 */
  assert_int_equal(map[xq_sq(3, 3)], 0); /* but not sideways before the river */
  assert_int_equal(map[xq_sq(4, 5)], 0);
  /* Kings facing on an open file attack each other (the flying general). */
  xq_pos_clear(&pos); /* no FEN: a legal position never shows them */
  xq_pos_put(&pos, xq_sq(4, 0), xq_pc_make(XQ_RED, XQ_KING));
  xq_pos_put(&pos, xq_sq(4, 9), xq_pc_make(XQ_BLACK, XQ_KING));
  xq_attack_map(pos.board, XQ_RED, map);
  assert_int_equal(map[xq_sq(4, 9)], 1);
  assert_int_equal(map[xq_sq(4, 5)], 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_attack_map_random_games),
      cmocka_unit_test(test_attack_map_known_squares),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
