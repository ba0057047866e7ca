/*
 * cmd_arena.c: `xqz arena A B --games N [--openings FILE] [--sprt elo0,elo1] [--seed S]
 * [--max-plies P]`: a match between two player specs (players.h). Progress goes to stderr
 * one line per game; stdout gets a summary and, as its last line, one JSON object from
 * A's point of view, for scripts. Exit 0 done, 1 a player failed mid-match, 2 bad usage.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_options.h"
#include "commands.h"
#include "json_out.h"
#include "search/arena.h"
#include "support/rng.h"

/* JSON has no infinities: non-finite numbers are printed as null. */
static void json_num(double v) {
  if (isfinite(v)) printf("%.2f", v);
  else printf("null");
}

typedef struct {
  const char *a, *b;
  int games;
} progress_t;

static void on_game(void *ctx, int64_t game, bool a_red, xq_outcome_t out, int plies,
                    const xq_arena_stats_t *st) {
  const progress_t *pg = ctx;
  double score = (st->wins + 0.5 * st->draws) / (double)st->games;
  fprintf(stderr, "game %lld/%d: %s (red) vs %s: %s %s, %d plies; +%lld =%lld -%lld score %.3f\n",
          (long long)game + 1, pg->games, a_red ? pg->a : pg->b, a_red ? pg->b : pg->a,
          xq_result_name(out.result), xq_reason_name(out.reason), plies, (long long)st->wins,
          (long long)st->draws, (long long)st->losses, score);
}

/* What the command line asks for. */
typedef struct {
  const char *spec[2], *openings_path, *sprt;
  int64_t games, max_plies, seed;
  xq_arena_config_t cfg; /* the SPRT settings; the rest is filled from the fields above */
} arena_opts_t;

/* --sprt ELO0,ELO1 into cfg; 0, or -1 when it is not two numbers with ELO0 < ELO1. */
static int parse_sprt(const char *val, xq_arena_config_t *cfg) {
  char *end, *end2;
  cfg->elo0 = strtod(val, &end);
  if (end == val || *end != ',' || (cfg->elo1 = strtod(end + 1, &end2), end2 == end + 1) ||
      *end2 || !isfinite(cfg->elo0) || !isfinite(cfg->elo1) || cfg->elo0 >= cfg->elo1)
    return -1;
  cfg->sprt = true;
  return 0;
}

static int check_sprt(const char *name, const char *v, xq_errbuf_t *eb) {
  xq_arena_config_t cfg;
  if (parse_sprt(v, &cfg) == 0) return 0;
  return xq_err_set(eb, XQ_ERANGE, "--%s wants ELO0,ELO1 with ELO0 < ELO1, e.g. 0,10; not '%s'",
                    name, v);
}

#define O(f) XQ_OPT_FIELD(arena_opts_t, f)
static const xq_opt_t rows[] = {
    {"games", XQ_OPTION_INT, O(games), NULL, 1, 1000000,
     .help = "games to play (pairs on one opening, colours swapped)"},
    {"openings", XQ_OPTION_TEXT, O(openings_path), NULL, 0, 0, .arg = "FILE",
     .help = "one opening per line: FEN [moves...] or startpos [moves...]",
     .shown = "88 built-in two-ply lines, docs/arena.md"},
    {"sprt", XQ_OPTION_TEXT, O(sprt), NULL, 0, 0, .arg = "E0,E1", .check = check_sprt,
     .help = "stop early on a GSPRT decision, H0 elo=E0 vs H1 elo=E1 (logistic Elo,"
     " pentanomial, alpha = beta = 0.05)"},
    {"seed", XQ_OPTION_INT, O(seed), "1", 0, 9.2e18, .arg = "S",
     .help = "seed of the players and the opening order"},
    {"max-plies", XQ_OPTION_INT, O(max_plies), "400", 1, XQ_ARENA_MAX_PLIES, .arg = "P",
     .help = "game-length cap, a draw"},
};
static const xq_opts_t TABLE = {rows, (int)(sizeof rows / sizeof rows[0]), XQ_OPTS_FROM_TO};

