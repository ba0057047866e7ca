/*
 * config.c: the settings table. One row per setting; parsing, bounds, --help and the
 * default campaign.ini all come from these rows. Defaults fit a 2-core box with the tiny
 * net (2x16a, with the attack planes): few simulations, a small window, fast gating.
 */
#include "config.h"

#include <assert.h>
#include <errno.h>
#include <ini.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "anchor_list.h"
#include "nn/nn_model.h"
#include "rules/material.h"
#include "search/selfplay_defaults.h"
#include "support/net_addr.h"
#include "support/opt_name.h"
#include "wire/wire.h"

/* T_ENUM: an int field holding the index of its value in the row's names. */
typedef enum { T_INT, T_DOUBLE, T_STRING, T_ENUM } ctype_t;

/* A check of a string value beyond its length (XQ_ERANGE/XQ_EINVAL naming the setting). */
typedef int (*ccheck_t)(const char *name, const char *v, xq_errbuf_t *eb);

typedef struct {
  const char *name;
  ctype_t type;
  size_t off;
  const char *def;
  double lo, hi;            /* bounds for numbers; for strings, lo = buffer size */
  const char *const *names; /* T_ENUM: the values, NULL-terminated, in enum order */
  const char *help;
} crow_t;

static const char *const GATING_NAMES[] = {"sprt", "threshold", "none", NULL};
_Static_assert(sizeof(xqc_gating_t) == sizeof(int), "a T_ENUM field is read as an int");
_Static_assert(XQC_GATING_SPRT == 0 && XQC_GATING_THRESHOLD == 1 && XQC_GATING_NONE == 2,
               "GATING_NAMES follows xqc_gating_t");

static const char *const SEARCH_NAMES[] = {"puct", "gumbel", "gumbel_tree", NULL};
_Static_assert(sizeof(xqc_search_t) == sizeof(int), "a T_ENUM field is read as an int");
_Static_assert(XQC_SEARCH_PUCT == 0 && XQC_SEARCH_GUMBEL == 1 && XQC_SEARCH_GUMBEL_TREE == 2,
               "SEARCH_NAMES follows xqc_search_t, whose values are the wire's");

static const char *const ARENA_PRECISION_NAMES[] = {"fp32", "bf16", "worker", NULL};
_Static_assert(sizeof(xqc_arena_precision_t) == sizeof(int), "a T_ENUM field is read as an int");
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

