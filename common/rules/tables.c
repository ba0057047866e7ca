/*
 * tables.c: fills the geometry tables declared in tables.h at program load. Everything
 * Xiangqi's piece rules need that does not depend on the position is computed here once,
 * so the move generator only follows lists.
 */
#include <stdlib.h>
#include <string.h>

#include "rules/tables.h"

uint8_t xq_ray_[XQ_SQUARES][4][10];
uint8_t xq_horse_[XQ_SQUARES][17];
uint8_t xq_horse_att_[XQ_SQUARES][17];
uint8_t xq_eleph_[2][XQ_SQUARES][9];
uint8_t xq_advisor_[2][XQ_SQUARES][5];
uint8_t xq_king_[2][XQ_SQUARES][5];
uint8_t xq_pawn_[2][XQ_SQUARES][4];
uint8_t xq_pawn_att_[2][XQ_SQUARES][4];
uint8_t xq_sqflags_[XQ_SQUARES];
uint8_t xq_can_stand_[16][XQ_SQUARES];

static bool on_board(int f, int r) { return f >= 0 && f < XQ_FILES && r >= 0 && r < XQ_RANKS; }
static bool in_palace(int colour, int f, int r) {
  return f >= 3 && f <= 5 && (colour == XQ_RED ? r <= 2 : r >= 7);
}
static bool own_half(int colour, int r) { return colour == XQ_RED ? r <= 4 : r >= 5; }

/* Appends to a sentinel-terminated list, keeping the sentinel after the last entry. */
static void push(uint8_t *list, int v) {
  int n = 0;
  while (list[n] != XQ_END) n++;
  list[n] = (uint8_t)v;
  list[n + 1] = XQ_END;
}

__attribute__((constructor(101))) static void tables_init(void) {
  static const int orth[4][2] = {{1, 0}, {-1, 0}, {0, 1}, {0, -1}};
  static const int diag[4][2] = {{1, 1}, {1, -1}, {-1, 1}, {-1, -1}};
  memset(xq_ray_, XQ_END, sizeof xq_ray_);
  memset(xq_horse_, XQ_END, sizeof xq_horse_);
  memset(xq_horse_att_, XQ_END, sizeof xq_horse_att_);
  memset(xq_eleph_, XQ_END, sizeof xq_eleph_);
  memset(xq_advisor_, XQ_END, sizeof xq_advisor_);
  memset(xq_king_, XQ_END, sizeof xq_king_);
  memset(xq_pawn_, XQ_END, sizeof xq_pawn_);
  memset(xq_pawn_att_, XQ_END, sizeof xq_pawn_att_);
  memset(xq_can_stand_, 0, sizeof xq_can_stand_);

  for (int sq = 0; sq < XQ_SQUARES; sq++) {
    int f = xq_sq_file(sq), r = xq_sq_rank(sq);
    xq_sqflags_[sq] = (uint8_t)((in_palace(0, f, r) ? 1 : 0) | (in_palace(1, f, r) ? 2 : 0) |
                                (own_half(0, r) ? 4 : 0) | (own_half(1, r) ? 8 : 0));
    for (int d = 0; d < 4; d++)
      for (int k = 1;; k++) {
        int tf = f + orth[d][0] * k, tr = r + orth[d][1] * k;
        if (!on_board(tf, tr)) break;
        push(xq_ray_[sq][d], xq_sq(tf, tr));
      }
    /* Horse: one orthogonal step (the leg), then one diagonal step outward. */
    for (int d = 0; d < 4; d++) {
      int lf = f + orth[d][0], lr = r + orth[d][1];
      if (!on_board(lf, lr)) continue;
      for (int s = -1; s <= 1; s += 2) {
        int tf = lf + orth[d][0] + (orth[d][0] ? 0 : s), tr = lr + orth[d][1] + (orth[d][1] ? 0 : s);
        if (!on_board(tf, tr)) continue;
        int to = xq_sq(tf, tr), leg = xq_sq(lf, lr);
        push(xq_horse_[sq], to);
        push(xq_horse_[sq], leg);
        push(xq_horse_att_[to], sq);
        push(xq_horse_att_[to], leg);
      }
    }
    for (int c = 0; c < 2; c++) {
      for (int d = 0; d < 4; d++) {
        int ef = f + 2 * diag[d][0], er = r + 2 * diag[d][1];
        if (on_board(ef, er) && own_half(c, r) && own_half(c, er)) {
          push(xq_eleph_[c][sq], xq_sq(ef, er));
          push(xq_eleph_[c][sq], xq_sq(f + diag[d][0], r + diag[d][1]));
        }
        int af = f + diag[d][0], ar = r + diag[d][1];
        if (in_palace(c, f, r) && on_board(af, ar) && in_palace(c, af, ar))
          push(xq_advisor_[c][sq], xq_sq(af, ar));
        int kf = f + orth[d][0], kr = r + orth[d][1];
        if (in_palace(c, f, r) && on_board(kf, kr) && in_palace(c, kf, kr))
          push(xq_king_[c][sq], xq_sq(kf, kr));
      }
      int fwd = c == XQ_RED ? 1 : -1;
      if (on_board(f, r + fwd)) push(xq_pawn_[c][sq], xq_sq(f, r + fwd));
      if (!own_half(c, r)) {
        if (f > 0) push(xq_pawn_[c][sq], sq - 1);
        if (f < 8) push(xq_pawn_[c][sq], sq + 1);
      }
    }
  }
  /* Reverse pawn table, and where each piece can ever stand (for FEN validation). */
  for (int c = 0; c < 2; c++)
    for (int sq = 0; sq < XQ_SQUARES; sq++)
      for (const uint8_t *t = xq_pawn_[c][sq]; *t != XQ_END; t++) push(xq_pawn_att_[c][*t], sq);
  for (int c = 0; c < 2; c++) {
    /* Reachability by flood fill from the start squares, using the piece's own steps. */
    static const int starts[8][5] = {
        {0}, {4, -1}, {3, 5, -1}, {2, 6, -1}, {1, 7, -1}, {0, 8, -1}, {1, 7, -1}, {0, 2, 4, 6, 8}};
    for (int t = XQ_KING; t <= XQ_PAWN; t++) {
      uint8_t *stand = xq_can_stand_[xq_pc_make(c, t)];
      if (t == XQ_HORSE || t == XQ_ROOK || t == XQ_CANNON) {
        memset(stand, 1, XQ_SQUARES);
        continue;
      }
      int home = c == XQ_RED ? 0 : 9;
      int queue[XQ_SQUARES], qn = 0;
      for (int i = 0; i < 5 && starts[t][i] >= 0; i++) {
        int rk = t == XQ_PAWN ? (c == XQ_RED ? 3 : 6) : home;
        int sq = xq_sq(starts[t][i], rk);
        if (!stand[sq]) stand[sq] = 1, queue[qn++] = sq;
      }
      for (int qi = 0; qi < qn; qi++) {
        int sq = queue[qi];
        const uint8_t *list = t == XQ_KING ? xq_king_[c][sq]
                              : t == XQ_ADVISOR ? xq_advisor_[c][sq]
                              : t == XQ_ELEPHANT ? xq_eleph_[c][sq]
                                                 : xq_pawn_[c][sq];
        int step = t == XQ_ELEPHANT ? 2 : 1;
        for (int i = 0; list[i] != XQ_END; i += step)
          if (!stand[list[i]]) stand[list[i]] = 1, queue[qn++] = list[i];
      }
    }
  }
}
