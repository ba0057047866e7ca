/*
 * rules.h: game adjudication. Every finished game carries a reason code.
 *
 *   checkmate, stalemate      the side to move loses (there is no stalemate draw)
 *   threefold repetition      draw, unless one side gave check on every one of its moves
 *                             in the repeated cycle: that side loses (both: draw)
 *   120 plies without capture draw (the "60-move" rule)
 *   game-length cap           draw (configurable, counted in plies of the game record)
 *   no attackers              draw when neither side has a rook, horse, cannon or pawn
 *
 * The Asian perpetual-chase rules are out of scope (see docs/rules.md).
 */
#ifndef XQ_RULES_H
#define XQ_RULES_H

#include "rules/board.h"

typedef enum {
  XQ_RESULT_NONE = 0, /* game goes on */
  XQ_RESULT_RED_WIN,
  XQ_RESULT_BLACK_WIN,
  XQ_RESULT_DRAW,
} xq_result_t;

typedef enum {
  XQ_REASON_NONE = 0,
  XQ_REASON_CHECKMATE,
  XQ_REASON_STALEMATE,
  XQ_REASON_REPETITION,       /* threefold repetition, draw */
  XQ_REASON_PERPETUAL_CHECK,  /* threefold repetition, one side checked throughout: loses */
  XQ_REASON_NO_CAPTURE,       /* 120 plies without capture */
  XQ_REASON_LENGTH_CAP,       /* game reached the configured length */
  XQ_REASON_NO_ATTACKERS,     /* neither side can ever mate */
  XQ_REASON_RESIGN,           /* used by the search, never returned here */
} xq_reason_t;

#define XQ_NO_CAPTURE_LIMIT 120

typedef struct {
  xq_result_t result;
  xq_reason_t reason;
} xq_outcome_t;

/* Adjudicates pos. max_plies caps the game length counted by pos->ply (0 = no cap).
 * Needs pos's history for repetition. */
xq_outcome_t xq_adjudicate(xq_pos_t *pos, int max_plies);

const char *xq_result_name(xq_result_t r);   /* "1-0", "0-1", "1/2-1/2", "*" */
const char *xq_reason_name(xq_reason_t r);   /* "checkmate", "repetition", ... */

#endif
