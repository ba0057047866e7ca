/*
 * ref_move_parse.h: a reference reading of a move string, independent of notation.c, for
 * the fuzz tests: four coordinate characters (files a-i in either case, ranks 0-9), then
 * the end or white space, and two different squares. Returns the move or 0. Header-only.
 */
#ifndef XQZ_REF_MOVE_PARSE_H
#define XQZ_REF_MOVE_PARSE_H

#include <ctype.h>
#include <string.h>

#include "rules/board.h"

static inline xq_move_t ref_move_parse(const char *s) {
  size_t n = strlen(s);
  if (n < 4 || (n > 4 && !isspace((unsigned char)s[4]))) return 0;
  int sq[2];
  for (int k = 0; k < 2; k++) {
    int f = tolower((unsigned char)s[2 * k]) - 'a', r = s[2 * k + 1] - '0';
    if (f < 0 || f > 8 || r < 0 || r > 9) return 0;
    sq[k] = xq_sq(f, r);
  }
  return sq[0] == sq[1] ? 0 : xq_mv_make(sq[0], sq[1]);
}

#endif
