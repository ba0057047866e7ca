/*
 * material.h: the material count, the one piece of game knowledge beyond the rules that
 * a campaign may use. It scores games the length cap would call drawn (the coordinator's
 * `adjudicate_material` setting), so a self-play game that ends with one side a rook up
 * teaches the value head something instead of z = 0. Rules and the ladder never use it.
 *
 * Values in half-pawns: rook 18, cannon 9, horse 8, advisor 4, elephant 4, pawn 2,
 * king 0 (the usual 9 / 4.5 / 4 / 2 / 2 / 1).
 */
#ifndef XQ_MATERIAL_H
#define XQ_MATERIAL_H

#include "rules/board.h"
#include "rules/rules.h"

/* The campaign default of `adjudicate_material` (pawns), as the coordinator's settings
 * table and `xqz games` take it. */
#define XQ_ADJUDICATE_DEFAULT "3"

/* Red's material minus Black's, in half-pawns. */
int xq_material_balance(const uint8_t board[XQ_SQUARES]);

/* The result of a game stopped on board: the side ahead by at least margin_pawns pawns
 * wins, otherwise a draw. margin_pawns <= 0 always gives a draw. */
xq_result_t xq_material_result(const uint8_t board[XQ_SQUARES], double margin_pawns);

#endif