static void usage(FILE *f) {
  fprintf(f,
          "usage: xqz arena A B --games N [--openings FILE] [--sprt ELO0,ELO1] [--seed S]\n"
          "                 [--max-plies P]\n"
          "  A, B: player specs: random | greedy | alphabeta:D | net:FILE[:SIMS] (PUCT) |\n"
          "        gnet:FILE[:SIMS] (a Gumbel root) | gtnet:FILE[:SIMS] (a Gumbel root and\n"
          "        the paper's rule below it) | uci:COMMAND[:depth=N|nodes=N|movetime=MS]\n");
  xq_opts_help(&TABLE, f, 14);
  fprintf(f, "The last line of stdout is a JSON object from A's point of view.\n");
}

/* Fills o from the command line. Returns -1 to go on, else the exit code (0 after
 * --help, 2 after bad usage, said on stderr). */
static int parse_args(arena_opts_t *o, int argc, char **argv) {
  *o = (arena_opts_t){.cfg = {.alpha = 0.05, .beta = 0.05}};
  xq_opts_defaults(&TABLE, o);
  const char **words = calloc((size_t)argc + 1, sizeof *words);
  int nwords = 0;
  if (!words) return 1;
  int st = xqz_options_parse("arena", &TABLE, o, argc, argv, words, &nwords, usage);
  if (st < 0 && nwords > 2) st = xqz_usage_error("arena", "unexpected argument '%s'", words[2]);
  if (st < 0 && (nwords < 2 || !o->games))
    st = xqz_usage_error("arena", "need two player specs and --games N");
  for (int i = 0; i < nwords && i < 2; i++) o->spec[i] = words[i];
  free(words);
  if (st < 0 && o->sprt) parse_sprt(o->sprt, &o->cfg); /* checked by its row */
  return st;
}

/* The Elo estimates of a match: from the score, and the interval from pairs (pentanomial)
 * once there are two. */
typedef struct {
  xq_elo_est_t tri, pen;
  const xq_elo_est_t *ci;
  bool pairs; /* the interval is the pentanomial one */
} arena_elo_t;

static void arena_elo(arena_elo_t *e, const xq_arena_stats_t *st) {
  xq_elo_trinomial(st->wins, st->draws, st->losses, &e->tri);
  xq_elo_pentanomial(st->pairs, &e->pen);
  e->pairs = e->pen.n >= 2;
  e->ci = e->pairs ? &e->pen : &e->tri;
}

/* The summary lines for people. */
static void print_summary(const arena_opts_t *o, const xq_arena_config_t *cfg,
                          const xq_arena_stats_t *st, const arena_elo_t *e) {
  printf("%s vs %s: %lld games, +%lld =%lld -%lld, score %.3f\n", o->spec[0], o->spec[1],
         (long long)st->games, (long long)st->wins, (long long)st->draws, (long long)st->losses,
         e->tri.score);
  printf("elo %.1f +- %.1f (95%%, %s), pairs [%lld %lld %lld %lld %lld]\n", e->tri.elo,
         e->ci->ci95, e->pairs ? "pentanomial" : "trinomial", (long long)st->pairs[0],
         (long long)st->pairs[1], (long long)st->pairs[2], (long long)st->pairs[3],
         (long long)st->pairs[4]);
  if (cfg->sprt)
    printf("sprt elo0=%g elo1=%g: llr %.3f, bounds [%.3f, %.3f]: %s\n", cfg->elo0, cfg->elo1,
           st->llr, log(cfg->beta / (1 - cfg->alpha)), log((1 - cfg->beta) / cfg->alpha),
           xq_sprt_name(st->sprt));
  printf("results by reason:");
  for (int r = 1; r <= XQ_REASON_RESIGN; r++)
    if (st->reasons[r])
      printf(" %s %lld", xq_reason_name((xq_reason_t)r), (long long)st->reasons[r]);
  printf("\n");
}

