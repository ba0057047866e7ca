/*
 * cmd_bench_movegen.c: `xqz bench movegen`: perft node rates on a few positions and the
 * rate of random self-play games (generate, adjudicate, make), the work a self-play
 * worker does besides the network. Progress goes to stderr, the table to stdout.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "rules/fen.h"
#include "rules/movegen.h"
#include "rules/rules.h"
#include "support/clock.h"

static const struct {
  const char *name, *fen;
  int depth;
} bench_positions[] = {
    {"start", XQ_START_FEN, 4},
    {"middlegame", "r1bakab1r/9/1cn3nc1/p1p1p1p1p/9/2P6/P3P1P1P/1C2C1N2/9/RNBAKAB1R b - - 0 1", 4},
    {"endgame", "3k5/4a4/4b4/9/2p6/9/9/4B4/4A4/2R1KC3 w - - 0 1", 5},
};

int xqz_bench_movegen(int argc, char **argv) {
  int games = 200;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      printf("usage: xqz bench movegen [--games N]\n");
      return 0;
    }
    if (!strcmp(argv[i], "--games") && i + 1 < argc) games = atoi(argv[++i]);
    else {
      fprintf(stderr, "usage: xqz bench movegen [--games N]\n");
      return 2;
    }
  }
  if (games < 1) games = 1;
  static xq_pos_t pos;
  xq_errbuf_t eb;
  printf("%-12s %6s %14s %9s %14s\n", "position", "depth", "nodes", "seconds", "nodes/s");
  for (size_t i = 0; i < sizeof bench_positions / sizeof bench_positions[0]; i++) {
    if (xq_fen_parse(&pos, bench_positions[i].fen, &eb)) {
      fprintf(stderr, "bench movegen: bad built-in FEN: %s\n", eb.msg);
      return 1;
    }
    double t0 = xq_clock_s();
    uint64_t n = xq_perft(&pos, bench_positions[i].depth);
    double dt = xq_clock_s() - t0;
    printf("%-12s %6d %14llu %9.3f %14.0f\n", bench_positions[i].name, bench_positions[i].depth,
           (unsigned long long)n, dt, n / dt);
    fflush(stdout);
  }
  /* Random games: the rules work of self-play without a network. */
  uint64_t rng = 0x1234567ull, plies = 0;
  double t0 = xq_clock_s();
  for (int g = 0; g < games; g++) {
    xq_pos_startpos(&pos);
    for (;;) {
      xq_outcome_t o = xq_adjudicate(&pos, 400);
      if (o.result != XQ_RESULT_NONE) break;
      xq_move_t moves[XQ_MAX_MOVES];
      int n = xq_gen_legal(&pos, moves);
      rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
      xq_pos_make(&pos, moves[rng % (uint64_t)n]);
      plies++;
    }
  }
  double dt = xq_clock_s() - t0;
  printf("random games: %d games, %llu plies in %.3f s: %.0f games/s, %.0f plies/s\n", games,
         (unsigned long long)plies, dt, games / dt, plies / dt);
  return 0;
}