#define O(f) offsetof(xqc_config_t, f)
#define SZ(f) (double)sizeof(((xqc_config_t *)0)->f)
static const crow_t ROWS[] = {
  {"router", T_STRING, O(router), "tcp://127.0.0.1:5555", SZ(router), 0, NULL,
   "ROUTER bind address (requests); labs: tcp://*:5555"},
  {"pub", T_STRING, O(pub), "tcp://127.0.0.1:5556", SZ(pub), 0, NULL,
   "PUB bind address (NetAnnounce); labs: tcp://*:5556"},
  {"http", T_STRING, O(http), "127.0.0.1:5580", SZ(http), 0, NULL,
   "HTTP endpoint HOST:PORT (dashboard, /metrics, /api/status); empty = off"},
  {"net_size", T_STRING, O(net_size), "2x16a", SZ(net_size), 0, NULL,
   "architecture of net 1: tiny (2x16), default (6x64), large (10x128) or BxC (B blocks of C"
   " channels); suffix g: global pooling, l: line convolutions, then a: attack planes, then"
   " v: wide value head, then s: survival head, then r: opponent-reply head (2x16ls,"
   " 2x16las, 2x16v, 2x16r; docs/network.md)"},
  {"sims", T_INT, O(sims), "64", 1, 100000, NULL, "full-search simulations (policy targets)"},
  {"fast_sims", T_INT, O(fast_sims), "16", 1, 100000, NULL, "fast-search simulations"},
  {"full_frac", T_DOUBLE, O(full_frac), "0.25", 0, 1, NULL, "share of moves with a full search"},
  {"max_plies", T_INT, O(max_plies), "300", 10, 1000, NULL, "self-play game-length cap (draw)"},
  {"noise_frac", T_DOUBLE, O(noise_frac), "0.25", 0, 1, NULL, "Dirichlet share at the root"},
  {"dirichlet_alpha", T_DOUBLE, O(dirichlet_alpha), "0.3", 0.001, 10, NULL, "Dirichlet alpha"},
  {"temp_plies", T_INT, O(temp_plies), XQ_SELFPLAY_DEF_STR(XQ_SELFPLAY_TEMP_PLIES), 0, 1000, NULL,
   "plies played with temperature 1"},
  {"temp_final", T_DOUBLE, O(temp_final), "0", 0, 2, NULL,
   "temperature after temp_plies (0: always the most visited move)"},
  {"resign_threshold", T_DOUBLE, O(resign_threshold),
   XQ_SELFPLAY_DEF_STR(XQ_SELFPLAY_RESIGN_THRESHOLD), -1, 1, NULL,
   "root value below which a side resigns (-1 = never)"},
  {"no_resign_frac", T_DOUBLE, O(no_resign_frac), "0.1", 0, 1, NULL,
   "share of games with resignation disabled"},
  {"games_per_job", T_INT, O(games_per_job), "64", 1, 10000, NULL,
   "games per self-play job (played at once, shared among the worker's threads; a worker plays "
   "at most threads x games-per-thread of them)"},
  {"window", T_INT, O(window), "50000", 100, 100000000, NULL,
   "replay window W (positions); with window_max, the size the window starts at"},
  {"window_max", T_INT, O(window_max), "0", 0, 100000000, NULL,
   "0: the window stays at `window`; else it grows with the positions ingested (KataGo's"
   " power law, docs/tuning.md) up to this many positions"},
  {"window_exponent", T_DOUBLE, O(window_exponent), "0.65", 0.01, 1, NULL,
   "growing window: the window grows as (positions ingested)^exponent (1: linearly)"},
  {"window_slope", T_DOUBLE, O(window_slope), "0.4", 0.001, 1, NULL,
   "growing window: positions the window gains per position ingested when it starts to"
   " grow (the gain then falls as the campaign goes on)"},
  {"min_positions", T_INT, O(min_positions), "2000", 1, 100000000, NULL,
   "positions in the window before training starts"},
  {"value_target_q", T_DOUBLE, O(value_target_q), "0", 0, 1, NULL,
   "value target = (1 - q) x game result + q x the search's root value (0: result only)"},
  {"adjudicate_material", T_DOUBLE, O(adjudicate_material), XQ_ADJUDICATE_DEFAULT, 0, 100, NULL,
   "a game stopped by the length cap is won by the side this many pawns ahead (0: a draw)"},
  {"colour_swap", T_DOUBLE, O(colour_swap), "0", 0, 1, NULL,
   "share of training samples served with the colours swapped (board turned, Red<->Black)"},
  {"mate_probe", T_INT, O(mate_probe), "0", 0, 1, NULL,
   "1: self-play searches score a mate (or stalemate) in one without the net"},
  {"search", T_ENUM, O(search), "gumbel", 0, 0, SEARCH_NAMES,
   "self-play's search: gumbel (Gumbel AlphaZero's sequential halving at the root, the"
   " improved policy as targets; docs/search.md), gumbel_tree (the same, and the paper's"
   " deterministic selection below the root) or puct (visit counts as policy targets)"},
  {"gumbel_actions", T_INT, O(gumbel_actions), "16", 1, 128, NULL,
   "search = gumbel or gumbel_tree: actions considered at the root (the top ones by prior"
   " and Gumbel noise)"},
  {"reuse", T_DOUBLE, O(reuse), "4", 0.1, 1000, NULL,
   "pacing R: samples served <= R x positions ingested"},
  {"balance_window_s", T_INT, O(balance_window_s), "600", 1, 86400, NULL,
   "span (s) of the balance figures: achieved reuse, ingest and training rates, the"
   " trainer's busy share (docs/operations.md)"},
  {"balance_warn_s", T_INT, O(balance_warn_s), "300", 1, 86400, NULL,
   "achieved reuse below reuse/2 for this long (s): the campaign is trainer-bound (one"
   " warning in the log)"},
  {"self_balance", T_INT, O(self_balance), "0", 0, 1, NULL,
   "1: self-play jobs' full-search simulations follow the balance, from sims (the workers"
   " wait on the trainer) up to sims_max (the trainer cannot keep up; docs/tuning.md)"},
  {"sims_max", T_INT, O(sims_max), "256", 1, 100000, NULL,
   "the most full-search simulations self_balance hands out"},
  {"batch_size", T_INT, O(batch_size), "256", 1, 8192, NULL, "batch size hint / cap per Batch"},
  {"gating", T_ENUM, O(gating), "none", 0, 0, GATING_NAMES,
   "gating mode (none: every candidate promoted after threshold_games measured games; "
   "sprt and threshold decide on the score; docs/tuning.md)"},
  {"gating_sims", T_INT, O(gating_sims), "32", 1, 100000, NULL, "arena simulations per move"},
  {"arena_precision", T_ENUM, O(arena_precision), "fp32", 0, 0, ARENA_PRECISION_NAMES,
   "arithmetic of gating and anchor games on every worker, so that no promotion is decided by"
   " a precision difference (bf16: only workers whose CPU runs it play them; worker: each"
   " worker's own --precision; docs/operations.md)"},
  {"gating_max_games", T_INT, O(gating_max_games), "100", 2, 100000, NULL,
   "game cap of a gating match (undecided at the cap: promoted if its SPRT LLR > 0; "
   "above 176 games pairs repeat openings, and so games)"},
  {"sprt_elo0", T_DOUBLE, O(sprt_elo0), "0", -1000, 1000, NULL, "SPRT H0 Elo"},
  {"sprt_elo1", T_DOUBLE, O(sprt_elo1), "35", -1000, 1000, NULL, "SPRT H1 Elo"},
  {"sprt_alpha", T_DOUBLE, O(sprt_alpha), "0.05", 0.0001, 0.5, NULL, "SPRT alpha"},
  {"sprt_beta", T_DOUBLE, O(sprt_beta), "0.05", 0.0001, 0.5, NULL, "SPRT beta"},
  {"threshold_score", T_DOUBLE, O(threshold_score), "0.55", 0, 1, NULL,
   "threshold mode: promote when score >= this"},
  {"threshold_games", T_INT, O(threshold_games), "40", 2, 100000, NULL,
   "threshold mode: games before deciding"},
  /* anchor matches (anchors.h) */
  {"anchors", T_STRING, O(anchors), "greedy,alphabeta:1", SZ(anchors), 0, NULL,
   "built-in players the best net is measured against, comma-separated (random, greedy,"
   " alphabeta:D): the absolute strength curve of docs/operations.md, \"Anchors\""},
  {"anchor_games", T_INT, O(anchor_games), "20", 0, 1000, NULL,
   "games per anchor of each anchor match, played at gating_sims (0 = no anchor matches)"},
  {"anchor_every", T_INT, O(anchor_every), "1", 1, 100000, NULL,
   "measure net 1 and then every Nth promoted net against the anchors"},
  {"keep_rejected_nets", T_INT, O(keep_rejected_nets), "50", 0, 1000000, NULL,
   "rejected candidates' files kept in nets/rejected/, the newest; older ones are deleted"
   " (their campaign.db rows stay)"},
  {"fsync_ms", T_INT, O(fsync_ms), "200", 1, 60000, NULL, "fsync batching interval (ms)"},
  {"heartbeat_ms", T_INT, O(heartbeat_ms), "5000", 100, 600000, NULL,
   "heartbeat interval asked of peers (ms)"},
  {"worker_timeout_ms", T_INT, O(worker_timeout_ms), "30000", 500, 86400000, NULL,
   "a peer silent this long is presumed gone (ms)"},
  {"status_ms", T_INT, O(status_ms), "5000", 100, 3600000, NULL, "status log line interval (ms)"},
  {"segment_bytes", T_INT, O(segment_bytes), "67108864", 4096, 4294967296.0, NULL,
   "roll over to a new games/seg file at this size"},
  {"max_peer_errors", T_INT, O(max_peer_errors), "20", 1, 1000000, NULL,
   "faults (malformed or unexpected messages) within fault_window_s that cut a peer off"},
  {"fault_window_s", T_INT, O(fault_window_s), "60", 1, 86400, NULL,
   "window (s) in which max_peer_errors faults cut a peer off"},
  {"cutoff_s", T_INT, O(cutoff_s), "600", 1, 31536000, NULL,
   "a cut-off peer (CURVE key, else worker id, else connection) is ignored this long (s)"},
  {"max_message_bytes", T_INT, O(max_message_bytes), "67112960", 65536, 2147483647.0, NULL,
   "largest message on the ROUTER; a bigger one drops that connection (a net must fit)"},
  {"curve_secret_key", T_STRING, O(curve_secret_key), "", SZ(curve_secret_key), 0, NULL,
   "coordinator's CURVE secret key file (xqz keygen); empty = CURVE off (trusted network)"},
  {"curve_allow_dir", T_STRING, O(curve_allow_dir), "", SZ(curve_allow_dir), 0, NULL,
   "with CURVE: directory of the *.pub keys allowed to connect (re-read when it changes)"},
  {"curve_admin_dir", T_STRING, O(curve_admin_dir), "", SZ(curve_admin_dir), 0, NULL,
   "with CURVE: *.pub keys allowed to ban/unban (empty: nobody); without CURVE: loopback"},
  {"curve_trainer_dir", T_STRING, O(curve_trainer_dir), "", SZ(curve_trainer_dir), 0, NULL,
   "with CURVE: *.pub keys of the trainer (empty: any allowed key may act as the trainer)"},
  {"trainer_addresses", T_STRING, O(trainer_addresses), "", SZ(trainer_addresses), 0, NULL,
   "without CURVE: IP addresses, besides loopback, the trainer may connect from (a,b)"},
  {"seed", T_INT, O(seed), "1", 0, 9.2e18, NULL, "random seed (sampling, net 1 weights)"},
  {"min_peer_version", T_STRING, O(min_peer_version), "", SZ(min_peer_version), 0, NULL,
   "workers and trainers older than this software version (e.g. 0.2.0) are refused, told"
   " which to install; empty = any"},
};
#define NROWS ((int)(sizeof ROWS / sizeof ROWS[0]))

