/*
 * cmd_arena.c: `xqz arena A B --games N [--openings FILE] [--sprt elo0,elo1] [--seed S]
 * [--max-plies P]`: a match between two player specs (players.h). Progress goes to stderr
 * one line per game; stdout gets a summary and, as its last line, one JSON object from
 * A's point of view, for scripts. Exit 0 done, 1 a player failed mid-match, 2 bad usage.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "json_out.h"
#include "search/arena.h"
#include "support/rng.h"

static int usage(FILE *f) {
  fprintf(f,
          "usage: xqz arena A B --games N [--openings FILE] [--sprt ELO0,ELO1] [--seed S]\n"
          "                 [--max-plies P]\n"
          "  A, B: player specs: random | greedy | alphabeta:D | net:FILE[:SIMS] |\n"
          "        uci:COMMAND[:depth=N|nodes=N|movetime=MS]\n"
          "  --games N       games to play (pairs on one opening, colours swapped)\n"
          "  --openings FILE one opening per line: FEN [moves...] or startpos [moves...]\n"
          "                  (default: 88 built-in two-ply lines, docs/arena.md)\n"
          "  --sprt E0,E1    stop early on a GSPRT decision, H0 elo=E0 vs H1 elo=E1\n"
          "                  (logistic Elo, pentanomial, alpha = beta = 0.05)\n"
          "  --seed S        seed of the players and the opening order (default 1)\n"
          "  --max-plies P   game-length cap, a draw (1..%d, default 400)\n"
          "The last line of stdout is a JSON object from A's point of view.\n",
          XQ_ARENA_MAX_PLIES);
  return 2;
}

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

static bool parse_long(const char *s, long lo, long hi, long *out) {
  char *end;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (errno || end == s || *end || v < lo || v > hi) return false;
  *out = v;
  return true;
}

int xqz_cmd_arena(int argc, char **argv) {
  const char *spec[2] = {NULL, NULL}, *openings_path = NULL;
  long games = 0, max_plies = 400;
  unsigned long long seed = 1;
  xq_arena_config_t cfg = {.alpha = 0.05, .beta = 0.05};
  for (int i = 1; i < argc; i++) {
    const char *arg = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(arg, "-h") || !strcmp(arg, "--help")) return usage(stdout), 0;
    if (arg[0] == '-' && arg[1] == '-' && !val) {
      fprintf(stderr, "xqz arena: %s needs a value\n", arg);
      return 2;
    }
    if (!strcmp(arg, "--games")) {
      if (!parse_long(val, 1, 1000000, &games)) {
        fprintf(stderr, "xqz arena: --games must be a number from 1 to 1000000, not '%s'\n", val);
        return 2;
      }
      i++;
    } else if (!strcmp(arg, "--max-plies")) {
      if (!parse_long(val, 1, XQ_ARENA_MAX_PLIES, &max_plies)) {
        fprintf(stderr, "xqz arena: --max-plies must be from 1 to %d, not '%s'\n",
                XQ_ARENA_MAX_PLIES, val);
        return 2;
      }
      i++;
    } else if (!strcmp(arg, "--seed")) {
      char *end;
      errno = 0;
      seed = strtoull(val, &end, 10);
      if (errno || end == val || *end || val[0] == '-') {
        fprintf(stderr, "xqz arena: --seed must be a non-negative integer, not '%s'\n", val);
        return 2;
      }
      i++;
    } else if (!strcmp(arg, "--openings")) {
      openings_path = val;
      i++;
    } else if (!strcmp(arg, "--sprt")) {
      char *end, *end2;
      cfg.elo0 = strtod(val, &end);
      if (end == val || *end != ',' || (cfg.elo1 = strtod(end + 1, &end2), end2 == end + 1) ||
          *end2 || !isfinite(cfg.elo0) || !isfinite(cfg.elo1) || cfg.elo0 >= cfg.elo1) {
        fprintf(stderr, "xqz arena: --sprt wants ELO0,ELO1 with ELO0 < ELO1, e.g. 0,10; not '%s'\n",
                val);
        return 2;
      }
      cfg.sprt = true;
      i++;
    } else if (arg[0] == '-' && arg[1]) {
      fprintf(stderr, "xqz arena: unknown option '%s'\n\n", arg);
      return usage(stderr);
    } else if (!spec[0]) {
      spec[0] = arg;
    } else if (!spec[1]) {
      spec[1] = arg;
    } else {
      fprintf(stderr, "xqz arena: unexpected argument '%s'\n\n", arg);
      return usage(stderr);
    }
  }
  if (!spec[1] || !games) {
    fprintf(stderr, "xqz arena: need two player specs and --games N\n\n");
    return usage(stderr);
  }

  xq_errbuf_t eb = {{0}};
  xq_openings_t openings;
  if (xq_openings_load(&openings, openings_path, &eb)) {
    fprintf(stderr, "xqz arena: %s\n", eb.msg);
    return 2;
  }
  xq_player_t *pl[2] = {NULL, NULL};
  uint64_t sm = seed;
  for (int i = 0; i < 2; i++) {
    if (xq_player_new(&pl[i], spec[i], xq_splitmix64(&sm), &eb)) {
      fprintf(stderr, "xqz arena: player %c: %s\n", 'A' + i, eb.msg);
      xq_player_free(&pl[0]);
      xq_openings_close(&openings);
      return 2;
    }
  }
  progress_t pg = {spec[0], spec[1], (int)games};
  cfg.games = (int)games;
  cfg.max_plies = (int)max_plies;
  cfg.seed = xq_splitmix64(&sm);
  cfg.on_game = on_game;
  cfg.ctx = &pg;
  xq_arena_stats_t st;
  int rc = xq_arena_run(&cfg, pl[0], pl[1], &openings, &st, &eb);
  if (rc) fprintf(stderr, "xqz arena: match stopped: %s\n", eb.msg);

  /* Elo from the score; the interval from pairs (pentanomial) once there are two. */
  xq_elo_est_t tri, pen;
  xq_elo_trinomial(st.wins, st.draws, st.losses, &tri);
  xq_elo_pentanomial(st.pairs, &pen);
  int64_t npairs = pen.n;
  const xq_elo_est_t *ci = npairs >= 2 ? &pen : &tri;
  printf("%s vs %s: %lld games, +%lld =%lld -%lld, score %.3f\n", spec[0], spec[1],
         (long long)st.games, (long long)st.wins, (long long)st.draws, (long long)st.losses,
         tri.score);
  printf("elo %.1f +- %.1f (95%%, %s), pairs [%lld %lld %lld %lld %lld]\n", tri.elo, ci->ci95,
         npairs >= 2 ? "pentanomial" : "trinomial", (long long)st.pairs[0], (long long)st.pairs[1],
         (long long)st.pairs[2], (long long)st.pairs[3], (long long)st.pairs[4]);
  if (cfg.sprt)
    printf("sprt elo0=%g elo1=%g: llr %.3f, bounds [%.3f, %.3f]: %s\n", cfg.elo0, cfg.elo1, st.llr,
           log(cfg.beta / (1 - cfg.alpha)), log((1 - cfg.beta) / cfg.alpha), xq_sprt_name(st.sprt));
  printf("results by reason:");
  for (int r = 1; r <= XQ_REASON_RESIGN; r++)
    if (st.reasons[r]) printf(" %s %lld", xq_reason_name((xq_reason_t)r), (long long)st.reasons[r]);
  printf("\n");

  printf("{\"games\":%lld,\"wins\":%lld,\"draws\":%lld,\"losses\":%lld,\"score\":%.4f,\"elo\":",
         (long long)st.games, (long long)st.wins, (long long)st.draws, (long long)st.losses,
         tri.score);
  json_num(tri.elo);
  printf(",\"elo_ci95\":");
  json_num(ci->ci95);
  printf(",\"sprt\":\"%s\",\"llr\":", xq_sprt_name(st.sprt));
  json_num(cfg.sprt ? st.llr : 0);
  printf(",\"ci_model\":\"%s\",\"ptnml\":[%lld,%lld,%lld,%lld,%lld],\"reasons\":{",
         npairs >= 2 ? "pentanomial" : "trinomial", (long long)st.pairs[0], (long long)st.pairs[1],
         (long long)st.pairs[2], (long long)st.pairs[3], (long long)st.pairs[4]);
  const char *sep = "";
  for (int r = 1; r <= XQ_REASON_RESIGN; r++) {
    if (!st.reasons[r]) continue;
    printf("%s\"%s\":%lld", sep, xq_reason_name((xq_reason_t)r), (long long)st.reasons[r]);
    sep = ",";
  }
  printf("},\"avg_plies\":%.1f,\"a\":", st.games ? (double)st.plies / (double)st.games : 0.0);
  xqz_json_str(spec[0]);
  printf(",\"b\":");
  xqz_json_str(spec[1]);
  if (rc) {
    printf(",\"error\":");
    xqz_json_str(eb.msg);
  }
  printf("}\n");
  fflush(stdout);
  xq_player_free(&pl[0]);
  xq_player_free(&pl[1]);
  xq_openings_close(&openings);
  return rc ? 1 : 0;
}
