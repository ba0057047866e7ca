/*
 * config.c: the settings table. One row per setting (support/options.h); parsing, bounds,
 * --help and the default campaign.ini all come from these rows. Defaults fit a 2-core box
 * with the tiny net (2x16a, with the attack planes): few simulations, a small window, fast
 * gating.
 */
#include "config.h"

#include <assert.h>
#include <ini.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "anchor_list.h"
#include "nn/nn_model.h"
#include "rules/material.h"
#include "search/selfplay_defaults.h"
#include "support/net_addr.h"
#include "support/options.h"
#include "wire/wire.h"

static const char *const GATING_NAMES[] = {"sprt", "threshold", "none", NULL};
_Static_assert(sizeof(xqc_gating_t) == sizeof(int), "an XQ_OPTION_ENUM field is an int");
_Static_assert(XQC_GATING_SPRT == 0 && XQC_GATING_THRESHOLD == 1 && XQC_GATING_NONE == 2,
               "GATING_NAMES follows xqc_gating_t");

static const char *const SEARCH_NAMES[] = {"puct", "gumbel", "gumbel_tree", NULL};
_Static_assert(sizeof(xqc_search_t) == sizeof(int), "an XQ_OPTION_ENUM field is an int");
_Static_assert(XQC_SEARCH_PUCT == 0 && XQC_SEARCH_GUMBEL == 1 && XQC_SEARCH_GUMBEL_TREE == 2,
               "SEARCH_NAMES follows xqc_search_t, whose values are the wire's");

static const char *const ARENA_PRECISION_NAMES[] = {"fp32", "bf16", "worker", NULL};
_Static_assert(sizeof(xqc_arena_precision_t) == sizeof(int), "an XQ_OPTION_ENUM field is an int");
_Static_assert(XQC_ARENA_FP32 == 0 && XQC_ARENA_BF16 == 1 && XQC_ARENA_WORKER == 2,
               "ARENA_PRECISION_NAMES follows xqc_arena_precision_t");

const char *xqc_gating_name(xqc_gating_t g) {
  assert(g >= XQC_GATING_SPRT && g <= XQC_GATING_NONE);
  return GATING_NAMES[g];
}

const char *xqc_arena_precision_name(xqc_arena_precision_t p) {
  assert(p >= XQC_ARENA_FP32 && p <= XQC_ARENA_WORKER);
  return ARENA_PRECISION_NAMES[p];
}

/* router, pub: ZeroMQ bind endpoints. */
static int check_zmq(const char *name, const char *v, xq_errbuf_t *eb) {
  return xq_addr_check_zmq_bind(name, v, eb);
}

/* http: HOST:PORT, resolved now so that a bad one stops the start, or "" (off). */
static int check_http(const char *name, const char *v, xq_errbuf_t *eb) {
  struct sockaddr_storage ss;
  (void)name;
  return *v ? xq_addr_resolve("http", v, &ss, eb) : 0;
}

/* net_size is open-ended (BxC), so no list of names: the parser that makes net 1
 * (campaign.c) and the trainer's --size is the check. */
static int check_net_size(const char *name, const char *v, xq_errbuf_t *eb) {
  (void)name;
  if (nn_arch_preset(v, &(nn_arch_t){0}) != 0)
    return xq_err_set(eb, XQ_ERANGE,
                      "net_size: '%s' is not a network size: " NN_ARCH_SPELLING, v);
  return 0;
}

/* min_peer_version: "" (any) or MAJOR.MINOR.PATCH, as in XQ_SOFTWARE_VERSION. */
static int check_version(const char *name, const char *v, xq_errbuf_t *eb) {
  unsigned a, b, c;
  int end = 0;
  if (!*v || (sscanf(v, "%u.%u.%u%n", &a, &b, &c, &end) == 3 && v[end] == '\0')) return 0;
  return xq_err_set(eb, XQ_ERANGE, "%s: '%s' is not a version: give MAJOR.MINOR.PATCH, as"
                    " in 0.2.0 (xqz version prints this build's), or empty for any", name, v);
}

