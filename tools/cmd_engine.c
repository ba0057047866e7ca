/*
 * cmd_engine.c: `xqz engine --net FILE`, a UCI / UCCI engine on stdin/stdout so Xiangqi
 * GUIs and match runners can play a trained net.
 *
 * Threads: the main thread reads commands (so `stop`, `isready` and `quit` are answered
 * while the engine thinks) and owns the current position and the options; a search thread
 * runs one `go` at a time on its own copy of the position, and owns the MCTS tree while it
 * runs. With the `Threads` option above 1, that search runs its simulations on that many
 * threads sharing the tree (xq_mcts_new_parallel), each with its own net and evaluation
 * cache. The search runs in slices so it can print `info` lines as it goes; the tree is
 * kept between slices (the same position searched again reuses it). Output from all
 * threads goes through say(), one locked, flushed line at a time.
 *
 * The options (Threads, Hash, MultiPV, WeightsFile, Simulations, Temperature) come from
 * the table in engine_proto.c; changing Threads, Hash or WeightsFile builds a new set of
 * nets and tree, and only replaces the old one when every part of it was made.
 *
 * The text of the protocol (commands, `position`, `go`, clocks) is parsed by
 * search/engine_proto.c, which the unit tests exercise without a network.
 */
#include <assert.h>
#include <errno.h>
#include <math.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "commands.h"
#include "rules/fen.h"
#include "rules/movegen.h"
#include "rules/notation.h"
#include "rules/rules.h"
#include "search/engine_proto.h"
#include "search/eval_cache.h"
#include "default_net.h"
#include "support/campaign_nets.h"
#include "search/evaluator.h"
#include "search/mcts.h"
#include "support/clock.h"
#include "support/rng.h"
#include "support/version.h"

#define ENGINE_AUTHOR "the xqzero authors"
#define ENGINE_LINE_MAX 65536 /* longer lines are dropped with an error (a 1000-ply game fits) */
#define ENGINE_SLICE_MS 250      /* an info line at least this often */
#define ENGINE_PATH_MAX 4096

/* The nets and the tree one search runs on, built together (engine_build). */
typedef struct {
  int nev;
  xq_evaluator_t *evs[XQ_MCTS_MAX_THREADS]; /* (nev) one per search thread, owned */
  bool cached;                              /* evs are evaluation caches around the nets */
  xq_mcts_t *mcts;
} engine_search_t;

typedef struct {
  xq_proto_t proto;
  xq_pos_t *pos;        /* the current position (main thread) */
  engine_search_t sr;   /* used by the search thread while `searching` */
  uint64_t seed;
  xq_rng_t rng;         /* draws the move when Temperature > 0 (search thread) */
  /* Options (main thread; read by the search thread only while it runs). */
  int threads, hash_mb, multipv;
  int64_t simulations;
  double temperature;
  char net_path[ENGINE_PATH_MAX];     /* the net loaded now */
  char default_net[ENGINE_PATH_MAX];  /* --net: WeightsFile's advertised default */
  pthread_mutex_t out_lock;
  /* The running search. */
  pthread_t thread;
  bool searching;       /* a thread was started and not yet joined (main thread only) */
  atomic_int stop;      /* main -> search: stop now */
  atomic_llong deadline_ms; /* main -> search: stop at this monotonic time (0 = none) */
  atomic_int pondering; /* 1 until ponderhit or stop: no time limit, no bestmove */
  xq_pos_t *search_pos; /* the search thread's copy */
  xq_go_t go;
  int64_t start_ms;
} engine_t;

