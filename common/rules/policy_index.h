/*
 * policy_index.h: the fixed list of the 2086 moves any Xiangqi piece could ever make
 * (from -> to pairs along ranks and files, horse jumps, elephant and advisor steps), the
 * network's policy output order. The list is sorted by (from, to) square; it is the same
 * for both colours, because positions are encoded from the side to move's point of view
 * (Black's positions are rotated 180 degrees, see xq_policy_flip).
 */
#ifndef XQ_POLICY_INDEX_H
#define XQ_POLICY_INDEX_H

#include "rules/board.h"

#define XQ_POLICY_SIZE 2086

/* Index of a move in the list, or -1 if no piece could ever make it. */
int xq_policy_index(xq_move_t m);
/* The move at index i (0 <= i < XQ_POLICY_SIZE). */
xq_move_t xq_policy_move(int i);
/* Index of the same move seen from the other side (board rotated 180 degrees). */
int xq_policy_flip(int i);
/* Index of the same move mirrored left-right (file f -> 8 - f). */
int xq_policy_mirror(int i);
/* Index of move m as seen by the side to move (rotated when Black is to move). */
int xq_policy_index_for(xq_move_t m, int side);

static inline int xq_sq_flip(int sq) { return 89 - sq; }
static inline int xq_sq_mirror(int sq) { return sq - 2 * (sq % 9) + 8; }

#endif
