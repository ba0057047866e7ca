/* cmd_bench.c: `xqz bench WHAT`: dispatches to the benchmark of each subsystem. */
#include <stdio.h>
#include <string.h>

#include "commands.h"

int xqz_cmd_bench(int argc, char **argv) {
  if (argc >= 2 && !strcmp(argv[1], "movegen")) return xqz_bench_movegen(argc - 1, argv + 1);
  if (argc >= 2 && !strcmp(argv[1], "nn")) return xqz_bench_nn(argc - 1, argv + 1);
  if (argc >= 2 && !strcmp(argv[1], "selfplay")) return xqz_bench_selfplay(argc - 1, argv + 1);
  if (argc >= 2 && !strcmp(argv[1], "coordinator")) return xqz_bench_coordinator(argc - 1, argv + 1);
  if (argc >= 2 && !strcmp(argv[1], "train")) return xqz_bench_train(argc - 1, argv + 1);
  fprintf(stderr, "usage: xqz bench movegen [--depth N]\n"
                  "       xqz bench nn [--threads N] [--json]\n"
                  "       xqz bench selfplay | coordinator | train (each: --help)\n");
  return 2;
}
