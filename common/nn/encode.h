/*
 * encode.h: a position -> the network's input planes and legal-move mask, from the side
 * to move's point of view. This is the only encoding: workers (inference) and the
 * trainer (training batches) both call it, so they can never disagree.
 *
 * Input-plane version NN_INPUT_VERSION (1), NN_INPUT_PLANES (18) planes of 10x9, plane
 * index p, square s at planes[p * 90 + s] where s is the square *as the side to move
 * sees it*: the real square when Red is to move, 89 - square when Black is (the board
 * rotated 180 degrees, so the mover's pieces are always at the bottom):
 *   0..6   the mover's king, advisors, elephants, horses, rooks, cannons, pawns (1/0)
 *   7..13  the opponent's pieces, same order
 *   14     all ones when Red is to move, zeros when Black is
 *   15     no-capture ply counter / 120, clamped to 1
 *   16     all ones when the current position occurred before in the game (repetition)
 *   17     all ones (lets the convolutions see the zero-padded board edge)
 * Input-plane version NN_INPUT_VERSION_ATTACKS (2), for nets with attack planes
 * (nn_arch_t.attacks), adds NN_ATTACK_PLANES, rule-derived like the repetition plane:
 *   18     squares the mover attacks (xq_attack_map: its own pieces' squares count,
 *          they are defended)
 *   19     squares the opponent attacks
 * `nplanes` (nn_arch_input_planes of the net) says which: NN_INPUT_PLANES or
 * NN_INPUT_PLANES_MAX. docs/network.md is the full description.
 */
#ifndef NN_ENCODE_H
#define NN_ENCODE_H

#include <stdint.h>

#include "nn/nn_model.h"
#include "rules/board.h"

/* planes: (nplanes, 10, 9), overwritten. */
void nn_encode(float *planes, const xq_pos_t *pos, int nplanes);

/* The one encoding function: nplanes planes of a board (90 piece codes, absolute
 * squares) with `side` to move, `rule60` no-capture plies and `repeated` (the position
 * occurred before in its game). nn_encode and the trainer's xq_sample_encode both call
 * it. */
void nn_encode_board(float *planes, const uint8_t *board, int side, int rule60,
                     bool repeated, int nplanes);

/* True when pos's current key occurred earlier in its history. */
bool nn_encode_is_repetition(const xq_pos_t *pos);

/*
 * Legal moves of the side to move as policy indices (side to move's view).
 * mask: (NN_POLICY_SIZE) set to 1 on legal moves, 0 elsewhere (may be NULL);
 * index, moves: (XQ_MAX_MOVES) the policy index and the real move of each legal move
 * (either may be NULL). Returns the number of legal moves.
 * pos is not const only because legality testing makes and unmakes moves on it.
 */
int nn_encode_legal(xq_pos_t *pos, uint8_t *mask, int *index, xq_move_t *moves);

/* The real move of policy index i when `side` is to move (inverse of
 * xq_policy_index_for). */
xq_move_t nn_policy_move_for(int i, int side);

#endif