/* The string settings whose values are checked beyond their length, by field. */
static const struct {
  size_t off;
  ccheck_t check;
} CHECKS[] = {{O(router), check_zmq}, {O(pub), check_zmq}, {O(http), check_http},
              {O(net_size), check_net_size}, {O(min_peer_version), check_version}};

static int check_string(const crow_t *r, const char *v, xq_errbuf_t *eb) {
  for (size_t i = 0; i < sizeof CHECKS / sizeof CHECKS[0]; i++)
    if (CHECKS[i].off == r->off) return CHECKS[i].check(r->name, v, eb);
  return 0;
}

/* The row of a setting; '-' and '_' are the same in its name (min-positions is
 * min_positions), as the worker and trainer spell their options with dashes. */
static const crow_t *find_row(const char *name) {
  for (int i = 0; i < NROWS; i++)
    if (xq_opt_name_eq(name, ROWS[i].name)) return &ROWS[i];
  return NULL;
}

/* The index of v in names, or -1. */
static int name_index(const char *const *names, const char *v) {
  for (int i = 0; names[i]; i++)
    if (strcmp(names[i], v) == 0) return i;
  return -1;
}

/* names as "a|b|c" in buf. */
static const char *join_names(char *buf, size_t size, const char *const *names) {
  size_t n = 0;
  buf[0] = '\0';
  for (int i = 0; names[i] && n < size; i++)
    n += (size_t)snprintf(buf + n, size - n, "%s%s", i ? "|" : "", names[i]);
  return buf;
}

