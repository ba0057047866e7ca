/*
 * agent.h: the worker's network thread: the conversation with the coordinator (Hello,
 * jobs, nets, games, acks, heartbeats, announcements), timeouts and reconnects, and the
 * play thread's tasks. docs/worker.md describes the behaviour.
 */
#ifndef XQ_WORKER_AGENT_H
#define XQ_WORKER_AGENT_H

#include <signal.h>

#include <stdbool.h>

#include "guest.h"
#include "replay.h"
#include "wire/curve.h"

typedef struct {
  const char *coordinator, *pub, *cache, *spool, *id;
  int threads, games_per_thread;
  int max_spool;           /* spooled games at most (pause self-play when reached) */
  int progress_s;          /* seconds between progress lines */
  int request_timeout_ms;  /* no answer for this long: reconnect */
  xq_curve_t curve;        /* --server-key/--key (curve.on = false: plain TCP) */
  /* A lent machine (guest.h, docs/operations.md "Lending a machine to self-play") */
  bool active_on;          /* --active given: play only inside the window */
  xq_active_t active;
  double idle_only;        /* --idle-only LOAD: pause while others use more cores (0: off) */
  int cache_mb;            /* --cache-mb: net cache size cap (MiB) */
  int max_rss_mb;          /* --max-rss-mb: no new task while resident memory is above (0: off) */
  xq_replay_t *replay;     /* --replay: a recording's games instead of self-play (NULL: off) */
} xq_worker_opts_t;

/* Runs until *stop becomes non-zero; returns the process exit code. *pause is the
 * SIGUSR1/SIGUSR2 switch: non-zero pauses the play thread at the next safe point. */
int xq_worker_run(const xq_worker_opts_t *o, volatile sig_atomic_t *stop,
                  volatile sig_atomic_t *pause);

#endif