/* The default of max_message_bytes below, spelled out because defaults are text. */
_Static_assert(XQ_WIRE_MAX_FRAME == 67112960, "update the max_message_bytes default");

#define F(f) XQ_OPT_FIELD(xqc_config_t, f)
static const xq_opt_t ROWS[] = {
  {"router", XQ_OPTION_STRING, F(router), "tcp://127.0.0.1:5555", 0, 0,
   .help = "ROUTER bind address (requests); labs: tcp://*:5555", .check = check_zmq},
  {"pub", XQ_OPTION_STRING, F(pub), "tcp://127.0.0.1:5556", 0, 0,
   .help = "PUB bind address (NetAnnounce); labs: tcp://*:5556", .check = check_zmq},
  {"http", XQ_OPTION_STRING, F(http), "127.0.0.1:5580", 0, 0, .check = check_http,
   .help = "HTTP endpoint HOST:PORT (dashboard, /metrics, /api/status); empty = off"},
  {"net_size", XQ_OPTION_STRING, F(net_size), "2x16a", 0, 0, .check = check_net_size,
   .help = "architecture of net 1: tiny (2x16), default (6x64), large (10x128) or BxC (B"
   " blocks of C channels); suffix g: global pooling, l: line convolutions, then a: attack"
   " planes, then v: wide value head, then s: survival head, then r: opponent-reply head"
   " (2x16ls, 2x16las, 2x16v, 2x16r; docs/network.md)"},
  {"sims", XQ_OPTION_INT, F(sims), "64", 1, 100000,
   .help = "full-search simulations (policy targets)"},
  {"fast_sims", XQ_OPTION_INT, F(fast_sims), "16", 1, 100000, .help = "fast-search simulations"},
  {"full_frac", XQ_OPTION_DOUBLE, F(full_frac), XQ_SELFPLAY_DEF_STR(XQ_SELFPLAY_FULL_FRAC), 0, 1,
   .help = "share of moves with a full search"},
  {"max_plies", XQ_OPTION_INT, F(max_plies), "300", 10, 1000,
   .help = "self-play game-length cap (draw)"},
  {"noise_frac", XQ_OPTION_DOUBLE, F(noise_frac), XQ_SELFPLAY_DEF_STR(XQ_SELFPLAY_NOISE_FRAC), 0, 1,
   .help = "Dirichlet share at the root"},
  {"dirichlet_alpha", XQ_OPTION_DOUBLE, F(dirichlet_alpha), "0.3", 0.001, 10,
   .help = "Dirichlet alpha"},
  {"temp_plies", XQ_OPTION_INT, F(temp_plies), XQ_SELFPLAY_DEF_STR(XQ_SELFPLAY_TEMP_PLIES), 0, 1000,
   .help = "plies played with temperature 1"},
  {"temp_final", XQ_OPTION_DOUBLE, F(temp_final), XQ_SELFPLAY_DEF_STR(XQ_SELFPLAY_TEMP_FINAL), 0, 2,
   .help = "temperature after temp_plies (0: always the most visited move)"},
  {"resign_threshold", XQ_OPTION_DOUBLE, F(resign_threshold),
   XQ_SELFPLAY_DEF_STR(XQ_SELFPLAY_RESIGN_THRESHOLD), -1, 1,
   .help = "root value below which a side resigns (-1 = never)"},
  {"no_resign_frac", XQ_OPTION_DOUBLE, F(no_resign_frac),
   XQ_SELFPLAY_DEF_STR(XQ_SELFPLAY_NO_RESIGN_FRAC), 0, 1,
   .help = "share of games with resignation disabled"},
  {"games_per_job", XQ_OPTION_INT, F(games_per_job), "64", 1, 10000,
   .help = "games per self-play job (played at once, shared among the worker's threads; a"
   " worker plays at most threads x games-per-thread of them)"},
  {"window", XQ_OPTION_INT, F(window), "50000", 100, 100000000,
   .help = "replay window W (positions); with window_max, the size the window starts at"},
  {"window_max", XQ_OPTION_INT, F(window_max), "0", 0, 100000000,
   .help = "0: the window stays at `window`; else it grows with the positions ingested (KataGo's"
   " power law, docs/tuning.md) up to this many positions"},
  {"window_exponent", XQ_OPTION_DOUBLE, F(window_exponent), "0.65", 0.01, 1,
   .help = "growing window: the window grows as (positions ingested)^exponent (1: linearly)"},
  {"window_slope", XQ_OPTION_DOUBLE, F(window_slope), "0.4", 0.001, 1,
   .help = "growing window: positions the window gains per position ingested when it starts to"
   " grow (the gain then falls as the campaign goes on)"},
  {"min_positions", XQ_OPTION_INT, F(min_positions), "2000", 1, 100000000,
   .help = "positions in the window before training starts"},
  {"value_target_q", XQ_OPTION_DOUBLE, F(value_target_q), "0", 0, 1,
   .help = "value target = (1 - q) x game result + q x the search's root value (0: result only)"},
  {"adjudicate_material", XQ_OPTION_DOUBLE, F(adjudicate_material), XQ_ADJUDICATE_DEFAULT, 0, 100,
   .help = "a game stopped by the length cap is won by the side this many pawns ahead (0: a draw)"},
  {"colour_swap", XQ_OPTION_DOUBLE, F(colour_swap), "0", 0, 1,
   .help = "share of training samples served with the colours swapped (board turned, Red<->Black)"},
  {"mate_probe", XQ_OPTION_INT, F(mate_probe), "0", 0, 1,
   .help = "1: self-play searches score a mate (or stalemate) in one without the net"},
  {"search", XQ_OPTION_ENUM, F(search), "gumbel", 0, 0,
   .help = "self-play's search: gumbel (Gumbel AlphaZero's sequential halving at the root, the"
   " improved policy as targets; docs/search.md), gumbel_tree (the same, and the paper's"
   " deterministic selection below the root) or puct (visit counts as policy targets)",
   .names = SEARCH_NAMES},
  {"gumbel_actions", XQ_OPTION_INT, F(gumbel_actions), "16", 1, 128,
   .help = "search = gumbel or gumbel_tree: actions considered at the root (the top ones by prior"
   " and Gumbel noise)"},
  {"reuse", XQ_OPTION_DOUBLE, F(reuse), "4", 0.1, 1000,
   .help = "pacing R: samples served <= R x positions ingested"},
  {"balance_window_s", XQ_OPTION_INT, F(balance_window_s), "600", 1, 86400,
   .help = "span (s) of the balance figures: achieved reuse, ingest and training rates, the"
   " trainer's busy share (docs/operations.md)"},
  {"balance_warn_s", XQ_OPTION_INT, F(balance_warn_s), "300", 1, 86400,
   .help = "achieved reuse below reuse/2 for this long (s): the campaign is trainer-bound (one"
   " warning in the log)"},
  {"self_balance", XQ_OPTION_INT, F(self_balance), "0", 0, 1,
   .help = "1: self-play jobs' full-search simulations follow the balance, from sims (the workers"
   " wait on the trainer) up to sims_max (the trainer cannot keep up; docs/tuning.md)"},
  {"sims_max", XQ_OPTION_INT, F(sims_max), "256", 1, 100000,
   .help = "the most full-search simulations self_balance hands out"},
  {"batch_size", XQ_OPTION_INT, F(batch_size), "256", 1, 8192,
   .help = "batch size hint / cap per Batch"},
  {"gating", XQ_OPTION_ENUM, F(gating), "none", 0, 0,
   .help = "gating mode (none: every candidate promoted after threshold_games measured games; "
   "sprt and threshold decide on the score; docs/tuning.md)", .names = GATING_NAMES},
  {"gating_sims", XQ_OPTION_INT, F(gating_sims), "32", 1, 100000,
   .help = "arena simulations per move"},
  {"arena_precision", XQ_OPTION_ENUM, F(arena_precision), "fp32", 0, 0,
   .names = ARENA_PRECISION_NAMES,
   .help = "arithmetic of gating and anchor games on every worker, so that no promotion is"
   " decided by a precision difference (bf16: only workers whose CPU runs it play them;"
   " worker: each worker's own --precision; docs/operations.md)"},
  {"gating_max_games", XQ_OPTION_INT, F(gating_max_games), "100", 2, 100000,
   .help = "game cap of a gating match (undecided at the cap: promoted if its SPRT LLR > 0; "
   "above 176 games pairs repeat openings, and so games)"},
  {"sprt_elo0", XQ_OPTION_DOUBLE, F(sprt_elo0), "0", -1000, 1000, .help = "SPRT H0 Elo"},
  {"sprt_elo1", XQ_OPTION_DOUBLE, F(sprt_elo1), "35", -1000, 1000, .help = "SPRT H1 Elo"},
  {"sprt_alpha", XQ_OPTION_DOUBLE, F(sprt_alpha), "0.05", 0.0001, 0.5, .help = "SPRT alpha"},
  {"sprt_beta", XQ_OPTION_DOUBLE, F(sprt_beta), "0.05", 0.0001, 0.5, .help = "SPRT beta"},
  {"threshold_score", XQ_OPTION_DOUBLE, F(threshold_score), "0.55", 0, 1,
   .help = "threshold mode: promote when score >= this"},
  {"threshold_games", XQ_OPTION_INT, F(threshold_games), "40", 2, 100000,
   .help = "threshold mode: games before deciding"},
  /* anchor matches (anchors.h) */
  {"anchors", XQ_OPTION_STRING, F(anchors), "greedy,alphabeta:1", 0, 0,
   .help = "built-in players the best net is measured against, comma-separated (random, greedy,"
   " alphabeta:D): the absolute strength curve of docs/operations.md, \"Anchors\""},
  {"anchor_games", XQ_OPTION_INT, F(anchor_games), "20", 0, 1000,
   .help = "games per anchor of each anchor match, played at gating_sims (0 = no anchor matches)"},
  {"anchor_every", XQ_OPTION_INT, F(anchor_every), "1", 1, 100000,
   .help = "measure net 1 and then every Nth promoted net against the anchors"},
  {"keep_rejected_nets", XQ_OPTION_INT, F(keep_rejected_nets), "50", 0, 1000000,
   .help = "rejected candidates' files kept in nets/rejected/, the newest; older ones are deleted"
   " (their campaign.db rows stay)"},
  /* population-based training (issue 48; docs/tuning.md, "Population") */
  {"population", XQ_OPTION_INT, F(population), "0", 0, XQC_POPULATION_MAX,
   .help = "0: one trainer (the default); K (2 to 16): a population of K trainers, each with"
   " its own training settings, the worst copying the best every pbt_interval_steps"},
  {"population_control", XQ_OPTION_INT, F(population_control), "1", 0, 1,
   .help = "population: 1: one member keeps the default settings and never copies (a control"
   " to compare the others with)"},
  {"pbt_interval_steps", XQ_OPTION_INT, F(pbt_interval_steps), "2000", 1, 100000000,
   .help = "population: trainer steps between two exploit-and-explore rounds"},
  {"pbt_quantile", XQ_OPTION_DOUBLE, F(pbt_quantile), "0.25", 0.001, 0.5,
   .help = "population: share of the ranked members at the bottom that copy one of the same"
   " share at the top (above 0, at most 0.5)"},
  {"pbt_resample_p", XQ_OPTION_DOUBLE, F(pbt_resample_p), "0.25", 0, 1,
   .help = "population: probability that a copied setting is drawn afresh from its range"
   " instead of multiplied by 0.8 or 1.2"},
  {"pbt_share", XQ_OPTION_DOUBLE, F(pbt_share), "0.1", 0, 0.5,
   .help = "population: share of worker time given to the games that rate the members"
   " against each other (a round robin)"},
  {"pbt_round_games", XQ_OPTION_INT, F(pbt_round_games), "8", 2, 200,
   .help = "population: games each two players of a round (the members' last nets and the"
   " best net) play against each other, in pairs with colours swapped (even)"},
  {"pbt_gate_leader", XQ_OPTION_INT, F(pbt_gate_leader), "1", 0, 1,
   .help = "population: 1: each new candidate of the member rated best in the last round goes"
   " to gating at once, as a single trainer's does; 0: only its net at each round's end"},
  {"fsync_ms", XQ_OPTION_INT, F(fsync_ms), "200", 1, 60000, .help = "fsync batching interval (ms)"},
  {"heartbeat_ms", XQ_OPTION_INT, F(heartbeat_ms), "5000", 100, 600000,
   .help = "heartbeat interval asked of peers (ms)"},
  {"worker_timeout_ms", XQ_OPTION_INT, F(worker_timeout_ms), "30000", 500, 86400000,
   .help = "a peer silent this long is presumed gone (ms)"},
  {"status_ms", XQ_OPTION_INT, F(status_ms), "5000", 100, 3600000,
   .help = "status log line interval (ms)"},
  {"segment_bytes", XQ_OPTION_INT, F(segment_bytes), "67108864", 4096, 4294967296.0,
   .help = "roll over to a new games/seg file at this size"},
  {"max_peer_errors", XQ_OPTION_INT, F(max_peer_errors), "20", 1, 1000000,
   .help = "faults (malformed or unexpected messages) within fault_window_s that cut a peer off"},
  {"fault_window_s", XQ_OPTION_INT, F(fault_window_s), "60", 1, 86400,
   .help = "window (s) in which max_peer_errors faults cut a peer off"},
  {"cutoff_s", XQ_OPTION_INT, F(cutoff_s), "600", 1, 31536000,
   .help = "a cut-off peer (CURVE key, else worker id, else connection) is ignored this long (s)"},
  {"max_message_bytes", XQ_OPTION_INT, F(max_message_bytes), "67112960", 65536, 2147483647.0,
   .help = "largest message on the ROUTER; a bigger one drops that connection (a net must fit)"},
  {"curve_secret_key", XQ_OPTION_STRING, F(curve_secret_key), "", 0, 0,
   .help = "coordinator's CURVE secret key file (xqz keygen); empty = CURVE off (trusted network)"},
  {"curve_allow_dir", XQ_OPTION_STRING, F(curve_allow_dir), "", 0, 0,
   .help = "with CURVE: directory of the *.pub keys allowed to connect (re-read when it changes)"},
  {"curve_admin_dir", XQ_OPTION_STRING, F(curve_admin_dir), "", 0, 0,
   .help = "with CURVE: *.pub keys allowed to ban/unban (empty: nobody); without CURVE: loopback"},
  {"curve_trainer_dir", XQ_OPTION_STRING, F(curve_trainer_dir), "", 0, 0,
   .help = "with CURVE: *.pub keys of the trainer (empty: any allowed key may act as the trainer)"},
  {"trainer_addresses", XQ_OPTION_STRING, F(trainer_addresses), "", 0, 0,
   .help = "without CURVE: IP addresses, besides loopback, the trainer may connect from (a,b)"},
  {"seed", XQ_OPTION_INT, F(seed), "1", 0, 9.2e18, .help = "random seed (sampling, net 1 weights)"},
  {"min_peer_version", XQ_OPTION_STRING, F(min_peer_version), "", 0, 0,
   .help = "workers and trainers older than this software version (e.g. 0.2.0) are refused, told"
   " which to install; empty = any", .check = check_version},
};
#define NROWS ((int)(sizeof ROWS / sizeof ROWS[0]))
static const xq_opts_t TABLE = {ROWS, NROWS, XQ_OPTS_SETTINGS};

