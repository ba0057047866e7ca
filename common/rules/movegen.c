/*
 * movegen.c: pseudo-legal and legal move generation, attack tests and perft.
 *
 * Generation follows the precomputed lists of tables.c. Legality is decided cheaply for
 * most moves: when the side to move is not in check, a non-king move can expose its own
 * king only if it leaves the king's rank or file (a rook, cannon or facing-king line), a
 * square diagonally next to the king (a horse leg), or lands on the king's rank or file
 * (it may become a cannon's screen). Every other move is legal without a test; the rest
 * are made on the board and the king is tested for attack.
 */
#include <assert.h>

#include "rules/movegen.h"
#include "rules/tables.h"

#define OPP(pc, side) ((pc) && xq_pc_colour(pc) != (side))

bool xq_king_attacked_(const xq_pos_t *pos, int side) {
  const uint8_t *b = pos->board;
  int ksq = pos->king[side], opp = side ^ 1, o8 = opp << 3;
  int rook = o8 | XQ_ROOK, cannon = o8 | XQ_CANNON, horse = o8 | XQ_HORSE,
      pawn = o8 | XQ_PAWN, king = o8 | XQ_KING;
  for (int d = 0; d < 4; d++) {
    const uint8_t *r = xq_ray_[ksq][d];
    int i = 0;
    while (r[i] != XQ_END && !b[r[i]]) i++;
    if (r[i] == XQ_END) continue;
    int p = b[r[i]];
    if (p == rook || (p == king && d >= 2)) return true;
    for (i++; r[i] != XQ_END; i++)
      if (b[r[i]]) {
        if (b[r[i]] == cannon) return true;
        break;
      }
  }
  for (const uint8_t *h = xq_horse_att_[ksq]; *h != XQ_END; h += 2)
    if (b[h[0]] == horse && !b[h[1]]) return true;
  for (const uint8_t *p = xq_pawn_att_[opp][ksq]; *p != XQ_END; p++)
    if (b[*p] == pawn) return true;
  return false;
}

bool xq_attacked(const xq_pos_t *pos, int sq, int by) {
  const uint8_t *b = pos->board;
  int b8 = by << 3;
  for (int d = 0; d < 4; d++) {
    const uint8_t *r = xq_ray_[sq][d];
    int i = 0;
    while (r[i] != XQ_END && !b[r[i]]) i++;
    if (r[i] == XQ_END) continue;
    int p = b[r[i]];
    if (p == (b8 | XQ_ROOK)) return true;
    /* A king attacks one step inside its palace, and the other king along an open file
     * (the flying general). */
    if (p == (b8 | XQ_KING)) {
      if (i == 0 && (xq_sqflags_[sq] & (1 << by))) return true;
      if (d >= 2 && b[sq] == (((by ^ 1) << 3) | XQ_KING)) return true;
    }
    for (i++; r[i] != XQ_END; i++)
      if (b[r[i]]) {
        if (b[r[i]] == (b8 | XQ_CANNON)) return true;
        break;
      }
  }
  for (const uint8_t *h = xq_horse_att_[sq]; *h != XQ_END; h += 2)
    if (b[h[0]] == (b8 | XQ_HORSE) && !b[h[1]]) return true;
  for (const uint8_t *p = xq_pawn_att_[by][sq]; *p != XQ_END; p++)
    if (b[*p] == (b8 | XQ_PAWN)) return true;
  /* Advisors and elephants defend squares of their own side. */
  for (const uint8_t *a = xq_advisor_[by][sq]; *a != XQ_END; a++)
    if (b[*a] == (b8 | XQ_ADVISOR)) return true;
  for (const uint8_t *e = xq_eleph_[by][sq]; *e != XQ_END; e += 2)
    if (b[e[0]] == (b8 | XQ_ELEPHANT) && !b[e[1]]) return true;
  return false;
}

