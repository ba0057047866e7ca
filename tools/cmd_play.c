/*
 * cmd_play.c: `xqz play`, a human against a net (or any player spec) in the terminal.
 *
 * The board is drawn from the player's side (Black's at the bottom with --as black), with
 * files a-i and ranks 0-9 and the player's file numbers 1-9 under it; upper-case letters
 * for Red and lower case for Black, or with --unicode the pieces as printed on a board
 * (Red 帥仕相俥傌炮兵, Black 將士象車馬砲卒), in colour where the terminal has it. The human
 * types moves in ICCS (h2e2), WXF (C2=5, +C=5) or Chinese (炮二平五, 马8进7): notation.h
 * reads them; an illegal one is explained, with one of the player's legal moves as an
 * example. Commands: hint, moves, save FILE (PGN, as `xqz games export` writes), undo,
 * help, quit; the moves are listed when the game ends. With --net the program searches
 * with MCTS itself so it can show the value it sees; with --opponent SPEC any player from
 * players.h plays. Reads stdin line by line, so a pipe can script a game.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "commands.h"
#include "rules/fen.h"
#include "rules/movegen.h"
#include "rules/notation.h"
#include "rules/rules.h"
#include "search/engine_proto.h"
#include "nn/nn_bf16.h"
#include "search/evaluator.h"
#include "search/mcts.h"
#include "search/players.h"
#include "cli_options.h"
#include "default_net.h"
#include "pgn_write.h"
#include "support/campaign_nets.h"

#define PLAY_LINE_MAX 256

enum { COLOR_AUTO, COLOR_ALWAYS, COLOR_NEVER };
#define ANSI_RED "\033[1;31m"
#define ANSI_BLACK "\033[1m" /* bold in the terminal's own colour: readable on any theme */
#define ANSI_LAST "\033[4m"  /* the last move's squares, underlined */
#define ANSI_OFF "\033[0m"

typedef struct {
  xq_pos_t *pos;
  int human;              /* XQ_RED or XQ_BLACK */
  bool unicode;
  int color_mode;         /* COLOR_AUTO, COLOR_ALWAYS, COLOR_NEVER (--color) */
  bool colored;           /* the board is coloured (color_mode resolved) */
  const char *start_fen;  /* where the game began */
  const char *opponent;   /* the program's name in a saved game */
  char name[4200];        /* "xqzero NETFILE" */
  int sims;
  xq_evaluator_t *ev;     /* --net */
  xq_mcts_t *mcts;
  xq_mcts_result_t *res;
  xq_player_t *player;    /* --opponent */
} play_t;

static void print_help(void) {
  printf("Moves, in any of three notations:\n"
         "  ICCS     the from square then the to square, files a-i from Red's left, ranks\n"
         "           0-9 from Red's side: h2e2 moves the piece on h2 to e2.\n"
         "  WXF      piece (K A E H R C P), its file, + forward, - back, = across, then the\n"
         "           file reached (across, or advisor/elephant/horse) or ranks moved:\n"
         "           C2=5, H8+7, R1+1. Files 1-9 count from your own right hand (the\n"
         "           numbers under the board). Two pieces on one file: +C=5 front, -C+1 rear.\n"
         "  Chinese  炮二平五, 马8进7, 前炮平五, 后马进六 (进 forward, 退 back, 平 across).\n"
         "Commands: hint (the program's suggestion), moves (the game so far), save FILE\n"
         "(the game as PGN), undo (take back your last move), help, quit.\n");
}

/* Red: K A B N R C P upper case; Black lower case. With unicode, the characters printed on
 * real pieces: each side has its own for every piece. */
static const char *piece_glyph(int pc, bool unicode) {
  static const char *const ascii[16] = {".", "K", "A", "B", "N", "R", "C", "P", "?",
                                        "k", "a", "b", "n", "r", "c", "p"};
  static const char *const hanzi[16] = {"．", "帥", "仕", "相", "傌", "俥", "炮", "兵", "？",
                                        "將", "士", "象", "馬", "車", "砲", "卒"};
  return unicode ? hanzi[pc & 15] : ascii[pc & 15];
}

