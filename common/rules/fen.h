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

/* Parses fen into pos. On error returns XQ_EFEN, leaves pos cleared, and writes the
 * specific problem into eb (if non-NULL). Never reads past the terminating NUL. */
int xq_fen_parse(xq_pos_t *pos, const char *fen, xq_errbuf_t *eb);
/* Writes the position's FEN into buf (at least XQ_FEN_MAX bytes). */
void xq_fen_print(const xq_pos_t *pos, char *buf);

#endif