/* Marks the squares the piece of colour `by` on `from` attacks (see xq_attacked). */
static void mark_piece(const uint8_t *b, int by, int from, uint8_t *map) {
  switch (xq_pc_type(b[from])) {
    case XQ_ROOK:
      for (int d = 0; d < 4; d++)
        for (const uint8_t *r = xq_ray_[from][d]; *r != XQ_END; r++) {
          map[*r] = 1;
          if (b[*r]) break;
        }
      break;
    case XQ_CANNON:
      /* Over exactly one screen: every square beyond it up to the next piece, that one
       * included. */
      for (int d = 0; d < 4; d++) {
        const uint8_t *r = xq_ray_[from][d];
        while (*r != XQ_END && !b[*r]) r++;
        if (*r == XQ_END) continue;
        for (r++; *r != XQ_END; r++) {
          map[*r] = 1;
          if (b[*r]) break;
        }
      }
      break;
    case XQ_HORSE:
      for (const uint8_t *h = xq_horse_[from]; *h != XQ_END; h += 2)
        if (!b[h[1]]) map[h[0]] = 1;
      break;
    case XQ_ELEPHANT:
      for (const uint8_t *e = xq_eleph_[by][from]; *e != XQ_END; e += 2)
        if (!b[e[1]]) map[e[0]] = 1;
      break;
    case XQ_ADVISOR:
      for (const uint8_t *a = xq_advisor_[by][from]; *a != XQ_END; a++) map[*a] = 1;
      break;
    case XQ_KING:
      for (const uint8_t *k = xq_king_[by][from]; *k != XQ_END; k++) map[*k] = 1;
      /* The flying general: the other king, along an open file. */
      for (int d = 2; d < 4; d++) {
        const uint8_t *r = xq_ray_[from][d];
        while (*r != XQ_END && !b[*r]) r++;
        if (*r != XQ_END && b[*r] == (((by ^ 1) << 3) | XQ_KING)) map[*r] = 1;
      }
      break;
    case XQ_PAWN:
      for (const uint8_t *p = xq_pawn_[by][from]; *p != XQ_END; p++) map[*p] = 1;
      break;
    default:
      break;
  }
}

void xq_attack_map(const uint8_t *board, int by, uint8_t map[XQ_SQUARES]) {
  for (int sq = 0; sq < XQ_SQUARES; sq++) map[sq] = 0;
  for (int sq = 0; sq < XQ_SQUARES; sq++)
    if (board[sq] && xq_pc_colour(board[sq]) == by) mark_piece(board, by, sq, map);
}

bool xq_in_check(const xq_pos_t *pos) { return xq_king_attacked_(pos, pos->side); }

/* Appends the pseudo-legal moves of the piece on `from`. Returns the new end pointer. */
static inline xq_move_t *gen_piece(const uint8_t *b, int side, int from, xq_move_t *out) {
  int pc = b[from];
  switch (xq_pc_type(pc)) {
    case XQ_ROOK:
      for (int d = 0; d < 4; d++)
        for (const uint8_t *r = xq_ray_[from][d]; *r != XQ_END; r++) {
          int t = b[*r];
          if (!t) {
            *out++ = xq_mv_make(from, *r);
            continue;
          }
          if (xq_pc_colour(t) != side) *out++ = xq_mv_make(from, *r);
          break;
        }
      break;
    case XQ_CANNON:
      for (int d = 0; d < 4; d++) {
        const uint8_t *r = xq_ray_[from][d];
        for (; *r != XQ_END && !b[*r]; r++) *out++ = xq_mv_make(from, *r);
        if (*r == XQ_END) continue;
        for (r++; *r != XQ_END; r++)
          if (b[*r]) {
            if (xq_pc_colour(b[*r]) != side) *out++ = xq_mv_make(from, *r);
            break;
          }
      }
      break;
    case XQ_HORSE:
      for (const uint8_t *h = xq_horse_[from]; *h != XQ_END; h += 2)
        if (!b[h[1]] && (!b[h[0]] || xq_pc_colour(b[h[0]]) != side))
          *out++ = xq_mv_make(from, h[0]);
      break;
    case XQ_ELEPHANT:
      for (const uint8_t *e = xq_eleph_[side][from]; *e != XQ_END; e += 2)
        if (!b[e[1]] && (!b[e[0]] || xq_pc_colour(b[e[0]]) != side))
          *out++ = xq_mv_make(from, e[0]);
      break;
    case XQ_ADVISOR:
      for (const uint8_t *a = xq_advisor_[side][from]; *a != XQ_END; a++)
        if (!b[*a] || xq_pc_colour(b[*a]) != side) *out++ = xq_mv_make(from, *a);
      break;
    case XQ_KING:
      for (const uint8_t *k = xq_king_[side][from]; *k != XQ_END; k++)
        if (!b[*k] || xq_pc_colour(b[*k]) != side) *out++ = xq_mv_make(from, *k);
      break;
    case XQ_PAWN:
      for (const uint8_t *p = xq_pawn_[side][from]; *p != XQ_END; p++)
        if (!b[*p] || xq_pc_colour(b[*p]) != side) *out++ = xq_mv_make(from, *p);
      break;
    default:
      break;
  }
  return out;
}

