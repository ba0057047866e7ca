/*
 * test_notation.c: WXF and Chinese move notation (rules/notation.h) against hand-checked
 * positions: the opening moves every Xiangqi book writes (炮二平五 = C2=5 = h2e2, 马8进7 =
 * H8+7 = h9g7), Black's own file count, doubled pieces (前炮/后炮, +C/-C), three pawns on one
 * file (前/中/后) and pawns doubled on two files (前七进一), ambiguous and illegal texts, and a
 * round trip of every legal move of many positions through both notations.
 *
 * The expected moves were worked out by hand from the notation's definition (files counted
 * 1-9 from the mover's right hand; forward numbers are distances for straight movers and
 * files for diagonal ones), not from the code.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "rules/movegen.h"
#include "test_helpers.h"

/* Asserts that text parses in pos to the ICCS move want. */
static void expect_move(xq_pos_t *pos, const char *text, const char *want) {
  xq_move_t m;
  xq_errbuf_t eb = {{0}};
  char got[5];
  if (xq_move_parse_any(pos, text, &m, &eb)) fail_msg("'%s' refused: %s (want %s)", text, eb.msg, want);
  xq_move_print(m, got);
  if (strcmp(got, want)) fail_msg("'%s' read as %s, want %s", text, got, want);
}

/* Asserts that text is refused in pos and the reason contains part. */
static void expect_refused(xq_pos_t *pos, const char *text, const char *part) {
  xq_move_t m;
  xq_errbuf_t eb = {{0}};
  if (!xq_move_parse_any(pos, text, &m, &eb)) {
    char got[5];
    xq_move_print(m, got);
    fail_msg("'%s' accepted as %s, want a refusal", text, got);
  }
  if (!strstr(eb.msg, part)) fail_msg("'%s' refused with '%s', want '%s' in it", text, eb.msg, part);
}

/* Asserts that the ICCS move iccs of pos is written wxf and cn. */
static void expect_text(xq_pos_t *pos, const char *iccs, const char *wxf, const char *cn) {
  xq_move_t m;
  char buf[XQ_MOVE_TEXT_MAX];
  if (xq_move_parse_legal(pos, iccs, &m, NULL)) fail_msg("%s is not legal here", iccs);
  assert_int_equal(xq_move_to_wxf(pos, m, buf, sizeof buf), 0);
  if (strcmp(buf, wxf)) fail_msg("%s written '%s' in WXF, want '%s'", iccs, buf, wxf);
  assert_int_equal(xq_move_to_chinese(pos, m, buf, sizeof buf), 0);
  if (strcmp(buf, cn)) fail_msg("%s written '%s' in Chinese, want '%s'", iccs, buf, cn);
}

static void test_start_red(void **state) {
  (void)state;
  static xq_pos_t pos;
  xq_pos_startpos(&pos);
  expect_move(&pos, "C2=5", "h2e2");
  expect_move(&pos, "C2.5", "h2e2");
  expect_move(&pos, "c2=5", "h2e2");
  expect_move(&pos, "炮二平五", "h2e2");
  expect_move(&pos, "砲二平五", "h2e2");
  expect_move(&pos, "C8=5", "b2e2");
  expect_move(&pos, "H2+3", "h0g2");
  expect_move(&pos, "马二进三", "h0g2");
  expect_move(&pos, "傌八进七", "b0c2");
  expect_move(&pos, "R1+1", "i0i1");
  expect_move(&pos, "车一进一", "i0i1");
  expect_move(&pos, "P7+1", "c3c4");
  expect_move(&pos, "兵七进一", "c3c4");
  expect_move(&pos, "E3+5", "g0e2");
  expect_move(&pos, "相三进五", "g0e2");
  expect_move(&pos, "A4+5", "f0e1");
  expect_move(&pos, "仕四进五", "f0e1");
  expect_move(&pos, "K5+1", "e0e1");
  expect_move(&pos, "帅五进一", "e0e1");
  expect_move(&pos, "C2+7", "h2h9"); /* the cannon takes the horse over the screen on h7 */
  expect_move(&pos, " h2e2 ", "h2e2");
  expect_move(&pos, "H2-E2", "h2e2");
  expect_move(&pos, "h2-e2", "h2e2");
  expect_text(&pos, "h2e2", "C2=5", "炮二平五");
  expect_text(&pos, "h0g2", "H2+3", "马二进三");
  expect_text(&pos, "g0e2", "E3+5", "相三进五");
  expect_text(&pos, "f0e1", "A4+5", "仕四进五");
  expect_text(&pos, "i0i2", "R1+2", "车一进二");
  expect_refused(&pos, "C2=9", "no legal move of Red fits"); /* the b2 cannon is in the way */
  expect_refused(&pos, "C2+8", "no legal move"); /* eight ranks up is off the board */
  expect_refused(&pos, "P5=4", "no legal move");               /* no sideways before the river */
  expect_refused(&pos, "H2+4", "no legal move");
  expect_refused(&pos, "X2=5", "not a move");
  expect_refused(&pos, "炮二平", "not a move");
  expect_refused(&pos, "h2e9", "not a legal move");
  expect_refused(&pos, "", "no move");
}