void xqc_config_defaults(xqc_config_t *c) {
  memset(c, 0, sizeof *c);
  xq_opts_defaults(&TABLE, c);
}

/* '-' and '_' are the same in a name (min-positions is min_positions), as the worker and
 * trainer spell their options with dashes; an unknown name gets the nearest as a hint. */
const xq_opts_t *xqc_config_table(void) { return &TABLE; }

int xqc_config_set(xqc_config_t *c, const char *key, const char *value, xq_errbuf_t *eb) {
  return xq_opts_set(&TABLE, c, key, value, eb);
}

typedef struct {
  xqc_config_t *c;
  xq_errbuf_t *eb;
  int rc;
  FILE *f;
  int line;           /* the physical line being parsed (1-based) */
  bool line_start;    /* the next read starts a new physical line */
  bool indented;      /* the line starts with a blank: maybe libinih's continuation line */
  int prev;           /* the row of the previous call's setting, -1 = none */
  int first[NROWS];   /* the line each setting was first set at, 0 = not yet */
} load_ctx_t;

/* libinih's reader, counting lines: the system libinih has no line numbers in callbacks. */
static char *read_line(char *str, int num, void *stream) {
  load_ctx_t *ctx = stream;
  char *r = fgets(str, num, ctx->f);
  if (!r) return NULL;
  if (ctx->line_start) {
    ctx->line++;
    ctx->indented = r[0] == ' ' || r[0] == '\t';
  }
  size_t n = strlen(r);
  ctx->line_start = n > 0 && r[n - 1] == '\n';
  return r;
}

