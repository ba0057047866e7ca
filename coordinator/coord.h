/*
 * coord.h: the coordinator's state, shared by the top floor: loop.c (sockets, timer),
 * commands.c (the command table: dispatch and roles), requests.c (the small requests),
 * peer_table.c (identity, faults, cut-off), promote.c (candidates, gating, promotions),
 * population_round.c (a population's rounds), ingest.c (games in, acks out), status.c and
 * main.c. Internal to coordinator/. The state
 * of a room is that room's struct (the window's, the peers', the statistics'); xqc_t holds
 * them and what the loop, ingest and promotion keep themselves. The handlers' functions are
 * declared with the file that defines each (admin.h, ingest.h, peer_table.h, promote.h,
 * population_round.h, anchors.h), included at the end.
 */
#ifndef XQC_COORD_H
#define XQC_COORD_H

#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "anchors.h"
#include "storage/campaign_db.h"
#include "clock.h"
#include "config.h"
#include "peers/table.h"
#include "population/members.h"
#include "population/round.h"
#include "stats.h"
#include "gating.h"
#include "storage/nets.h"
#include "window/window.h"
#include "reply.h"
#include "storage/segments.h"
#include "support/rng.h"
#include "wire/wire.h"
#include "xqz.pb-c.h"

/* Largest trainer step believed (2^40, about 10^12: years of steps); a larger one is a
 * lie or a bug and is refused with its report. */
#define XQC_STEP_MAX (1ull << 40)
/* Largest loss a trainer may report (policy cross-entropy over 2086 moves is below 100). */
#define XQC_LOSS_MAX 1e4

typedef struct {
  uint8_t rid[XQC_RID_MAX];
  size_t rid_len;
  uint64_t request_id, seq;
  char worker_id[128];
} xqc_pending_ack_t;

/* Named (struct xqc_s) so that reply.h and the command table can declare it. */
typedef struct xqc_s {
  char dir[512];
  uint64_t campaign_id; /* random, made with the campaign (campaign_db.h, identity.h) */
  xqc_config_t cfg;
  xqc_db_t *db;
  void *zctx, *router, *pub;
  uv_loop_t *loop;
  uv_poll_t router_poll;
  uv_timer_t timer;
  uv_signal_t sigint, sigterm;
  struct xqc_http_s *http; /* the web endpoint (web_routes.c); NULL when off */
  xqc_segments_t seg;
  xqc_gate_t gate;
  xqc_anchor_t anchor; /* the open anchor match (anchors.h); anchor.gate.open when one is */
  xq_rng_t rng;
  xqc_nets_t nets;
  xqc_pending_ack_t *acks;
  int nacks, cap_acks;
  uint64_t best, jobs_served;
  double best_elo;
  int64_t promotions, trainer_step;
  uint64_t games, positions, rejected_games, duplicates;
  uint64_t last_fsync_ms, last_status_ms, next_match_id;
  /* Arena pairs kept back because their holder could not be stored (promote.c), and when
   * that was last logged (at most one line a minute). */
  uint64_t pairs_unsaved, pairs_unsaved_log_ms;
  /* A candidate that arrived while a match was open (latest wins). */
  uint64_t queued_cand;
  int64_t queued_step;
  char last_gating[160];
  bool stopping;
  /* A decided gating match not yet durable (gating.h): announced only once stored. */
  xqc_gate_verdict_t verdict;
  /* campaign.db's file as opened (device, inode), checked on the timer: a database deleted
   * or replaced while running takes every later write with it (campaign.h). */
  uint64_t db_dev, db_ino, last_db_check_ms;
  bool db_lost; /* the check found it deleted or replaced (logged; decisions wait) */
  xqc_window_t window; /* the replay window, its pacing counters and sets (window/window.h) */
  xqc_peers_t peers;   /* connections, auth, cut-offs, bans, refused ids (peers/table.h) */
  xqc_stats_t stats;   /* watching: workers, refusals, losses, rate, balance (stats.h) */
  /* The population's members (population/members.h); used only when cfg.population > 0,
   * loaded from and saved to the campaign's members.txt. */
  xqc_members_t members;
  /* The population's round (population/round.h): open while its pairs are played; the
   * step it opened at stays for the next round's rule. round_credit: arena slots owed to
   * it (pbt_share per arena slot, population_round.h). */
  xqc_round_t round;
  double round_credit;
} xqc_t;

/* xqc_now_ms is in clock.h, xqc_reply and xqc_reply_error in reply.h (both included above,
 * so every handler has them without depending on loop.c). */

/* The handlers' functions, declared with the file that defines each. */
#include "admin.h"
#include "ingest.h"
#include "peer_table.h"
#include "population_round.h"
#include "promote.h"

/* loop.c */
int xqc_run(xqc_t *c, xq_errbuf_t *eb);

#endif