int xq_gen_pseudo(const xq_pos_t *pos, xq_move_t *moves) {
  const uint8_t *b = pos->board;
  int side = pos->side;
  xq_move_t *out = moves;
  for (int sq = 0; sq < XQ_SQUARES; sq++)
    if (b[sq] && xq_pc_colour(b[sq]) == side) out = gen_piece(b, side, sq, out);
  assert(out - moves <= XQ_MAX_MOVES);
  return (int)(out - moves);
}

/* Makes m on the board only (no key, no history), tests the king, takes it back. */
static inline bool legal_by_test(xq_pos_t *pos, xq_move_t m) {
  uint8_t *b = pos->board;
  int from = xq_mv_from(m), to = xq_mv_to(m), side = pos->side;
  int pc = b[from], cap = b[to];
  b[to] = (uint8_t)pc;
  b[from] = 0;
  int ksave = pos->king[side];
  if (xq_pc_type(pc) == XQ_KING) pos->king[side] = (uint8_t)to;
  bool ok = !xq_king_attacked_(pos, side);
  pos->king[side] = (uint8_t)ksave;
  b[from] = (uint8_t)pc;
  b[to] = (uint8_t)cap;
  return ok;
}

/* Squares whose change may alter whether the king on ksq is attacked. */
static inline bool near_king_lines(int ksq, int sq) {
  int df = xq_sq_file(sq) - xq_sq_file(ksq), dr = xq_sq_rank(sq) - xq_sq_rank(ksq);
  return df == 0 || dr == 0;
}
static inline bool is_horse_leg(int ksq, int sq) {
  int df = xq_sq_file(sq) - xq_sq_file(ksq), dr = xq_sq_rank(sq) - xq_sq_rank(ksq);
  return (df == 1 || df == -1) && (dr == 1 || dr == -1);
}

bool xq_is_legal(xq_pos_t *pos, xq_move_t m) {
  int from = xq_mv_from(m), to = xq_mv_to(m), ksq = pos->king[pos->side];
  if (!pos->in_check && from != ksq && !near_king_lines(ksq, from) &&
      !is_horse_leg(ksq, from) && !near_king_lines(ksq, to))
    return true;
  return legal_by_test(pos, m);
}

int xq_gen_legal(xq_pos_t *pos, xq_move_t *moves) {
  int n = xq_gen_pseudo(pos, moves), k = 0;
  for (int i = 0; i < n; i++)
    if (xq_is_legal(pos, moves[i])) moves[k++] = moves[i];
  return k;
}

bool xq_gives_check(xq_pos_t *pos, xq_move_t m) {
  xq_pos_make(pos, m);
  bool check = pos->in_check;
  xq_pos_unmake(pos);
  return check;
}

bool xq_move_is_legal(xq_pos_t *pos, xq_move_t m) {
  int from = xq_mv_from(m), to = xq_mv_to(m);
  if (from >= XQ_SQUARES || to >= XQ_SQUARES || from == to) return false;
  int pc = pos->board[from];
  if (!pc || xq_pc_colour(pc) != pos->side) return false;
  xq_move_t list[XQ_MAX_MOVES];
  xq_move_t *end = gen_piece(pos->board, pos->side, from, list);
  for (xq_move_t *p = list; p < end; p++)
    if (*p == m) return xq_is_legal(pos, m);
  return false;
}

uint64_t xq_perft(xq_pos_t *pos, int depth) {
  xq_move_t moves[XQ_MAX_MOVES];
  if (depth <= 0) return 1;
  int n = xq_gen_legal(pos, moves);
  if (depth == 1) return (uint64_t)n;
  uint64_t total = 0;
  for (int i = 0; i < n; i++) {
    xq_pos_make(pos, moves[i]);
    total += xq_perft(pos, depth - 1);
    xq_pos_unmake(pos);
  }
  return total;
}
