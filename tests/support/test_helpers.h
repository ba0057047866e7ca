/*
 * test_helpers.h: small shared helpers for the rules tests (parse-or-fail, make a list of
 * ICCS moves). Header-only, included by the test_*.c of tests/unit/ and tests/daemon/ after
 * cmocka.h.
 */
#ifndef XQZ_TEST_HELPERS_H
#define XQZ_TEST_HELPERS_H

#include <stdio.h>
#include <string.h>

#include "rules/fen.h"
#include "rules/notation.h"

/* Parses fen into pos or fails the test with the parser's reason. */
static inline void th_parse(xq_pos_t *pos, const char *fen) {
  xq_errbuf_t eb = {{0}};
  int rc = xq_fen_parse(pos, fen, &eb);
  if (rc) fail_msg("FEN rejected: %s: %s", fen, eb.msg);
}

/* Makes each space-separated ICCS move, failing the test on an illegal one. */
static inline void th_play(xq_pos_t *pos, const char *moves) {
  char buf[8];
  const char *p = moves;
  while (*p) {
    while (*p == ' ') p++;
    if (!*p) break;
    size_t n = strcspn(p, " ");
    if (n >= sizeof buf) fail_msg("bad move token in '%s'", moves);
    memcpy(buf, p, n);
    buf[n] = 0;
    xq_move_t m;
    xq_errbuf_t eb = {{0}};
    if (xq_move_parse_legal(pos, buf, &m, &eb)) fail_msg("move %s: %s", buf, eb.msg);
    xq_pos_make(pos, m);
    p += n;
  }
}

#endif
