/* cmd_bench.c: `xqz bench WHAT`: dispatches to the benchmark of each subsystem. */
#include <stdio.h>
#include <string.h>

#include "commands.h"

/* The five benchmarks, one line each; `xqz bench WHAT --help` gives each one's options. */
static void bench_usage(FILE *f) {
  fprintf(f, "usage: xqz bench WHAT [OPTIONS]   (xqz bench WHAT --help: its options)\n\n"
             "  movegen      move generation: perft nodes/s on three positions [--games N]\n"
             "  nn           the network's forward pass and its GEMM shapes [--threads N] [--json]\n"
             "  selfplay     self-play games/s and positions/s of a net [--net F] [--sims S]\n"
             "  coordinator  the coordinator under simulated workers and a trainer --endpoint E\n"
             "  train        training samples/s by net size and threads [--sizes L] [--threads L]\n");
}

int xqz_cmd_bench(int argc, char **argv) {
  if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
                    !strcmp(argv[1], "help"))) {
    bench_usage(stdout);
    return 0;
  }
  if (argc >= 2 && !strcmp(argv[1], "movegen")) return xqz_bench_movegen(argc - 1, argv + 1);
  if (argc >= 2 && !strcmp(argv[1], "nn")) return xqz_bench_nn(argc - 1, argv + 1);
  if (argc >= 2 && !strcmp(argv[1], "selfplay")) return xqz_bench_selfplay(argc - 1, argv + 1);
  if (argc >= 2 && !strcmp(argv[1], "coordinator")) return xqz_bench_coordinator(argc - 1, argv + 1);
  if (argc >= 2 && !strcmp(argv[1], "train")) return xqz_bench_train(argc - 1, argv + 1);
  if (argc >= 2) fprintf(stderr, "xqz bench: unknown benchmark '%s'\n", argv[1]);
  bench_usage(stderr);
  return 2;
}