/* Whether to colour: --color, else a terminal that can (not TERM=dumb) and no NO_COLOR
 * (https://no-color.org). */
static bool use_color(int mode) {
  if (mode != COLOR_AUTO) return mode == COLOR_ALWAYS;
  const char *term = getenv("TERM"), *no = getenv("NO_COLOR");
  return isatty(STDOUT_FILENO) && term && *term && strcmp(term, "dumb") && !(no && *no);
}

/* The board from the human's side: Red's ranks at the bottom for Red, Black's for Black
 * (files then run i..a). The player's own file numbers (1 at the right hand) under it. */
static void draw_board(const play_t *g) {
  const char *sep = g->unicode ? "" : " ";
  bool flip = g->human == XQ_BLACK;
  int last_from = -1, last_to = -1;
  if (g->pos->ply) {
    xq_move_t lm = g->pos->hist[g->pos->ply - 1].move;
    last_from = xq_mv_from(lm);
    last_to = xq_mv_to(lm);
  }
  char files[32] = "";
  for (int i = 0; i < XQ_FILES; i++) {
    char c = (char)(flip ? 'i' - i : 'a' + i);
    snprintf(files + strlen(files), sizeof files - strlen(files), "%c%s", c, i < 8 ? " " : "");
  }
  printf("\n    %s\n", files);
  for (int k = 0; k < XQ_RANKS; k++) {
    int r = flip ? k : XQ_RANKS - 1 - k;
    printf(" %d  ", r);
    for (int i = 0; i < XQ_FILES; i++) {
      int f = flip ? XQ_FILES - 1 - i : i, sq = xq_sq(f, r), pc = g->pos->board[sq];
      const char *glyph = piece_glyph(pc, g->unicode);
      if (g->colored && (pc || sq == last_from || sq == last_to))
        printf("%s%s%s%s", pc ? (xq_pc_colour(pc) == XQ_RED ? ANSI_RED : ANSI_BLACK) : "",
               sq == last_from || sq == last_to ? ANSI_LAST : "", glyph, ANSI_OFF);
      else
        printf("%s", glyph);
      printf("%s", i < XQ_FILES - 1 ? sep : "");
    }
    printf("  %d\n", r);
    if (k == 4) printf("    ~~~~~ river ~~~~~\n");
  }
  printf("    %s\n", files);
  printf("    9 8 7 6 5 4 3 2 1   (your files, for WXF and Chinese moves)\n");
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

/* "h2e2 (C2=5)", or "h2e2 (C2=5, 炮二平五)" with unicode: the legal move m of pos in the
 * notations the player reads. Into buf (n bytes). */
static void describe(const play_t *g, xq_move_t m, char *buf, size_t n) {
  char iccs[5], wxf[XQ_MOVE_TEXT_MAX], cn[XQ_MOVE_TEXT_MAX];
  xq_move_print(m, iccs);
  xq_move_to_wxf(g->pos, m, wxf, sizeof wxf);
  xq_move_to_chinese(g->pos, m, cn, sizeof cn);
  if (g->unicode) snprintf(buf, n, "%s (%s, %s)", iccs, wxf, cn);
  else snprintf(buf, n, "%s (%s)", iccs, wxf);
}

/* The program's choice in g's position: the player's move or the net's search (its result
 * in g->res). 0, or an error code (printed). */
static int choose(play_t *g, xq_move_t *m) {
  xq_errbuf_t eb = {{0}};
  if (g->player) {
    int rc = xq_player_move(g->player, g->pos, m, &eb);
    if (rc) fprintf(stderr, "xqz play: %s failed: %s\n", xq_player_name(g->player), eb.msg);
    return rc;
  }
  xq_mcts_limits_t lim = {.nodes = g->sims};
  int rc = xq_mcts_search(g->mcts, g->pos, &lim, g->res);
  if (rc || !g->res->best) {
    fprintf(stderr, "xqz play: search failed: %s\n", xq_strerror(rc ? rc : XQ_EINVAL));
    return rc ? rc : XQ_EINVAL;
  }
  *m = g->res->best;
  return 0;
}

/* The program's move; returns 0 or an error code (printed). */
static int engine_move(play_t *g, xq_move_t *m) {
  char text[96];
  int rc = choose(g, m);
  if (rc) return rc;
  describe(g, *m, text, sizeof text);
  if (g->player) {
    printf("%s plays %s\n", xq_player_name(g->player), text);
    return 0;
  }
  printf("xqzero plays %s: value %+.3f for xqzero, about %+d cp; %" PRId64 " simulations\n",
         text, (double)g->res->value, xq_proto_value_to_cp(g->res->value), g->res->simulations);
  return 0;
}

/* `hint`: what the program would play for the human, from a fresh search (the net's tree
 * is cleared after it, so the hint does not shape the program's own next move). */
static void hint(play_t *g) {
  xq_move_t m;
  char text[96];
  if (choose(g, &m)) return;
  describe(g, m, text, sizeof text);
  if (g->player) printf("Hint (%s): %s\n", xq_player_name(g->player), text);
  else printf("Hint: %s, value %+.3f for you (%" PRId64 " simulations)\n", text,
              (double)g->res->value, g->res->simulations);
  if (g->mcts) xq_mcts_clear(g->mcts);
}

/* The game so far, numbered, in ICCS and in WXF (and Chinese with unicode), replayed from
 * the start on a copy of the position. */
static void print_moves(const play_t *g) {
  xq_pos_t *p = malloc(sizeof *p);
  if (!p || xq_fen_parse(p, g->start_fen, NULL)) {
    free(p);
    return;
  }
  int plies = g->pos->ply;
  if (!plies) {
    printf("No moves yet.\n");
    free(p);
    return;
  }
  for (int style = 0; style < (g->unicode ? 3 : 2); style++) {
    xq_fen_parse(p, g->start_fen, NULL);
    int number = xq_pos_fullmove(p);
    int col = printf("Moves (%s):", style == 0 ? "ICCS" : style == 1 ? "WXF" : "Chinese");
    for (int i = 0; i < plies; i++) {
      xq_move_t m = g->pos->hist[i].move;
      char w[64], mv[XQ_MOVE_TEXT_MAX];
      if (style == 0) xq_move_print(m, mv);
      else if (style == 1) xq_move_to_wxf(p, m, mv, sizeof mv);
      else xq_move_to_chinese(p, m, mv, sizeof mv);
      if (p->side == XQ_RED) snprintf(w, sizeof w, "%d. %s", number, mv);
      else if (i == 0) snprintf(w, sizeof w, "%d... %s", number, mv);
      else snprintf(w, sizeof w, "%s", mv);
      if (p->side == XQ_BLACK) number++;
      xq_pos_make(p, m);
      int len = (int)strlen(w);
      if (col + 1 + len > 79) {
        printf("\n  ");
        col = 2;
      } else {
        printf(" ");
        col++;
      }
      printf("%s", w);
      col += len;
    }
    printf("\n");
  }
  free(p);
}

/* `save FILE`: the game as PGN (pgn_write.h), the format `xqz games export` writes. oc is
 * the game's end (XQ_RESULT_NONE: still going). */
static void save_game(const play_t *g, const char *path, xq_outcome_t oc) {
  xq_move_t *moves = malloc((size_t)(g->pos->ply + 1) * sizeof *moves);
  if (!moves) {
    printf("Not saved: out of memory.\n");
    return;
  }
  for (int i = 0; i < g->pos->ply; i++) moves[i] = g->pos->hist[i].move;
  time_t now = time(NULL);
  struct tm tm;
  char date[40], fen[XQ_FEN_MAX];
  localtime_r(&now, &tm);
  snprintf(date, sizeof date, "%04d.%02d.%02d", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday);
  xq_pos_t *p = malloc(sizeof *p);
  if (p && !xq_fen_parse(p, g->start_fen, NULL)) xq_fen_print(p, fen);
  else snprintf(fen, sizeof fen, "%s", XQ_START_FEN);
  free(p);
  xqz_pgn_game_t pg = {.event = "xqz play", .site = "xqz play", .date = date,
                       .red = g->human == XQ_RED ? "Human" : g->opponent,
                       .black = g->human == XQ_BLACK ? "Human" : g->opponent,
                       .start_fen = fen, .moves = moves, .nmoves = g->pos->ply,
                       .result = oc.result, .reason = oc.reason,
                       .note = oc.result == XQ_RESULT_NONE ? "saved during play" : NULL};
  char tmp[PLAY_LINE_MAX + 32];
  snprintf(tmp, sizeof tmp, "%s.tmp.%d", path, (int)getpid());
  xq_errbuf_t eb = {{0}};
  FILE *f = fopen(tmp, "w");
  int rc = f ? xqz_pgn_write(f, &pg, &eb) : xq_err_set(&eb, XQ_EIO, "cannot create %s: %s", tmp,
                                                       strerror(errno));
  if (f && (fflush(f) || fsync(fileno(f))) && !rc) rc = xq_err_set(&eb, XQ_EIO, "writing %s: %s", tmp, strerror(errno));
  if (f && fclose(f) && !rc) rc = xq_err_set(&eb, XQ_EIO, "closing %s: %s", tmp, strerror(errno));
  if (!rc && rename(tmp, path)) rc = xq_err_set(&eb, XQ_EIO, "renaming %s to %s: %s", tmp, path, strerror(errno));
  if (rc && f) unlink(tmp);
  free(moves);
  if (rc) printf("Not saved: %s. Give a path in a directory you can write.\n", eb.msg);
  else printf("Saved %d plies to %s (PGN, ICCS moves).\n", g->pos->ply, path);
}

/* A legal move of the side to move, as an example in a refusal: "h2e2 (C2=5)". */
static void example_move(const play_t *g, char *buf, size_t n) {
  xq_move_t moves[XQ_MAX_MOVES];
  int k = xq_gen_legal(g->pos, moves);
  if (k == 0) snprintf(buf, n, "none: no legal move");
  else describe(g, moves[k / 2], buf, n);
}

/* The end of the game: the board, the result, the moves. */
static int game_over(play_t *g, xq_outcome_t oc) {
  draw_board(g);
  int winner = oc.result == XQ_RESULT_RED_WIN ? XQ_RED : oc.result == XQ_RESULT_BLACK_WIN ? XQ_BLACK : -1;
  printf("Game over: %s by %s. %s\n", xq_result_name(oc.result), xq_reason_name(oc.reason),
         winner < 0 ? "Draw." : winner == g->human ? "You win." : "You lose.");
  print_moves(g);
  return 0;
}

/* One command of the human's (not a move). True when line was one; *quit set to leave. */
static bool command(play_t *g, const char *line, bool *quit) {
  xq_outcome_t going = {XQ_RESULT_NONE, XQ_REASON_NONE};
  if (!strcmp(line, "quit") || !strcmp(line, "exit")) {
    print_moves(g);
    printf("Bye.\n");
    *quit = true;
  } else if (!strcmp(line, "help") || !strcmp(line, "?")) {
    print_help();
  } else if (!strcmp(line, "hint")) {
    hint(g);
  } else if (!strcmp(line, "moves")) {
    print_moves(g);
  } else if (!strcmp(line, "save") || !strncmp(line, "save ", 5)) {
    const char *path = line + 4;
    path += strspn(path, " \t");
    if (!*path) printf("save needs a file name: save game.pgn\n");
    else save_game(g, path, going);
  } else if (!strcmp(line, "undo")) {
    /* Take back the program's reply and the human's move before it. */
    if (g->pos->ply < 2) {
      printf("Nothing to undo.\n");
      return true;
    }
    xq_pos_unmake(g->pos);
    xq_pos_unmake(g->pos);
    if (g->mcts) xq_mcts_clear(g->mcts);
    printf("Took back one move each.\n");
  } else {
    return false;
  }
  return true;
}

static int game_loop(play_t *g) {
  char line[PLAY_LINE_MAX];
  printf("You play %s. Type help for help.\n", g->human == XQ_RED ? "Red" : "Black");
  for (;;) {
    xq_outcome_t oc = xq_adjudicate(g->pos, 0);
    if (oc.result != XQ_RESULT_NONE) return game_over(g, oc);
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
      print_moves(g);
      return 0;
    }
    if (!isatty(STDIN_FILENO)) printf("%s\n", line); /* a scripted game reads like a typed one */
    if (!line[0]) continue;
    bool quit = false;
    if (command(g, line, &quit)) {
      if (quit) return 0;
      continue;
    }
    xq_move_t m;
    xq_errbuf_t eb = {{0}};
    if (xq_move_parse_any(g->pos, line, &m, &eb)) {
      char ex[96];
      example_move(g, ex, sizeof ex);
      printf("Illegal move '%s': %s. Type a move like %s, or help.\n", line, eb.msg, ex);
      continue;
    }
    if (g->pos->ply >= XQ_MAX_HISTORY - 1) {
      printf("Game over: the game is too long to record. Draw.\n");
      print_moves(g);
      return 0;
    }
    xq_pos_make(g->pos, m);
  }
}