/* The last line of stdout, for scripts; error is the reason the match stopped, or NULL. */
static void print_json(const arena_opts_t *o, const xq_arena_config_t *cfg,
                       const xq_arena_stats_t *st, const arena_elo_t *e, const char *error) {
  printf("{\"games\":%lld,\"wins\":%lld,\"draws\":%lld,\"losses\":%lld,\"score\":%.4f,\"elo\":",
         (long long)st->games, (long long)st->wins, (long long)st->draws, (long long)st->losses,
         e->tri.score);
  json_num(e->tri.elo);
  printf(",\"elo_ci95\":");
  json_num(e->ci->ci95);
  printf(",\"sprt\":\"%s\",\"llr\":", xq_sprt_name(st->sprt));
  json_num(cfg->sprt ? st->llr : 0);
  printf(",\"ci_model\":\"%s\",\"ptnml\":[%lld,%lld,%lld,%lld,%lld],\"reasons\":{",
         e->pairs ? "pentanomial" : "trinomial", (long long)st->pairs[0], (long long)st->pairs[1],
         (long long)st->pairs[2], (long long)st->pairs[3], (long long)st->pairs[4]);
  const char *sep = "";
  for (int r = 1; r <= XQ_REASON_RESIGN; r++) {
    if (!st->reasons[r]) continue;
    printf("%s\"%s\":%lld", sep, xq_reason_name((xq_reason_t)r), (long long)st->reasons[r]);
    sep = ",";
  }
  printf("},\"avg_plies\":%.1f,\"a\":", st->games ? (double)st->plies / (double)st->games : 0.0);
  xqz_json_str(o->spec[0]);
  printf(",\"b\":");
  xqz_json_str(o->spec[1]);
  if (error) {
    printf(",\"error\":");
    xqz_json_str(error);
  }
  printf("}\n");
  fflush(stdout);
}

int xqz_cmd_arena(int argc, char **argv) {
  arena_opts_t o;
  memset(&o, 0, sizeof o); /* a row without a default leaves its field alone */
  int rc = parse_args(&o, argc, argv);
  if (rc >= 0) return rc;
  xq_errbuf_t eb = {{0}};
  xq_openings_t openings;
  if (xq_openings_load(&openings, o.openings_path, &eb)) {
    fprintf(stderr, "xqz arena: %s\n", eb.msg);
    return 2;
  }
  xq_player_t *pl[2] = {NULL, NULL};
  uint64_t sm = (uint64_t)o.seed;
  for (int i = 0; i < 2; i++) {
    if (xq_player_new(&pl[i], o.spec[i], xq_splitmix64(&sm), &eb)) {
      fprintf(stderr, "xqz arena: player %c: %s\n", 'A' + i, eb.msg);
      xq_player_free(&pl[0]);
      xq_openings_close(&openings);
      return 2;
    }
  }
  progress_t pg = {o.spec[0], o.spec[1], (int)o.games};
  xq_arena_config_t cfg = o.cfg;
  cfg.games = (int)o.games;
  cfg.max_plies = (int)o.max_plies;
  cfg.seed = xq_splitmix64(&sm);
  cfg.on_game = on_game;
  cfg.ctx = &pg;
  xq_arena_stats_t st;
  rc = xq_arena_run(&cfg, pl[0], pl[1], &openings, &st, &eb);
  if (rc) fprintf(stderr, "xqz arena: match stopped: %s\n", eb.msg);
  arena_elo_t e;
  arena_elo(&e, &st);
  print_summary(&o, &cfg, &st, &e);
  print_json(&o, &cfg, &st, &e, rc ? eb.msg : NULL);
  xq_player_free(&pl[0]);
  xq_player_free(&pl[1]);
  xq_openings_close(&openings);
  return rc ? 1 : 0;
}
