/*
 * movegen.h: legal move generation, attack and check tests, perft.
 *
 * Every rule is here: horse legs, elephant eyes and the river, advisors and kings in
 * their palace, cannons capturing over exactly one screen, pawns moving sideways only
 * after crossing the river, and the flying-general rule (the two kings may never face
 * each other on an open file).
 */
#ifndef XQ_MOVEGEN_H
#define XQ_MOVEGEN_H

#include "rules/board.h"

/* Pseudo-legal moves (every piece rule, but the mover's king may be left attacked).
 * Writes at most XQ_MAX_MOVES moves; returns the count. */
int xq_gen_pseudo(const xq_pos_t *pos, xq_move_t *moves);
/* Legal moves only; returns the count. */
int xq_gen_legal(xq_pos_t *pos, xq_move_t *moves);

/* True when square sq is attacked by a piece of colour `by` (the flying general counts:
 * a king attacks along an open file). */
bool xq_attacked(const xq_pos_t *pos, int sq, int by);
/* The attack map of colour `by`: map[sq] = 1 when xq_attacked(pos, sq, by) would say sq
 * is attacked, 0 otherwise, for all 90 squares at once (squares held by `by`'s own pieces
 * count: they are defended). Only the board is read. The encoder's attack planes. */
void xq_attack_map(const uint8_t *board, int by, uint8_t map[XQ_SQUARES]);
/* True when the side to move is in check (recomputed, not the cached flag). */
bool xq_in_check(const xq_pos_t *pos);
/* True when the pseudo-legal move m, made by the side to move, leaves its own king safe. */
bool xq_is_legal(xq_pos_t *pos, xq_move_t m);
/* True when the legal move m would put the opponent in check. */
bool xq_gives_check(xq_pos_t *pos, xq_move_t m);
/* True when m is a legal move in pos (any 16-bit value is accepted and checked). */
bool xq_move_is_legal(xq_pos_t *pos, xq_move_t m);

/* Number of leaf nodes of the legal move tree to the given depth. */
uint64_t xq_perft(xq_pos_t *pos, int depth);

#endif
