/*
 * selfplay_loop.h: the worker's play thread. The agent (network thread) posts one task at
 * a time: a batch of self-play games (xq_selfplay_run; every finished game is encoded,
 * given the next sequence number and spooled by the sink, and the agent sends it) or the
 * two games of an arena pair. Tasks are short so nets switch at game boundaries. With a
 * replay source (replay.h), a self-play task spools the recording's next games at its pace
 * instead of playing.
 */
#ifndef XQ_WORKER_SELFPLAY_LOOP_H
#define XQ_WORKER_SELFPLAY_LOOP_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "nn/nn_bf16.h"
#include "search/selfplay.h"
#include "replay.h"
#include "spool.h"

typedef enum { XQ_TASK_SELFPLAY = 1, XQ_TASK_ARENA = 2 } xq_task_kind_t;

typedef struct {
  xq_task_kind_t kind;
  /* self-play: net_path "" plays with the uniform evaluator (no net yet) */
  uint64_t net_id;
  char net_path[1024];
  xq_selfplay_config_t cfg;
  int64_t games;
  /* arena: A = candidate, B = best */
  uint64_t match_id;
  uint32_t pair_index;
  char path_a[1024], path_b[1024];
  char anchor_b[64];  /* non-empty: B is this built-in player (an anchor match), not path_b */
  char opening[160];
  int sims, max_plies;
  double adjudicate_material;
  nn_precision_t arena_prec; /* fp32 or bf16: both nets of the pair run in it */
  uint64_t seed;
  /* results */
  int rc;
  char err[256];
  bool aborted; /* cut short by xq_play_loop_abort: no result to report */
  int result_a_red, result_a_black, reason_a_red, reason_a_black;
} xq_task_t;

typedef struct {
  pthread_t th;
  pthread_mutex_t lock;
  pthread_cond_t cond;
  int state; /* 0 idle, 1 posted, 2 running, 3 done */
  bool quit;
  atomic_int stop;  /* end the current batch at the next finished game */
  atomic_int abort; /* end the current task now, abandoning unfinished games (SIGTERM) */
  xq_task_t task;
  xq_spool_t *spool;
  xq_replay_t *replay; /* non-NULL: self-play tasks send its games instead (replay.h) */
  bool replay_done_logged;
  char worker_id[256];
  atomic_llong games, positions; /* totals since start */
} xq_play_loop_t;

int xq_play_loop_start(xq_play_loop_t *pl, xq_spool_t *spool, const char *worker_id);
/* Posts a task; the loop must be idle. */
void xq_play_loop_post(xq_play_loop_t *pl, const xq_task_t *t);
/* 1 when idle (no task posted or running). */
int xq_play_loop_idle(xq_play_loop_t *pl);
/* 1 and the finished task copied to *t when one finished (the loop becomes idle). */
int xq_play_loop_take(xq_play_loop_t *pl, xq_task_t *t);
/* Asks the current task to stop at the next finished game. */
void xq_play_loop_interrupt(xq_play_loop_t *pl);
/* Ends the current task now: searches stop and unfinished games are abandoned, so the
 * thread is idle within moments whatever the job's simulations. Stays set until the next
 * post (a stopping worker posts nothing more; a paused one posts again on resuming). */
void xq_play_loop_abort(xq_play_loop_t *pl);
/* Stops the thread (after its task) and joins it. */
void xq_play_loop_join(xq_play_loop_t *pl);

#endif