static void test_start_black(void **state) {
  (void)state;
  static xq_pos_t pos;
  xq_pos_startpos(&pos);
  th_play(&pos, "h2e2");
  /* Black counts files from its own right hand: its h-file horse is on its file 8. */
  expect_move(&pos, "H8+7", "h9g7");
  expect_move(&pos, "马8进7", "h9g7");
  expect_move(&pos, "馬８進７", "h9g7");
  expect_move(&pos, "马八进七", "h9g7"); /* Red's numerals are read for Black too */
  expect_move(&pos, "C8=5", "h7e7");
  expect_move(&pos, "炮8平5", "h7e7");
  expect_move(&pos, "砲８平５", "h7e7");
  expect_move(&pos, "C2=5", "b7e7");
  expect_move(&pos, "P3+1", "c6c5");
  expect_move(&pos, "卒3进1", "c6c5");
  expect_move(&pos, "R9+1", "i9i8");
  expect_move(&pos, "車9進1", "i9i8");
  expect_move(&pos, "E3+5", "c9e7");
  expect_move(&pos, "象3进5", "c9e7");
  expect_move(&pos, "A6+5", "f9e8");
  expect_move(&pos, "将5进1", "e9e8");
  expect_text(&pos, "h9g7", "H8+7", "马8进7");
  expect_text(&pos, "b7e7", "C2=5", "炮2平5");
  expect_text(&pos, "c6c5", "P3+1", "卒3进1");
  expect_text(&pos, "i9i7", "R9+2", "车9进2");
  expect_text(&pos, "e9e8", "K5+1", "将5进1");
  expect_refused(&pos, "C5=4", "no legal move of Black"); /* no cannon on Black's file 5 */
}

static void test_doubled_cannons(void **state) {
  (void)state;
  static xq_pos_t pos;
  /* Red cannons on e4 (front) and e2 (rear), the king behind them on e0. */
  th_parse(&pos, "3k5/9/9/9/9/4C4/9/4C4/9/4K4 w - - 0 1");
  expect_move(&pos, "+C=4", "e4f4");
  expect_move(&pos, "C+=4", "e4f4");
  expect_move(&pos, "-C=4", "e2f2");
  expect_move(&pos, "前炮平四", "e4f4");
  expect_move(&pos, "后炮平四", "e2f2");
  expect_move(&pos, "後砲平四", "e2f2");
  expect_move(&pos, "-C+1", "e2e3");
  expect_move(&pos, "+C+1", "e4e5");
  expect_refused(&pos, "C5=4", "ambiguous");
  expect_refused(&pos, "炮五平四", "ambiguous");
  expect_text(&pos, "e4f4", "+C=4", "前炮平四");
  expect_text(&pos, "e2e1", "-C-1", "后炮退一");
  /* Black cannons on e5 (front: nearer Red) and e7 (rear). */
  th_parse(&pos, "4k4/9/4c4/9/4c4/9/9/9/9/3K5 b - - 0 1");
  expect_move(&pos, "+C=4", "e5d5");
  expect_move(&pos, "前炮平4", "e5d5");
  expect_move(&pos, "后炮平4", "e7d7");
  expect_move(&pos, "-C-1", "e7e8");
  expect_move(&pos, "后炮退1", "e7e8");
  expect_text(&pos, "e5e4", "+C+1", "前炮进1");
  expect_text(&pos, "e7f7", "-C=6", "后炮平6");
}

