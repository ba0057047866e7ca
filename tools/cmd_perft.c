/*
 * cmd_perft.c: `xqz perft FEN|startpos DEPTH [--divide]`. Prints one "move: count" line
 * per legal move with --divide, and always the total alone on the last line; the time and
 * nodes per second go to stderr so scripts can compare stdout with other engines.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "rules/fen.h"
#include "rules/movegen.h"
#include "rules/notation.h"
#include "support/clock.h"

static int usage(void) {
  fprintf(stderr,
          "usage: xqz perft FEN|startpos DEPTH [--divide]\n"
          "  Counts the leaf nodes of the legal move tree of DEPTH plies (1..8).\n"
          "  --divide  also print one 'move: count' line per legal move (ICCS)\n");
  return 2;
}

int xqz_cmd_perft(int argc, char **argv) {
  const char *fen = NULL, *depth_s = NULL;
  int divide = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--divide")) divide = 1;
    else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) return usage(), 0;
    else if (!fen) fen = argv[i];
    else if (!depth_s) depth_s = argv[i];
    else return usage();
  }
  if (!fen || !depth_s) return usage();
  char *end;
  long depth = strtol(depth_s, &end, 10);
  if (*end || depth < 1 || depth > 8) {
    fprintf(stderr, "xqz perft: depth must be a number from 1 to 8, not '%s'\n", depth_s);
    return 2;
  }
  static xq_pos_t pos;
  xq_errbuf_t eb;
  if (!strcmp(fen, "startpos")) fen = XQ_START_FEN;
  if (xq_fen_parse(&pos, fen, &eb)) {
    fprintf(stderr, "xqz perft: bad FEN: %s\n", eb.msg);
    return 2;
  }
  double t0 = xq_clock_s();
  uint64_t total = 0;
  if (divide) {
    xq_move_t moves[XQ_MAX_MOVES];
    int n = xq_gen_legal(&pos, moves);
    for (int i = 0; i < n; i++) {
      char buf[5];
      xq_pos_make(&pos, moves[i]);
      uint64_t c = xq_perft(&pos, (int)depth - 1);
      xq_pos_unmake(&pos);
      xq_move_print(moves[i], buf);
      printf("%s: %llu\n", buf, (unsigned long long)c);
      total += c;
    }
  } else {
    total = xq_perft(&pos, (int)depth);
  }
  double dt = xq_clock_s() - t0;
  printf("%llu\n", (unsigned long long)total);
  fprintf(stderr, "perft %ld: %llu nodes in %.3f s, %.0f nodes/s\n", depth,
          (unsigned long long)total, dt, dt > 0 ? total / dt : 0.0);
  return 0;
}