/* A setting given twice is refused naming both lines: one of them would be silently
 * ignored. An indented line with the previous line's name continues its value (libinih's
 * multi-line values) and is set as before, not counted as a second setting. */
static int on_ini(void *user, const char *section, const char *name, const char *value) {
  (void)section;
  load_ctx_t *ctx = user;
  if (ctx->rc < 0) return 0;
  int r = xq_opts_find(&TABLE, name);
  bool continued = ctx->indented && r == ctx->prev;
  ctx->prev = r;
  if (r >= 0 && !continued) {
    int *first = &ctx->first[r];
    if (*first) {
      ctx->rc = xq_err_set(ctx->eb, XQ_EINVAL,
                           "'%s' is set twice, at line %d and at line %d; keep one of the two",
                           name, *first, ctx->line);
      return 0;
    }
    *first = ctx->line;
  }
  int rc = xqc_config_set(ctx->c, name, value, ctx->eb);
  if (rc < 0) {
    ctx->rc = rc;
    return 0;
  }
  return 1;
}

int xqc_config_load(xqc_config_t *c, const char *path, xq_errbuf_t *eb) {
  load_ctx_t ctx = {.c = c, .eb = eb, .line_start = true, .prev = -1};
  ctx.f = fopen(path, "r");
  if (!ctx.f) return xq_err_set(eb, XQ_EIO, "%s: cannot open", path);
  int r = ini_parse_stream(read_line, &ctx, on_ini, &ctx);
  fclose(ctx.f);
  if (ctx.rc < 0) {
    char tmp[256];
    snprintf(tmp, sizeof tmp, "%s", eb ? eb->msg : "");
    return xq_err_set(eb, ctx.rc, "%s: line %d: %s", path, r, tmp);
  }
  if (r != 0) return xq_err_set(eb, XQ_EFORMAT, "%s: line %d: syntax error", path, r);
  return 0;
}

