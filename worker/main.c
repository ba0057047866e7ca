/*
 * main.c: xqz-worker, the self-play daemon. Options come from one table (name, default,
 * help) that also prints --help; everything else (self-play settings, nets, jobs) comes
 * from the coordinator so a lab-wide change is made in one place. docs/worker.md.
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
#include "support/opt_name.h"
#include "wire/wire.h"

static volatile sig_atomic_t stop_flag, pause_flag;

static void on_signal(int sig) {
  (void)sig;
  stop_flag = 1;
}

/* SIGUSR1 pauses the play thread, SIGUSR2 resumes it (guest.h). */
static void on_pause_signal(int sig) { pause_flag = sig == SIGUSR1; }

typedef struct {
  const char *name, *arg, *def, *help;
} opt_t;

/* The option table: --help, parsing and docs/worker.md follow it. */
static const opt_t opts[] = {
    {"coordinator", "tcp://HOST:PORT", "tcp://127.0.0.1:5555", "the coordinator's ROUTER endpoint"},
    {"pub", "tcp://HOST:PORT", "coordinator host, port+1", "the coordinator's PUB endpoint (net announcements)"},
    {"threads", "T", "1", "search threads (each uses single-threaded BLAS), 1..256"},
    {"games-per-thread", "G", "32", "games played at once per thread (evaluator batch), 1..4096"},
    {"cache", "DIR", "xqz-cache", "local net cache, one file per net id"},
    {"spool", "DIR", "xqz-spool", "games not yet acknowledged by the coordinator"},
    {"id", "NAME", "stored in the spool: HOST-RANDOM", "worker id shown by the coordinator"},
    {"max-spool", "N", "100000", "spooled games at most; self-play pauses when reached"},
    {"progress", "SECONDS", "60", "seconds between progress lines"},
    {"timeout", "MS", "10000", "reconnect when the coordinator has not answered for this long"},
    {"server-key", "FILE", "none: no CURVE", "the coordinator's public key (.pub), when it uses CURVE"},
    {"key", "FILE", "none: no CURVE", "this worker's secret key (.secret, from xqz keygen)"},
    {"nice", "N", "19", "CPU priority, 0..19 (19: the lowest; with idle I/O priority)"},
    {"active", "HH:MM-HH:MM", "always", "play only in this daily window of local time"
     " (may wrap midnight: 19:00-08:00); paused outside it"},
    {"idle-only", "LOAD", "off", "pause while other processes keep more than LOAD cores"
     " busy; resume when below 3/4 of it for 30 s"},
    {"cache-mb", "MB", "200", "net cache size cap; the least recently used nets go first"},
    {"max-rss-mb", "MB", "0", "start no new games while resident memory is above this"
     " (0: no cap)"},
    {"precision", "auto|fp32|bf16", "fp32", "network arithmetic: auto takes bf16 where the CPU"
     " has avx512_bf16, fp32 elsewhere (bf16 falls back to fp32 there); fp32 by default until"
     " bf16's strength is measured and gating pins one precision"},
    {"enrol", "TOKEN", "none", "with CURVE: first add this worker's key to the coordinator"
     " with a one-time token from xqz enrol-token, then play"},
};
enum { O_COORD, O_PUB, O_THREADS, O_GPT, O_CACHE, O_SPOOL, O_ID, O_MAXSPOOL, O_PROGRESS, O_TIMEOUT,
       O_SERVER_KEY, O_KEY, O_NICE, O_ACTIVE, O_IDLE_ONLY, O_CACHE_MB, O_MAX_RSS, O_PRECISION,
       O_ENROL, O_N };

