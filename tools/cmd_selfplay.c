/*
 * cmd_selfplay.c: `xqz selfplay --net FILE --games N --out FILE [--threads T]
 * [--parallel G] [--sims S] [--fast-sims S] [--full-frac P] [--max-plies N] [--seed S]`:
 * local batched self-play writing game records (docs/game-records.md), with a progress
 * line on stderr. The options are a table (support/options.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>
#include <time.h>

#include "cli_options.h"
#include "commands.h"
#include "nn/nn_file.h"
#include "search/selfplay.h"
#include "support/clock.h"

typedef struct {
  FILE *f;
  double t0;
  int64_t ngames;
  int err;
} sp_ctx_t;

static void sp_progress(const sp_ctx_t *c, const xq_selfplay_stats_t *t, const char *end) {
  double dt = xq_clock_s() - c->t0;
  fprintf(stderr, "\rgames %lld/%lld  %.1f plies/s  %.1f positions/s  avg len %.1f  "
                  "1-0 %lld 0-1 %lld draw %lld |",
          (long long)t->games, (long long)c->ngames, dt > 0 ? (double)t->plies / dt : 0.0,
          dt > 0 ? (double)t->positions / dt : 0.0,
          t->games ? (double)t->plies / (double)t->games : 0.0,
          (long long)t->results[XQ_RESULT_RED_WIN], (long long)t->results[XQ_RESULT_BLACK_WIN],
          (long long)t->results[XQ_RESULT_DRAW]);
  for (int r = 1; r <= XQ_REASON_RESIGN; r++)
    if (t->reasons[r]) fprintf(stderr, " %s %lld", xq_reason_name((xq_reason_t)r),
                               (long long)t->reasons[r]);
  if (t->resign_checked)
    fprintf(stderr, " | false resign %lld/%lld", (long long)t->false_resigns,
            (long long)t->resign_checked);
  fputs(end, stderr);
}

static int sp_sink(void *ctx, const xq_game_record_t *rec, const xq_selfplay_stats_t *tot) {
  sp_ctx_t *c = ctx;
  xq_errbuf_t eb = {{0}};
  if (xq_record_write(c->f, rec, &eb)) {
    fprintf(stderr, "\nxqz selfplay: %s\n", eb.msg);
    c->err = 1;
    return 1;
  }
  sp_progress(c, tot, "   ");
  return 0;
}

/* The command line. Numbers start from xq_selfplay_config_default, the one table of
 * self-play defaults, so the rows carry bounds and no defaults of their own. */
typedef struct {
  const char *net, *out;
  int64_t games, seed;
  int threads, parallel, sims, fast_sims, max_plies;
  double full_frac, no_resign_frac;
  xq_search_kind_t search;
  bool force;
} sp_args_t;

static const char *const SEARCH_NAMES[] = {"puct", "gumbel", "gumbel_tree", NULL};
_Static_assert(XQ_SEARCH_PUCT == 0 && XQ_SEARCH_GUMBEL == 1 && XQ_SEARCH_GUMBEL_TREE == 2 &&
               sizeof(xq_search_kind_t) == sizeof(int), "SEARCH_NAMES follows xq_search_kind_t");

#define A(f) XQ_OPT_FIELD(sp_args_t, f)
static const xq_opt_t rows[] = {
    {"net", XQ_OPTION_TEXT, A(net), NULL, 0, 0, .arg = "FILE|uniform",
     .help = "the net that plays (uniform: no net, uniform priors)"},
    {"games", XQ_OPTION_INT, A(games), NULL, 1, 1e9, .help = "games to play"},
    {"out", XQ_OPTION_TEXT, A(out), NULL, 0, 0, .arg = "FILE",
     .help = "the record file written (docs/game-records.md)"},
    {"threads", XQ_OPTION_INT, A(threads), NULL, 1, 1024, .arg = "T", .help = "search threads"},
    {"parallel", XQ_OPTION_INT, A(parallel), NULL, 1, 65536, .arg = "G",
     .help = "games played at once per thread (evaluator batch)"},
    {"sims", XQ_OPTION_INT, A(sims), NULL, 1, 1000000, .help = "simulations of a full search"},
    {"fast-sims", XQ_OPTION_INT, A(fast_sims), NULL, 0, 1000000,
     .help = "simulations of a fast search (0: a fifth of --sims)"},
    {"full-frac", XQ_OPTION_DOUBLE, A(full_frac), NULL, 0, 1,
     .help = "share of moves with a full search"},
    {"max-plies", XQ_OPTION_INT, A(max_plies), NULL, 1, 1000, .help = "game-length cap (draw)"},
    {"no-resign-frac", XQ_OPTION_DOUBLE, A(no_resign_frac), NULL, 0, 1,
     .help = "share of games with resignation disabled"},
    {"seed", XQ_OPTION_INT, A(seed), NULL, 0, 9.2e18, .help = "random seed"},
    {"search", XQ_OPTION_ENUM, A(search), NULL, 0, 0, .names = SEARCH_NAMES,
     .help = "gumbel: Gumbel AlphaZero's root search; the records then hold its improved"
     " policy instead of visit counts (docs/search.md); gumbel_tree: the same root, and the"
     " paper's deterministic selection below it"},
    {"force", XQ_OPTION_FLAG, A(force), NULL, 0, 0, .help = "replace an existing FILE"},
};
static const xq_opts_t TABLE = {rows, (int)(sizeof rows / sizeof rows[0]), XQ_OPTS_IN_RANGE};

