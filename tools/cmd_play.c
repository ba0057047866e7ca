/*
 * cmd_play.c: `xqz play`, a human against a net (or any player spec) in the terminal.
 *
 * The board is drawn with files a-i and ranks 0-9, Red at the bottom (upper-case letters
 * for Red, lower case for Black, or Chinese characters with --unicode). The human types
 * ICCS moves (h2e2); illegal input is explained and asked again. With --net the program
 * searches with MCTS itself so it can show the value it sees; with --opponent SPEC any
 * player from players.h plays. Reads stdin line by line, so a pipe can script a game.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "rules/fen.h"
#include "rules/movegen.h"
#include "rules/notation.h"
#include "rules/rules.h"
#include "search/engine_proto.h"
#include "search/evaluator.h"
#include "search/mcts.h"
#include "search/players.h"
#include "default_net.h"
#include "support/campaign_nets.h"

#define PLAY_LINE_MAX 256

typedef struct {
  xq_pos_t *pos;
  int human;              /* XQ_RED or XQ_BLACK */
  bool unicode;
  int sims;
  xq_evaluator_t *ev;     /* --net */
  xq_mcts_t *mcts;
  xq_mcts_result_t *res;
  xq_player_t *player;    /* --opponent */
} play_t;

static void play_usage(FILE *f) {
  fprintf(f,
          "usage: xqz play [--net FILE | --campaign DIR] [--sims N] | --opponent SPEC\n"
          "                [--as red|black]\n"
          "                [--seed S] [--fen FEN] [--unicode]\n\n"
          "Play against a net (MCTS with a Gumbel root, N simulations per move, default 200)\n"
          "or any player spec (random, greedy, alphabeta:D, net:FILE[:SIMS], gnet:FILE[:SIMS],\n"
          "gtnet:FILE[:SIMS], uci:CMD). You play Red unless\n"
          "--as black. --campaign DIR plays the best net of the campaign in DIR; with no net\n"
          "and no opponent, the trained net shipped in nets/ (or $XQZ_NET). Type moves\n"
          "in ICCS coordinates (h2e2), or undo, help, quit.\n");
}

static void print_help(void) {
  printf("Moves are ICCS coordinates: the from square then the to square, files a-i from\n"
         "left to right, ranks 0-9 from Red's side (h2e2 moves the piece on h2 to e2).\n"
         "Commands: undo (take back your last move), help, quit.\n");
}

/* Red: K A B N R C P upper case; Black lower case. */
static const char *piece_glyph(int pc, bool unicode) {
  static const char *const ascii[16] = {".", "K", "A", "B", "N", "R", "C", "P", "?",
                                        "k", "a", "b", "n", "r", "c", "p"};
  static const char *const hanzi[16] = {"．", "帅", "仕", "相", "马", "车", "炮", "兵", "？",
                                        "将", "士", "象", "马", "车", "炮", "卒"};
  return unicode ? hanzi[pc & 15] : ascii[pc & 15];
}

static void draw_board(const play_t *g) {
  const char *sep = g->unicode ? "" : " ";
  printf("\n    a b c d e f g h i\n");
  for (int r = XQ_RANKS - 1; r >= 0; r--) {
    printf(" %d  ", r);
    for (int f = 0; f < XQ_FILES; f++)
      printf("%s%s", piece_glyph(g->pos->board[xq_sq(f, r)], g->unicode), f < XQ_FILES - 1 ? sep : "");
    printf("  %d\n", r);
    if (r == 5) printf("    ~~~~~ river ~~~~~\n");
  }
  printf("    a b c d e f g h i\n");
  char fen[XQ_FEN_MAX];
  xq_fen_print(g->pos, fen);
  printf("%s to move%s   FEN %s\n", g->pos->side == XQ_RED ? "Red" : "Black",
         g->pos->in_check ? " (in check)" : "", fen);
}

/* Reads a line; trims blanks. Returns false at the end of input. */
static bool read_line(char *buf, size_t size) {
  if (!fgets(buf, (int)size, stdin)) return false;
  size_t n = strlen(buf);
  if (n && buf[n - 1] != '\n' && !feof(stdin)) {
    int c; /* an over-long line: drop the rest, the move check will reject it */
    while ((c = getchar()) != EOF && c != '\n') {}
  }
  while (n && (buf[n - 1] == '\n' || buf[n - 1] == '\r' || buf[n - 1] == ' ' || buf[n - 1] == '\t'))
    buf[--n] = 0;
  size_t lead = strspn(buf, " \t");
  memmove(buf, buf + lead, n - lead + 1);
  return true;
}

