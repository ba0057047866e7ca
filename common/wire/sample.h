/*
 * sample.h: one training position in compact form, as the coordinator's replay window
 * keeps it and the Batch message carries it: the board (90 piece codes, absolute squares),
 * side to move, no-capture counter, whether the position occurred before in its game,
 * the sparse search policy (policy indices from the side to move's view) and the result z
 * from the side to move's view. The trainer turns it into exactly the input planes
 * nn_encode would give for the position in its game.
 */
#ifndef XQ_SAMPLE_H
#define XQ_SAMPLE_H

#include <stdbool.h>
#include <stdint.h>

#include "rules/board.h"
#include "search/game_record.h"
#include "support/error.h"
#include "xqz.pb-c.h"

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
} xq_sample_t;

/* Replays a validated game record and appends one sample per recorded (full-search)
 * position to out (up to cap). Returns the number of samples, or a negative error with the
 * reason when the record is inconsistent (an illegal move, pi over an illegal move, a
 * result the rules do not give). This is the coordinator's ingest check. */
int xq_samples_from_record(const xq_game_record_t *rec, xq_sample_t *out, int cap,
                           xq_errbuf_t *eb);
/* The same, but a game stopped by the length cap (a draw by the rules) gives z as if the
 * side material_pawns pawns ahead on the final board had won (rules/material.h); 0 keeps
 * the draw. The record itself is unchanged: this is a training target only. */
int xq_samples_from_record_adjudicated(const xq_game_record_t *rec, xq_sample_t *out, int cap,
                                       double material_pawns, xq_errbuf_t *eb);
/* Mirrors a sample left-right (files a<->i), policy included. */
void xq_sample_mirror(xq_sample_t *s);
/* Swaps the colours: the board turned 180 degrees with Red and Black exchanged and the
 * other side to move. The rules are symmetric under this, so it is the same position for
 * the mover: policy indices (side to move's view), z and q stay; only the input's colour
 * plane differs. */
void xq_sample_colour_swap(xq_sample_t *s);
/* Input planes (NN_INPUT_PLANES x 90) of the sample: the same as nn_encode of the
 * position in its game. */
void xq_sample_encode(float *planes, const xq_sample_t *s);
/* Conversions to and from the wire. to_proto points msg's arrays into scratch owned by
 * the caller (see the .c); from_proto validates every field (board codes, kings, indices,
 * probabilities) and returns XQ_EFORMAT with a reason on any problem. */
int xq_sample_from_proto(xq_sample_t *s, const Xqz__Sample *msg, xq_errbuf_t *eb);
/* Fills msg (initialised here) from s. msg's arrays point into s (board) and into the
 * caller's scratch: idx_scratch and prob_scratch hold at least s->npi entries and must
 * outlive msg's use (packing). Nothing is allocated; do not free msg's fields. */
void xq_sample_to_proto(Xqz__Sample *msg, const xq_sample_t *s, uint32_t *idx_scratch,
                        float *prob_scratch);
/* Sets pos to the sample's position (board, side, no-capture counter; no history), for
 * the legal-move mask (nn_encode_legal). The sample must be valid (from_proto checked
 * it). */
void xq_sample_position(xq_pos_t *pos, const xq_sample_t *s);

#endif
