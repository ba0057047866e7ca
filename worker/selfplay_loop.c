/* selfplay_loop.c: the play thread: self-play batches and arena pairs (selfplay_loop.h). */
#include "selfplay_loop.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "search/arena.h"
#include "records/game_record.h"
#include "search/players.h"
#include "support/clock.h"
#include "support/log.h"

/* Called under the run's lock for every finished game: encode, number, spool. */
static int sink(void *ctx, const xq_game_record_t *rec, const xq_selfplay_stats_t *total) {
  (void)total;
  xq_play_loop_t *pl = ctx;
  unsigned char *buf = NULL;
  size_t len = 0;
  int rc = xq_record_encode(rec, &buf, &len);
  uint64_t seq = 0;
  xq_errbuf_t eb = {{0}};
  if (!rc) rc = xq_spool_add(pl->spool, pl->worker_id, buf, len, &seq, &eb);
  free(buf);
  if (rc) {
    XQ_LOGE("worker", "cannot spool a finished game; stopping the batch error=\"%s %s\"",
            xq_strerror(rc), eb.msg);
    return 1;
  }
  int pos = 0;
  for (int i = 0; i < rec->nplies; i++) pos += rec->plies[i].full;
  atomic_fetch_add(&pl->games, 1);
  atomic_fetch_add(&pl->positions, pos);
  return atomic_load(&pl->stop) != 0;
}

static int a_score(xq_result_t r, bool a_red) {
  if (r == XQ_RESULT_RED_WIN) return a_red ? 1 : -1;
  if (r == XQ_RESULT_BLACK_WIN) return a_red ? -1 : 1;
  return 0;
}

/* The two games of an arena pair; abort stops their searches (the result is then void). */
static void run_arena(xq_task_t *t, atomic_int *abort) {
  char spec_a[1100], spec_b[1100];
  snprintf(spec_a, sizeof spec_a, "net:%s:%d", t->path_a, t->sims);
  if (t->anchor_b[0]) snprintf(spec_b, sizeof spec_b, "%s", t->anchor_b);
  else snprintf(spec_b, sizeof spec_b, "net:%s:%d", t->path_b, t->sims);
  xq_player_t *a = NULL, *b = NULL;
  xq_errbuf_t eb = {{0}};
  bool bf16 = t->arena_prec == NN_PRECISION_BF16; /* the pin, not the process's precision */
  int rc = xq_player_new_pinned(&a, spec_a, t->seed, bf16, &eb);
  if (!rc) rc = xq_player_new_pinned(&b, spec_b, t->seed + 1, bf16, &eb);
  xq_player_set_stop(a, abort);
  xq_player_set_stop(b, abort);
  const char *opening = t->opening[0] ? t->opening : "startpos";
  for (int g = 0; g < 2 && !rc && !atomic_load(abort); g++) {
    bool a_red = g == 0;
    xq_outcome_t out;
    int plies = 0;
    rc = xq_player_new_game(a, &eb);
    if (!rc) rc = xq_player_new_game(b, &eb);
    if (!rc)
      rc = xq_arena_game(a_red ? a : b, a_red ? b : a, opening, t->max_plies,
                         t->adjudicate_material, &out, &plies, &eb);
    if (rc) break;
    if (a_red) {
      t->result_a_red = a_score(out.result, true);
      t->reason_a_red = (int)out.reason;
    } else {
      t->result_a_black = a_score(out.result, false);
      t->reason_a_black = (int)out.reason;
    }
  }
  t->rc = rc;
  if (rc) snprintf(t->err, sizeof t->err, "%s", eb.msg);
  xq_player_free(&a);
  xq_player_free(&b);
}

/* Sleeps up to ms in slices, returning early once stop or abort is set. */
static void nap(xq_play_loop_t *pl, int64_t ms) {
  while (ms > 0 && !atomic_load(&pl->stop) && !atomic_load(&pl->abort)) {
    int64_t slice = ms < 50 ? ms : 50;
    struct timespec ts = {0, (long)slice * 1000000L};
    nanosleep(&ts, NULL);
    ms -= slice;
  }
}

/* A self-play task of a replaying worker: the recording's games due now (the agent sets
 * no real cap, t->games), each spooled as the sink spools a played one; it stops early
 * when the spool is full. When none is due it waits for the next
 * one, at most a second, and returns: the agent then asks for a job, so arena pairs are
 * never held up longer than that. */
