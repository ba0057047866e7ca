/* encode.c: input planes and legal-move masks from the side to move's point of view. */
#include "nn/encode.h"

#include <assert.h>
#include <string.h>

#include "rules/movegen.h"
#include "rules/policy_index.h"

_Static_assert(NN_POLICY_SIZE == XQ_POLICY_SIZE, "policy size");
_Static_assert(NN_HW == XQ_SQUARES, "board size");

bool nn_encode_is_repetition(const xq_pos_t *pos) {
  /* Keys include the side to move, so equal keys are the same position, same mover. */
  for (int i = pos->ply - 1; i >= 0; i--)
    if (pos->hist[i].key == pos->key) return true;
  return false;
}

static void fill(float *plane, float v) {
  for (int s = 0; s < NN_HW; s++) plane[s] = v;
}

void nn_encode(float *planes, const xq_pos_t *pos, int nplanes) {
  nn_encode_board(planes, pos->board, pos->side, pos->rule60, nn_encode_is_repetition(pos),
                  nplanes);
}

/* The attack planes: the mover's, then the opponent's, in the mover's frame. */
static void encode_attacks(float *planes, const uint8_t *board, int side) {
  for (int k = 0; k < 2; k++) {
    uint8_t map[XQ_SQUARES];
    xq_attack_map(board, k == 0 ? side : side ^ 1, map);
    float *plane = planes + (size_t)k * NN_HW;
    for (int sq = 0; sq < XQ_SQUARES; sq++)
      plane[side == XQ_RED ? sq : xq_sq_flip(sq)] = map[sq];
  }
}

void nn_encode_board(float *planes, const uint8_t *board, int side, int rule60,
                     bool repeated, int nplanes) {
  assert(nplanes == NN_INPUT_PLANES || nplanes == NN_INPUT_PLANES_MAX);
  memset(planes, 0, (size_t)NN_INPUT_PLANES * NN_HW * sizeof(float));
  for (int sq = 0; sq < XQ_SQUARES; sq++) {
    int pc = board[sq];
    if (!pc) continue;
    int type = xq_pc_type(pc), own = xq_pc_colour(pc) == side;
    int vsq = side == XQ_RED ? sq : xq_sq_flip(sq);
    planes[(size_t)((own ? 0 : 7) + type - 1) * NN_HW + vsq] = 1.0f;
  }
  fill(planes + 14 * NN_HW, side == XQ_RED ? 1.0f : 0.0f);
  float r60 = (float)rule60 / 120.0f;
  fill(planes + 15 * NN_HW, r60 > 1.0f ? 1.0f : r60);
  fill(planes + 16 * NN_HW, repeated ? 1.0f : 0.0f);
  fill(planes + 17 * NN_HW, 1.0f);
  if (nplanes == NN_INPUT_PLANES_MAX) encode_attacks(planes + NN_INPUT_PLANES * NN_HW, board, side);
}

int nn_encode_legal(xq_pos_t *pos, uint8_t *mask, int *index, xq_move_t *moves) {
  xq_move_t mv[XQ_MAX_MOVES];
  int n = xq_gen_legal(pos, mv);
  if (mask) memset(mask, 0, NN_POLICY_SIZE);
  for (int i = 0; i < n; i++) {
    int k = xq_policy_index_for(mv[i], pos->side);
    if (mask) mask[k] = 1;
    if (index) index[i] = k;
    if (moves) moves[i] = mv[i];
  }
  return n;
}

xq_move_t nn_policy_move_for(int i, int side) {
  xq_move_t m = xq_policy_move(i);
  if (side == XQ_RED) return m;
  return xq_mv_make(xq_sq_flip(xq_mv_from(m)), xq_sq_flip(xq_mv_to(m)));
}
