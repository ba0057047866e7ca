/* notation.c: ICCS/UCI coordinate notation for moves ("h2e2"). */
#include <ctype.h>

#include "rules/movegen.h"
#include "rules/notation.h"

void xq_move_print(xq_move_t m, char *buf) {
  int from = xq_mv_from(m), to = xq_mv_to(m);
  buf[0] = (char)('a' + xq_sq_file(from));
  buf[1] = (char)('0' + xq_sq_rank(from));
  buf[2] = (char)('a' + xq_sq_file(to));
  buf[3] = (char)('0' + xq_sq_rank(to));
  buf[4] = 0;
}

static int parse_square(const char *s, int *sq) {
  char f = (char)tolower((unsigned char)s[0]);
  if (f < 'a' || f > 'i' || s[1] < '0' || s[1] > '9') return -1;
  *sq = xq_sq(f - 'a', s[1] - '0');
  return 0;
}

int xq_move_parse(const char *s, xq_move_t *m, xq_errbuf_t *eb) {
  int from, to;
  if (!s || !s[0] || !s[1] || !s[2] || !s[3] || (s[4] && !isspace((unsigned char)s[4])))
    return xq_err_set(eb, XQ_EMOVE, "a move is 4 characters of coordinates, like h2e2");
  if (parse_square(s, &from) || parse_square(s + 2, &to))
    return xq_err_set(eb, XQ_EMOVE, "bad square in move (files a-i, ranks 0-9, like h2e2)");
  if (from == to) return xq_err_set(eb, XQ_EMOVE, "move goes nowhere");
  *m = xq_mv_make(from, to);
  return 0;
}

int xq_move_parse_legal(xq_pos_t *pos, const char *s, xq_move_t *m, xq_errbuf_t *eb) {
  int rc = xq_move_parse(s, m, eb);
  if (rc) return rc;
  if (!xq_move_is_legal(pos, *m)) {
    char buf[5];
    xq_move_print(*m, buf);
    return xq_err_set(eb, XQ_EMOVE, "%s is not a legal move in this position", buf);
  }
  return 0;
}