static void usage(FILE *f) {
  fprintf(f, "usage: xqz-worker [options]\n"
             "Plays self-play and arena games for an xqz-coordinator.\n\noptions (default):\n");
  for (int i = 0; i < O_N; i++) {
    char lhs[64];
    snprintf(lhs, sizeof lhs, "--%s %s", opts[i].name, opts[i].arg);
    fprintf(f, "  %-34s %s (%s)\n", lhs, opts[i].help, opts[i].def);
  }
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
  const char *val[O_N] = {0};
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      usage(stdout);
      return 0;
    }
    if (!strcmp(argv[i], "--version")) {
      printf("%s\n", XQ_VERSION_LINE);
      return 0;
    }
    int k = -1; /* '-' and '_' are the same in a name: --games_per_thread (opt_name.h) */
    for (int j = 0; j < O_N; j++)
      if (!strncmp(argv[i], "--", 2) && xq_opt_name_eq(argv[i] + 2, opts[j].name)) k = j;
    if (k < 0) {
      xq_opt_near_t near;
      xq_opt_near_init(&near, argv[i] + strspn(argv[i], "-"));
      for (int j = 0; j < O_N; j++) xq_opt_near_add(&near, opts[j].name);
      if (xq_opt_near_best(&near))
        fprintf(stderr, "xqz-worker: unknown option '%s'; did you mean --%s? (try --help)\n",
                argv[i], xq_opt_near_best(&near));
      else
        fprintf(stderr, "xqz-worker: unknown option '%s' (try --help)\n", argv[i]);
      return 2;
    }
    if (i + 1 >= argc) {
      fprintf(stderr, "xqz-worker: missing value for '%s' (try --help)\n", argv[i]);
      return 2;
    }
    val[k] = argv[++i];
  }
  xq_worker_opts_t o;
  memset(&o, 0, sizeof o);
  o.coordinator = val[O_COORD] ? val[O_COORD] : opts[O_COORD].def;
  xq_errbuf_t eb;
  if (xq_endpoint_check(o.coordinator, "--coordinator", &eb) < 0 ||
      (val[O_PUB] && xq_endpoint_check(val[O_PUB], "--pub", &eb) < 0)) {
    fprintf(stderr, "xqz-worker: %s\n", eb.msg);
    return 2;
  }
  char pub[300];
  if (val[O_PUB]) {
    o.pub = val[O_PUB];
  } else {
    const char *colon = strrchr(o.coordinator, ':');
    int port;
    if (!colon || parse_int(colon + 1, 1, 65534, &port) || (size_t)(colon - o.coordinator) > 250) {
      fprintf(stderr, "xqz-worker: cannot derive --pub from '%s'; give --pub\n", o.coordinator);
      return 2;
    }
    snprintf(pub, sizeof pub, "%.*s:%d", (int)(colon - o.coordinator), o.coordinator, port + 1);
    o.pub = pub;
  }
  o.cache = val[O_CACHE] ? val[O_CACHE] : opts[O_CACHE].def;
  o.spool = val[O_SPOOL] ? val[O_SPOOL] : opts[O_SPOOL].def;
  o.id = val[O_ID];
  struct {
    int idx, *dst;
    long lo, hi;
  } ints[] = {{O_THREADS, &o.threads, 1, 256},       {O_GPT, &o.games_per_thread, 1, 4096},
              {O_MAXSPOOL, &o.max_spool, 1, 10000000}, {O_PROGRESS, &o.progress_s, 1, 86400},
              {O_TIMEOUT, &o.request_timeout_ms, 100, 3600000}, {O_CACHE_MB, &o.cache_mb, 1, 1000000},
              {O_MAX_RSS, &o.max_rss_mb, 0, 10000000}};
  int nice_val = 19;
  for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++) {
    const char *s = val[ints[i].idx] ? val[ints[i].idx] : opts[ints[i].idx].def;
    if (parse_int(s, ints[i].lo, ints[i].hi, ints[i].dst)) {
      fprintf(stderr, "xqz-worker: --%s must be a number from %ld to %ld, not '%s'\n",
              opts[ints[i].idx].name, ints[i].lo, ints[i].hi, s);
      return 2;
    }
  }
  if (val[O_NICE] && parse_int(val[O_NICE], 0, 19, &nice_val)) {
    fprintf(stderr, "xqz-worker: --nice must be a number from 0 (normal) to 19 (the lowest"
            " priority), not '%s'\n", val[O_NICE]);
    return 2;
  }
  if (val[O_ACTIVE]) {
    if (xq_active_parse(&o.active, val[O_ACTIVE], &eb) < 0) {
      fprintf(stderr, "xqz-worker: %s\n", eb.msg);
      return 2;
    }
    o.active_on = true;
  }
  if (val[O_IDLE_ONLY]) {
    char *end;
    o.idle_only = strtod(val[O_IDLE_ONLY], &end);
    if (!*val[O_IDLE_ONLY] || *end || !(o.idle_only >= 0.05 && o.idle_only <= 4096)) {
      fprintf(stderr, "xqz-worker: --idle-only must be a load in cores from 0.05 to 4096"
              " (e.g. 0.5: pause while others use more than half a core), not '%s'\n",
              val[O_IDLE_ONLY]);
      return 2;
    }
  }
  /* Before any evaluator exists: every net this process loads follows it (nn_bf16.h). */
  nn_precision_t prec_req;
  const char *prec_s = val[O_PRECISION] ? val[O_PRECISION] : opts[O_PRECISION].def;
  if (nn_precision_parse(prec_s, &prec_req)) {
    fprintf(stderr, "xqz-worker: --precision must be auto, fp32 or bf16, not '%s'\n", prec_s);
    return 2;
  }
  const char *prec_why;
  nn_precision_t prec = nn_precision_resolve(prec_req, nn_bf16_cpu_supported(), &prec_why);
  nn_precision_set(prec);
  if (o.id && (!*o.id || strlen(o.id) > 200)) {
    fprintf(stderr, "xqz-worker: --id must be 1 to 200 characters\n");
    return 2;
  }
  if (xq_curve_client_load(&o.curve, val[O_SERVER_KEY], val[O_KEY], &eb) < 0) {
    fprintf(stderr, "xqz-worker: %s\n", eb.msg);
    return 2;
  }
  if (val[O_ENROL]) {
    if (!o.curve.on) {
      fprintf(stderr, "xqz-worker: --enrol needs CURVE: give --server-key (the coordinator's"
              " .pub) and --key (this worker's .secret from xqz keygen)\n");
      return 2;
    }
    if (xq_worker_enrol(o.coordinator, &o.curve, val[O_ENROL], o.request_timeout_ms, &eb) < 0) {
      fprintf(stderr, "xqz-worker: %s\n", eb.msg);
      return 1;
    }
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
  int got_nice = nice_val;
  if (xq_guest_priority(nice_val, true, &got_nice, &eb) < 0)
    XQ_LOGW("worker", "priority not fully set; going on error=\"%s\"", eb.msg);
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
  return xq_worker_run(&o, &stop_flag, &pause_flag);
}
