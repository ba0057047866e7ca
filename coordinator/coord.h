/*
 * coord.h: the coordinator's state, shared by the top floor: loop.c (sockets, timer),
 * commands.c (the command table: dispatch and roles), requests.c (the small requests),
 * peer_table.c (identity, faults, cut-off), promote.c (candidates, gating, promotions),
 * ingest.c (games in, acks out), status.c and main.c. Internal to coordinator/. The state
 * of a room is that room's struct (the window's, the peers', the statistics'); xqc_t holds
 * them and what the loop, ingest and promotion keep themselves.
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
} xqc_t;

/* xqc_now_ms is in clock.h, xqc_reply and xqc_reply_error in reply.h (both included above,
 * so every handler has them without depending on loop.c). */

/* peer_table.c: the peer table (peers/peers.h) */
/* The peer a message from routing id rid with header head (its CURVE key, "" without
 * CURVE, and its address) comes from: its index in c->peers.list, added when new; -1 when the message is to be ignored (out
 * of memory, or its identity is cut off). env is the decoded message (NULL when it did not
 * decode): without CURVE, the worker id it names is checked for a cut too. */
int xqc_peers_admit(xqc_t *c, const uint8_t *rid, size_t rid_len, const xq_wire_head_t *head,
                    const Xqz__Envelope *env);
/* May p speak for worker id wid (peers.h)? 0 yes (with CURVE a first claim is recorded);
 * XQ_EINVAL when wid is not a valid worker id, XQ_EMISMATCH when another key or live
 * connection owns it, XQ_ENOMEM; why (n bytes) says which, for the peer. */
int xqc_peer_claim(xqc_t *c, xqc_peer_t *p, const char *wid, char *why, size_t n);
/* Answers a request under a worker id p does not own: Error XQ_ERROR_WORKER_ID (not a
 * fault: a restarted worker resending under its old id meets this until the old
 * connection is presumed gone); counted, logged once per connection. */
void xqc_peer_refuse_claim(xqc_t *c, xqc_peer_t *p, uint64_t rq, const char *why);
/* The roles of p (roles.h). */
unsigned xqc_peer_roles(xqc_t *c, const xqc_peer_t *p);
/* Forgets peers silent for ten worker timeouts and lifts cut-offs that ran out. */
void xqc_peers_expire(xqc_t *c, uint64_t now);
/* Counts a malformed or unexpected message against a peer (and its worker's faults) and
 * against its identity; cuts the identity off over the threshold (cutoff.h). */
void xqc_peer_fault(xqc_t *c, xqc_peer_t *p, const char *what);
/* The same without the worker's fault count (a rejected game counts as `rejected`). */
void xqc_peer_error(xqc_t *c, xqc_peer_t *p, const char *what);
/* A peer of another protocol version: logged once per peer, answered with an Error in an
 * envelope of the peer's own version (so it can read it), counted like a bad message. */
void xqc_peer_refuse_version(xqc_t *c, xqc_peer_t *p, const xq_wire_head_t *head);
/* true when the peer is banned by its worker id or its key. */
bool xqc_peer_banned(const xqc_t *c, const xqc_peer_t *p);
/* Copies the peer's CURVE key into its worker's statistics entry (w may be NULL) and
 * sets the entry's banned flag. */
void xqc_peer_worker_sync(xqc_t *c, const xqc_peer_t *p, xqc_worker_t *w);

/* promote.c: candidates, gating matches, promotions. */
/* Resumes the match left open by a restart with its pairs (match_store.h), or reopens the
 * match of a candidate left undecided from zero games when none was saved. */
void xqc_promote_resume(xqc_t *c);
/* Fills aj with the next pair to hand out, of the open gating match first, else of the
 * open anchor match when p can play anchor jobs (fen, >= XQ_FEN_MAX bytes, backs its
 * opening), and marks it issued to p; false when no arena job is due. Only p's result for
 * that pair, before the pair's deadline, is scored. */
bool xqc_promote_arena_job(xqc_t *c, const xqc_peer_t *p, Xqz__ArenaJob *aj, char *fen);
void xqc_promote_candidate(xqc_t *c, xqc_peer_t *p, uint64_t rq, const Xqz__CandidateNet *cn);
void xqc_promote_arena_result(xqc_t *c, xqc_peer_t *p, uint64_t rq, const Xqz__ArenaResult *r);
/* requests.c found the open match's candidate unservable (file damaged or gone): the match
 * closes with the candidate rejected (why logged), so gating moves on. */
void xqc_promote_candidate_lost(xqc_t *c, const char *why);
/* requests.c found the best net unservable: the previous best net with an intact file becomes
 * the best again (recorded, announced; an open match is replayed against it). */
void xqc_promote_best_lost(xqc_t *c, const char *why);
/* From the timer: checks that campaign.db is still the file opened, and retries storing a
 * gating decision that waits (gating.h), never blocking. */
void xqc_promote_tick(xqc_t *c, uint64_t now_ms);

/* anchors.c: anchor matches (anchors.h); their pairs go out and come back through
 * promote.c, after the gating pairs. */
/* Opens the next anchor match that is due for the best net (none when one is open). */
void xqc_anchor_schedule(xqc_t *c);
/* Resumes the anchor match left open by a restart, else schedules. */
void xqc_anchor_resume(xqc_t *c);
/* After a pair of the anchor match is scored: a complete match is recorded (campaign.db,
 * anchors.log) and the next one scheduled. */
void xqc_anchor_scored(xqc_t *c);
/* The newest score per anchor, "71% vs greedy, 3% vs alphabeta:1", into buf (n bytes;
 * "" when none yet). */
int xqc_anchor_summary(xqc_t *c, char *buf, size_t n);

/* ingest.c */
/* Rebuilds the seen set and the replay window from the segment files. */
int xqc_ingest_open(xqc_t *c, xq_errbuf_t *eb);
void xqc_ingest_game(xqc_t *c, xqc_peer_t *p, uint64_t request_id, const Xqz__GameRecord *g);
/* fsyncs the segments and sends the queued acks. */
void xqc_ingest_flush(xqc_t *c);
/* After a ban: drops the queued acks of banned senders and their samples from the window.
 * Returns the number of positions removed; *acks_dropped gets the acks dropped. */
uint64_t xqc_ingest_purge_banned(xqc_t *c, int *acks_dropped);

/* admin.c: AdminRequest (ban, unban); dispatch has checked the admin role. */
void xqc_admin_request(xqc_t *c, xqc_peer_t *p, uint64_t request_id,
                       const Xqz__AdminRequest *r);
/* Answers an AdminRequest the sender may not make (AdminResult ok=false, why). */
void xqc_admin_refuse(xqc_t *c, xqc_peer_t *p, uint64_t rq, const char *why);
/* Answers an AdminRequest: ok, a message, and a token (NULL: none; xqz enrol-token's). */
void xqc_admin_reply(xqc_t *c, xqc_peer_t *p, uint64_t rq, bool ok, const char *msg,
                     const char *token);
/* Sets every worker statistics entry's banned flag from the bans (after a change). */
void xqc_admin_mark_workers(xqc_t *c);

/* loop.c */
int xqc_run(xqc_t *c, xq_errbuf_t *eb);

#endif
