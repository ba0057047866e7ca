/*
 * cmd_engine.c: `xqz engine --net FILE`, a UCI / UCCI engine on stdin/stdout so Xiangqi
 * GUIs and match runners can play a trained net.
 *
 * Two threads: the main thread reads commands (so `stop`, `isready` and `quit` are
 * answered while the engine thinks) and owns the current position; a search thread runs
 * one `go` at a time on its own copy of the position, and owns the MCTS tree while it
 * runs. The search runs in slices so it can print `info` lines as it goes; the tree is
 * kept between slices (the same position searched again reuses it). Output from both
 * threads goes through say(), one locked, flushed line at a time.
 *
 * The text of the protocol (commands, `position`, `go`, clocks) is parsed by
 * search/engine_proto.c, which the unit tests exercise without a network.
 */
#include <errno.h>
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
#include "search/evaluator.h"
#include "search/mcts.h"
#include "support/clock.h"

#define ENGINE_NAME "xqzero"
#define ENGINE_AUTHOR "the xqzero authors"
#define ENGINE_LINE_MAX 65536 /* longer lines are dropped with an error (a 1000-ply game fits) */
#define ENGINE_DEFAULT_NODES 800 /* a bare `go` */
#define ENGINE_SLICE_MS 250      /* an info line at least this often */

