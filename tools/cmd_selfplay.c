/*
 * cmd_selfplay.c: `xqz selfplay --net FILE --games N --out FILE [--threads T]
 * [--parallel G] [--sims S] [--fast-sims S] [--full-frac P] [--max-plies N] [--seed S]`:
 * local batched self-play writing game records (docs/game-records.md), with a progress
 * line on stderr.
 */
#include <stdio.h>
#include <stdlib.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>
#include <time.h>

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

static int sp_usage(void) {
  fprintf(stderr, "usage: xqz selfplay --net FILE|uniform --games N --out FILE [--threads T] "
                  "[--parallel G] [--sims S] [--fast-sims S] [--full-frac P] [--max-plies N] "
                  "[--no-resign-frac P] [--seed S] [--search puct|gumbel|gumbel_tree] "
                  "[--force]\n"
                  "  Plays N self-play games and writes their records (docs/game-records.md) to\n"
                  "  FILE; refuses to replace an existing FILE unless --force is given.\n"
                  "  --search gumbel: Gumbel AlphaZero's root search; the records then hold its\n"
                  "  improved policy instead of visit counts (docs/search.md); gumbel_tree: the\n"
                  "  same root, and the paper's deterministic selection below it.\n");
  return 2;
}

int xqz_cmd_selfplay(int argc, char **argv) {
  xq_selfplay_config_t cfg;
  xq_selfplay_config_default(&cfg);
  const char *net = NULL, *out = NULL;
  int64_t games = 0;
  int fast = 0;
  bool force = false;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      sp_usage();
      return 0;
    }
    if (!strcmp(a, "--force")) {
      force = true;
      continue;
    }
    if (i + 1 >= argc) return sp_usage();
    const char *v = argv[++i];
    if (!strcmp(a, "--net")) net = v;
    else if (!strcmp(a, "--out")) out = v;
    else if (!strcmp(a, "--games")) games = atoll(v);
    else if (!strcmp(a, "--threads")) cfg.threads = atoi(v);
    else if (!strcmp(a, "--parallel")) cfg.parallel = atoi(v);
    else if (!strcmp(a, "--sims")) cfg.sims_full = atoi(v);
    else if (!strcmp(a, "--fast-sims")) fast = atoi(v);
    else if (!strcmp(a, "--full-frac")) cfg.full_frac = (float)atof(v);
    else if (!strcmp(a, "--max-plies")) cfg.mcts.max_plies = atoi(v);
    else if (!strcmp(a, "--no-resign-frac")) cfg.no_resign_frac = (float)atof(v);
    else if (!strcmp(a, "--seed")) cfg.seed = strtoull(v, NULL, 10);
    else if (!strcmp(a, "--search") && !strcmp(v, "puct")) cfg.mcts.search = XQ_SEARCH_PUCT;
    else if (!strcmp(a, "--search") && !strcmp(v, "gumbel")) cfg.mcts.search = XQ_SEARCH_GUMBEL;
    else if (!strcmp(a, "--search") && !strcmp(v, "gumbel_tree"))
      cfg.mcts.search = XQ_SEARCH_GUMBEL_TREE;
    else return sp_usage();
  }
  if (!net || !out) {
    fprintf(stderr, "xqz selfplay: need --net and --out\n");
    return sp_usage();
  }
  if (games < 1 || cfg.mcts.max_plies < 1 || cfg.mcts.max_plies > 1000 || cfg.threads < 1 ||
      cfg.parallel < 1 || cfg.sims_full < 1 || fast < 0 || !(cfg.full_frac >= 0 && cfg.full_frac <= 1)) {
    fprintf(stderr, "xqz selfplay: --games, --threads, --parallel and --sims must be positive, "
                    "--max-plies 1..1000, --full-frac 0..1\n");
    return sp_usage();
  }
  xq_errbuf_t eb = {{0}};
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