static void replay_task(xq_play_loop_t *pl, xq_task_t *t) {
  for (int64_t g = 0; g < t->games && !atomic_load(&pl->stop) && !atomic_load(&pl->abort);) {
    const unsigned char *rec;
    size_t len;
    int64_t wait;
    uint64_t pos = 0;
    int got = xq_replay_next(pl->replay, xq_clock_ms(), &rec, &len, &pos, &wait);
    if (got < 0) {
      if (!pl->replay_done_logged)
        XQ_LOGI("worker", "replay finished: all %zu recorded games sent; self-play stays off",
                xq_replay_games(pl->replay));
      pl->replay_done_logged = true;
      if (g == 0) nap(pl, 1000); /* the agent asks again; no busy loop */
      return;
    }
    if (got == 0) {
      if (g == 0) nap(pl, wait < 1000 ? wait : 1000);
      return;
    }
    if (xq_spool_full(pl->spool)) { /* the agent waits for acks before the next task */
      xq_replay_unread(pl->replay);
      return;
    }
    uint64_t seq = 0;
    xq_errbuf_t eb = {{0}};
    int rc = xq_spool_add(pl->spool, pl->worker_id, rec, len, &seq, &eb);
    if (rc) {
      xq_replay_unread(pl->replay); /* sent again by the next task: no game is lost */
      t->rc = rc;
      snprintf(t->err, sizeof t->err, "cannot spool a replayed game: %.200s", eb.msg);
      return;
    }
    atomic_fetch_add(&pl->games, 1);
    atomic_fetch_add(&pl->positions, (long long)pos);
    g++;
  }
}

static void *play_main(void *arg) {
  xq_play_loop_t *pl = arg;
  pthread_mutex_lock(&pl->lock);
  for (;;) {
    while (pl->state != 1 && !pl->quit) pthread_cond_wait(&pl->cond, &pl->lock);
    if (pl->state != 1) break;
    pl->state = 2;
    xq_task_t t = pl->task;
    pthread_mutex_unlock(&pl->lock);
    if (t.kind == XQ_TASK_SELFPLAY && pl->replay) {
      replay_task(pl, &t);
    } else if (t.kind == XQ_TASK_SELFPLAY) {
      xq_selfplay_stats_t st;
      xq_errbuf_t eb = {{0}};
      t.cfg.abort = &pl->abort;
      t.rc = xq_selfplay_run(&t.cfg, t.net_path[0] ? t.net_path : NULL, t.games, sink, pl,
                             &st, &eb);
      if (t.rc) snprintf(t.err, sizeof t.err, "%s", eb.msg);
    } else {
      run_arena(&t, &pl->abort);
    }
    t.aborted = atomic_load(&pl->abort) != 0;
    pthread_mutex_lock(&pl->lock);
    pl->task = t;
    pl->state = 3;
  }
  pthread_mutex_unlock(&pl->lock);
  return NULL;
}

int xq_play_loop_start(xq_play_loop_t *pl, xq_spool_t *spool, const char *worker_id) {
  memset(pl, 0, sizeof *pl);
  pthread_mutex_init(&pl->lock, NULL);
  pthread_cond_init(&pl->cond, NULL);
  pl->spool = spool;
  snprintf(pl->worker_id, sizeof pl->worker_id, "%s", worker_id);
  if (pthread_create(&pl->th, NULL, play_main, pl)) return XQ_ENOMEM;
  return 0;
}

void xq_play_loop_post(xq_play_loop_t *pl, const xq_task_t *t) {
  pthread_mutex_lock(&pl->lock);
  pl->task = *t;
  pl->state = 1;
  atomic_store(&pl->stop, 0);
  atomic_store(&pl->abort, 0); /* a pause's abort ends with it (stopping posts nothing) */
  pthread_cond_signal(&pl->cond);
  pthread_mutex_unlock(&pl->lock);
}

int xq_play_loop_idle(xq_play_loop_t *pl) {
  pthread_mutex_lock(&pl->lock);
  int idle = pl->state == 0;
  pthread_mutex_unlock(&pl->lock);
  return idle;
}

int xq_play_loop_take(xq_play_loop_t *pl, xq_task_t *t) {
  pthread_mutex_lock(&pl->lock);
  int done = pl->state == 3;
  if (done) {
    *t = pl->task;
    pl->state = 0;
  }
  pthread_mutex_unlock(&pl->lock);
  return done;
}

void xq_play_loop_interrupt(xq_play_loop_t *pl) { atomic_store(&pl->stop, 1); }

void xq_play_loop_abort(xq_play_loop_t *pl) {
  atomic_store(&pl->stop, 1);
  atomic_store(&pl->abort, 1);
}

void xq_play_loop_join(xq_play_loop_t *pl) {
  pthread_mutex_lock(&pl->lock);
  pl->quit = true;
  pthread_cond_signal(&pl->cond);
  pthread_mutex_unlock(&pl->lock);
  pthread_join(pl->th, NULL);
  pthread_mutex_destroy(&pl->lock);
  pthread_cond_destroy(&pl->cond);
}
