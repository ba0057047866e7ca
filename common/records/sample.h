/*
 * sample.h: one training position in compact form, as the coordinator's replay window
 * keeps it and the Batch message carries it (wire/sample.h converts it): the board (90
 * piece codes, absolute squares), side to move, no-capture counter, whether the position
 * occurred before in its game, the sparse search policy (policy indices from the side to
 * move's view), the result z from the side to move's view and the survival target: one
 * bit per absolute square, set when the piece on it is still on the board at the end of
 * the game (wherever it went), 12 bytes a sample, and the reply target: the from and to
 * squares of the opponent's move that answered the move played here. The trainer turns it
 * into exactly the input planes nn_encode would give for the position in its game.
 */
#ifndef XQ_RECORDS_SAMPLE_H
#define XQ_RECORDS_SAMPLE_H

#include <stdbool.h>
#include <stdint.h>

#include "rules/board.h"
#include "support/error.h"

#define XQ_SURVIVE_BYTES 12 /* ceil(XQ_SQUARES / 8): the survival target's bitmask */

typedef struct {
  uint8_t board[XQ_SQUARES];
  uint8_t side;
  uint16_t rule60;
  bool repeated;
  int npi;                            /* entries in pi */
  uint16_t pi_index[XQ_MAX_MOVES];    /* policy indices, side to move's view */
  float pi_prob[XQ_MAX_MOVES];        /* sums to 1 */
  float z;                            /* +1 win, 0 draw, -1 loss for the side to move */
  float q;                            /* root value of the search, side to move's view,
                                         clamped to [-1, 1] (a value-target option) */
  bool has_survive;                   /* survive is set (records replayed by this build);
                                         a Sample from the wire without it has none */
  uint8_t survive[XQ_SURVIVE_BYTES];  /* bit s (byte s / 8, bit s % 8): the piece on
                                         absolute square s survives to the end of the game
                                         (the final board, however the game ended); 0 on
                                         empty squares and past square 89; kings are 1 */
  bool has_reply;                     /* reply_from and reply_to are set: the game went
                                         on after this position's move */
  uint8_t reply_from, reply_to;       /* absolute squares of the opponent's next move */
} xq_sample_t;

/* Whether the piece on absolute square sq survives (the bit; has_survive not checked). */
static inline bool xq_sample_survives(const xq_sample_t *s, int sq) {
  return (s->survive[sq >> 3] >> (sq & 7)) & 1;
}
static inline void xq_sample_set_survives(xq_sample_t *s, int sq, bool on) {
  if (on) s->survive[sq >> 3] |= (uint8_t)(1u << (sq & 7));
  else s->survive[sq >> 3] &= (uint8_t)~(1u << (sq & 7));
}

/* Mirrors a sample left-right (files a<->i), policy, survival and reply targets included. */
void xq_sample_mirror(xq_sample_t *s);
/* Swaps the colours: the board turned 180 degrees with Red and Black exchanged and the
 * other side to move. The rules are symmetric under this, so it is the same position for
 * the mover: policy indices (side to move's view), z and q stay; only the input's colour
 * plane differs. The survival bits and the reply squares move with their pieces. */
void xq_sample_colour_swap(xq_sample_t *s);
/* Input planes (nplanes x 90, nn_arch_input_planes of the net) of the sample: the same
 * as nn_encode of the position in its game. */
void xq_sample_encode(float *planes, const xq_sample_t *s, int nplanes);
/* The survival target as the survival head is trained on it, squares in the frame of
 * xq_sample_encode's planes (the side to move's view): mask (90) = 1 on the trained
 * squares, the occupied ones but the two kings (they always survive: nothing to learn),
 * all 0 when the sample has no target; target (90) = 1 where that piece survives.
 * Returns the number of trained squares. */
int xq_sample_survival(uint8_t *mask, uint8_t *target, const xq_sample_t *s);
/* The reply target as the reply head is trained on it: sq[0], sq[1] = the from and to
 * squares of the opponent's reply in the frame of xq_sample_encode's planes, or both -1
 * when the sample has none. Returns whether it has one. */
bool xq_sample_reply(int16_t sq[2], const xq_sample_t *s);
/* Sets pos to the sample's position (board, side, no-capture counter; no history), for
 * the legal-move mask (nn_encode_legal). The sample must be valid (from_proto checked
 * it). */
void xq_sample_position(xq_pos_t *pos, const xq_sample_t *s);
/* Sets pos from a board (valid piece codes), side (XQ_RED or XQ_BLACK) and no-capture
 * counter, checked by the rules as a FEN of it would be (kings, piece counts, reachable
 * squares, the side not to move not in check; xq_pos_setup_done), with key, side and
 * check flag set the one way the rules set them, and no text in between. 0, or XQ_EFEN
 * with the reason (pos cleared). */
int xq_sample_board_position(xq_pos_t *pos, const uint8_t *board, int side, int rule60,
                             xq_errbuf_t *eb);

#endif