static void test_doubled_pawns(void **state) {
  (void)state;
  static xq_pos_t pos;
  /* Red pawns c7, c6, c5 (three on its file 7) and g6, g5 (two on its file 3). */
  th_parse(&pos, "5k3/9/2P6/2P3P2/2P3P2/9/9/9/9/4K4 w - - 0 1");
  expect_move(&pos, "中兵平六", "c6d6");
  expect_move(&pos, "=P=6", "c6d6");
  expect_refused(&pos, "前兵进一", "ambiguous"); /* c7c8 and g6g7 */
  expect_refused(&pos, "+P+1", "ambiguous");
  expect_move(&pos, "前七进一", "c7c8");
  expect_move(&pos, "前兵七进一", "c7c8");
  expect_move(&pos, "+P7+1", "c7c8");
  expect_move(&pos, "前三进一", "g6g7");
  expect_move(&pos, "-P3=4", "g5f5");
  expect_move(&pos, "后兵平八", "c5b5");
  expect_text(&pos, "c7c8", "+P7+1", "前七进一");
  expect_text(&pos, "g6g7", "+P3+1", "前三进一");
  expect_text(&pos, "c6d6", "=P=6", "中兵平六");
  expect_text(&pos, "c5b5", "-P=8", "后兵平八");
  /* Four pawns on one file: numbered from the front, 一兵 .. 四兵. */
  th_parse(&pos, "5k3/9/2P6/2P6/2P6/2P6/9/9/9/4K4 w - - 0 1");
  /* Pawns c7, c6, c5 and c4 (not yet across the river, so it cannot step aside). */
  expect_move(&pos, "二兵平八", "c6b6");
  expect_move(&pos, "2P=8", "c6b6");
  expect_text(&pos, "c5d5", "3P=6", "三兵平六");
  expect_refused(&pos, "4P=6", "no legal move");
  expect_text(&pos, "c7c8", "+P+1", "前兵进一");
  /* Black pawns c3 (front: nearer Red's side) and c4, crossed the river. */
  th_parse(&pos, "4k4/9/9/9/9/2p6/2p6/9/9/3K5 b - - 0 1");
  expect_move(&pos, "前卒平4", "c3d3");
  expect_move(&pos, "+P=4", "c3d3");
  expect_move(&pos, "后卒平2", "c4b4");
  expect_text(&pos, "c3c2", "+P+1", "前卒进1");
  expect_text(&pos, "c4d4", "-P=4", "后卒平4");
}

static void test_doubled_advisors(void **state) {
  (void)state;
  static xq_pos_t pos;
  /* Red advisors d2 (front) and d0 (rear) on Red's file 6; both can reach e1. */
  th_parse(&pos, "3k5/9/9/9/9/9/9/3A5/9/3AK4 w - - 0 1");
  expect_move(&pos, "+A-5", "d2e1");
  expect_move(&pos, "-A+5", "d0e1");
  expect_move(&pos, "A6+5", "d0e1"); /* only one of them goes forward */
  expect_text(&pos, "d2e1", "+A-5", "前仕退五");
}

/* Every legal move of pos, written in WXF and in Chinese, reads back as itself. */
static void round_trip(xq_pos_t *pos) {
  xq_move_t moves[XQ_MAX_MOVES];
  int n = xq_gen_legal(pos, moves);
  for (int i = 0; i < n; i++) {
    char text[XQ_MOVE_TEXT_MAX], iccs[5];
    xq_move_print(moves[i], iccs);
    for (int k = 0; k < 2; k++) {
      int rc = k ? xq_move_to_chinese(pos, moves[i], text, sizeof text)
                 : xq_move_to_wxf(pos, moves[i], text, sizeof text);
      assert_int_equal(rc, 0);
      xq_move_t back;
      xq_errbuf_t eb = {{0}};
      if (xq_move_parse_any(pos, text, &back, &eb))
        fail_msg("%s written '%s' is refused: %s", iccs, text, eb.msg);
      if (back != moves[i]) fail_msg("%s written '%s' reads back as another move", iccs, text);
    }
  }
}

static void test_round_trip(void **state) {
  (void)state;
  static xq_pos_t pos;
  static const char *fens[] = {
      XQ_START_FEN,
      "5k3/9/2P6/2P3P2/2P3P2/9/9/9/9/4K4 w - - 0 1",
      "4k4/9/9/9/9/2p6/2p6/9/9/3K5 b - - 0 1",
      "4k4/9/4c4/9/4c4/9/9/9/9/3K5 b - - 0 1",
      "2bakab2/9/2n1c1n2/p1p1p1p1p/9/2P3P2/P3P3P/1C2B2C1/9/RNBAKA1NR w - - 0 1",
  };
  for (size_t i = 0; i < sizeof fens / sizeof fens[0]; i++) {
    th_parse(&pos, fens[i]);
    round_trip(&pos);
  }
  /* And along random games, both sides, doubled pieces appearing as they will. */
  uint32_t rng = 12345;
  for (int g = 0; g < 20; g++) {
    xq_pos_startpos(&pos);
    for (int ply = 0; ply < 120; ply++) {
      round_trip(&pos);
      xq_move_t moves[XQ_MAX_MOVES];
      int n = xq_gen_legal(&pos, moves);
      if (!n) break;
      rng = rng * 1103515245u + 12345u;
      xq_pos_make(&pos, moves[(rng >> 16) % (uint32_t)n]);
    }
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_start_red),       cmocka_unit_test(test_start_black),
      cmocka_unit_test(test_doubled_cannons), cmocka_unit_test(test_doubled_pawns),
      cmocka_unit_test(test_doubled_advisors), cmocka_unit_test(test_round_trip),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