static void sp_usage(FILE *f) {
  fprintf(f, "usage: xqz selfplay --net FILE|uniform --games N --out FILE [options]\n"
             "  Plays N self-play games and writes their records (docs/game-records.md) to\n"
             "  FILE; refuses to replace an existing FILE unless --force is given.\n");
  xq_opts_help(&TABLE, f, 22);
}

int xqz_cmd_selfplay(int argc, char **argv) {
  xq_selfplay_config_t cfg;
  xq_selfplay_config_default(&cfg);
  sp_args_t a = {.threads = cfg.threads, .parallel = cfg.parallel, .sims = cfg.sims_full,
                 .max_plies = cfg.mcts.max_plies, .full_frac = cfg.full_frac,
                 .no_resign_frac = cfg.no_resign_frac, .seed = (int64_t)cfg.seed,
                 .search = cfg.mcts.search};
  int prc = xqz_options_parse("selfplay", &TABLE, &a, argc, argv, NULL, NULL, sp_usage);
  if (prc >= 0) return prc;
  if (!a.net || !a.out || !a.games)
    return xqz_usage_error("selfplay", "need --net, --games and --out");
  xq_errbuf_t eb = {{0}};
  const char *net = a.net, *out = a.out;
  int64_t games = a.games;
  cfg.threads = a.threads;
  cfg.parallel = a.parallel;
  cfg.sims_full = a.sims;
  cfg.mcts.max_plies = a.max_plies;
  cfg.full_frac = (float)a.full_frac;
  cfg.no_resign_frac = (float)a.no_resign_frac;
  cfg.seed = (uint64_t)a.seed;
  cfg.mcts.search = a.search;
  int fast = a.fast_sims;
  bool force = a.force;
  if (!strcmp(net, "uniform")) {
    net = NULL;
  } else {
    /* Check the net before creating the output, so a typo leaves nothing behind. */
    nn_file_meta_t meta;
    if (nn_file_info(net, &meta, 1, &eb)) {
      fprintf(stderr, "xqz selfplay: %s\n", eb.msg);
      return 1;
    }
  }
  if (!force && access(out, F_OK) == 0) {
    fprintf(stderr, "xqz selfplay: %s already exists; pass --force to replace it\n", out);
    return 1;
  }
  cfg.sims_fast = fast > 0 ? fast : (cfg.sims_full / 5 > 0 ? cfg.sims_full / 5 : 1);
  sp_ctx_t c = {.t0 = xq_clock_s(), .ngames = games};
  c.f = fopen(out, "wb");
  if (!c.f) {
    perror(out);
    return 1;
  }
  if (xq_record_write_header(c.f, &eb)) {
    fprintf(stderr, "xqz selfplay: %s\n", eb.msg);
    fclose(c.f);
    return 1;
  }
  xq_selfplay_stats_t st;
  int rc = xq_selfplay_run(&cfg, net, games, sp_sink, &c, &st, &eb);
  sp_progress(&c, &st, "\n");
  if (fclose(c.f) && !rc) rc = xq_err_set(&eb, XQ_EIO, "closing %s", out);
  if (rc) {
    fprintf(stderr, "xqz selfplay: %s (%s)\n", xq_strerror(rc), eb.msg);
    return 1;
  }
  if (c.err) return 1;
  printf("{\"games\":%lld,\"plies\":%lld,\"positions\":%lld,\"sims\":%lld,\"seconds\":%.2f,"
         "\"net_share\":%.3f,\"false_resigns\":%lld,\"resign_checked\":%lld}\n",
         (long long)st.games, (long long)st.plies, (long long)st.positions, (long long)st.sims,
         xq_clock_s() - c.t0, st.total_s > 0 ? st.net_s / st.total_s : 0.0,
         (long long)st.false_resigns, (long long)st.resign_checked);
  return 0;
}
