/*
 * cmd_engine.c: `xqz engine --net FILE`, a UCI / UCCI engine on stdin/stdout so Xiangqi
 * GUIs and match runners can play a trained net.
 *
 * Threads: the main thread reads commands and owns the current position and the options;
 * a search thread runs one `go` at a time on its own copy of the position, and owns the
 * MCTS tree while it runs. The main thread never waits for a search: it polls stdin and a
 * pipe the search thread writes when it ends (engine_input.h). `stop`, `isready`, `quit`
 * and `ponderhit` act at once; every other command that comes during a search waits in a
 * queue and runs, in order, when the search has answered (an infinite or pondering search,
 * which would never end, is stopped by it). A `stop` or `quit` also applies to each `go`
 * already queued: it answers at once with the net's first choice, so every `go` gets one
 * bestmove. With the `Threads` option above 1, that search runs its simulations on that many
 * threads sharing the tree (xq_mcts_new_parallel), each with its own net and evaluation
 * cache. The search runs in slices so it can print `info` lines as it goes; the tree is
 * kept between slices (the same position searched again reuses it). Output from all
 * threads goes through say(), one locked, flushed line at a time.
 *
 * The options (Threads, Hash, MultiPV, WeightsFile, Simulations, Temperature,
 * MoveOverhead) come from the table in engine_proto.c; changing Threads, Hash or
 * WeightsFile builds a new set of nets and tree, and only replaces the old one when every
 * part of it was made. Hash sizes the tree's node pool (3/4) and the evaluation cache
 * (1/4): a search stops when the pool is full and answers with the best move it has.
 *
 * The text of the protocol (commands, `position`, `go`, clocks) is parsed by
 * search/engine_proto.c, which the unit tests exercise without a network.
 */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
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
#include <unistd.h>

#include "cli_options.h"
#include "commands.h"
#include "engine_input.h"
#include "rules/fen.h"
#include "rules/movegen.h"
#include "rules/notation.h"
#include "rules/rules.h"
#include "search/engine_proto.h"
#include "search/eval_cache.h"
#include "default_net.h"
#include "support/campaign_nets.h"
#include "nn/nn_bf16.h"
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
  int64_t pool_nodes;                       /* the tree's node pool */
} engine_search_t;

