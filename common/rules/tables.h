/*
 * tables.h (internal to common/rules): precomputed board geometry shared by make/unmake,
 * move generation and attack tests. Filled once at load time by xq_tables_init_.
 * Lists end with a 0xFF sentinel so loops need no separate length.
 */
#ifndef XQ_TABLES_H
#define XQ_TABLES_H

#include <stdint.h>

#include "rules/board.h"

#define XQ_END 0xFF

/* Zobrist keys (zobrist.c). */
extern uint64_t xq_zob_piece_[16][XQ_SQUARES];
extern uint64_t xq_zob_side_;

/* Squares along each of the 4 rays from sq: 0 = +file (right), 1 = -file, 2 = +rank (up,
 * toward Black), 3 = -rank. */
extern uint8_t xq_ray_[XQ_SQUARES][4][10];
/* Horse jumps from sq: pairs (target, leg), sentinel-terminated. */
extern uint8_t xq_horse_[XQ_SQUARES][17];
/* Horses that attack sq: pairs (horse square, leg square), sentinel-terminated. */
extern uint8_t xq_horse_att_[XQ_SQUARES][17];
/* Elephant steps on colour's own half: pairs (target, eye). */
extern uint8_t xq_eleph_[2][XQ_SQUARES][9];
/* Advisor steps inside colour's palace. */
extern uint8_t xq_advisor_[2][XQ_SQUARES][5];
/* King steps inside colour's palace. */
extern uint8_t xq_king_[2][XQ_SQUARES][5];
/* Pawn steps of colour from sq (forward, and sideways once across the river). */
extern uint8_t xq_pawn_[2][XQ_SQUARES][4];
/* Squares from which a pawn of colour attacks sq. */
extern uint8_t xq_pawn_att_[2][XQ_SQUARES][4];
/* Bit 1: sq is in the palace of colour 0; bit 2: of colour 1. Bit 4/8: own half of 0/1. */
extern uint8_t xq_sqflags_[XQ_SQUARES];
/* Squares on which each piece (colour*8+type) may ever stand. */
extern uint8_t xq_can_stand_[16][XQ_SQUARES];

/* True when a king of colour `side` on king_sq is attacked (rook, cannon, horse, pawn,
 * facing king). The fast legality test; the board is pos->board. */
bool xq_king_attacked_(const xq_pos_t *pos, int side);

#endif
