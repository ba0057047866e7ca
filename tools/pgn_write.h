/*
 * pgn_write.h: one Xiangqi game as PGN text, the form XQBase and ChessDB-style game
 * databases exchange and Xiangqi GUIs (XiangQi Wizard, CCBridge) import:
 *
 *   [Game "Chinese Chess"]
 *   [Event "xqzero self-play"]  [Site ..] [Date "2026.01.31"] [Round ..]
 *   [Red "xqzero 0123456789abcdef"]  [Black ..]  [Result "1-0"]
 *   [Variant "xiangqi"]         XBoard's tag; before [FEN], which XBoard parses at once
 *   [FEN "..."]                 only when the game does not start from the start position;
 *                               horse H, elephant E (XBoard's letters; XQBase's alternatives)
 *   [Format "ICCS"]
 *
 *   1. h2e2 h9g7 2. h0g2 {+0.12} ...
 *   {Red wins by checkmate} 1-0
 *
 * Moves are ICCS coordinates in lower case (XQBase writes them "H2-E2"; both name the same
 * squares, and xqzero reads either). Used by `xqz games export` and `xqz play`'s save.
 */
#ifndef XQZ_PGN_WRITE_H
#define XQZ_PGN_WRITE_H

#include <stdio.h>

#include "rules/board.h"
#include "rules/rules.h"
#include "support/error.h"

typedef struct {
  const char *event, *site, *date, *round; /* NULL: "?" ("????.??.??" for the date) */
  const char *red, *black;                 /* players; NULL: "?" */
  const char *start_fen;                   /* NULL: the start position */
  const xq_move_t *moves;                  /* (nmoves) ICCS moves, legal from start_fen */
  int nmoves;
  const float *values; /* (nmoves) or NULL: a comment after each move whose value is not NaN */
  xq_result_t result;  /* XQ_RESULT_NONE: an unfinished game, "*" */
  xq_reason_t reason;
  const char *note;    /* extra words for the end comment (e.g. "stopped by the player"), or NULL */
} xqz_pgn_game_t;

/* Writes g to f, then a blank line. 0, or XQ_EMOVE / XQ_EFEN when the moves do not replay
 * from the start position (nothing written), or XQ_EIO. Reason in eb. */
int xqz_pgn_write(FILE *f, const xqz_pgn_game_t *g, xq_errbuf_t *eb);

/* The end comment's words for a result and reason: "Red wins by checkmate", "Drawn by
 * repetition", "Unfinished". Into buf (n bytes). */
void xqz_pgn_end_text(xq_result_t result, xq_reason_t reason, char *buf, size_t n);

#endif