/* The program's move; returns 0 or an error code (printed). */
static int engine_move(play_t *g, xq_move_t *m) {
  xq_errbuf_t eb = {{0}};
  char mv[8];
  if (g->player) {
    int rc = xq_player_move(g->player, g->pos, m, &eb);
    if (rc) {
      fprintf(stderr, "xqz play: %s failed: %s\n", xq_player_name(g->player), eb.msg);
      return rc;
    }
    xq_move_print(*m, mv);
    printf("%s plays %s\n", xq_player_name(g->player), mv);
    return 0;
  }
  xq_mcts_limits_t lim = {.nodes = g->sims};
  int rc = xq_mcts_search(g->mcts, g->pos, &lim, g->res);
  if (rc || !g->res->best) {
    fprintf(stderr, "xqz play: search failed: %s\n", xq_strerror(rc ? rc : XQ_EINVAL));
    return rc ? rc : XQ_EINVAL;
  }
  *m = g->res->best;
  xq_move_print(*m, mv);
  printf("xqzero plays %s (value %+.3f for xqzero, about %+d cp; %" PRId64 " simulations)\n", mv,
         (double)g->res->value, xq_proto_value_to_cp(g->res->value), g->res->simulations);
  return 0;
}

static int game_loop(play_t *g) {
  char line[PLAY_LINE_MAX];
  printf("You play %s. Type help for help.\n", g->human == XQ_RED ? "Red" : "Black");
  for (;;) {
    xq_outcome_t oc = xq_adjudicate(g->pos, 0);
    if (oc.result != XQ_RESULT_NONE) {
      draw_board(g);
      int winner = oc.result == XQ_RESULT_RED_WIN ? XQ_RED : oc.result == XQ_RESULT_BLACK_WIN ? XQ_BLACK : -1;
      printf("Game over: %s by %s. %s\n", xq_result_name(oc.result), xq_reason_name(oc.reason),
             winner < 0 ? "Draw." : winner == g->human ? "You win." : "You lose.");
      return 0;
    }
    if (g->pos->side != g->human) {
      xq_move_t m;
      if (engine_move(g, &m)) return 1;
      xq_pos_make(g->pos, m);
      continue;
    }
    draw_board(g);
    printf("your move> ");
    fflush(stdout);
    if (!read_line(line, sizeof line)) {
      printf("\nEnd of input: bye.\n");
      return 0;
    }
    if (!isatty(STDIN_FILENO)) printf("%s\n", line); /* a scripted game reads like a typed one */
    if (!line[0]) continue;
    if (!strcmp(line, "quit") || !strcmp(line, "exit")) {
      printf("Bye.\n");
      return 0;
    }
    if (!strcmp(line, "help") || !strcmp(line, "?")) {
      print_help();
      continue;
    }
    if (!strcmp(line, "undo")) {
      /* Take back the program's reply and the human's move before it. */
      if (g->pos->ply < 2) {
        printf("Nothing to undo.\n");
        continue;
      }
      xq_pos_unmake(g->pos);
      xq_pos_unmake(g->pos);
      if (g->mcts) xq_mcts_clear(g->mcts);
      printf("Took back one move each.\n");
      continue;
    }
    xq_move_t m;
    xq_errbuf_t eb = {{0}};
    if (xq_move_parse_legal(g->pos, line, &m, &eb)) {
      printf("Illegal move '%s': %s. Type a move like h2e2, or help.\n", line, eb.msg);
      continue;
    }
    if (g->pos->ply >= XQ_MAX_HISTORY - 1) {
      printf("Game over: the game is too long to record. Draw.\n");
      return 0;
    }
    xq_pos_make(g->pos, m);
  }
}

/* What the command line asks for, besides the fields it sets in play_t. */
typedef struct {
  const char *net, *spec, *fen;
  char best[4096]; /* --campaign: its best net's file */
  uint64_t seed;
} play_opts_t;

/* Fills o and g's settings from the command line. Returns -1 to go on, else the exit
 * code (0 after --help, 2 after bad usage, said on stderr). */
