/*
 * test_nn_encode.c: input planes and legal masks, from the side to move's view: the
 * start position looks the same to both sides, every legal move has a distinct policy
 * index that maps back to it, the global planes (side, no-capture, repetition) work, and
 * the attack planes of input version 2 are the mover's and the opponent's attack maps.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>

#include "nn/encode.h"
#include "rules/movegen.h"
#include "rules/policy_index.h"
#include "test_helpers.h"

static float planes[NN_INPUT_PLANES_MAX * NN_HW], planes2[NN_INPUT_PLANES_MAX * NN_HW];

static void test_start_symmetric(void **state) {
  (void)state;
  static xq_pos_t pos;
  xq_pos_startpos(&pos);
  nn_encode(planes, &pos, NN_INPUT_PLANES);
  /* Red's king on e0 (square 4): own king plane. */
  assert_true(planes[0 * NN_HW + 4] == 1.0f);
  assert_true(planes[7 * NN_HW + 85] == 1.0f); /* opponent king on e9 */
  assert_true(planes[14 * NN_HW] == 1.0f);
  assert_true(planes[17 * NN_HW + 50] == 1.0f);
  double sum = 0;
  for (int i = 0; i < 14 * NN_HW; i++) sum += planes[i];
  assert_true(sum == 32.0);
  /* The start position is symmetric under the 180-degree rotation, so Black to move
   * sees exactly the same piece planes as Red; only plane 14 differs. */
  th_parse(&pos, "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR b - - 0 1");
  nn_encode(planes2, &pos, NN_INPUT_PLANES);
  assert_memory_equal(planes, planes2, 14 * NN_HW * sizeof(float));
  assert_true(planes2[14 * NN_HW] == 0.0f);
}

static void test_black_view(void **state) {
  (void)state;
  static xq_pos_t pos;
  xq_pos_startpos(&pos);
  th_play(&pos, "h2e2");
  nn_encode(planes, &pos, NN_INPUT_PLANES);
  /* Black to move: its own cannon on h7 (square 7*9+7=70) appears at 89-70 = 19 (b2). */
  assert_true(planes[5 * NN_HW + 19] == 1.0f);
  /* Red's cannon moved to e2 (square 22) appears at 67 in the opponent cannon plane. */
  assert_true(planes[12 * NN_HW + 67] == 1.0f);
  assert_true(planes[14 * NN_HW + 3] == 0.0f);
}

static void test_legal_mask(void **state) {
  (void)state;
  static xq_pos_t pos;
  uint8_t mask[NN_POLICY_SIZE];
  int idx[XQ_MAX_MOVES];
  xq_move_t mv[XQ_MAX_MOVES];
  xq_pos_startpos(&pos);
  th_play(&pos, "h2e2 h9g7 h0g2");
  for (int ply = 0; ply < 2; ply++) {
    int n = nn_encode_legal(&pos, mask, idx, mv);
    assert_true(n > 0);
    int set = 0;
    for (int k = 0; k < NN_POLICY_SIZE; k++) set += mask[k];
    assert_int_equal(set, n); /* distinct indices */
    for (int i = 0; i < n; i++) assert_int_equal(nn_policy_move_for(idx[i], pos.side), mv[i]);
    xq_pos_make(&pos, mv[0]);
  }
}

static void test_global_planes(void **state) {
  (void)state;
  static xq_pos_t pos;
  th_parse(&pos, "4k4/9/9/9/9/9/9/9/4A4/3AK4 w - - 60 40");
  nn_encode(planes, &pos, NN_INPUT_PLANES);
  assert_true(fabsf(planes[15 * NN_HW] - 0.5f) < 1e-7f);
  assert_true(planes[16 * NN_HW] == 0.0f);
  th_play(&pos, "e0f0 e9d9 f0e0 d9e9");
  nn_encode(planes, &pos, NN_INPUT_PLANES);
  assert_true(planes[16 * NN_HW + 7] == 1.0f); /* back where it started: a repetition */
  assert_true(nn_encode_is_repetition(&pos));
}

static void test_attack_planes(void **state) {
  (void)state;
  static xq_pos_t pos;
  xq_pos_startpos(&pos);
  for (int i = 0; i < NN_INPUT_PLANES_MAX * NN_HW; i++) planes[i] = 7.0f;
  nn_encode(planes, &pos, NN_INPUT_PLANES); /* a version-1 net's 18 planes: no more */
  for (int i = NN_INPUT_PLANES * NN_HW; i < NN_INPUT_PLANES_MAX * NN_HW; i++)
    assert_true(planes[i] == 7.0f);
  nn_encode(planes, &pos, NN_INPUT_PLANES_MAX);
  const float *mine = planes + 18 * NN_HW, *theirs = planes + 19 * NN_HW;
  /* Red's cannon on b3 jumps Black's cannon on b8 to b9 (square 73); Black's cannon on b8
   * jumps Red's to b2 (square 10), which nothing of Red's attacks. */
  assert_true(mine[73] == 1.0f && theirs[73] == 0.0f);
  assert_true(mine[10] == 0.0f && theirs[10] == 1.0f);
  assert_true(mine[4 * 9 + 4] == 1.0f); /* the pawn on e4 attacks e5 */
  uint8_t map[XQ_SQUARES];
  xq_attack_map(pos.board, XQ_RED, map);
  for (int sq = 0; sq < XQ_SQUARES; sq++) assert_true(mine[sq] == map[sq]);
  /* The first 18 planes do not change with the attack planes. */
  nn_encode(planes2, &pos, NN_INPUT_PLANES);
  assert_memory_equal(planes, planes2, NN_INPUT_PLANES * NN_HW * sizeof(float));
  /* Black to move in the (symmetric) start position sees the same attack planes: its
   * own are the mover's, turned to the mover's frame. */
  th_parse(&pos, "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR b - - 0 1");
  nn_encode(planes2, &pos, NN_INPUT_PLANES_MAX);
  assert_memory_equal(planes + 18 * NN_HW, planes2 + 18 * NN_HW, 2 * NN_HW * sizeof(float));
  /* After h2e2 it is Black's move: Black's map, turned 180 degrees, is plane 18. */
  xq_pos_startpos(&pos);
  th_play(&pos, "h2e2");
  nn_encode(planes, &pos, NN_INPUT_PLANES_MAX);
  xq_attack_map(pos.board, XQ_BLACK, map);
  for (int sq = 0; sq < XQ_SQUARES; sq++) assert_true(mine[xq_sq_flip(sq)] == map[sq]);
  xq_attack_map(pos.board, XQ_RED, map);
  for (int sq = 0; sq < XQ_SQUARES; sq++) assert_true(theirs[xq_sq_flip(sq)] == map[sq]);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_start_symmetric),
      cmocka_unit_test(test_black_view),
      cmocka_unit_test(test_legal_mask),
      cmocka_unit_test(test_global_planes),
      cmocka_unit_test(test_attack_planes),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