int xqc_config_check(const xqc_config_t *c, xq_errbuf_t *eb) {
  if (c->window_max && c->window_max < c->window)
    return xq_err_set(eb, XQ_ERANGE,
                      "window_max: %lld is below window (%lld); set 0 for a window that stays"
                      " at window, or a size >= window for one that grows",
                      (long long)c->window_max, (long long)c->window);
  if (c->self_balance && c->sims_max < c->sims)
    return xq_err_set(eb, XQ_ERANGE,
                      "sims_max: %lld is below sims (%lld): self_balance moves the job"
                      " simulations between the two; raise sims_max or lower sims",
                      (long long)c->sims_max, (long long)c->sims);
  if (c->population == 1)
    return xq_err_set(eb, XQ_ERANGE,
                      "population: 1 is not a population: set 0 for one trainer, or 2 to %d"
                      " members", XQC_POPULATION_MAX);
  if (c->pbt_round_games % 2)
    return xq_err_set(eb, XQ_ERANGE,
                      "pbt_round_games: %lld is odd: a round's games are played in pairs (one"
                      " opening, colours swapped); set an even number, e.g. %lld",
                      (long long)c->pbt_round_games, (long long)c->pbt_round_games + 1);
  char specs[XQC_ANCHORS_MAX][XQC_ANCHOR_SPEC_MAX];
  int nspecs = 0;
  int rc = xqc_anchor_list(c->anchors, specs, &nspecs, eb);
  if (rc < 0) return rc;
  /* The window only grows (window.h), so it can hold window_max positions at most. */
  int64_t reach = c->window_max ? c->window_max : c->window;
  const char *limit = c->window_max ? "window_max" : "window";
  if (c->min_positions > reach)
    return xq_err_set(eb, XQ_ERANGE,
                      "min_positions: %lld can never be reached: the window holds at most %lld"
                      " positions (%s); lower min_positions or raise %s%s",
                      (long long)c->min_positions, (long long)reach, limit, limit,
                      c->window_max ? "" : " (or let the window grow: window_max)");
  return 0;
}

