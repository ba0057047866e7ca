/*
 * fen.c: FEN parsing with a specific error for every way a FEN can be wrong, and
 * printing. The parser reads the string strictly left to right and never past its NUL.
 */
#include <assert.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rules/fen.h"
#include "rules/movegen.h"
#include "rules/tables.h"

static const char piece_chars[] = " KABNRCP"; /* index = piece type */

static int piece_from_char(char c) {
  int colour = isupper((unsigned char)c) ? XQ_RED : XQ_BLACK;
  switch (toupper((unsigned char)c)) {
    case 'K': return xq_pc_make(colour, XQ_KING);
    case 'A': return xq_pc_make(colour, XQ_ADVISOR);
    case 'B': case 'E': return xq_pc_make(colour, XQ_ELEPHANT);
    case 'N': case 'H': return xq_pc_make(colour, XQ_HORSE);
    case 'R': return xq_pc_make(colour, XQ_ROOK);
    case 'C': return xq_pc_make(colour, XQ_CANNON);
    case 'P': return xq_pc_make(colour, XQ_PAWN);
    default: return 0;
  }
}

static const char *type_name(int type) {
  static const char *names[] = {"", "king", "advisor", "elephant", "horse", "rook", "cannon", "pawn"};
  return names[type];
}

static void sq_name(int sq, char *buf) {
  buf[0] = (char)('a' + xq_sq_file(sq));
  buf[1] = (char)('0' + xq_sq_rank(sq));
  buf[2] = 0;
}

/* Parses the piece placement field; *s is advanced past it. */
static int parse_board(xq_pos_t *pos, const char **s, xq_errbuf_t *eb) {
  const char *p = *s;
  int rank = 9, file = 0;
  for (;; p++) {
    char c = *p;
    if (c == '/' || c == ' ' || c == 0) {
      if (file != 9)
        return xq_err_set(eb, XQ_EFEN, "rank %d (FEN row %d) has %d files, expected 9", rank,
                          10 - rank, file);
      if (c != '/') break;
      if (--rank < 0) return xq_err_set(eb, XQ_EFEN, "more than 10 ranks");
      file = 0;
    } else if (c >= '1' && c <= '9') {
      file += c - '0';
      if (file > 9)
        return xq_err_set(eb, XQ_EFEN, "rank %d (FEN row %d) has more than 9 files", rank, 10 - rank);
    } else {
      int pc = piece_from_char(c);
      if (!pc)
        return xq_err_set(eb, XQ_EFEN, "unknown piece '%c' at rank %d (FEN row %d)",
                          isprint((unsigned char)c) ? c : '?', rank, 10 - rank);
      if (file >= 9)
        return xq_err_set(eb, XQ_EFEN, "rank %d (FEN row %d) has more than 9 files", rank, 10 - rank);
      xq_pos_put(pos, xq_sq(file, rank), pc);
      file++;
    }
  }
  if (rank != 0) return xq_err_set(eb, XQ_EFEN, "%d ranks, expected 10", 10 - rank);
  *s = p;
  return 0;
}

/* Checks piece counts, kings and that every piece stands where it can ever stand. */
static int validate(xq_pos_t *pos, xq_errbuf_t *eb) {
  static const int max_count[8] = {0, 1, 2, 2, 2, 2, 2, 5};
  for (int c = 0; c < 2; c++) {
    const char *cn = c == XQ_RED ? "red" : "black";
    for (int t = XQ_KING; t <= XQ_PAWN; t++) {
      int n = pos->count[xq_pc_make(c, t)];
      if (t == XQ_KING && n == 0) return xq_err_set(eb, XQ_EFEN, "%s king is missing", cn);
      if (n > max_count[t])
        return xq_err_set(eb, XQ_EFEN, "%s has %d %ss, at most %d allowed", cn, n, type_name(t),
                          max_count[t]);
    }
  }
  for (int sq = 0; sq < XQ_SQUARES; sq++) {
    int pc = pos->board[sq];
    if (pc && !xq_can_stand_[pc][sq]) {
      char name[3];
      sq_name(sq, name);
      return xq_err_set(eb, XQ_EFEN, "%s %s on %s, a square it can never reach",
                        xq_pc_colour(pc) == XQ_RED ? "red" : "black", type_name(xq_pc_type(pc)), name);
    }
  }
  /* The side that has just moved may not be left in check (kings facing included). */
  if (xq_king_attacked_(pos, pos->side ^ 1))
    return xq_err_set(eb, XQ_EFEN, "%s (not to move) is in check",
                      pos->side == XQ_RED ? "black" : "red");
  return 0;
}