static int parse_args(play_opts_t *o, play_t *g, int argc, char **argv) {
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
      play_usage(stdout);
      return 0;
    }
    if (!strcmp(a, "--unicode")) {
      g->unicode = true;
      continue;
    }
    if (!v) {
      fprintf(stderr, "xqz play: '%s' needs a value (or is unknown)\n", a);
      play_usage(stderr);
      return 2;
    }
    char *end;
    errno = 0;
    if (!strcmp(a, "--net")) o->net = v;
    else if (!strcmp(a, "--campaign")) {
      xq_errbuf_t ceb = {{0}};
      if (xq_campaign_best_net(v, o->best, sizeof o->best, &ceb) < 0) {
        fprintf(stderr, "xqz play: %s\n", ceb.msg);
        return 2;
      }
      o->net = o->best;
      printf("The best net of campaign %s: %s\n", v, o->best);
    }
    else if (!strcmp(a, "--opponent")) o->spec = v;
    else if (!strcmp(a, "--fen")) o->fen = v;
    else if (!strcmp(a, "--as")) {
      if (!strcmp(v, "red")) g->human = XQ_RED;
      else if (!strcmp(v, "black")) g->human = XQ_BLACK;
      else {
        fprintf(stderr, "xqz play: --as takes red or black, not '%s'\n", v);
        return 2;
      }
    } else if (!strcmp(a, "--sims")) {
      long s = strtol(v, &end, 10);
      if (errno || *end || s < 1 || s > 10000000) {
        fprintf(stderr, "xqz play: bad --sims '%s' (1..10000000)\n", v);
        return 2;
      }
      g->sims = (int)s;
    } else if (!strcmp(a, "--seed")) {
      o->seed = strtoull(v, &end, 0);
      if (errno || *end || !*v) {
        fprintf(stderr, "xqz play: bad --seed '%s'\n", v);
        return 2;
      }
    } else {
      fprintf(stderr, "xqz play: unknown option '%s'\n", a);
      play_usage(stderr);
      return 2;
    }
    i++;
  }
  if (o->net && o->spec) {
    fprintf(stderr, "xqz play: give one of --net FILE, --campaign DIR or --opponent SPEC\n");
    play_usage(stderr);
    return 2;
  }
  if (!o->net && !o->spec) {
    xq_errbuf_t deb = {{0}};
    o->net = xqz_default_net(&deb);
    if (!o->net) {
      fprintf(stderr, "xqz play: %s\n", deb.msg);
      return 2;
    }
    printf("Playing the default net %s (--net FILE or --campaign DIR for another).\n", o->net);
  }
  return -1;
}

/* Sets up g's position and the program's side (the net's search or the player). Returns
 * -1 when ready, else the exit code (1, or 2 for a bad --fen or player spec), said on
 * stderr; what was made is g's, freed by play_close either way. */
static int play_open(play_t *g, const play_opts_t *o) {
  xq_errbuf_t eb = {{0}};
  int rc;
  g->pos = malloc(sizeof *g->pos);
  g->res = malloc(sizeof *g->res);
  if (!g->pos || !g->res) {
    fprintf(stderr, "xqz play: out of memory\n");
    return 1;
  }
  if (o->fen) {
    if (xq_fen_parse(g->pos, o->fen, &eb)) {
      fprintf(stderr, "xqz play: bad --fen: %s\n", eb.msg);
      return 2;
    }
  } else {
    xq_pos_startpos(g->pos);
  }
  if (o->net) {
    xq_mcts_config_t cfg;
    xq_mcts_config_default(&cfg);
    cfg.max_plies = XQ_MAX_HISTORY - 24; /* the tree must not outgrow the history */
    /* A Gumbel root: at a fixed number of simulations it beat PUCT on the same net by
     * +186 and +282 Elo (docs/results.md, Learning curve, 16). */
    cfg.search = XQ_SEARCH_GUMBEL;
    rc = xq_evaluator_net_new(&g->ev, o->net, cfg.batch, &eb);
    if (!rc) rc = xq_mcts_new(&g->mcts, &cfg, g->ev, o->seed, &eb);
    if (rc) {
      fprintf(stderr, "xqz play: cannot load %s: %s\n", o->net,
              eb.msg[0] ? eb.msg : xq_strerror(rc));
      return 1;
    }
  } else {
    rc = xq_player_new(&g->player, o->spec, o->seed, &eb);
    if (!rc) rc = xq_player_new_game(g->player, &eb);
    if (rc) {
      fprintf(stderr, "xqz play: opponent '%s': %s\n", o->spec,
              eb.msg[0] ? eb.msg : xq_strerror(rc));
      return 2;
    }
  }
  return -1;
}

static void play_close(play_t *g) {
  xq_player_free(&g->player);
  xq_mcts_free(&g->mcts);
  xq_evaluator_free(&g->ev);
  free(g->pos);
  free(g->res);
}

int xqz_cmd_play(int argc, char **argv) {
  play_opts_t o = {.seed = 1};
  play_t g = {.human = XQ_RED, .sims = 200};
  int status = parse_args(&o, &g, argc, argv);
  if (status >= 0) return status;
  status = play_open(&g, &o);
  if (status < 0) status = game_loop(&g);
  play_close(&g);
  return status;
}