static int set_row(xqc_config_t *c, const crow_t *r, const char *v, xq_errbuf_t *eb) {
  char *base = (char *)c + r->off;
  char *end = NULL;
  errno = 0;
  switch (r->type) {
  case T_INT: {
    long long x = strtoll(v, &end, 10);
    if (errno || end == v || *end) return xq_err_set(eb, XQ_ERANGE, "%s: not an integer: '%s'", r->name, v);
    if ((double)x < r->lo || (double)x > r->hi)
      return xq_err_set(eb, XQ_ERANGE, "%s: %lld outside [%.0f, %.0f]", r->name, x, r->lo, r->hi);
    *(int64_t *)(void *)base = x;
    return 0;
  }
  case T_DOUBLE: {
    double x = strtod(v, &end);
    if (errno || end == v || *end || x != x) return xq_err_set(eb, XQ_ERANGE, "%s: not a number: '%s'", r->name, v);
    if (x < r->lo || x > r->hi)
      return xq_err_set(eb, XQ_ERANGE, "%s: %g outside [%g, %g]", r->name, x, r->lo, r->hi);
    *(double *)(void *)base = x;
    return 0;
  }
  case T_STRING: {
    if (strlen(v) >= (size_t)r->lo) return xq_err_set(eb, XQ_ERANGE, "%s: value too long", r->name);
    int rc = check_string(r, v, eb);
    if (rc < 0) return rc;
    strcpy(base, v);
    return 0;
  }
  case T_ENUM: {
    int i = name_index(r->names, v);
    char list[128];
    if (i < 0)
      return xq_err_set(eb, XQ_ERANGE, "%s: '%s' is not one of %s", r->name, v,
                        join_names(list, sizeof list, r->names));
    *(int *)(void *)base = i;
    return 0;
  }
  }
  return XQ_EINVAL;
}

