/*
 * notation.h: moves in ICCS/UCI coordinates ("h2e2": file letter a-i, rank digit 0-9 from
 * Red's side, for the from and then the to square).
 */
#ifndef XQ_NOTATION_H
#define XQ_NOTATION_H

#include "rules/board.h"
#include "support/error.h"

/* Writes 4 characters and a NUL into buf (at least 5 bytes). */
void xq_move_print(xq_move_t m, char *buf);
/* Parses exactly 4 characters of coordinates (no legality check). XQ_EMOVE on error. */
int xq_move_parse(const char *s, xq_move_t *m, xq_errbuf_t *eb);
/* Parses and checks legality in pos. XQ_EMOVE with a reason on error. */
int xq_move_parse_legal(xq_pos_t *pos, const char *s, xq_move_t *m, xq_errbuf_t *eb);

#endif
