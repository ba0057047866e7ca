/*
 * policy_index.c: the 2086-move policy list and its maps. The list is every (from, to)
 * pair that a rook could travel on an empty board (ranks and files, which covers kings,
 * pawns and cannons), a horse could jump, or an elephant or advisor of either colour could
 * step, sorted by from then to. Built once at load time.
 */
#include <assert.h>

#include "rules/policy_index.h"
#include "rules/tables.h"

static xq_move_t index_move[XQ_POLICY_SIZE];
static int16_t move_index[XQ_SQUARES][XQ_SQUARES];
static int16_t flip_map[XQ_POLICY_SIZE];
static int16_t mirror_map[XQ_POLICY_SIZE];

static bool in_list(const uint8_t *list, int step, int to) {
  for (int i = 0; list[i] != XQ_END; i += step)
    if (list[i] == to) return true;
  return false;
}

static bool ever_possible(int from, int to) {
  if (from == to) return false;
  if (xq_sq_file(from) == xq_sq_file(to) || xq_sq_rank(from) == xq_sq_rank(to)) return true;
  if (in_list(xq_horse_[from], 2, to)) return true;
  for (int c = 0; c < 2; c++) {
    if (xq_can_stand_[xq_pc_make(c, XQ_ELEPHANT)][from] && in_list(xq_eleph_[c][from], 2, to))
      return true;
    if (xq_can_stand_[xq_pc_make(c, XQ_ADVISOR)][from] && in_list(xq_advisor_[c][from], 1, to))
      return true;
  }
  return false;
}

/* Runs after tables.c's constructor (constructors with priorities run in order). */
__attribute__((constructor(200))) static void policy_init(void) {
  int n = 0;
  for (int from = 0; from < XQ_SQUARES; from++)
    for (int to = 0; to < XQ_SQUARES; to++) {
      move_index[from][to] = -1;
      if (ever_possible(from, to)) {
        assert(n < XQ_POLICY_SIZE);
        move_index[from][to] = (int16_t)n;
        index_move[n++] = xq_mv_make(from, to);
      }
    }
  assert(n == XQ_POLICY_SIZE);
  for (int i = 0; i < XQ_POLICY_SIZE; i++) {
    int from = xq_mv_from(index_move[i]), to = xq_mv_to(index_move[i]);
    flip_map[i] = move_index[xq_sq_flip(from)][xq_sq_flip(to)];
    mirror_map[i] = move_index[xq_sq_mirror(from)][xq_sq_mirror(to)];
  }
}

int xq_policy_index(xq_move_t m) {
  int from = xq_mv_from(m), to = xq_mv_to(m);
  if (from >= XQ_SQUARES || to >= XQ_SQUARES) return -1;
  return move_index[from][to];
}

xq_move_t xq_policy_move(int i) {
  assert(i >= 0 && i < XQ_POLICY_SIZE);
  return index_move[i];
}

int xq_policy_flip(int i) { return flip_map[i]; }
int xq_policy_mirror(int i) { return mirror_map[i]; }

int xq_policy_index_for(xq_move_t m, int side) {
  int i = xq_policy_index(m);
  return side == XQ_BLACK && i >= 0 ? flip_map[i] : i;
}