int xq_pos_setup_done(xq_pos_t *pos, int side, xq_errbuf_t *eb) {
  assert(side == XQ_RED || side == XQ_BLACK);
  pos->side = (uint8_t)side;
  if (side == XQ_BLACK) pos->key ^= xq_zob_side_;
  int rc = validate(pos, eb);
  if (rc) {
    xq_pos_clear(pos);
    return rc;
  }
  pos->in_check = xq_king_attacked_(pos, pos->side);
  return 0;
}

/* Parses an optional non-negative decimal counter field. */
static int parse_counter(const char **s, long max, long *out) {
  const char *p = *s;
  if (!isdigit((unsigned char)*p)) return -1;
  long v = 0;
  while (isdigit((unsigned char)*p)) {
    v = v * 10 + (*p++ - '0');
    if (v > max) return -1;
  }
  if (*p != ' ' && *p != 0) return -1;
  *out = v;
  *s = p;
  return 0;
}

static const char *skip_spaces(const char *p) {
  while (*p == ' ') p++;
  return p;
}

int xq_fen_parse(xq_pos_t *pos, const char *fen, xq_errbuf_t *eb) {
  xq_pos_clear(pos);
  if (!fen) return xq_err_set(eb, XQ_EFEN, "no FEN given");
  const char *p = skip_spaces(fen);
  if (!*p) return xq_err_set(eb, XQ_EFEN, "empty FEN");
  int rc = parse_board(pos, &p, eb);
  if (rc) goto fail;
  p = skip_spaces(p);
  int side;
  if (*p == 'w' || *p == 'r' || *p == 'W' || *p == 'R') {
    side = XQ_RED;
  } else if (*p == 'b' || *p == 'B') {
    side = XQ_BLACK;
  } else if (!*p) {
    rc = xq_err_set(eb, XQ_EFEN, "side to move is missing");
    goto fail;
  } else {
    rc = xq_err_set(eb, XQ_EFEN, "bad side to move '%c' (expected w, r or b)",
                    isprint((unsigned char)*p) ? *p : '?');
    goto fail;
  }
  p++;
  if (*p && *p != ' ') {
    rc = xq_err_set(eb, XQ_EFEN, "side to move must be a single letter");
    goto fail;
  }
  /* Two optional '-' placeholder fields, then optional counters. */
  p = skip_spaces(p);
  for (int i = 0; i < 2 && *p == '-'; i++) {
    p++;
    if (*p && *p != ' ') {
      rc = xq_err_set(eb, XQ_EFEN, "unexpected text after '-' placeholder");
      goto fail;
    }
    p = skip_spaces(p);
  }
  long halfmove = 0, fullmove = 1;
  if (*p) {
    if (parse_counter(&p, 100000, &halfmove)) {
      rc = xq_err_set(eb, XQ_EFEN, "bad no-capture counter (expected a number 0..1000)");
      goto fail;
    }
    p = skip_spaces(p);
    /* pos->fullmove is 16 bits: a larger number would silently wrap. */
    if (*p && (parse_counter(&p, UINT16_MAX, &fullmove) || fullmove < 1)) {
      rc = xq_err_set(eb, XQ_EFEN, "bad fullmove number (expected a number 1..65535)");
      goto fail;
    }
    p = skip_spaces(p);
    if (*p) {
      rc = xq_err_set(eb, XQ_EFEN, "unexpected text after the fullmove number");
      goto fail;
    }
  }
  if (halfmove > XQ_FEN_RULE60_MAX) {
    rc = xq_err_set(eb, XQ_EFEN, "no-capture counter %ld is out of range", halfmove);
    goto fail;
  }
  pos->rule60 = (uint16_t)halfmove;
  pos->fullmove = (uint16_t)fullmove;
  return xq_pos_setup_done(pos, side, eb);
fail:
  xq_pos_clear(pos);
  return rc;
}

void xq_fen_print(const xq_pos_t *pos, char *buf) {
  char *o = buf;
  for (int rank = 9; rank >= 0; rank--) {
    int empty = 0;
    for (int file = 0; file < 9; file++) {
      int pc = pos->board[xq_sq(file, rank)];
      if (!pc) {
        empty++;
        continue;
      }
      if (empty) *o++ = (char)('0' + empty), empty = 0;
      char c = piece_chars[xq_pc_type(pc)];
      *o++ = xq_pc_colour(pc) == XQ_RED ? c : (char)tolower((unsigned char)c);
    }
    if (empty) *o++ = (char)('0' + empty);
    if (rank) *o++ = '/';
  }
  sprintf(o, " %c - - %d %d", pos->side == XQ_RED ? 'w' : 'b', pos->rule60, xq_pos_fullmove(pos));
}