typedef struct {
  xq_proto_t proto;
  xq_pos_t *pos;        /* the current position (main thread) */
  xq_evaluator_t *ev;
  xq_mcts_t *mcts;      /* used by the search thread while `searching` */
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

static void print_info(engine_t *e, const xq_mcts_result_t *r, int64_t nodes, int64_t ms) {
  char pv[64 * 5 + 1] = "", mv[8];
  size_t len = 0;
  for (int i = 0; i < r->pv_len && i < 64; i++) {
    xq_move_print(r->pv[i], mv);
    len += (size_t)snprintf(pv + len, sizeof pv - len, "%s%s", i ? " " : "", mv);
  }
  int64_t nps = ms > 0 ? nodes * 1000 / ms : 0;
  say(e, "info depth %d nodes %" PRId64 " nps %" PRId64 " time %" PRId64 " score cp %d%s%s",
      r->depth > 0 ? r->depth : 1, nodes, nps, ms, xq_proto_value_to_cp(r->value),
      len ? " pv " : "", pv);
}

/* The search thread: slices of at most ENGINE_SLICE_MS until a limit or `stop`. */
static void *search_main(void *arg) {
  engine_t *e = arg;
  const xq_go_t *go = &e->go;
  int64_t node_limit = go->nodes > 0 ? go->nodes : 0;
  bool open = go->infinite || go->ponder;
  if (!open && node_limit == 0 && go->movetime <= 0 && go->depth <= 0 &&
      atomic_load(&e->deadline_ms) == 0)
    node_limit = ENGINE_DEFAULT_NODES; /* a bare `go`: a modest fixed search */
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
    int rc = xq_mcts_search(e->mcts, e->search_pos, &lim, r);
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
  if (!best && !failed) {
    /* A search stopped before its first simulation: fall back on any legal move so the
     * GUI still gets a move (the position is not finished, or we would not be here). */
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
  if (oc.result != XQ_RESULT_NONE || xq_gen_legal(e->pos, moves) == 0) {
    say(e, "info string game over: %s (%s)", xq_result_name(oc.result), xq_reason_name(oc.reason));
    say(e, e->proto == XQ_PROTO_UCCI ? "nobestmove" : "bestmove (none)");
    return;
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
    "usemillisec", "batch", "debug", "ponder", "promotion", "idle", "hashsize", "threads",
    "usebook", "bookfiles", "evalfile", "loadbook", "style", "randomness", "knowledge",
    "pruning", "selectivity", "drawmoves", "repetition", NULL};

static void cmd_setoption(engine_t *e, const char *args) {
  char name[64], value[256];
  xq_errbuf_t eb = {{0}};
  if (xq_proto_setoption(args, name, sizeof name, value, sizeof value, &eb)) {
    say(e, "info string error: %s", eb.msg);
    return;
  }
  if (!strcmp(name, "UCI_Variant")) {
    if (strcmp(value, "xiangqi"))
      say(e, "info string error: UCI_Variant '%s' not supported (only xiangqi)", value);
    return;
  }
  if (!strcmp(name, "Protocol")) {
    /* Fairy-Stockfish's switch to ICCS ranks 0-9 (our players send it): we always use ICCS. */
    if (strcmp(value, "uci") && strcmp(value, "ucci"))
      say(e, "info string error: Protocol '%s' not supported (uci or ucci)", value);
    return;
  }
  if (e->proto == XQ_PROTO_UCCI) {
    if (!strcmp(name, "newgame")) {
      xq_mcts_clear(e->mcts);
      return;
    }
    for (int i = 0; ucci_quiet_options[i]; i++)
      if (!strcmp(name, ucci_quiet_options[i])) return;
  }
  say(e, "info string error: unknown option '%s'", name);
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
          "usage: xqz engine --net FILE [--threads 1] [--seed S]\n\n"
          "Speaks UCI (answer to `uci`) or UCCI (answer to `ucci`) on stdin/stdout; moves\n"
          "in ICCS coordinates (h2e2, ranks 0-9). See docs/engine.md.\n");
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
      e->proto = XQ_PROTO_UCI;
      say(e, "id name " ENGINE_NAME " %s", "0.1");
      say(e, "id author " ENGINE_AUTHOR);
      say(e, "option name UCI_Variant type combo default xiangqi var xiangqi");
      say(e, "uciok");
      break;
    case XQ_CMD_UCCI:
      e->proto = XQ_PROTO_UCCI;
      say(e, "id name " ENGINE_NAME " %s", "0.1");
      say(e, "id author " ENGINE_AUTHOR);
      say(e, "option usemillisec type check default true");
      say(e, "ucciok");
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
      xq_mcts_clear(e->mcts);
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
    } else if (!strcmp(a, "--seed")) {
      seed = strtoull(v, &end, 0);
      if (errno || *end || !*v) {
        fprintf(stderr, "xqz engine: bad --seed '%s'\n", v);
        return 2;
      }
    } else if (!strcmp(a, "--threads")) {
      long t = strtol(v, &end, 10);
      if (errno || *end || t < 1 || t > 256) {
        fprintf(stderr, "xqz engine: bad --threads '%s' (1..256)\n", v);
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
    fprintf(stderr, "xqz engine: --net FILE is required\n");
    engine_usage(stderr);
    return 2;
  }
  if (threads > 1)
    fprintf(stderr, "xqz engine: note: one search thread for now; --threads %d ignored\n", threads);

  engine_t e = {0};
  int status = 1;
  xq_errbuf_t eb = {{0}};
  xq_mcts_config_t cfg;
  xq_mcts_config_default(&cfg);
  cfg.max_plies = XQ_MAX_HISTORY - 24; /* the tree must not outgrow the history */
  pthread_mutex_init(&e.out_lock, NULL);
  e.pos = malloc(sizeof *e.pos);
  e.search_pos = malloc(sizeof *e.search_pos);
  if (!e.pos || !e.search_pos) {
    fprintf(stderr, "xqz engine: out of memory\n");
    goto out;
  }
  xq_pos_startpos(e.pos);
  int rc = xq_evaluator_net_new(&e.ev, net, cfg.batch > 0 ? cfg.batch : 8, &eb);
  if (rc) {
    fprintf(stderr, "xqz engine: cannot load %s: %s\n", net, eb.msg[0] ? eb.msg : xq_strerror(rc));
    goto out;
  }
  rc = xq_mcts_new(&e.mcts, &cfg, e.ev, seed, &eb);
  if (rc) {
    fprintf(stderr, "xqz engine: cannot create the search: %s\n", eb.msg[0] ? eb.msg : xq_strerror(rc));
    goto out;
  }
  status = engine_loop(&e);
out:
  xq_mcts_free(&e.mcts);
  xq_evaluator_free(&e.ev);
  free(e.pos);
  free(e.search_pos);
  pthread_mutex_destroy(&e.out_lock);
  return status;
}
