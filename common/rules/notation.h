/*
 * notation.h: moves as text, in the three notations Xiangqi players write.
 *
 *   ICCS/UCI  coordinates: "h2e2" (file letter a-i, rank digit 0-9 from Red's side, for the
 *             from and then the to square). "H2-E2", the XQBase form, is read too.
 *   WXF       piece letter, file, direction, number: "C2=5", "H8+7", "R1-2". Letters K A E H
 *             R C P (G, B, N accepted); files 1-9 counted from the mover's right hand;
 *             direction + forward, - backward, = (or .) sideways; the number is the file
 *             reached for a sideways move or a diagonal piece (advisor, elephant, horse),
 *             and the ranks moved for a straight forward/backward move (king, rook, cannon,
 *             pawn). Two pieces of one kind on one file: "+C=5" (front) and "-C+1" (rear),
 *             "C+=5" read too; three pawns: + = -; four or five: 1P..5P from the front; when
 *             pawns are doubled on two files, the file follows the letter: "+P7=6".
 *   Chinese   the same fields in characters: 炮二平五, 马8进7, 前炮平五, 后马进六, 中兵平四,
 *             前七进一 (the file of doubled pawns, piece left out). Red writes numerals
 *             一..九, Black digits 1..9 (or full-width １..９); either is read for either
 *             side. Directions 进 退 平; 前 中 后 for doubled pieces; traditional
 *             characters (帥 俥 傌 車 馬 砲 將 進 後) are read as well.
 *
 * WXF and Chinese depend on the position (which piece stands on which file), so their
 * functions take it. Parsing checks legality and refuses an ambiguous text naming the
 * moves it could mean. Output is WXF in capitals and simplified Chinese (Red 帅仕相马车炮兵,
 * Black 将士象马车炮卒, Black's numbers in ASCII digits as in 马8进7).
 */
#ifndef XQ_NOTATION_H
#define XQ_NOTATION_H

#include <stddef.h>

#include "rules/board.h"
#include "support/error.h"

/* Room for any move text this module writes, with its NUL. */
#define XQ_MOVE_TEXT_MAX 24

/* Writes 4 characters and a NUL into buf (at least 5 bytes). */
void xq_move_print(xq_move_t m, char *buf);
/* Parses exactly 4 characters of coordinates (no legality check). XQ_EMOVE on error. */
int xq_move_parse(const char *s, xq_move_t *m, xq_errbuf_t *eb);
/* Parses and checks legality in pos. XQ_EMOVE with a reason on error. */
int xq_move_parse_legal(xq_pos_t *pos, const char *s, xq_move_t *m, xq_errbuf_t *eb);

/* Parses a WXF or Chinese move (either is recognised) into a legal move of pos's side to
 * move. XQ_EMOVE with the reason (not a move, no legal move fits, or ambiguous: the
 * candidates named) in eb. pos is only read (non-const for the move generator). */
int xq_move_parse_wxf(xq_pos_t *pos, const char *s, xq_move_t *m, xq_errbuf_t *eb);
/* Parses s in any of the three notations (ICCS, "H2-E2", WXF or Chinese) into a legal move
 * of pos; blanks around s are ignored. XQ_EMOVE with the reason in eb. */
int xq_move_parse_any(xq_pos_t *pos, const char *s, xq_move_t *m, xq_errbuf_t *eb);

/* Writes the legal move m of pos in WXF ("C2=5", "+P7=6") into buf (n bytes, at least
 * XQ_MOVE_TEXT_MAX). 0, or XQ_EMOVE when m is not legal in pos (buf then holds "?"). */
int xq_move_to_wxf(xq_pos_t *pos, xq_move_t m, char *buf, size_t n);
/* The same in Chinese notation, UTF-8 ("炮二平五", "马8进7"). */
int xq_move_to_chinese(xq_pos_t *pos, xq_move_t m, char *buf, size_t n);

#endif
