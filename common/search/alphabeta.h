/*
 * alphabeta.h: a small classical searcher, the `alphabeta:D` baseline player: negamax
 * with alpha-beta pruning to a fixed depth, MVV-LVA move ordering, quiescence on captures
 * (all evasions when in check) and mate scores. Evaluation is material (R 900, C 450,
 * N 400, A/B 200, P 100 or 200 across the river, in centipawns) plus a small mobility term
 * (2 cp per pseudo-legal move more than the opponent).
 *
 * It is a yardstick for the arena, not an engine: no transposition table, no iterative
 * deepening. Ties at the root are broken by the caller's generator, so games vary.
 */
#ifndef XQ_ALPHABETA_H
#define XQ_ALPHABETA_H

#include <stdint.h>

#include "rules/board.h"
#include "support/rng.h"

#define XQ_AB_MATE 30000     /* score of mate at the root; mate in n plies is MATE - n */
#define XQ_AB_MAX_DEPTH 8

/* Material value of a piece type on square sq for its colour (centipawns). */
int xq_ab_piece_value(int pc, int sq);
/* Static evaluation from the side to move's view (centipawns). pos is returned unchanged. */
int xq_ab_evaluate(xq_pos_t *pos);

/* Searches pos (not finished: it has a legal move) to depth plies (1..XQ_AB_MAX_DEPTH).
 * Writes the best move and its score (side to move's view); rng breaks ties at the root.
 * pos is returned unchanged. Returns the number of nodes searched. */
int64_t xq_ab_search(xq_pos_t *pos, int depth, xq_rng_t *rng, xq_move_t *best, int *score);

#endif
