/*
 * main.c: xqz-worker, the self-play daemon. Options come from one table (support/options.h:
 * name, kind, default, bounds, help) that also prints --help; everything else (self-play
 * settings, nets, jobs) comes from the coordinator so a lab-wide change is made in one
 * place. docs/worker.md.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent.h"
#include "enrol.h"
#include "nn/blas_core.h"
#include "nn/nn_bf16.h"
#include "wire/endpoint.h"
#include "support/log.h"
#include "support/options.h"
#include "wire/wire.h"

static volatile sig_atomic_t stop_flag, pause_flag;

static void on_signal(int sig) {
  (void)sig;
  stop_flag = 1;
}

/* SIGUSR1 pauses the play thread, SIGUSR2 resumes it (guest.h). */
static void on_pause_signal(int sig) { pause_flag = sig == SIGUSR1; }

/* The command line: the agent's options and those main acts on itself. */
typedef struct {
  xq_worker_opts_t o;
  const char *server_key, *key, *active, *precision, *enrol, *replay;
  double replay_minutes;
  int nice, replay_max_mb;
} worker_args_t;

/* --coordinator, --pub: tcp://HOST:PORT. */
static int check_endpoint(const char *name, const char *v, xq_errbuf_t *eb) {
  char what[32];
  snprintf(what, sizeof what, "--%s", name);
  return xq_endpoint_check(v, what, eb);
}

static int check_id(const char *name, const char *v, xq_errbuf_t *eb) {
  if (*v && strlen(v) <= 200) return 0;
  return xq_err_set(eb, XQ_ERANGE, "--%s must be 1 to 200 characters", name);
}

#define A(f) XQ_OPT_FIELD(worker_args_t, f)
#define NO_CURVE "none: no CURVE"

/* The option table: --help, parsing and docs/worker.md follow it. */
static const xq_opt_t rows[] = {
    {"coordinator", XQ_OPTION_TEXT, A(o.coordinator), "tcp://127.0.0.1:5555", 0, 0,
     .help = "the coordinator's ROUTER endpoint", .check = check_endpoint,
     .arg = "tcp://HOST:PORT"},
    {"pub", XQ_OPTION_TEXT, A(o.pub), NULL, 0, 0,
     .help = "the coordinator's PUB endpoint (net announcements)", .check = check_endpoint,
     .arg = "tcp://HOST:PORT", .shown = "coordinator host, port+1"},
    {"threads", XQ_OPTION_INT, A(o.threads), "1", 1, 256,
     .help = "search threads (each uses single-threaded BLAS)", .arg = "T"},
    {"games-per-thread", XQ_OPTION_INT, A(o.games_per_thread), "32", 1, 4096,
     .help = "games played at once per thread (evaluator batch)", .arg = "G"},
    {"cache", XQ_OPTION_TEXT, A(o.cache), "xqz-cache", 0, 0,
     .help = "local net cache, one file per net id", .arg = "DIR"},
    {"spool", XQ_OPTION_TEXT, A(o.spool), "xqz-spool", 0, 0,
     .help = "games not yet acknowledged by the coordinator", .arg = "DIR"},
    {"id", XQ_OPTION_TEXT, A(o.id), NULL, 0, 0, .help = "worker id shown by the coordinator",
     .check = check_id, .arg = "NAME", .shown = "stored in the spool: HOST-RANDOM"},
    {"max-spool", XQ_OPTION_INT, A(o.max_spool), "100000", 1, 10000000,
     .help = "spooled games at most; self-play pauses when reached"},
    {"progress", XQ_OPTION_INT, A(o.progress_s), "60", 1, 86400,
     .help = "seconds between progress lines", .arg = "SECONDS"},
    {"timeout", XQ_OPTION_INT, A(o.request_timeout_ms), "10000", 100, 3600000,
     .help = "reconnect when the coordinator has not answered for this long", .arg = "MS"},
    {"server-key", XQ_OPTION_TEXT, A(server_key), NULL, 0, 0,
     .help = "the coordinator's public key (.pub), when it uses CURVE", .arg = "FILE",
     .shown = NO_CURVE},
    {"key", XQ_OPTION_TEXT, A(key), NULL, 0, 0,
     .help = "this worker's secret key (.secret, from xqz keygen)", .arg = "FILE",
     .shown = NO_CURVE},
    {"nice", XQ_OPTION_INT, A(nice), "19", 0, 19,
     .help = "CPU priority (0: normal, 19: the lowest; with idle I/O priority)"},
    {"active", XQ_OPTION_TEXT, A(active), NULL, 0, 0,
     .help = "play only in this daily window of local time (may wrap midnight: 19:00-08:00);"
     " paused outside it", .arg = "HH:MM-HH:MM", .shown = "always"},
    {"idle-only", XQ_OPTION_DOUBLE, A(o.idle_only), NULL, 0.05, 4096,
     .help = "pause while other processes keep more than LOAD cores busy (0.5: more than half"
     " a core); resume when below 3/4 of it for 30 s", .arg = "LOAD", .shown = "off"},
    {"cache-mb", XQ_OPTION_INT, A(o.cache_mb), "200", 1, 1000000,
     .help = "net cache size cap; the least recently used nets go first", .arg = "MB"},
    {"max-rss-mb", XQ_OPTION_INT, A(o.max_rss_mb), "0", 0, 10000000,
     .help = "start no new games while resident memory is above this (0: no cap)", .arg = "MB"},
    {"precision", XQ_OPTION_TEXT, A(precision), "auto", 0, 0,
     .help = "self-play's network arithmetic: auto takes bf16 where the CPU has avx512_bf16,"
     " fp32 elsewhere (bf16 falls back to fp32 there); gating and anchor games keep the"
     " coordinator's arena_precision", .check = nn_precision_check,
     .arg = "auto|fp32|bf16"},
    {"replay", XQ_OPTION_TEXT, A(replay), NULL, 0, 0,
     .help = "instead of self-play, send the games a campaign in DIR stored (its games/), in"
     " their order, as this worker's; arena pairs as usual (an A/B on the same data)",
     .arg = "DIR", .shown = "off: self-play"},
    {"replay-minutes", XQ_OPTION_DOUBLE, A(replay_minutes), "0", 0, 1e7,
     .help = "spread the recording's positions evenly over this many minutes from the first"
     " job (0: as fast as the coordinator acknowledges them)", .arg = "M"},
    {"replay-max-mb", XQ_OPTION_INT, A(replay_max_mb), "4096", 1, 1000000,
     .help = "load the recording's games up to this much memory; later games are left out"
     " (logged)", .arg = "MB"},
    {"enrol", XQ_OPTION_TEXT, A(enrol), NULL, 0, 0,
     .help = "with CURVE: first add this worker's key to the coordinator with a one-time"
     " token from xqz enrol-token, then play", .arg = "TOKEN", .shown = "none"},
};
static const xq_opts_t TABLE = {rows, (int)(sizeof rows / sizeof rows[0]), XQ_OPTS_FROM_TO};

