/* main.c: the xqz multi-tool's entry point; dispatches to one cmd_*.c per subcommand. */
#include <cblas.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "nn/blas_core.h"
#include "wire/wire.h"

typedef struct {
  const char *name;
  int (*run)(int argc, char **argv);
  const char *help;
} xqz_command_t;

static const xqz_command_t commands[] = {
    {"perft", xqz_cmd_perft, "count legal move paths: perft FEN|startpos DEPTH [--divide]"},
    {"bench", xqz_cmd_bench, "benchmarks: bench movegen | nn | selfplay | coordinator | train (bench --help)"},
    {"net", xqz_cmd_net, "networks: net init --size S|--blocks B --channels C --out F | net info F"},
    {"arena", xqz_cmd_arena, "match two players: arena A B --games N [--openings F] [--sprt E0,E1]"},
    {"engine", xqz_cmd_engine, "UCI/UCCI engine on stdin/stdout: engine [--net FILE | --campaign DIR] [--threads N] [--seed S] (default: the shipped net)"},
    {"play", xqz_cmd_play, "play a net in the terminal: play [--net FILE | --campaign DIR] [--sims N] [--as red|black] (default: the shipped net)"},
    {"explain", xqz_cmd_explain, "what a net sees: explain FEN|startpos [--net FILE] [--json] (value, worth of each piece; default: the shipped net)"},
    {"status", xqz_cmd_status, "a running campaign on one screen: status [--coordinator ADDR] [--json]"},
    {"games", xqz_cmd_games, "how stored games end and what they teach: games CAMPAIGN|FILE... [--adjudicate P] [--json]; games export ... (PGN)"},
    {"promotions", xqz_cmd_promotions, "gating history: promotions [--coordinator ADDR] [--follow] [--json]"},
    {"population", xqz_cmd_population, "a population's members, ratings and lineage: population [--coordinator ADDR] [--follow] [--json]"},
    {"version", xqz_cmd_version, "print the software and protocol versions (--verbose: and the BLAS kernels)"},
    {"selfplay", xqz_cmd_selfplay, "self-play games to a file: selfplay --net F --games N --out F [--threads T] [--parallel G] [--sims S]"},
    {"keygen", xqz_cmd_keygen, "CURVE key pair: keygen [--dir DIR] [--force] NAME"},
    {"join-command", xqz_cmd_join, "the command that adds a worker on another machine: join-command [--campaign DIR]"},
    {"ban", xqz_cmd_ban, "ban a worker id or key: ban TARGET [--reason TEXT] [--coordinator ADDR]"},
    {"unban", xqz_cmd_unban, "lift a ban: unban TARGET [--coordinator ADDR]"},
    {"enrol-token", xqz_cmd_enrol_token, "a one-time token that adds a worker's key (CURVE): enrol-token [--ttl 1h] [--campaign DIR]"},
};

static void usage(FILE *f) {
  fprintf(f, "usage: xqz COMMAND [ARGS]\n\ncommands:\n");
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
    fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].help);
  fprintf(f, "\nRun 'xqz COMMAND --help' for a command's options.\n");
}

int xqz_cmd_version(int argc, char **argv) {
  bool verbose = argc == 2 && !strcmp(argv[1], "--verbose");
  if (argc > 2 || (argc == 2 && !verbose)) {
    fprintf(stderr, "usage: xqz version [--verbose]  (--verbose: also the BLAS kernels in use)\n");
    return 2;
  }
  printf("%s\n", XQ_VERSION_LINE);
  if (!verbose) return 0;
  const char *was = nn_blas_core_replaced();
  printf("blas: %s; core %s", openblas_get_config(), nn_blas_core());
  if (was)
    printf(" (set by xqzero: OpenBLAS chose %s, a core without AVX2, on this CPU that has it)", was);
  else if (getenv("OPENBLAS_CORETYPE"))
    printf(" (OPENBLAS_CORETYPE=%s)", getenv("OPENBLAS_CORETYPE"));
  printf("\n");
  return 0;
}

int main(int argc, char **argv) {
  nn_blas_core_setup(argv); /* first: may restart this program on better BLAS kernels */
  if (argc < 2) {
    usage(stderr);
    return 2;
  }
  if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
    usage(stdout);
    return 0;
  }
  if (!strcmp(argv[1], "--version")) return xqz_cmd_version(argc - 1, argv + 1);
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
    if (!strcmp(argv[1], commands[i].name)) return commands[i].run(argc - 1, argv + 1);
  fprintf(stderr, "xqz: unknown command '%s'\n\n", argv[1]);
  usage(stderr);
  return 2;
}