/* What the command line asks for; parse_args sets play_t's fields from it. */
typedef struct {
  const char *net, *campaign, *spec, *fen, *precision;
  char best[4096]; /* --campaign: its best net's file */
  uint64_t seed;
  int64_t sims;
  int as;          /* AS_RED or AS_BLACK */
  int color_mode;  /* COLOR_AUTO, COLOR_ALWAYS, COLOR_NEVER */
  bool unicode;
} play_opts_t;

enum { AS_RED, AS_BLACK };
static const char *const AS_NAMES[] = {"red", "black", NULL};
static const char *const COLOR_NAMES[] = {"auto", "always", "never", NULL};
_Static_assert(COLOR_AUTO == 0 && COLOR_ALWAYS == 1 && COLOR_NEVER == 2,
               "COLOR_NAMES follows the COLOR_ modes");

#define O(f) XQ_OPT_FIELD(play_opts_t, f)
static const xq_opt_t rows[] = {
    {"net", XQ_OPTION_TEXT, O(net), NULL, 0, 0, .arg = "FILE", .help = "play this net"},
    {"campaign", XQ_OPTION_TEXT, O(campaign), NULL, 0, 0, .arg = "DIR",
     .help = "play the best net of the campaign in DIR"},
    {"sims", XQ_OPTION_INT, O(sims), "200", 1, 10000000,
     .help = "simulations per move of the net's search"},
    {"opponent", XQ_OPTION_TEXT, O(spec), NULL, 0, 0, .arg = "SPEC",
     .help = "play this player instead of a net"},
    {"as", XQ_OPTION_ENUM, O(as), "red", 0, 0, .names = AS_NAMES, .help = "your side"},
    {"seed", XQ_OPTION_UINT, O(seed), "1", 0, XQ_OPTS_U64_MAX, .arg = "S",
     .help = "seed of the search or the player (decimal or 0x-hex)"},
    {"fen", XQ_OPTION_TEXT, O(fen), NULL, 0, 0, .arg = "FEN", .help = "start from this position"},
    {"unicode", XQ_OPTION_FLAG, O(unicode), NULL, 0, 0, .help = "draw Chinese pieces"},
    {"color", XQ_OPTION_ENUM, O(color_mode), "auto", 0, 0, .names = COLOR_NAMES,
     .help = "colour the pieces (auto: a terminal that is not TERM=dumb, and NO_COLOR unset)"},
    {"colour", XQ_OPTION_ENUM, O(color_mode), NULL, 0, 0, .names = COLOR_NAMES}, /* --color */
    {"precision", XQ_OPTION_TEXT, O(precision), NULL, 0, 0, .arg = "auto|fp32|bf16",
     .help = "the nets' arithmetic: auto takes bf16 where the CPU has avx512_bf16 (faster"
     " moves, no weaker at equal simulations), fp32 elsewhere", .check = nn_precision_check,
     .shown = "XQZ_PRECISION if set, else auto"},
};
static const xq_opts_t TABLE = {rows, (int)(sizeof rows / sizeof rows[0]), XQ_OPTS_IN_RANGE};

