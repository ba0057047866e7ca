/*
 * selfplay.h: batched self-play. Each search thread plays G games at once and gathers one
 * leaf of each (with virtual loss) into a single evaluator batch; T threads share nothing
 * but a game counter and the sink (called under a lock). docs/search.md explains every
 * setting; xq_selfplay_config_default gives the defaults, the shared ones from
 * selfplay_defaults.h (the coordinator's too).
 */
#ifndef XQ_SELFPLAY_H
#define XQ_SELFPLAY_H

#include <stdint.h>

#include "records/game_record.h"
#include "search/mcts.h"
#include "support/error.h"

typedef struct {
  xq_mcts_config_t mcts;   /* tree settings; noise_frac applies to full searches */
  int threads;             /* search threads T (1) */
  int parallel;            /* games per thread G = evaluator batch (32) */
  int sims_full;           /* simulations of a full search (800) */
  int sims_fast;           /* simulations of a fast search (160) */
  float full_frac;         /* share of moves with a full search, recorded (0.25) */
  int temp_plies;          /* plies played with temperature 1 (20) */
  float temp_final;        /* temperature after that (0: the most visited move) (0) */
  float resign_threshold;  /* resign when the root value stays below this (-0.95) */
  int resign_moves;        /* ... for this many consecutive own moves (3) */
  float no_resign_frac;    /* share of games where resignation is disabled (0.1) */
  int cache_size;          /* evaluation cache entries per thread, power of 2 (1 << 15) */
  double time_limit_s;     /* stop after this long, abandoning unfinished games (0 = none) */
  atomic_int *abort;       /* stop as soon as *abort != 0, abandoning unfinished games
                            * (NULL = never): a daemon's SIGTERM */
  uint64_t seed;
} xq_selfplay_config_t;

void xq_selfplay_config_default(xq_selfplay_config_t *cfg);

typedef struct {
  int64_t games, plies, positions; /* finished games, plies played, recorded positions */
  int64_t sims, evals, cache_hits, batches;
  int64_t results[4];              /* by xq_result_t */
  int64_t reasons[XQ_REASON_RESIGN + 1];
  int64_t resign_checked;          /* no-resign games in which a side would have resigned */
  int64_t false_resigns;           /* ... and that side did not lose */
  double net_s, total_s;           /* time in the evaluator; wall time of the threads */
} xq_selfplay_stats_t;

/* Called once per finished game, under the run's lock; a non-zero return stops the run. */
typedef int (*xq_selfplay_sink_t)(void *ctx, const xq_game_record_t *rec,
                                  const xq_selfplay_stats_t *total);

/* Plays ngames games (net_path NULL: uniform evaluator). stats gets the totals. */
int xq_selfplay_run(const xq_selfplay_config_t *cfg, const char *net_path, int64_t ngames,
                    xq_selfplay_sink_t sink, void *ctx, xq_selfplay_stats_t *stats,
                    xq_errbuf_t *eb);

#endif