/* Writes text as "; " comment lines of at most COMMENT_WIDTH bytes, broken at spaces (a
 * longer word stands alone): inih reads at most INI_MAX_LINE (200) bytes a line, and the
 * rest of a longer comment would be parsed as a setting. */
enum { COMMENT_WIDTH = 96 };
static void write_comment(FILE *f, const char *text) {
  while (*text) {
    size_t n = strlen(text);
    if (n > COMMENT_WIDTH) {
      n = COMMENT_WIDTH;
      while (n > 0 && text[n] != ' ') n--;
      if (n == 0) n = strcspn(text, " ");
    }
    fprintf(f, "; %.*s\n", (int)n, text);
    text += n;
    while (*text == ' ') text++;
  }
}

int xqc_config_write(const xqc_config_t *c, FILE *f) {
  fprintf(f, "; xqzero campaign settings (xqz-coordinator --help lists them all)\n");
  for (int i = 0; i < NROWS; i++) {
    write_comment(f, ROWS[i].help);
    fprintf(f, "%s = ", ROWS[i].name);
    xq_opts_print_value(&TABLE, i, c, f);
    fputc('\n', f);
  }
  return ferror(f) ? XQ_EIO : 0;
}

/* The settings reported as limits in Status.limits, by name. */
static const char *const LIMITS[] = {"max_message_bytes", "max_peer_errors", "fault_window_s",
                                     "cutoff_s", "batch_size", "worker_timeout_ms"};

int xqc_config_limit(const xqc_config_t *c, int i, const char **name, double *value) {
  if (i < 0 || i >= (int)(sizeof LIMITS / sizeof LIMITS[0])) return -1;
  int k = xq_opts_find(&TABLE, LIMITS[i]);
  assert(k >= 0 && ROWS[k].kind == XQ_OPTION_INT && ROWS[k].size == sizeof(int64_t));
  const xq_opt_t *r = &ROWS[k];
  *name = r->name;
  *value = (double)*(const int64_t *)(const void *)((const char *)c + r->off);
  return 0;
}

void xqc_config_help(FILE *f) {
  fprintf(f, "usage: xqz-coordinator --campaign DIR [--key=value | --key value]...\n"
             "       xqz-coordinator --version\n"
             "Settings come from DIR/campaign.ini, overridden by the command line:\n");
  xq_opts_help(&TABLE, f, 30);
}
