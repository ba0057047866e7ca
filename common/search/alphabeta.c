/*
 * alphabeta.c: fixed-depth negamax with alpha-beta, quiescence and MVV-LVA ordering, the
 * `alphabeta:D` baseline (see alphabeta.h). Positions repeated since the last capture
 * score as a draw inside the tree, so a winning side does not drift into repetitions.
 */
#include "search/alphabeta.h"

#include <assert.h>

#include "rules/movegen.h"

#define AB_INF 32000
#define AB_QDEPTH 8          /* quiescence plies before standing pat unconditionally */
#define AB_MOBILITY_CP 2     /* centipawns per pseudo-legal move of difference */

/* Centipawns by piece type (index = type). The king is priceless: mate scores handle it. */
static const int ab_type_value[8] = {0, 0, 200, 200, 400, 900, 450, 100};

int xq_ab_piece_value(int pc, int sq) {
  int type = xq_pc_type(pc);
  if (type == XQ_PAWN) {
    int rank = xq_sq_rank(sq);
    bool crossed = xq_pc_colour(pc) == XQ_RED ? rank >= 5 : rank <= 4;
    return crossed ? 200 : 100;
  }
  return ab_type_value[type];
}

int xq_ab_evaluate(xq_pos_t *pos) {
  int material = 0; /* Red's view */
  for (int sq = 0; sq < XQ_SQUARES; sq++) {
    int pc = pos->board[sq];
    if (!pc) continue;
    int v = xq_ab_piece_value(pc, sq);
    material += xq_pc_colour(pc) == XQ_RED ? v : -v;
  }
  /* Mobility of both sides: the generator reads only the board and the side to move, so
   * flipping the side for one call is safe and is undone at once. */
  xq_move_t moves[XQ_MAX_MOVES];
  int mine = xq_gen_pseudo(pos, moves);
  pos->side ^= 1;
  int theirs = xq_gen_pseudo(pos, moves);
  pos->side ^= 1;
  int score = pos->side == XQ_RED ? material : -material;
  return score + AB_MOBILITY_CP * (mine - theirs);
}

typedef struct {
  xq_pos_t *pos;
  int64_t nodes;
} ab_ctx_t;

/* Order key: captures by most valuable victim, then least valuable attacker. */
static int ab_order_key(const xq_pos_t *pos, xq_move_t m) {
  int victim = pos->board[xq_mv_to(m)];
  if (!victim) return 0;
  int attacker = pos->board[xq_mv_from(m)];
  int av = xq_pc_type(attacker) == XQ_KING ? 1000 : ab_type_value[xq_pc_type(attacker)];
  return 10000 + 10 * xq_ab_piece_value(victim, xq_mv_to(m)) - av / 10;
}

/* Stable insertion sort by descending key (move lists are short). */
static void ab_sort(const xq_pos_t *pos, xq_move_t *moves, int n) {
  int keys[XQ_MAX_MOVES];
  for (int i = 0; i < n; i++) keys[i] = ab_order_key(pos, moves[i]);
  for (int i = 1; i < n; i++) {
    xq_move_t m = moves[i];
    int k = keys[i], j = i - 1;
    while (j >= 0 && keys[j] < k) {
      moves[j + 1] = moves[j];
      keys[j + 1] = keys[j];
      j--;
    }
    moves[j + 1] = m;
    keys[j + 1] = k;
  }
}

/* True when the current position occurred before with no capture in between. */
static bool ab_repeated(const xq_pos_t *pos) {
  int back = pos->rule60 < pos->ply ? pos->rule60 : pos->ply;
  for (int i = 4; i <= back; i += 2)
    if (pos->hist[pos->ply - i].key == pos->key) return true;
  return false;
}

static int ab_quiesce(ab_ctx_t *c, int alpha, int beta, int ply, int qdepth) {
  xq_pos_t *pos = c->pos;
  c->nodes++;
  xq_move_t moves[XQ_MAX_MOVES];
  int n = xq_gen_legal(pos, moves);
  if (n == 0) return -XQ_AB_MATE + ply; /* mate or stalemate: the side to move loses */
  bool check = pos->in_check;
  if (!check) {
    int stand = xq_ab_evaluate(pos);
    if (stand >= beta || qdepth <= 0) return stand;
    if (stand > alpha) alpha = stand;
  } else if (qdepth <= 0) {
    return xq_ab_evaluate(pos);
  }
  ab_sort(pos, moves, n);
  for (int i = 0; i < n; i++) {
    if (!check && !pos->board[xq_mv_to(moves[i])]) break; /* captures come first */
    xq_pos_make(pos, moves[i]);
    int s = -ab_quiesce(c, -beta, -alpha, ply + 1, qdepth - 1);
    xq_pos_unmake(pos);
    if (s >= beta) return s;
    if (s > alpha) alpha = s;
  }
  return alpha;
}

static int ab_negamax(ab_ctx_t *c, int depth, int alpha, int beta, int ply) {
  xq_pos_t *pos = c->pos;
  if (ply > 0 && ab_repeated(pos)) return 0;
  if (depth <= 0) return ab_quiesce(c, alpha, beta, ply, AB_QDEPTH);
  c->nodes++;
  xq_move_t moves[XQ_MAX_MOVES];
  int n = xq_gen_legal(pos, moves);
  if (n == 0) return -XQ_AB_MATE + ply;
  ab_sort(pos, moves, n);
  int best = -AB_INF;
  for (int i = 0; i < n; i++) {
    xq_pos_make(pos, moves[i]);
    int s = -ab_negamax(c, depth - 1, -beta, -alpha, ply + 1);
    xq_pos_unmake(pos);
    if (s > best) best = s;
    if (s > alpha) alpha = s;
    if (alpha >= beta) break;
  }
  return best;
}

int64_t xq_ab_search(xq_pos_t *pos, int depth, xq_rng_t *rng, xq_move_t *best, int *score) {
  assert(depth >= 1 && depth <= XQ_AB_MAX_DEPTH);
  ab_ctx_t c = {.pos = pos, .nodes = 0};
  xq_move_t moves[XQ_MAX_MOVES];
  int n = xq_gen_legal(pos, moves);
  assert(n > 0);
  /* Shuffle, then stable-sort: equal moves keep a random order, and the strict '>' below
   * keeps the first of equal scores, so ties are broken at random. */
  for (int i = n - 1; i > 0; i--) {
    int j = (int)xq_rng_below(rng, (uint64_t)i + 1);
    xq_move_t t = moves[i];
    moves[i] = moves[j];
    moves[j] = t;
  }
  ab_sort(pos, moves, n);
  int alpha = -AB_INF;
  *best = moves[0];
  for (int i = 0; i < n; i++) {
    xq_pos_make(pos, moves[i]);
    /* Null window above alpha would be faster; a full window keeps it simple and exact. */
    int s = -ab_negamax(&c, depth - 1, -AB_INF, -alpha, 1);
    xq_pos_unmake(pos);
    if (s > alpha) {
      alpha = s;
      *best = moves[i];
    }
  }
  *score = alpha;
  return c.nodes;
}
