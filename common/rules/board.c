/*
 * board.c: the position: setup, make and unmake with incremental Zobrist keys, piece
 * counts and king squares. Per-ply state lives on the position's history stack, which
 * is also the repetition history the rules read.
 */
#include <assert.h>
#include <string.h>

#include "rules/board.h"
#include "rules/tables.h"

void xq_pos_clear(xq_pos_t *pos) {
  memset(pos->board, 0, sizeof pos->board);
  memset(pos->count, 0, sizeof pos->count);
  pos->king[0] = pos->king[1] = 0;
  pos->side = XQ_RED;
  pos->in_check = 0;
  pos->rule60 = 0;
  pos->fullmove = 1;
  pos->ply = 0;
  pos->key = 0;
}

void xq_pos_put(xq_pos_t *pos, int sq, int pc) {
  int old = pos->board[sq];
  if (old) {
    pos->key ^= xq_zob_piece_[old][sq];
    pos->count[old]--;
  }
  pos->board[sq] = (uint8_t)pc;
  if (pc) {
    pos->key ^= xq_zob_piece_[pc][sq];
    pos->count[pc]++;
    if (xq_pc_type(pc) == XQ_KING) pos->king[xq_pc_colour(pc)] = (uint8_t)sq;
  }
}

void xq_pos_startpos(xq_pos_t *pos) {
  static const uint8_t back[9] = {XQ_ROOK, XQ_HORSE, XQ_ELEPHANT, XQ_ADVISOR, XQ_KING,
                                  XQ_ADVISOR, XQ_ELEPHANT, XQ_HORSE, XQ_ROOK};
  xq_pos_clear(pos);
  for (int f = 0; f < 9; f++) {
    xq_pos_put(pos, xq_sq(f, 0), xq_pc_make(XQ_RED, back[f]));
    xq_pos_put(pos, xq_sq(f, 9), xq_pc_make(XQ_BLACK, back[f]));
  }
  for (int f = 0; f < 9; f += 2) {
    xq_pos_put(pos, xq_sq(f, 3), xq_pc_make(XQ_RED, XQ_PAWN));
    xq_pos_put(pos, xq_sq(f, 6), xq_pc_make(XQ_BLACK, XQ_PAWN));
  }
  xq_pos_put(pos, xq_sq(1, 2), xq_pc_make(XQ_RED, XQ_CANNON));
  xq_pos_put(pos, xq_sq(7, 2), xq_pc_make(XQ_RED, XQ_CANNON));
  xq_pos_put(pos, xq_sq(1, 7), xq_pc_make(XQ_BLACK, XQ_CANNON));
  xq_pos_put(pos, xq_sq(7, 7), xq_pc_make(XQ_BLACK, XQ_CANNON));
}

void xq_pos_make(xq_pos_t *pos, xq_move_t m) {
  assert(pos->ply < XQ_MAX_HISTORY);
  int from = xq_mv_from(m), to = xq_mv_to(m);
  int pc = pos->board[from], cap = pos->board[to];
  assert(pc && xq_pc_colour(pc) == pos->side);
  xq_undo_t *u = &pos->hist[pos->ply++];
  u->key = pos->key;
  u->move = m;
  u->captured = (uint8_t)cap;
  u->rule60 = pos->rule60;

  uint64_t key = pos->key ^ xq_zob_side_ ^ xq_zob_piece_[pc][from] ^ xq_zob_piece_[pc][to];
  if (cap) {
    key ^= xq_zob_piece_[cap][to];
    pos->count[cap]--;
    pos->rule60 = 0;
  } else {
    pos->rule60++;
  }
  pos->board[to] = (uint8_t)pc;
  pos->board[from] = 0;
  if (xq_pc_type(pc) == XQ_KING) pos->king[pos->side] = (uint8_t)to;
  pos->key = key;
  pos->side ^= 1;
  pos->in_check = xq_king_attacked_(pos, pos->side);
  u->check = pos->in_check;
}

void xq_pos_unmake(xq_pos_t *pos) {
  assert(pos->ply > 0);
  const xq_undo_t *u = &pos->hist[--pos->ply];
  int from = xq_mv_from(u->move), to = xq_mv_to(u->move);
  int pc = pos->board[to];
  pos->side ^= 1;
  pos->board[from] = (uint8_t)pc;
  pos->board[to] = u->captured;
  if (u->captured) pos->count[u->captured]++;
  if (xq_pc_type(pc) == XQ_KING) pos->king[pos->side] = (uint8_t)from;
  pos->key = u->key;
  pos->rule60 = u->rule60;
  pos->in_check = pos->ply ? pos->hist[pos->ply - 1].check : (uint8_t)xq_king_attacked_(pos, pos->side);
}

void xq_pos_reset_history(xq_pos_t *pos) {
  pos->fullmove = (uint16_t)xq_pos_fullmove(pos);
  pos->ply = 0;
}

int xq_pos_fullmove(const xq_pos_t *pos) {
  /* The history started with side S0 to move = side ^ (ply & 1); a full move completes
   * whenever Black moves. */
  int start_side = pos->side ^ (pos->ply & 1);
  int black_moves = start_side == XQ_BLACK ? (pos->ply + 1) / 2 : pos->ply / 2;
  return pos->fullmove + black_moves;
}