static void usage(FILE *f) {
  fprintf(f, "usage: xqz-worker [options]\n"
             "Plays self-play and arena games for an xqz-coordinator.\n\noptions:\n");
  xq_opts_help(&TABLE, f, 34);
  fprintf(f, "  %-34s %s\n", "--help", "this text");
  fprintf(f, "  %-34s %s\n", "--version", "print the software and protocol versions");
  fprintf(f, "\nsignals: SIGUSR1 pauses the games (the connection and the spool stay), SIGUSR2"
             " resumes them;\nSIGTERM stops the worker.\n");
}

static int parse_int(const char *s, long lo, long hi, int *out) {
  char *end;
  long v = strtol(s, &end, 10);
  if (!*s || *end || v < lo || v > hi) return -1;
  *out = (int)v;
  return 0;
}

int main(int argc, char **argv) {
  nn_blas_core_setup(argv); /* first: may restart this program on better BLAS kernels */
  worker_args_t w;
  memset(&w, 0, sizeof w);
  xq_opts_defaults(&TABLE, &w);
  xq_errbuf_t eb;
  bool given[sizeof rows / sizeof rows[0]] = {false};
  int rc = xq_opts_parse_argv(&TABLE, &w, argc, argv, given, &eb);
  if (rc == XQ_OPTS_HELP) {
    usage(stdout);
    return 0;
  }
  if (rc == XQ_OPTS_VERSION) {
    printf("%s\n", XQ_VERSION_LINE);
    return 0;
  }
  if (rc < 0) {
    fprintf(stderr, "xqz-worker: %s\n", eb.msg);
    return 2;
  }
  xq_worker_opts_t o = w.o;
  char pub[300];
  if (!o.pub) {
    const char *colon = strrchr(o.coordinator, ':');
    int port;
    if (!colon || parse_int(colon + 1, 1, 65534, &port) || (size_t)(colon - o.coordinator) > 250) {
      fprintf(stderr, "xqz-worker: cannot derive --pub from '%s'; give --pub\n", o.coordinator);
      return 2;
    }
    snprintf(pub, sizeof pub, "%.*s:%d", (int)(colon - o.coordinator), o.coordinator, port + 1);
    o.pub = pub;
  }
  if (w.active) {
    if (xq_active_parse(&o.active, w.active, &eb) < 0) {
      fprintf(stderr, "xqz-worker: %s\n", eb.msg);
      return 2;
    }
    o.active_on = true;
  }
  /* Before any evaluator exists: every net this process loads follows it (nn_bf16.h). */
  nn_precision_t prec_req;
  if (nn_precision_parse(w.precision, &prec_req)) return 2; /* checked by its row */
  const char *prec_why;
  nn_precision_t prec = nn_precision_resolve(prec_req, nn_bf16_cpu_supported(), &prec_why);
  nn_precision_set(prec);
  static const char *const replay_only[] = {"replay-minutes", "replay-max-mb"};
  for (size_t k = 0; !w.replay && k < sizeof replay_only / sizeof replay_only[0]; k++) {
    if (given[xq_opts_find(&TABLE, replay_only[k])]) {
      fprintf(stderr, "xqz-worker: --%s needs --replay DIR (it sets how a recording is"
                      " replayed); give --replay or drop it\n", replay_only[k]);
      return 2;
    }
  }
  if (xq_curve_client_load(&o.curve, w.server_key, w.key, &eb) < 0) {
    fprintf(stderr, "xqz-worker: %s\n", eb.msg);
    return 2;
  }
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  sa.sa_handler = on_pause_signal;
  sigaction(SIGUSR1, &sa, NULL);
  sigaction(SIGUSR2, &sa, NULL);
  signal(SIGPIPE, SIG_IGN);
  /* Before any thread starts: every thread inherits the priority (guest.h). */
  int got_nice = w.nice;
  if (xq_guest_priority(w.nice, true, &got_nice, &eb) < 0)
    XQ_LOGW("worker", "priority not fully set; going on error=\"%s\"", eb.msg);
  /* After the signals (a pause during a long load must not kill it) and at the priority it
   * plays at; before --enrol, so that a bad --replay does not spend the token. */
  if (w.replay && xq_replay_open(&o.replay, w.replay, w.replay_minutes,
                                 (uint64_t)w.replay_max_mb << 20, &eb) < 0) {
    fprintf(stderr, "xqz-worker: %s\n", eb.msg);
    return 2;
  }
  if (w.enrol) {
    if (!o.curve.on) {
      fprintf(stderr, "xqz-worker: --enrol needs CURVE: give --server-key (the coordinator's"
              " .pub) and --key (this worker's .secret from xqz keygen)\n");
      xq_replay_free(&o.replay);
      return 2;
    }
    if (xq_worker_enrol(o.coordinator, &o.curve, w.enrol, o.request_timeout_ms, &eb) < 0) {
      fprintf(stderr, "xqz-worker: %s\n", eb.msg);
      xq_replay_free(&o.replay);
      return 1;
    }
  }
  int io = xq_guest_io_class();
  char active[32] = "always";
  if (o.active_on)
    snprintf(active, sizeof active, "%02d:%02d-%02d:%02d", o.active.from / 60, o.active.from % 60,
             o.active.to / 60, o.active.to % 60);
  XQ_LOGI("worker", "priority nice=%d io=%s active=%s idle_only=%g cache_mb=%d max_rss_mb=%d"
          " (SIGUSR1 pauses, SIGUSR2 resumes)", got_nice,
          io == 3 ? "idle" : io == 2 || io == 0 ? "best-effort" : io == 1 ? "realtime" : "unknown",
          active, o.idle_only, o.cache_mb, o.max_rss_mb);
  XQ_LOGI("worker", "precision=%s (%s)", nn_precision_name(prec), prec_why);
  if (o.replay) {
    double per_min = w.replay_minutes > 0
                         ? (double)xq_replay_positions(o.replay) / w.replay_minutes : 0;
    XQ_LOGI("worker", "replaying instead of self-play: games=%zu positions=%llu from=%s"
            " over_min=%g positions_per_min=%.0f skipped=%zu (arena pairs are played as usual)",
            xq_replay_games(o.replay), (unsigned long long)xq_replay_positions(o.replay),
            w.replay, w.replay_minutes, per_min, xq_replay_skipped(o.replay));
    if (xq_replay_repeats(o.replay))
      XQ_LOGI("worker", "replay: records stored twice are sent once repeats=%llu",
              (unsigned long long)xq_replay_repeats(o.replay));
    if (xq_replay_left_out(o.replay))
      XQ_LOGW("worker", "replay: the recording's later games do not fit in --replay-max-mb and"
              " are left out; the pace is that of the games loaded max_mb=%d", w.replay_max_mb);
    uint64_t mb = xq_replay_bytes(o.replay) >> 20;
    if (o.max_rss_mb > 0 && mb * 5 >= (uint64_t)o.max_rss_mb * 4)
      XQ_LOGW("worker", "replay: the recording takes %llu MB of the %d MB --max-rss-mb allows;"
              " above it the worker pauses, arena pairs included: raise --max-rss-mb",
              (unsigned long long)mb, o.max_rss_mb);
  }
  int status = xq_worker_run(&o, &stop_flag, &pause_flag);
  xq_replay_free(&o.replay);
  return status;
}
