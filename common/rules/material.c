/* material.c: see material.h. */
#include "rules/material.h"

static const int half_pawns[8] = {0, 0, 4, 4, 8, 18, 9, 2}; /* by xq piece type */

int xq_material_balance(const uint8_t board[XQ_SQUARES]) {
  int sum = 0;
  for (int sq = 0; sq < XQ_SQUARES; sq++) {
    int pc = board[sq];
    if (!pc) continue;
    int v = half_pawns[xq_pc_type(pc)];
    sum += xq_pc_colour(pc) == XQ_RED ? v : -v;
  }
  return sum;
}

xq_result_t xq_material_result(const uint8_t board[XQ_SQUARES], double margin_pawns) {
  if (!(margin_pawns > 0.0)) return XQ_RESULT_DRAW;
  double diff = xq_material_balance(board) / 2.0;
  if (diff >= margin_pawns) return XQ_RESULT_RED_WIN;
  if (-diff >= margin_pawns) return XQ_RESULT_BLACK_WIN;
  return XQ_RESULT_DRAW;
}
