/*
 * stats.h: what the coordinator watches, one struct it holds (xqc_t.stats): per-worker
 * statistics, refusals counted by kind, the trainer's loss reports, the ingest rate and the
 * balance of self-play against training. status.c keeps them and turns them into the
 * Status message; the handlers only count.
 */
#ifndef XQC_STATS_H
#define XQC_STATS_H

#include <stdint.h>

#include "balance.h"
#include "peers/workers.h"
#include "self_balance.h"
#include "storage/campaign_db.h"

#define XQC_RATE_SAMPLES 62 /* one a second: the ingest rate over the last minute */

typedef struct {
  xqc_workers_t workers;
  uint64_t start_ms, last_workers_save_ms;
  uint64_t banned_games;          /* games refused because their sender is banned */
  uint64_t role_refusals;         /* requests the sender's roles do not allow (roles.h) */
  uint64_t claims_refused;        /* requests under a worker id the sender does not own */
  uint64_t replayed_games;        /* copies of a game already in the window (copies.h) */
  uint64_t bad_reports;           /* trainer reports refused: step or losses out of range */
  uint64_t reply_bytes;           /* bytes of every reply sent on the ROUTER (guard.h) */
  char trainer_version[64];       /* BatchRequest.software_version of the last request */
  xqc_loss_row_t last_loss;       /* newest report (step 0: none yet) */
  xqc_loss_row_t loss_acc;        /* sums since the last stored row */
  uint32_t loss_acc_steps;
  uint64_t loss_saved_step;
  int64_t loss_saved_time;
  int64_t throughput_saved_time; /* unix seconds of the last throughput row */
  struct {
    uint64_t ms[XQC_RATE_SAMPLES], positions[XQC_RATE_SAMPLES]; /* ring of samples */
    int head, n;
  } rate;
  xqc_balance_t balance; /* self-play against training (balance.h, fed by status.c) */
  xqc_self_balance_t self_balance; /* job simulations (self_balance.h, ticked by status.c) */
} xqc_stats_t;

#endif
