/*
 * fen.h: FEN parse and print, the convention of Xiangqi engines:
 *   rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1
 * Ranks are listed from Black's back rank (rank 9) down to Red's (rank 0). Red pieces are
 * upper case: K king, A advisor, B elephant (E accepted), N horse (H accepted), R rook,
 * C cannon, P pawn. The side is 'w' or 'r' for Red, 'b' for Black. The two '-' fields are
 * kept for compatibility; the counters (no-capture plies, fullmove) are optional.
 */
#ifndef XQ_FEN_H
#define XQ_FEN_H

#include "rules/board.h"
#include "support/error.h"

#define XQ_FEN_MAX 128 /* enough for any position this module prints */
#define XQ_FEN_RULE60_MAX 1000 /* largest no-capture counter xq_fen_parse accepts */

/* Parses fen into pos. On error returns XQ_EFEN, leaves pos cleared, and writes the
 * specific problem into eb (if non-NULL). Never reads past the terminating NUL. */
int xq_fen_parse(xq_pos_t *pos, const char *fen, xq_errbuf_t *eb);
/* Ends a position set up square by square (xq_pos_clear, then xq_pos_put and rule60):
 * makes side (XQ_RED or XQ_BLACK) the side to move, key included, checks the position as
 * xq_fen_parse checks what it parsed (kings, piece counts, squares each piece can ever
 * stand on, the side not to move not in check; the same words in eb) and sets in_check.
 * 0, or XQ_EFEN with pos cleared. What a FEN round trip gave, without the text. */
int xq_pos_setup_done(xq_pos_t *pos, int side, xq_errbuf_t *eb);
/* Writes the position's FEN into buf (at least XQ_FEN_MAX bytes). */
void xq_fen_print(const xq_pos_t *pos, char *buf);

#endif