void xqc_config_defaults(xqc_config_t *c) {
  memset(c, 0, sizeof *c);
  for (int i = 0; i < NROWS; i++) {
    int rc = set_row(c, &ROWS[i], ROWS[i].def, NULL);
    (void)rc;
  }
}

int xqc_config_set(xqc_config_t *c, const char *key, const char *value, xq_errbuf_t *eb) {
  const crow_t *r = find_row(key);
  if (!r) {
    xq_opt_near_t near;
    xq_opt_near_init(&near, key);
    for (int i = 0; i < NROWS; i++) xq_opt_near_add(&near, ROWS[i].name);
    const char *best = xq_opt_near_best(&near);
    if (best)
      return xq_err_set(eb, XQ_EINVAL, "unknown setting '%s'; did you mean '%s'? (see --help)",
                        key, best);
    return xq_err_set(eb, XQ_EINVAL, "unknown setting '%s' (see --help)", key);
  }
  return set_row(c, r, value, eb);
}

typedef struct {
  xqc_config_t *c;
  xq_errbuf_t *eb;
  int rc;
  FILE *f;
  int line;           /* the physical line being parsed (1-based) */
  bool line_start;    /* the next read starts a new physical line */
  bool indented;      /* the line starts with a blank: maybe libinih's continuation line */
  const crow_t *prev; /* the setting of the previous call */
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
  const crow_t *r = find_row(name);
  bool continued = ctx->indented && r == ctx->prev;
  ctx->prev = r;
  if (r && !continued) {
    int *first = &ctx->first[r - ROWS];
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
  load_ctx_t ctx = {.c = c, .eb = eb, .line_start = true};
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

static void print_value(const xqc_config_t *c, const crow_t *r, FILE *f) {
  const char *base = (const char *)c + r->off;
  switch (r->type) {
  case T_INT: fprintf(f, "%lld", (long long)*(const int64_t *)(const void *)base); break;
  case T_DOUBLE: fprintf(f, "%g", *(const double *)(const void *)base); break;
  case T_STRING: fputs(base, f); break;
  case T_ENUM: fputs(r->names[*(const int *)(const void *)base], f); break;
  }
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
    print_value(c, &ROWS[i], f);
    fputc('\n', f);
  }
  return ferror(f) ? XQ_EIO : 0;
}

/* The settings reported as limits in Status.limits, by name. */
static const char *const LIMITS[] = {"max_message_bytes", "max_peer_errors", "fault_window_s",
                                     "cutoff_s", "batch_size", "worker_timeout_ms"};

int xqc_config_limit(const xqc_config_t *c, int i, const char **name, double *value) {
  if (i < 0 || i >= (int)(sizeof LIMITS / sizeof LIMITS[0])) return -1;
  const crow_t *r = find_row(LIMITS[i]);
  assert(r && r->type == T_INT);
  *name = r->name;
  *value = (double)*(const int64_t *)(const void *)((const char *)c + r->off);
  return 0;
}

void xqc_config_help(FILE *f) {
  fprintf(f, "usage: xqz-coordinator --campaign DIR [--key=value | --key value]...\n"
             "       xqz-coordinator --version\n"
             "Settings come from DIR/campaign.ini, overridden by the command line:\n");
  for (int i = 0; i < NROWS; i++) {
    const crow_t *r = &ROWS[i];
    fprintf(f, "  --%-18s %s (default %s", r->name, r->help, r->def);
    char list[128];
    if (r->type == T_ENUM) fprintf(f, "; one of %s", join_names(list, sizeof list, r->names));
    else if (r->type != T_STRING) fprintf(f, "; %g..%g", r->lo, r->hi);
    fprintf(f, ")\n");
  }
}
