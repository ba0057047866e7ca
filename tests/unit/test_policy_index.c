/*
 * test_policy_index.c: the 2086-move policy list: size, that index and move are inverse
 * maps, that the flip and mirror maps are bijections (involutions) that agree with
 * flipping and mirroring the squares, and that every legal move of many random positions
 * has an index.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "rules/movegen.h"
#include "rules/policy_index.h"
#include "rules/rules.h"
#include "test_helpers.h"

static void test_list_and_inverse(void **state) {
  (void)state;
  int count = 0;
  for (int from = 0; from < XQ_SQUARES; from++)
    for (int to = 0; to < XQ_SQUARES; to++) {
      int i = xq_policy_index(xq_mv_make(from, to));
      if (i < 0) continue;
      count++;
      assert_int_equal(xq_policy_move(i), xq_mv_make(from, to));
    }
  assert_int_equal(count, XQ_POLICY_SIZE);
  for (int i = 0; i < XQ_POLICY_SIZE; i++) {
    assert_int_equal(xq_policy_index(xq_policy_move(i)), i);
    if (i) assert_true(xq_policy_move(i - 1) < xq_policy_move(i) ||
                       xq_mv_from(xq_policy_move(i - 1)) < xq_mv_from(xq_policy_move(i)));
  }
  assert_int_equal(xq_policy_index(0xFFFF), -1);
  assert_int_equal(xq_policy_index(xq_mv_make(0, 10)), -1); /* a0-b1: no piece moves so */
  assert_true(xq_policy_index(xq_mv_make(xq_sq(2, 0), xq_sq(4, 2))) >= 0); /* elephant c0-e2 */
  assert_true(xq_policy_index(xq_mv_make(xq_sq(3, 0), xq_sq(4, 1))) >= 0); /* advisor d0-e1 */
  assert_int_equal(xq_policy_index(xq_mv_make(xq_sq(2, 4), xq_sq(4, 6))), -1); /* no river crossing */
}

static void check_bijection(int (*map)(int), int (*sqmap)(int), const char *name) {
  static unsigned char seen[XQ_POLICY_SIZE];
  memset(seen, 0, sizeof seen);
  for (int i = 0; i < XQ_POLICY_SIZE; i++) {
    int j = map(i);
    if (j < 0 || j >= XQ_POLICY_SIZE) fail_msg("%s(%d) = %d is out of range", name, i, j);
    if (seen[j]++) fail_msg("%s maps two indices to %d", name, j);
    if (map(j) != i) fail_msg("%s is not an involution at %d", name, i);
    xq_move_t m = xq_policy_move(i), mj = xq_policy_move(j);
    if (xq_mv_from(mj) != sqmap(xq_mv_from(m)) || xq_mv_to(mj) != sqmap(xq_mv_to(m)))
      fail_msg("%s(%d) does not map the squares", name, i);
  }
}

static void test_flip_and_mirror(void **state) {
  (void)state;
  check_bijection(xq_policy_flip, xq_sq_flip, "flip");
  check_bijection(xq_policy_mirror, xq_sq_mirror, "mirror");
  assert_int_equal(xq_sq_flip(0), 89);
  assert_int_equal(xq_sq_mirror(xq_sq(0, 3)), xq_sq(8, 3));
  assert_int_equal(xq_sq_mirror(xq_sq(4, 7)), xq_sq(4, 7));
  /* Black's first moves map onto Red's: h7e7 seen by Black is b2e2 from Red's side. */
  xq_move_t black = xq_mv_make(xq_sq(7, 7), xq_sq(4, 7));
  assert_int_equal(xq_policy_index_for(black, XQ_BLACK),
                   xq_policy_index(xq_mv_make(xq_sq(1, 2), xq_sq(4, 2))));
}

/* Random games: every legal move has an index; flipped positions' moves too. */
static void test_legal_moves_indexed(void **state) {
  (void)state;
  static xq_pos_t pos;
  uint64_t rng = 42;
  int positions = 0;
  for (int g = 0; g < 200; g++) {
    xq_pos_startpos(&pos);
    for (int ply = 0; ply < 200; ply++) {
      if (xq_adjudicate(&pos, 0).result != XQ_RESULT_NONE) break;
      xq_move_t moves[XQ_MAX_MOVES];
      int n = xq_gen_legal(&pos, moves);
      for (int i = 0; i < n; i++) {
        int idx = xq_policy_index_for(moves[i], pos.side);
        if (idx < 0) fail_msg("legal move has no policy index");
        assert_true(xq_policy_index(moves[i]) >= 0);
      }
      positions++;
      rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
      xq_pos_make(&pos, moves[rng % (uint64_t)n]);
    }
  }
  assert_true(positions > 10000);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_list_and_inverse),
      cmocka_unit_test(test_flip_and_mirror),
      cmocka_unit_test(test_legal_moves_indexed),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