/* Writes one protocol line, whole and flushed, from either thread. */
static void say(engine_t *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(engine_t *e, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  pthread_mutex_lock(&e->out_lock);
  vfprintf(stdout, fmt, ap);
  fputc('\n', stdout);
  fflush(stdout);
  pthread_mutex_unlock(&e->out_lock);
  va_end(ap);
}

/* Builds nets and a tree for threads search threads with hash_mb MB of evaluation cache
 * in all, from the net at path, into out. On failure out is left empty (nothing to free)
 * and eb says why. */
static int engine_build(engine_search_t *out, const char *path, int threads, int hash_mb,
                        uint64_t seed, xq_errbuf_t *eb) {
  *out = (engine_search_t){0};
  xq_mcts_config_t cfg;
  xq_mcts_config_default(&cfg);
  cfg.max_plies = XQ_MAX_HISTORY - 24; /* the tree must not outgrow the history */
  size_t cache_bytes = ((size_t)hash_mb << 20) / (size_t)threads;
  int rc = 0;
  for (int i = 0; i < threads && !rc; i++) {
    xq_evaluator_t *net = NULL;
    rc = xq_evaluator_net_new(&net, path, cfg.batch, eb);
    if (!rc && hash_mb > 0) rc = xq_eval_cache_new(&out->evs[i], net, cache_bytes, eb);
    else out->evs[i] = net;
    if (!rc) out->nev++;
  }
  out->cached = hash_mb > 0;
  if (!rc) rc = xq_mcts_new_parallel(&out->mcts, &cfg, out->evs, out->nev, seed, eb);
  if (rc) {
    for (int i = 0; i < out->nev; i++) xq_evaluator_free(&out->evs[i]);
    *out = (engine_search_t){0};
  }
  return rc;
}

static void engine_search_free(engine_search_t *sr) {
  xq_mcts_free(&sr->mcts);
  for (int i = 0; i < sr->nev; i++) xq_evaluator_free(&sr->evs[i]);
  sr->nev = 0;
}

/* Replaces the engine's nets and tree by new ones; keeps the old ones when that fails. */
static int engine_rebuild(engine_t *e, const char *path, int threads, int hash_mb, xq_errbuf_t *eb) {
  engine_search_t next;
  int rc = engine_build(&next, path, threads, hash_mb, e->seed, eb);
  if (rc) return rc;
  engine_search_free(&e->sr);
  e->sr = next;
  if (path != e->net_path) snprintf(e->net_path, sizeof e->net_path, "%s", path);
  e->threads = threads;
  e->hash_mb = hash_mb;
  return 0;
}

/* Per mille of the evaluation caches in use (UCI's hashfull), -1 without a cache. */
static int hashfull(const engine_t *e) {
  if (!e->sr.cached) return -1;
  int64_t used = 0, cap = 0;
  for (int i = 0; i < e->sr.nev; i++) {
    xq_eval_cache_stats_t st;
    xq_eval_cache_stats(e->sr.evs[i], &st);
    used += st.used;
    cap += st.capacity;
  }
  return cap > 0 ? (int)(used * 1000 / cap) : 0;
}

/* The info line(s) of a slice: one per MultiPV root move, best first by visits. */
static void print_info(engine_t *e, const xq_mcts_result_t *r, int64_t nodes, int64_t ms) {
  int64_t nps = ms > 0 ? nodes * 1000 / ms : 0;
  char hf[32] = "";
  int h = hashfull(e);
  if (h >= 0) snprintf(hf, sizeof hf, " hashfull %d", h);
  int order[XQ_MAX_MOVES], n = 0;
  for (int i = 0; i < r->nmoves; i++) order[n++] = i;
  for (int i = 1; i < n; i++) /* insertion sort by visits: nmoves is small */
    for (int j = i; j > 0 && r->visits[order[j]] > r->visits[order[j - 1]]; j--) {
      int t = order[j];
      order[j] = order[j - 1];
      order[j - 1] = t;
    }
  int lines = e->multipv < n ? e->multipv : n;
  if (lines < 1) lines = 1;
  for (int k = 0; k < lines; k++) {
    char pv[64 * 5 + 1] = "", mv[8];
    size_t len = 0;
    float value = r->value;
    bool main_line = k == 0 && (n == 0 || (r->pv_len > 0 && r->pv[0] == r->moves[order[0]]));
    if (main_line) {
      for (int i = 0; i < r->pv_len && i < 64; i++) {
        xq_move_print(r->pv[i], mv);
        len += (size_t)snprintf(pv + len, sizeof pv - len, "%s%s", i ? " " : "", mv);
      }
    } else {
      /* Other root moves: the move and its mean value (the tree keeps no line below). */
      xq_move_print(r->moves[order[k]], mv);
      len += (size_t)snprintf(pv, sizeof pv, "%s", mv);
      if (r->visits[order[k]] > 0) value = r->q[order[k]];
    }
    char multipv[24] = "";
    if (e->multipv > 1) snprintf(multipv, sizeof multipv, " multipv %d", k + 1);
    say(e, "info depth %d%s nodes %" PRId64 " nps %" PRId64 " time %" PRId64 "%s score cp %d%s%s",
        r->depth > 0 ? r->depth : 1, multipv, nodes, nps, ms, hf, xq_proto_value_to_cp(value),
        len ? " pv " : "", pv);
  }
}

/* With Temperature > 0: a root move drawn with probability visits^(1/T); else 0. */
static xq_move_t draw_move(engine_t *e, const xq_mcts_result_t *r) {
  if (!(e->temperature > 0.0) || r->nmoves == 0) return 0;
  double w[XQ_MAX_MOVES], sum = 0.0;
  int maxv = 0;
  for (int i = 0; i < r->nmoves; i++) maxv = r->visits[i] > maxv ? r->visits[i] : maxv;
  if (maxv == 0) return 0;
  for (int i = 0; i < r->nmoves; i++) {
    /* Scaled by the largest count so visits^(1/T) cannot overflow for small T. */
    w[i] = r->visits[i] > 0 ? pow((double)r->visits[i] / maxv, 1.0 / e->temperature) : 0.0;
    sum += w[i];
  }
  double x = xq_rng_uniform(&e->rng) * sum;
  for (int i = 0; i < r->nmoves; i++) {
    if (x < w[i]) return r->moves[i];
    x -= w[i];
  }
  return 0;
}

/* The search thread: slices of at most ENGINE_SLICE_MS until a limit or `stop`. */
static void *search_main(void *arg) {
  engine_t *e = arg;
  const xq_go_t *go = &e->go;
  int64_t node_limit = go->nodes > 0 ? go->nodes : 0;
  bool open = go->infinite || go->ponder;
  if (!open && node_limit == 0 && go->movetime <= 0 && go->depth <= 0 &&
      atomic_load(&e->deadline_ms) == 0)
    node_limit = e->simulations; /* a bare `go`: the Simulations option */
  xq_mcts_result_t *r = calloc(1, sizeof *r);
  if (!r) {
    say(e, "info string error: out of memory");
    say(e, e->proto == XQ_PROTO_UCCI ? "nobestmove" : "bestmove (none)");
    return NULL;
  }
  int64_t nodes = 0;
  xq_move_t best = 0, ponder = 0;
  bool failed = false;
  for (;;) {
    if (atomic_load(&e->stop)) break;
    int64_t t = xq_clock_ms();
    int64_t deadline = atomic_load(&e->deadline_ms);
    if (deadline && t >= deadline && nodes > 0) break;
    xq_mcts_limits_t lim = {.stop = &e->stop, .depth = go->depth > 0 ? go->depth : 0};
    lim.movetime_ms = ENGINE_SLICE_MS;
    if (deadline && deadline - t < lim.movetime_ms) lim.movetime_ms = deadline - t > 1 ? deadline - t : 1;
    if (node_limit) lim.nodes = node_limit - nodes;
    int rc = xq_mcts_search(e->sr.mcts, e->search_pos, &lim, r);
    if (rc) {
      say(e, "info string error: search failed: %s", xq_strerror(rc));
      failed = true;
      break;
    }
    nodes += r->simulations;
    if (r->best) {
      best = r->best;
      ponder = r->pv_len >= 2 ? r->pv[1] : 0;
    }
    print_info(e, r, nodes, xq_clock_ms() - e->start_ms);
    if (node_limit && nodes >= node_limit) break;
    if (go->depth > 0 && r->depth >= go->depth) break;
    if (r->simulations == 0 && !open && !deadline) break; /* nothing more to do (tree full) */
    if (r->simulations == 0 && (open || deadline)) {
      /* The tree cannot grow: wait for the clock or `stop` instead of spinning. */
      struct timespec ts = {0, 5 * 1000000};
      nanosleep(&ts, NULL);
    }
  }
  /* UCI: after `go infinite` or `go ponder`, bestmove waits for `stop` (or ponderhit). */
  while ((go->infinite || atomic_load(&e->pondering)) && !atomic_load(&e->stop)) {
    int64_t deadline = atomic_load(&e->deadline_ms);
    if (!go->infinite && deadline && xq_clock_ms() >= deadline) break;
    struct timespec ts = {0, 5 * 1000000};
    nanosleep(&ts, NULL);
  }
  if (best && !failed) {
    xq_move_t drawn = draw_move(e, r);
    if (drawn && drawn != best) {
      best = drawn;
      ponder = 0;
    }
  }
  if (!best && !failed) {
    /* A search stopped before its first simulation: fall back on any legal move so the
     * GUI still gets a move (the position has one, or we would not be here). */
    xq_move_t moves[XQ_MAX_MOVES];
    if (xq_gen_legal(e->search_pos, moves) > 0) best = moves[0];
  }
  char mv[8], pm[8];
  if (!best) {
    say(e, e->proto == XQ_PROTO_UCCI ? "nobestmove" : "bestmove (none)");
  } else {
    xq_move_print(best, mv);
    if (ponder) {
      xq_move_print(ponder, pm);
      say(e, "bestmove %s ponder %s", mv, pm);
    } else {
      say(e, "bestmove %s", mv);
    }
  }
  free(r);
  return NULL;
}

/* Stops the running search (if any) and waits for its bestmove. */
static void stop_search(engine_t *e) {
  if (!e->searching) return;
  atomic_store(&e->stop, 1);
  pthread_join(e->thread, NULL);
  e->searching = false;
}

/* Before a command that changes the position: a search with its own limits is allowed to
 * finish (so a script that pipes `go nodes N` and `position ...` together gets the full
 * search); an infinite or pondering one, which would never end, is stopped. */
static void finish_search(engine_t *e) {
  if (!e->searching) return;
  if (e->go.infinite || atomic_load(&e->pondering)) atomic_store(&e->stop, 1);
  pthread_join(e->thread, NULL);
  e->searching = false;
}

static void cmd_go(engine_t *e, const char *args) {
  finish_search(e);
  xq_errbuf_t eb = {{0}};
  xq_go_t go;
  if (xq_proto_go(args, e->proto, e->pos->side, &go, &eb)) {
    say(e, "info string error: %s", eb.msg);
    return;
  }
  e->start_ms = xq_clock_ms();
  xq_outcome_t oc = xq_adjudicate(e->pos, 0);
  xq_move_t moves[XQ_MAX_MOVES];
  if (xq_gen_legal(e->pos, moves) == 0) {
    /* No legal move: the only case without a move to give (checkmate or stalemate). */
    say(e, "info string game over: %s (%s)", xq_result_name(oc.result), xq_reason_name(oc.reason));
    say(e, e->proto == XQ_PROTO_UCCI ? "nobestmove" : "bestmove (none)");
    return;
  }
  if (oc.result != XQ_RESULT_NONE) {
    /* Our rules end the game here (repetition, no attackers, ...), but the GUI referees by
     * its own rules and would score a missing move as a loss: say so and play on. */
    say(e, "info string game over by our rules: %s (%s); searching on, the GUI adjudicates",
        xq_result_name(oc.result), xq_reason_name(oc.reason));
  }
  e->go = go;
  int64_t budget = go.movetime > 0 ? go.movetime : xq_proto_time_budget(&go, e->pos->side);
  atomic_store(&e->stop, 0);
  atomic_store(&e->pondering, go.ponder ? 1 : 0);
  atomic_store(&e->deadline_ms, (!go.ponder && !go.infinite && budget > 0) ? e->start_ms + budget : 0);
  memcpy(e->search_pos, e->pos, sizeof *e->pos);
  /* The tree plays moves on copies of the position: leave it room in the history. In
   * games this long, repetitions older than the last move are forgotten. */
  if (e->search_pos->ply > XQ_MAX_HISTORY / 2) xq_pos_reset_history(e->search_pos);
  int rc = pthread_create(&e->thread, NULL, search_main, e);
  if (rc) {
    say(e, "info string error: cannot start the search thread: %s", strerror(rc));
    say(e, e->proto == XQ_PROTO_UCCI ? "nobestmove" : "bestmove (none)");
    return;
  }
  e->searching = true;
}

/* UCCI engines accept these options; they change nothing here. */
static const char *const ucci_quiet_options[] = {
    "batch", "debug", "ponder", "promotion", "idle", "usebook", "bookfiles", "evalfile",
    "loadbook", "style", "randomness", "knowledge", "pruning", "selectivity", "drawmoves",
    "repetition", NULL};

/* Applies one option of the table; every refusal names the option and what it accepts. */
static void apply_option(engine_t *e, int id, const char *value) {
  const xq_proto_option_t *o = &xq_proto_options[id];
  xq_errbuf_t eb = {{0}};
  double num = 0;
  bool flag;
  if ((o->type == XQ_OPT_SPIN || o->number) && xq_proto_option_number(o, value, &num, &eb)) {
    say(e, "info string error: %s", eb.msg);
    return;
  }
  switch ((xq_opt_id_t)id) {
  case XQ_OPT_THREADS:
  case XQ_OPT_HASH: {
    int threads = id == XQ_OPT_THREADS ? (int)num : e->threads;
    int hash_mb = id == XQ_OPT_HASH ? (int)num : e->hash_mb;
    if (threads == e->threads && hash_mb == e->hash_mb) return;
    if (engine_rebuild(e, e->net_path, threads, hash_mb, &eb))
      say(e, "info string error: option %s: cannot apply %s: %s; keeping %s %d", o->name, value,
          eb.msg, o->name, id == XQ_OPT_THREADS ? e->threads : e->hash_mb);
    return;
  }
  case XQ_OPT_MULTIPV:
    e->multipv = (int)num;
    return;
  case XQ_OPT_SIMULATIONS:
    e->simulations = (int64_t)num;
    return;
  case XQ_OPT_TEMPERATURE:
    e->temperature = num;
    return;
  case XQ_OPT_WEIGHTS_FILE: {
    if (!*value || strlen(value) >= ENGINE_PATH_MAX) {
      say(e, "info string error: option WeightsFile: give the path of a .xqzn net (under %d bytes); keeping %s",
          ENGINE_PATH_MAX, e->net_path);
      return;
    }
    char path[ENGINE_PATH_MAX];
    snprintf(path, sizeof path, "%s", value);
    if (engine_rebuild(e, path, e->threads, e->hash_mb, &eb)) {
      say(e, "info string error: option WeightsFile: cannot load %s: %s; keeping %s", path,
          eb.msg[0] ? eb.msg : "unreadable", e->net_path);
      return;
    }
    say(e, "info string loaded %s", e->net_path);
    return;
  }
  case XQ_OPT_VARIANT:
    if (strcmp(value, "xiangqi"))
      say(e, "info string error: UCI_Variant '%s' not supported (only xiangqi)", value);
    return;
  case XQ_OPT_PROTOCOL:
    /* Fairy-Stockfish's switch to ICCS ranks 0-9 (our players send it): we always use ICCS. */
    if (strcmp(value, "uci") && strcmp(value, "ucci"))
      say(e, "info string error: Protocol '%s' not supported (uci or ucci)", value);
    return;
  case XQ_OPT_USEMILLISEC:
    if (xq_proto_option_check(o, value, &flag, &eb)) say(e, "info string error: %s", eb.msg);
    else if (!flag)
      say(e, "info string error: option usemillisec: only true is supported (clocks in milliseconds)");
    return;
  case XQ_OPT_NEWGAME:
    xq_mcts_clear(e->sr.mcts);
    return;
  case XQ_OPT_PONDER:
    /* UCI's hint that the GUI will ponder: `go ponder` works either way. */
    if (xq_proto_option_check(o, value, &flag, &eb)) say(e, "info string error: %s", eb.msg);
    return;
  case XQ_OPT_COUNT:
    break;
  }
  assert(!"option without a handler");
}

static void cmd_setoption(engine_t *e, const char *args) {
  char name[64], value[ENGINE_PATH_MAX];
  xq_errbuf_t eb = {{0}};
  if (xq_proto_setoption(args, name, sizeof name, value, sizeof value, &eb)) {
    say(e, "info string error: %s", eb.msg);
    return;
  }
  int id = xq_proto_option_find(name);
  if (id >= 0) {
    apply_option(e, id, value);
    return;
  }
  if (e->proto == XQ_PROTO_UCCI) {
    for (int i = 0; ucci_quiet_options[i]; i++)
      if (!strcmp(name, ucci_quiet_options[i])) return;
  }
  say(e, "info string error: unknown option '%s' (options: Threads, Hash, MultiPV, WeightsFile, "
         "Simulations, Temperature)", name);
}

/* The answer to `uci` / `ucci`: id, every option of the table, uciok / ucciok. */
static void cmd_hello(engine_t *e, xq_proto_t proto) {
  e->proto = proto;
  say(e, "id name " XQ_SOFTWARE_NAME);
  say(e, "id author " ENGINE_AUTHOR);
  char line[ENGINE_PATH_MAX + 128];
  for (int i = 0; i < XQ_OPT_COUNT; i++)
    if (xq_proto_option_line(&xq_proto_options[i], proto, e->default_net, line, sizeof line))
      say(e, "%s", line);
  say(e, proto == XQ_PROTO_UCCI ? "ucciok" : "uciok");
}

/* Reads one line into buf (NUL-terminated, without the newline). Returns the length, -1 at
 * the end of input, or -2 for a line longer than the buffer (the rest is consumed). */
static long read_line(char *buf, size_t size) {
  size_t n = 0;
  int c;
  bool too_long = false;
  while ((c = getchar()) != EOF && c != '\n') {
    if (n + 1 < size) buf[n++] = (char)c;
    else too_long = true;
  }
  buf[n] = 0;
  if (c == EOF && n == 0 && !too_long) return -1;
  return too_long ? -2 : (long)n;
}

static void engine_usage(FILE *f) {
  fprintf(f,
          "usage: xqz engine [--net FILE | --campaign DIR] [--threads N] [--seed S]\n\n"
          "Speaks UCI (answer to `uci`) or UCCI (answer to `ucci`) on stdin/stdout; moves\n"
          "in ICCS coordinates (h2e2, ranks 0-9). Options (setoption): Threads, Hash,\n"
          "MultiPV, WeightsFile, Simulations, Temperature; `uci` lists them with their\n"
          "bounds. --threads sets Threads at start; --campaign DIR plays that campaign's\n"
          "best net (DIR/nets/best.xqzn); with neither, the trained net shipped in nets/\n"
          "(or $XQZ_NET). See docs/engine.md.\n");
}

static int engine_loop(engine_t *e) {
  char *line = malloc(ENGINE_LINE_MAX);
  if (!line) return 1;
  for (;;) {
    long n = read_line(line, ENGINE_LINE_MAX);
    if (n == -1) break; /* the GUI went away: as `quit` */
    if (n == -2) {
      say(e, "info string error: line longer than %d bytes ignored", ENGINE_LINE_MAX - 1);
      continue;
    }
    const char *args;
    xq_cmd_t cmd = xq_proto_command(line, &args);
    xq_errbuf_t eb = {{0}};
    switch (cmd) {
    case XQ_CMD_EMPTY:
    case XQ_CMD_DEBUG:
      break;
    case XQ_CMD_UCI:
      cmd_hello(e, XQ_PROTO_UCI);
      break;
    case XQ_CMD_UCCI:
      cmd_hello(e, XQ_PROTO_UCCI);
      break;
    case XQ_CMD_ISREADY:
      say(e, "readyok");
      break;
    case XQ_CMD_SETOPTION:
      finish_search(e);
      cmd_setoption(e, args);
      break;
    case XQ_CMD_NEWGAME:
      finish_search(e);
      xq_mcts_clear(e->sr.mcts);
      xq_pos_startpos(e->pos);
      break;
    case XQ_CMD_POSITION:
      finish_search(e);
      if (xq_proto_position(e->pos, args, &eb)) say(e, "info string error: %s", eb.msg);
      break;
    case XQ_CMD_GO:
      cmd_go(e, args);
      break;
    case XQ_CMD_STOP:
      stop_search(e);
      break;
    case XQ_CMD_PONDERHIT:
      if (e->searching && atomic_load(&e->pondering)) {
        int64_t budget = e->go.movetime > 0 ? e->go.movetime
                                            : xq_proto_time_budget(&e->go, e->search_pos->side);
        atomic_store(&e->deadline_ms, xq_clock_ms() + (budget > 0 ? budget : 1000));
        atomic_store(&e->pondering, 0);
      }
      break;
    case XQ_CMD_QUIT:
      stop_search(e);
      if (e->proto == XQ_PROTO_UCCI) say(e, "bye");
      free(line);
      return 0;
    case XQ_CMD_UNKNOWN: {
      char word[40];
      size_t len = strcspn(line + strspn(line, " \t\r"), " \t\r");
      if (len > 32) len = 32;
      memcpy(word, line + strspn(line, " \t\r"), len);
      word[len] = 0;
      /* Never echo control bytes back to a GUI. */
      for (size_t i = 0; i < len; i++)
        if ((unsigned char)word[i] < 32 || (unsigned char)word[i] == 127) word[i] = '?';
      say(e, "info string error: unknown command '%s'", word);
      break;
    }
    }
  }
  stop_search(e);
  free(line);
  return 0;
}

int xqz_cmd_engine(int argc, char **argv) {
  const char *net = NULL;
  static char best[4096]; /* --campaign: its best net's file */
  uint64_t seed = 1;
  int threads = 1;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
      engine_usage(stdout);
      return 0;
    }
    if (!v) {
      fprintf(stderr, "xqz engine: '%s' needs a value (or is unknown)\n", a);
      engine_usage(stderr);
      return 2;
    }
    char *end;
    errno = 0;
    if (!strcmp(a, "--net")) {
      net = v;
    } else if (!strcmp(a, "--campaign")) {
      xq_errbuf_t ceb = {{0}};
      if (xq_campaign_best_net(v, best, sizeof best, &ceb) < 0) {
        fprintf(stderr, "xqz engine: %s\n", ceb.msg);
        return 2;
      }
      net = best; /* stdout is the GUI's: the choice is said on stderr */
      fprintf(stderr, "xqz engine: the best net of campaign %s: %s\n", v, best);
    } else if (!strcmp(a, "--seed")) {
      seed = strtoull(v, &end, 0);
      if (errno || *end || !*v) {
        fprintf(stderr, "xqz engine: bad --seed '%s'\n", v);
        return 2;
      }
    } else if (!strcmp(a, "--threads")) {
      long t = strtol(v, &end, 10);
      if (errno || *end || t < 1 || t > XQ_MCTS_MAX_THREADS) {
        fprintf(stderr, "xqz engine: bad --threads '%s' (1..%d)\n", v, XQ_MCTS_MAX_THREADS);
        return 2;
      }
      threads = (int)t;
    } else {
      fprintf(stderr, "xqz engine: unknown option '%s'\n", a);
      engine_usage(stderr);
      return 2;
    }
    i++;
  }
  if (!net) {
    xq_errbuf_t deb = {{0}};
    net = xqz_default_net(&deb);
    if (!net) {
      fprintf(stderr, "xqz engine: %s\n", deb.msg);
      return 2;
    }
    fprintf(stderr, "xqz engine: the default net %s (--net FILE or --campaign DIR for another)\n",
            net);
  }
  engine_t e = {0};
  int status = 1;
  xq_errbuf_t eb = {{0}};
  pthread_mutex_init(&e.out_lock, NULL);
  e.seed = seed;
  xq_rng_seed(&e.rng, seed ^ 0x5DEECE66Dull);
  e.multipv = (int)xq_proto_options[XQ_OPT_MULTIPV].def;
  e.simulations = (int64_t)xq_proto_options[XQ_OPT_SIMULATIONS].def;
  e.temperature = xq_proto_options[XQ_OPT_TEMPERATURE].def;
  e.pos = malloc(sizeof *e.pos);
  e.search_pos = malloc(sizeof *e.search_pos);
  if (!e.pos || !e.search_pos) {
    fprintf(stderr, "xqz engine: out of memory\n");
    goto out;
  }
  if (strlen(net) >= ENGINE_PATH_MAX) {
    fprintf(stderr, "xqz engine: --net path longer than %d bytes\n", ENGINE_PATH_MAX - 1);
    goto out;
  }
  snprintf(e.default_net, sizeof e.default_net, "%s", net);
  xq_pos_startpos(e.pos);
  int rc = engine_rebuild(&e, e.default_net, threads, (int)xq_proto_options[XQ_OPT_HASH].def, &eb);
  if (rc) {
    fprintf(stderr, "xqz engine: cannot load %s: %s\n", net, eb.msg[0] ? eb.msg : xq_strerror(rc));
    goto out;
  }
  status = engine_loop(&e);
out:
  engine_search_free(&e.sr);
  free(e.pos);
  free(e.search_pos);
  pthread_mutex_destroy(&e.out_lock);
  return status;
}