typedef struct {
  xq_proto_t proto;
  xq_pos_t *pos;        /* the current position (main thread) */
  engine_search_t sr;   /* used by the search thread while `searching` */
  uint64_t seed;
  xq_rng_t rng;         /* draws the move when Temperature > 0 (search thread) */
  /* Options (main thread; read by the search thread only while it runs). */
  int threads, hash_mb, multipv;
  int64_t simulations, move_overhead_ms;
  double temperature;
  char net_path[ENGINE_PATH_MAX];     /* the net loaded now */
  char default_net[ENGINE_PATH_MAX];  /* --net: WeightsFile's advertised default */
  nn_precision_t start_precision;     /* at start: Precision's advertised default */
  pthread_mutex_t out_lock;
  /* The running search. */
  pthread_t thread;
  bool searching;       /* a thread was started and not yet joined (main thread only) */
  atomic_int finished;  /* search -> main: bestmove said, the thread may be joined */
  int wake[2];          /* search -> main: a byte when the search has finished */
  engine_queue_t queue; /* commands waiting for the search to end (main thread) */
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

/* Builds nets and a tree for threads search threads from the net at path, into out, with
 * hash_mb MB in all: 3/4 for the tree's node pool, 1/4 for the evaluation caches (split
 * among the threads). On failure out is left empty (nothing to free) and eb says why. */
static int engine_build(engine_search_t *out, const char *path, int threads, int hash_mb,
                        uint64_t seed, xq_errbuf_t *eb) {
  *out = (engine_search_t){0};
  xq_mcts_config_t cfg;
  xq_mcts_config_default(&cfg);
  cfg.max_plies = XQ_MAX_HISTORY - 24; /* the tree must not outgrow the history */
  size_t hash_bytes = (size_t)hash_mb << 20;
  cfg.node_budget = xq_mcts_nodes_for_bytes(hash_bytes - hash_bytes / 4);
  size_t cache_bytes = hash_bytes / 4 / (size_t)threads;
  int rc = 0;
  for (int i = 0; i < threads && !rc; i++) {
    xq_evaluator_t *net = NULL;
    rc = xq_evaluator_net_new(&net, path, cfg.batch, eb);
    if (!rc) rc = xq_eval_cache_new(&out->evs[i], net, cache_bytes, eb);
    if (!rc) out->nev++;
  }
  out->cached = true;
  out->pool_nodes = cfg.node_budget;
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

/* Per mille of the tree's node pool in use (UCI's hashfull): at 1000 the search stops. */
static int hashfull(const xq_mcts_result_t *r) {
  return r->node_cap > 0 ? (int)(r->nodes_used * 1000 / r->node_cap) : 0;
}

/* The info line(s) of a slice: one per MultiPV root move, best first by visits. */
static void print_info(engine_t *e, const xq_mcts_result_t *r, int64_t nodes, int64_t ms) {
  int64_t nps = ms > 0 ? nodes * 1000 / ms : 0;
  char hf[32];
  snprintf(hf, sizeof hf, " hashfull %d", hashfull(r));
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

/* Says the search has answered: the main thread joins it and runs what was queued. */
static void search_finished(engine_t *e) {
  atomic_store(&e->finished, 1);
  char byte = 1;
  ssize_t w;
  do w = write(e->wake[1], &byte, 1);
  while (w < 0 && errno == EINTR);
  /* A full pipe already holds a wake-up: nothing is lost when the write fails. */
}

/* Says bestmove (or the protocol's "no move") for best and its ponder move. */
static void say_bestmove(engine_t *e, xq_move_t best, xq_move_t ponder) {
  char mv[8], pm[8];
  if (!best) {
    say(e, e->proto == XQ_PROTO_UCCI ? "nobestmove" : "bestmove (none)");
  } else if (ponder) {
    xq_move_print(best, mv);
    xq_move_print(ponder, pm);
    say(e, "bestmove %s ponder %s", mv, pm);
  } else {
    xq_move_print(best, mv);
    say(e, "bestmove %s", mv);
  }
}

/* The search thread: slices of at most ENGINE_SLICE_MS until a limit, `stop`, or a full
 * node pool. The first slice always runs, even after `stop`: it expands the root, so a
 * search stopped at once still answers with the net's first choice. */
static void *search_main(void *arg) {
  engine_t *e = arg;
  const xq_go_t *go = &e->go;
  int64_t node_limit = go->nodes > 0 ? go->nodes : 0;
  if (go->depth > 0) {
    /* go depth N: N plies of principal variation or 2^(N+4) simulations, whichever first. */
    int64_t dn = xq_proto_depth_nodes(go->depth);
    if (!node_limit || dn < node_limit) node_limit = dn;
  }
  bool open = go->infinite || go->ponder;
  if (!open && node_limit == 0 && go->movetime <= 0 && atomic_load(&e->deadline_ms) == 0)
    node_limit = e->simulations; /* a bare `go`: the Simulations option */
  xq_mcts_result_t *r = calloc(1, sizeof *r);
  if (!r) {
    say(e, "info string error: out of memory");
    say(e, e->proto == XQ_PROTO_UCCI ? "nobestmove" : "bestmove (none)");
    search_finished(e);
    return NULL;
  }
  int64_t nodes = 0;
  xq_move_t best = 0, ponder = 0;
  bool failed = false;
  for (int slice = 0;; slice++) {
    if (slice > 0 && atomic_load(&e->stop)) break;
    int64_t t = xq_clock_ms();
    int64_t deadline = atomic_load(&e->deadline_ms);
    if (deadline && t >= deadline && nodes > 0) break;
    xq_mcts_limits_t lim = {.stop = &e->stop, .depth = go->depth > 0 ? go->depth : 0};
    if (go->nsearchmoves > 0) {
      lim.searchmoves = go->searchmoves;
      lim.nsearchmoves = go->nsearchmoves;
    }
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
    /* A search stopped before its first simulation has no line worth showing. */
    if (nodes > 0 || r->pv_len > 0) print_info(e, r, nodes, xq_clock_ms() - e->start_ms);
    if (r->pool_full) {
      /* The tree cannot grow: searching on would only repeat what it knows. */
      say(e, "info string node pool full (%" PRId64 " nodes, Hash %d MB): answering with the "
             "best move so far; a larger Hash searches longer", r->node_cap, e->hash_mb);
      break;
    }
    if (node_limit && nodes >= node_limit) break;
    if (go->depth > 0 && r->depth >= go->depth) break;
  }
  /* UCI: after `go infinite` or `go ponder`, bestmove waits for `stop` (or ponderhit). */
  while ((go->infinite || atomic_load(&e->pondering)) && !atomic_load(&e->stop)) {
    int64_t deadline = atomic_load(&e->deadline_ms);
    if (!go->infinite && deadline && xq_clock_ms() >= deadline) break;
    struct timespec ts = {0, 2 * 1000000};
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
    /* No move from the tree: fall back on any legal move (allowed by searchmoves) so the
     * GUI still gets one (the position has one, or we would not be here). */
    xq_move_t moves[XQ_MAX_MOVES];
    int n = xq_gen_legal(e->search_pos, moves);
    for (int i = 0; i < n && !best; i++) {
      bool ok = go->nsearchmoves == 0;
      for (int k = 0; k < go->nsearchmoves && !ok; k++) ok = go->searchmoves[k] == moves[i];
      if (ok) best = moves[i];
    }
    if (!best && n > 0) best = moves[0];
  }
  say_bestmove(e, best, ponder);
  free(r);
  search_finished(e);
  return NULL;
}

/* Joins the search thread once it has answered. */
static void reap_search(engine_t *e) {
  if (!e->searching || !atomic_load(&e->finished)) return;
  pthread_join(e->thread, NULL);
  e->searching = false;
  char buf[64];
  while (read(e->wake[0], buf, sizeof buf) > 0) {
  }
}

/* Stops the running search (if any) and waits for its bestmove (quit and end of input). */
static void stop_search(engine_t *e) {
  if (!e->searching) return;
  atomic_store(&e->stop, 1);
  pthread_join(e->thread, NULL);
  e->searching = false;
}

/* Starts a search for go on the current position. stopped: answer at once (a stop came
 * after the `go`, or the `go` was refused); ponderhit: a ponderhit came before it began. */
static void start_search(engine_t *e, const xq_go_t *go, bool stopped, bool ponderhit) {
  e->go = *go;
  if (ponderhit) e->go.ponder = false;
  int64_t budget = xq_proto_think_ms(&e->go, e->pos->side, e->move_overhead_ms);
  atomic_store(&e->stop, stopped ? 1 : 0);
  atomic_store(&e->finished, 0);
  atomic_store(&e->pondering, e->go.ponder ? 1 : 0);
  atomic_store(&e->deadline_ms,
               (!e->go.ponder && !e->go.infinite && budget > 0) ? e->start_ms + budget : 0);
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

/* `go`, run when no search is running. A bad limit is refused by name and answered at once
 * with the net's first choice (a GUI that waits for a bestmove still gets a legal one). */
static void cmd_go(engine_t *e, const char *args, bool stopped, bool ponderhit) {
  assert(!e->searching);
  xq_errbuf_t eb = {{0}};
  xq_go_t go;
  e->start_ms = xq_clock_ms();
  xq_move_t moves[XQ_MAX_MOVES];
  int nlegal = xq_gen_legal(e->pos, moves);
  bool refused = false;
  if (xq_proto_go(args, e->proto, e->pos->side, &go, &eb)) {
    refused = true;
  } else {
    for (int k = 0; k < go.nsearchmoves && !refused; k++) {
      bool legal = false;
      for (int i = 0; i < nlegal && !legal; i++) legal = moves[i] == go.searchmoves[k];
      if (!legal) {
        char mv[8];
        xq_move_print(go.searchmoves[k], mv);
        xq_err_set(&eb, XQ_EMOVE, "go: searchmoves: %s is not legal here", mv);
        refused = true;
      }
    }
  }
  if (refused) {
    say(e, "info string error: %s; answering at once with the best move known", eb.msg);
    go = (xq_go_t){.nodes = -1, .movetime = -1, .depth = -1, .wtime = -1, .btime = -1,
                   .winc = -1, .binc = -1, .movestogo = -1};
    stopped = true;
  }
  xq_outcome_t oc = xq_adjudicate(e->pos, 0);
  if (nlegal == 0) {
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
  start_search(e, &go, stopped, ponderhit);
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
  case XQ_OPT_MOVE_OVERHEAD:
    e->move_overhead_ms = (int64_t)num;
    return;
  case XQ_OPT_PRECISION: {
    nn_precision_t req, was = nn_precision_current();
    if (nn_precision_parse(value, &req)) {
      say(e, "info string error: option Precision: '%s' is not auto, fp32 or bf16; keeping %s", value,
          nn_precision_name(was));
      return;
    }
    const char *why;
    nn_precision_t got = nn_precision_resolve(req, nn_bf16_cpu_supported(), &why);
    if (got != was) {
      nn_precision_set(got); /* the nets built next follow it */
      if (engine_rebuild(e, e->net_path, e->threads, e->hash_mb, &eb)) {
        nn_precision_set(was);
        say(e, "info string error: option Precision: cannot rebuild the nets in %s: %s; keeping %s",
            nn_precision_name(got), eb.msg, nn_precision_name(was));
        return;
      }
    }
    say(e, "info string precision=%s (%s)", nn_precision_name(got), why);
    return;
  }
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
         "Simulations, Temperature, MoveOverhead, Precision)", name);
}

/* The answer to `uci` / `ucci`: id, every option of the table, uciok / ucciok. */
static void cmd_hello(engine_t *e, xq_proto_t proto) {
  e->proto = proto;
  say(e, "id name " XQ_SOFTWARE_NAME);
  say(e, "id author " ENGINE_AUTHOR);
  char line[ENGINE_PATH_MAX + 128];
  for (int i = 0; i < XQ_OPT_COUNT; i++) {
    const char *def = i == XQ_OPT_PRECISION ? nn_precision_name(e->start_precision) : e->default_net;
    if (xq_proto_option_line(&xq_proto_options[i], proto, def, line, sizeof line)) say(e, "%s", line);
  }
  say(e, proto == XQ_PROTO_UCCI ? "ucciok" : "uciok");
}

/* Says the error for an unknown command, naming its first word (without control bytes). */
static void say_unknown(engine_t *e, const char *line) {
  char word[40];
  size_t len = strcspn(line + strspn(line, " \t\r"), " \t\r");
  if (len > 32) len = 32;
  memcpy(word, line + strspn(line, " \t\r"), len);
  word[len] = 0;
  /* Never echo control bytes back to a GUI. */
  for (size_t i = 0; i < len; i++)
    if ((unsigned char)word[i] < 32 || (unsigned char)word[i] == 127) word[i] = '?';
  say(e, "info string error: unknown command '%s'", word);
}

/* Runs a command that needs no search to be running (the main loop guarantees there is
 * none). Returns true for quit. */
static bool run_command(engine_t *e, const char *line, bool stopped, bool ponderhit) {
  const char *args;
  xq_cmd_t cmd = xq_proto_command(line, &args);
  xq_errbuf_t eb = {{0}};
  assert(!e->searching);
  switch (cmd) {
  case XQ_CMD_UCI:
    cmd_hello(e, XQ_PROTO_UCI);
    break;
  case XQ_CMD_UCCI:
    cmd_hello(e, XQ_PROTO_UCCI);
    break;
  case XQ_CMD_SETOPTION:
    cmd_setoption(e, args);
    break;
  case XQ_CMD_NEWGAME:
    xq_mcts_clear(e->sr.mcts);
    xq_pos_startpos(e->pos);
    break;
  case XQ_CMD_POSITION:
    if (xq_proto_position(e->pos, args, &eb)) say(e, "info string error: %s", eb.msg);
    break;
  case XQ_CMD_GO:
    cmd_go(e, args, stopped, ponderhit);
    break;
  case XQ_CMD_QUIT:
    return true;
  case XQ_CMD_UNKNOWN:
    say_unknown(e, line);
    break;
  case XQ_CMD_EMPTY:
  case XQ_CMD_DEBUG:
  case XQ_CMD_ISREADY:
  case XQ_CMD_STOP:
  case XQ_CMD_PONDERHIT:
    break; /* answered when read (dispatch) */
  }
  return false;
}

/* ponderhit: the move pondered on was played; the clock starts now. */
static void ponder_hit(engine_t *e) {
  if (e->searching && atomic_load(&e->pondering)) {
    int64_t budget = xq_proto_think_ms(&e->go, e->search_pos->side, e->move_overhead_ms);
    atomic_store(&e->deadline_ms, xq_clock_ms() + (budget > 0 ? budget : 1000));
    atomic_store(&e->pondering, 0);
  } else {
    engine_queue_mark(&e->queue, false, true); /* a `go ponder` not yet started */
  }
}

/* A line as it is read: stop, isready, quit and ponderhit act at once; the rest runs now
 * when nothing is searching or waiting, else waits in the queue. Returns true to quit. */
static bool dispatch(engine_t *e, const char *line) {
  const char *args;
  xq_cmd_t cmd = xq_proto_command(line, &args);
  bool busy = e->searching || e->queue.len > 0;
  switch (cmd) {
  case XQ_CMD_EMPTY:
  case XQ_CMD_DEBUG:
    return false;
  case XQ_CMD_ISREADY:
    say(e, "readyok");
    return false;
  case XQ_CMD_STOP:
    atomic_store(&e->stop, 1);
    engine_queue_mark(&e->queue, true, false);
    return false;
  case XQ_CMD_PONDERHIT:
    ponder_hit(e);
    return false;
  case XQ_CMD_UNKNOWN:
    say_unknown(e, line);
    return false;
  case XQ_CMD_QUIT:
    if (!busy) return true;
    /* Every `go` before the quit answers at once; then the engine exits. */
    atomic_store(&e->stop, 1);
    engine_queue_mark(&e->queue, true, false);
    break;
  default:
    if (!busy) return run_command(e, line, false, false);
    /* A search that never ends by itself is ended by the command after it. */
    if (e->searching && (e->go.infinite || atomic_load(&e->pondering))) atomic_store(&e->stop, 1);
    break;
  }
  if (!engine_queue_push(&e->queue, line)) {
    say(e, "info string error: %d commands already wait for the search; this one is dropped",
        ENGINE_QUEUE_MAX);
    return cmd == XQ_CMD_QUIT; /* a quit that cannot wait is done now */
  }
  if (cmd == XQ_CMD_GO)
    say(e, "info string go queued: it starts when the running search has answered (stop ends it)");
  return false;
}

/* Runs the queued commands while no search runs. Returns true when one was quit. */
static bool run_queue(engine_t *e) {
  engine_cmd_t c;
  while (!e->searching && engine_queue_pop(&e->queue, &c)) {
    bool quit = run_command(e, c.line, c.stopped, c.ponderhit);
    free(c.line);
    if (quit) return true;
  }
  return false;
}

static int engine_loop(engine_t *e) {
  engine_in_t in;
  char *line = malloc(ENGINE_LINE_MAX);
  if (!line || engine_in_init(&in, 0, ENGINE_LINE_MAX)) {
    free(line);
    return 1;
  }
  bool quit = false, eof = false;
  while (!quit) {
    reap_search(e);
    if (run_queue(e)) break;
    int got = engine_in_next(&in, line);
    if (got == ENGINE_IN_LINE) {
      quit = dispatch(e, line);
      continue;
    }
    if (got == ENGINE_IN_TOO_LONG) {
      say(e, "info string error: line longer than %d bytes ignored", ENGINE_LINE_MAX - 1);
      continue;
    }
    if (got == ENGINE_IN_EOF && !eof) {
      /* The GUI went away: as `quit` (after what it sent before). */
      eof = true;
      quit = dispatch(e, "quit");
      continue;
    }
    /* Nothing to read: wait for input or for the search to answer. */
    engine_in_wait(&in, e->wake[0], got == ENGINE_IN_EOF ? 50 : -1);
  }
  stop_search(e);
  engine_queue_free(&e->queue);
  if (e->proto == XQ_PROTO_UCCI) say(e, "bye");
  engine_in_close(&in);
  free(line);
  return 0;
}

/* The command line. */
typedef struct {
  const char *net, *campaign, *precision;
  uint64_t seed;
  int threads;
} engine_opts_t;

#define O(f) XQ_OPT_FIELD(engine_opts_t, f)
static const xq_opt_t rows[] = {
    {"net", XQ_OPTION_TEXT, O(net), NULL, 0, 0, .arg = "FILE", .help = "play this net"},
    {"campaign", XQ_OPTION_TEXT, O(campaign), NULL, 0, 0, .arg = "DIR",
     .help = "play the best net of the campaign in DIR (DIR/nets/best.xqzn)"},
    {"threads", XQ_OPTION_INT, O(threads), "1", 1, XQ_MCTS_MAX_THREADS,
     .help = "the Threads option at start"},
    {"seed", XQ_OPTION_UINT, O(seed), "1", 0, XQ_OPTS_U64_MAX, .arg = "S",
     .help = "seed of the search (decimal or 0x-hex)"},
    {"precision", XQ_OPTION_TEXT, O(precision), NULL, 0, 0, .arg = "auto|fp32|bf16",
     .help = "the Precision option at start: the net's arithmetic; auto takes bf16 where the CPU"
     " has avx512_bf16 (stronger at equal time), fp32 elsewhere", .check = nn_precision_check,
     .shown = "XQZ_PRECISION if set, else auto"},
};
static const xq_opts_t TABLE = {rows, (int)(sizeof rows / sizeof rows[0]), XQ_OPTS_IN_RANGE};

static void engine_usage(FILE *f) {
  fprintf(f,
          "usage: xqz engine [--net FILE | --campaign DIR] [--threads N] [--seed S]\n"
          "                  [--precision auto|fp32|bf16]\n\n"
          "Speaks UCI (answer to `uci`) or UCCI (answer to `ucci`) on stdin/stdout; moves\n"
          "in ICCS coordinates (h2e2, ranks 0-9). Options (setoption): Threads, Hash,\n"
          "MultiPV, WeightsFile, Simulations, Temperature, MoveOverhead, Precision; `uci` lists them\n"
          "with their bounds; Hash (MB) bounds the search tree. With neither --net nor\n"
          "--campaign, the trained net shipped in nets/ (or $XQZ_NET). See docs/engine.md.\n\n");
  xq_opts_help(&TABLE, f, 16);
}

int xqz_cmd_engine(int argc, char **argv) {
  static char best[4096]; /* --campaign: its best net's file */
  engine_opts_t o = {0};
  xq_opts_defaults(&TABLE, &o);
  int st = xqz_options_parse("engine", &TABLE, &o, argc, argv, NULL, NULL, engine_usage);
  if (st >= 0) return st;
  if (o.net && o.campaign)
    return xqz_usage_error("engine", "give --net FILE or --campaign DIR, not both");
  const char *net = o.net;
  uint64_t seed = o.seed;
  int threads = o.threads;
  if (o.campaign) {
    xq_errbuf_t ceb = {{0}};
    if (xq_campaign_best_net(o.campaign, best, sizeof best, &ceb) < 0) {
      fprintf(stderr, "xqz engine: %s\n", ceb.msg);
      return 2;
    }
    net = best; /* stdout is the GUI's: the choice is said on stderr */
    fprintf(stderr, "xqz engine: the best net of campaign %s: %s\n", o.campaign, best);
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
  e.move_overhead_ms = (int64_t)xq_proto_options[XQ_OPT_MOVE_OVERHEAD].def;
  e.wake[0] = e.wake[1] = -1;
  if (pipe(e.wake) || fcntl(e.wake[0], F_SETFL, O_NONBLOCK) || fcntl(e.wake[1], F_SETFL, O_NONBLOCK)) {
    fprintf(stderr, "xqz engine: cannot make the search's wake-up pipe: %s\n", strerror(errno));
    goto out;
  }
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
  const char *why; /* before any net is built: they all follow it */
  e.start_precision = nn_precision_choose(o.precision, NN_PRECISION_AUTO, &why);
  fprintf(stderr, "xqz engine: precision=%s (%s)\n", nn_precision_name(e.start_precision), why);
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
  if (e.wake[0] >= 0) close(e.wake[0]);
  if (e.wake[1] >= 0) close(e.wake[1]);
  pthread_mutex_destroy(&e.out_lock);
  return status;
}
