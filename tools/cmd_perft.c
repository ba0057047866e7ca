/*
 * cmd_perft.c: `xqz perft FEN|startpos DEPTH [--divide]`. Prints one "move: count" line
 * per legal move with --divide, and always the total alone on the last line; the time and
 * nodes per second go to stderr so scripts can compare stdout with other engines.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_options.h"
#include "commands.h"
#include "rules/fen.h"
#include "rules/movegen.h"
#include "rules/notation.h"
#include "support/clock.h"

/* The command line's one option. */
typedef struct {
  bool divide;
} perft_opts_t;

static const xq_opt_t rows[] = {
    {"divide", XQ_OPTION_FLAG, XQ_OPT_FIELD(perft_opts_t, divide), NULL, 0, 0,
     .help = "also print one 'move: count' line per legal move (ICCS)"},
};
static const xq_opts_t TABLE = {rows, (int)(sizeof rows / sizeof rows[0]), XQ_OPTS_IN_RANGE};

static void usage(FILE *f) {
  fprintf(f, "usage: xqz perft FEN|startpos DEPTH [--divide]\n"
             "  Counts the leaf nodes of the legal move tree of DEPTH plies (1..8).\n");
  xq_opts_help(&TABLE, f, 8);
}

int xqz_cmd_perft(int argc, char **argv) {
  perft_opts_t o = {0};
  const char **words = calloc((size_t)argc + 1, sizeof *words);
  int nwords = 0;
  if (!words) return 1;
  int st = xqz_options_parse("perft", &TABLE, &o, argc, argv, words, &nwords, usage);
  if (st < 0 && nwords != 2) st = xqz_usage_error("perft", "give FEN|startpos DEPTH [--divide]");
  const char *fen = words[0], *depth_s = words[1];
  free(words);
  if (st >= 0) return st;
  int divide = o.divide;
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