static void play_usage(FILE *f) {
  fprintf(f,
          "usage: xqz play [--net FILE | --campaign DIR] [--sims N] | --opponent SPEC\n"
          "                [--as red|black]\n"
          "                [--seed S] [--fen FEN] [--unicode] [--color auto|always|never]\n"
          "                [--precision auto|fp32|bf16]\n\n"
          "Play against a net (MCTS with a Gumbel root, N simulations per move)\n"
          "or any player spec (random, greedy, alphabeta:D, net:FILE[:SIMS], gnet:FILE[:SIMS],\n"
          "gtnet:FILE[:SIMS], uci:CMD). With no net and no opponent, the trained net shipped\n"
          "in nets/ (or $XQZ_NET). The board is shown from your side. Type moves\n"
          "in ICCS (h2e2), WXF (C2=5) or Chinese (炮二平五), or hint, moves, save FILE,\n"
          "undo, help, quit.\n\n");
  xq_opts_help(&TABLE, f, 28);
}

/* Fills o and g's settings from the command line. Returns -1 to go on, else the exit
 * code (0 after --help, 2 after bad usage, said on stderr). */
static int parse_args(play_opts_t *o, play_t *g, int argc, char **argv) {
  xq_opts_defaults(&TABLE, o);
  int st = xqz_options_parse("play", &TABLE, o, argc, argv, NULL, NULL, play_usage);
  if (st >= 0) return st;
  g->sims = (int)o->sims;
  g->human = o->as == AS_BLACK ? XQ_BLACK : XQ_RED;
  g->unicode = o->unicode;
  g->color_mode = o->color_mode;
  if ((o->net != NULL) + (o->campaign != NULL) + (o->spec != NULL) > 1)
    return xqz_usage_error("play", "give one of --net FILE, --campaign DIR or --opponent SPEC");
  if (o->campaign) {
    xq_errbuf_t ceb = {{0}};
    if (xq_campaign_best_net(o->campaign, o->best, sizeof o->best, &ceb) < 0) {
      fprintf(stderr, "xqz play: %s\n", ceb.msg);
      return 2;
    }
    o->net = o->best;
    printf("The best net of campaign %s: %s\n", o->campaign, o->best);
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
  g->start_fen = o->fen ? o->fen : XQ_START_FEN;
  const char *why; /* before any net loads */
  nn_precision_t prec = nn_precision_choose(o->precision, NN_PRECISION_AUTO, &why);
  fprintf(stderr, "xqz play: precision=%s (%s)\n", nn_precision_name(prec), why);
  g->colored = use_color(g->color_mode);
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
     * +186 and +282 Elo (docs/experiments/16-gumbel-root.md). */
    cfg.search = XQ_SEARCH_GUMBEL;
    rc = xq_evaluator_net_new(&g->ev, o->net, cfg.batch, &eb);
    if (!rc) rc = xq_mcts_new(&g->mcts, &cfg, g->ev, o->seed, &eb);
    if (rc) {
      fprintf(stderr, "xqz play: cannot load %s: %s\n", o->net,
              eb.msg[0] ? eb.msg : xq_strerror(rc));
      return 1;
    }
    snprintf(g->name, sizeof g->name, "xqzero %s", o->net);
    g->opponent = g->name;
  } else {
    rc = xq_player_new(&g->player, o->spec, o->seed, &eb);
    if (!rc) rc = xq_player_new_game(g->player, &eb);
    if (rc) {
      fprintf(stderr, "xqz play: opponent '%s': %s\n", o->spec,
              eb.msg[0] ? eb.msg : xq_strerror(rc));
      return 2;
    }
    g->opponent = xq_player_name(g->player);
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
  play_opts_t o = {0};
  play_t g = {0};
  int status = parse_args(&o, &g, argc, argv);
  if (status >= 0) return status;
  status = play_open(&g, &o);
  if (status < 0) status = game_loop(&g);
  play_close(&g);
  return status;
}
