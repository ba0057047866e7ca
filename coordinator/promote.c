/*
 * promote.c: the promotion lifecycle. A CandidateNet is stored (nets/<id>.xqzn and a
 * "candidate" row) and opens a gating match against the best net (one match at a time: a
 * candidate arriving during a match waits, the latest one winning). The match's pairs go
 * out as arena jobs; each ArenaResult is scored (gating.h) until the gate decides. In a
 * population a candidate is a member's: stored with its checkpoint (members_wire.h), it
 * opens no match of its own: the population's round rates it, and the best-rated member's
 * go to gating (members_wire.c, pbt_gate_leader). The anchor matches' pairs and a
 * population's round's (population_round.h) go out and come back the same way, with the
 * same holder check (xqc_promote_issue_pair, _score_pair).
 *
 * Durable first, announced second: a decision is first stored, in one campaign.db
 * transaction (the matches row, the open match forgotten, the nets' states, the promotions
 * row), with the candidate's net file checked; only then is it written to promotions.log,
 * made the best net and announced on the PUB socket. When the transaction fails (another
 * program holds the database's lock, the disk is full), the decision waits, unannounced,
 * with the match still open but handing out nothing, and the timer retries it
 * (xqc_promote_tick) without ever blocking the loop. Net id 0 means "no net": it is never
 * a candidate, and a stored match that names it is dropped at start.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

#include "storage/campaign.h"
#include "coord.h"
#include "identity.h"
#include "members_wire.h"
#include "storage/net_files.h"
#include "storage/match_store.h"
#include "nn/nn_file.h"
#include "support/atomic_file.h"
#include "support/campaign_nets.h"
#include "support/log.h"
#include "wire/messages.h"
#include "wire/wire.h"

#define COMP "coordinator"

/* Answers an ArenaResult or a CandidateNet. */
static void send_ack(xqc_t *c, xqc_peer_t *p, uint64_t rq, uint64_t seq, bool ok,
                     const char *reason) {
  Xqz__Envelope env;
  Xqz__Ack a;
  /* Empty worker id: this Ack answers an ArenaResult or a CandidateNet, never a game, so
   * a worker must not mistake it for the ack of a spooled game with the same seq. */
  xq_msg_ack(&env, &a, "", seq, ok, reason);
  env.request_id = rq;
  xqc_reply(c, p->rid, p->rid_len, &env);
}

/* Logs a failed write of the open match: the match goes on, a restart would replay it. */
static void stored(int rc, const char *what) {
  if (rc < 0)
    XQ_LOGW(COMP, "open match not saved in campaign.db; it goes on, but a restart would play"
            " the unsaved part again (check the campaign disk) what=%s", what);
}

uint64_t xqc_match_ids_take(xqc_t *c, uint64_t n) {
  uint64_t first = c->next_match_id;
  c->next_match_id += n;
  if (xqc_db_match_ids_used(c->db, c->next_match_id) < 0) {
    char cause[300];
    xqc_db_cause(c->db, cause, sizeof cause);
    XQ_LOGW(COMP, "match id floor not saved in campaign.db; a restart before the next save"
            " may hand these ids out again next=%llu cause=\"%s\"",
            (unsigned long long)c->next_match_id, cause);
  }
  return first;
}

static void open_match(xqc_t *c, uint64_t cand, uint64_t parent, int64_t step) {
  xq_errbuf_t eb;
  if (cand == 0 || c->best == 0) { /* defensive: refused where they come in */
    XQ_LOGE(COMP, "gating match not opened: net id 0 means no net candidate=%016llx"
            " best=%016llx", (unsigned long long)cand, (unsigned long long)c->best);
    return;
  }
  uint64_t mid = xqc_match_ids_take(c, 1);
  if (xqc_gate_open(&c->gate, &c->cfg, mid, cand, c->best, parent, step, &eb) < 0) {
    XQ_LOGE(COMP, "cannot open gating match reason=\"%s\"", eb.msg);
    return;
  }
  xqc_open_match_t row = {mid, cand, c->best, parent, step, c->gate.npairs, "gating", ""};
  stored(xqc_store_match_open(c->db, &row), "match");
  XQ_LOGI(COMP, "gating match opened match=%llu candidate=%016llx best=%016llx mode=%s pairs=%d",
          (unsigned long long)mid, (unsigned long long)cand, (unsigned long long)c->best,
          xqc_gating_name(c->cfg.gating), c->gate.npairs);
}

/* Status.last_gating: one line on a decided match. */
static void describe(xqc_t *c, uint64_t cand, int64_t w, int64_t d, int64_t l, double score,
                     const char *decision) {
  snprintf(c->last_gating, sizeof c->last_gating, "net %016llx: %lld-%lld-%lld score %.2f %s",
           (unsigned long long)cand, (long long)w, (long long)d, (long long)l, score, decision);
}

/* Reopens the stored match m (of candidate m->net_a against the best net) with its pairs;
 * false when it cannot be. */
static bool resume_match(xqc_t *c, const xqc_open_match_t *m) {
  xq_errbuf_t eb;
  if (xqc_gate_open_pairs(&c->gate, m->npairs, m->match_id, m->net_a, m->net_b, m->parent,
                          m->step, &eb) < 0) {
    XQ_LOGE(COMP, "cannot reopen the gating match reason=\"%s\"", eb.msg);
    return false;
  }
  int scored = 0, out = 0;
  if (xqc_store_pairs_restore(c->db, &c->gate, xqc_now_ms(), &scored, &out) < 0) {
    xqc_gate_close(&c->gate);
    return false;
  }
  if (c->next_match_id <= m->match_id) c->next_match_id = m->match_id + 1;
  XQ_LOGI(COMP, "gating match resumed after the restart match=%llu candidate=%016llx"
          " pairs=%d scored=%d out=%d games=%lld", (unsigned long long)m->match_id,
          (unsigned long long)m->net_a, m->npairs, scored, out,
          (long long)(c->gate.w + c->gate.d + c->gate.l));
  return true;
}

static void close_match(xqc_t *c, xqc_gate_decision_t d);

/* How often the timer checks that campaign.db is the file opened (campaign.h). */
#define XQC_DB_CHECK_MS 2000

/* A stored gating match that can never complete (net id 0 on either side: "no net", which
 * no worker can fetch; or no pairs) is closed and its candidate row marked rejected, so it
 * does not wedge gating across restarts; *found is cleared when m was one. A "candidate"
 * row of net id 0 is marked rejected too. */
static void drop_impossible(xqc_t *c, const xqc_open_match_t *m, bool *found) {
  if (*found && (m->net_a == 0 || m->net_b == 0 || m->npairs <= 0)) {
    XQ_LOGW(COMP, "stored gating match dropped: it can never complete (net id 0 means no"
            " net); gating goes on with the next candidate match=%llu candidate=%016llx"
            " best=%016llx pairs=%d", (unsigned long long)m->match_id,
            (unsigned long long)m->net_a, (unsigned long long)m->net_b, m->npairs);
    stored(xqc_store_match_closed(c->db, m->match_id), "impossible match");
    *found = false;
  }
  char state[16] = "";
  if (xqc_db_net_state(c->db, 0, state, sizeof state, NULL) == 0 &&
      !strcmp(state, "candidate")) {
    XQ_LOGW(COMP, "stored candidate of net id 0 (no net) marked rejected; it is never played");
    stored(xqc_db_set_net_state(c->db, 0, "rejected", 0.0), "candidate 0");
  }
}

void xqc_promote_resume(xqc_t *c) {
  /* The last decision survives a restart: it is the newest row of the matches table. */
  xqc_match_info_t *last = NULL;
  int nlast = 0;
  if (xqc_db_matches(c->db, 0, 1, 1, &last, &nlast) == 0 && nlast == 1)
    describe(c, last->net_a, last->wins, last->draws, last->losses, last->score,
             last->decision);
  free(last);
  uint64_t pend;
  int64_t pend_step;
  xqc_open_match_t m;
  bool found = false;
  if (xqc_store_match_find(c->db, "gating", &m, &found) < 0) found = false;
  drop_impossible(c, &m, &found);
  if (xqc_db_pending_candidate(c->db, &pend, &pend_step) < 0) pend = 0;
  /* A population's candidates are its members': the round rates them, not gating. */
  if (c->cfg.population > 0) pend = 0;
  /* The stored match goes on while its candidate is undecided and the best net is the
   * one it plays; any other (decided, or the best changed) is stale. A newer candidate
   * that waited for it waits again. */
  char state[16] = "";
  if (found && xqc_db_net_state(c->db, m.net_a, state, sizeof state, NULL) < 0) found = false;
  if (found && !strcmp(state, "candidate") && m.net_b == c->best && m.npairs > 0 &&
      resume_match(c, &m)) {
    if (pend && pend != m.net_a) {
      c->queued_cand = pend;
      c->queued_step = pend_step;
    }
    xqc_gate_decision_t d = xqc_gate_decide(&c->gate, &c->cfg);
    if (d != XQC_GATE_OPEN) close_match(c, d); /* decided just before the restart */
    return;
  }
  if (found) stored(xqc_store_match_closed(c->db, m.match_id), "stale match");
  if (pend) {
    XQ_LOGI(COMP, "reopening the gating match of a candidate from before the restart, from"
            " zero games (none was saved) candidate=%016llx", (unsigned long long)pend);
    open_match(c, pend, c->best, pend_step);
  }
}

/* A pair's holders are peer identities (gating.h keeps them). */
_Static_assert(XQC_IDENTITY_MAX <= XQC_GATE_WHO_MAX, "a peer identity fits a pair's holder");

/* How long a pair is out before it is handed to another worker, and its result too late. */
uint64_t xqc_promote_pair_deadline_ms(const xqc_t *c) {
  return (uint64_t)c->cfg.worker_timeout_ms * 2;
}

bool xqc_promote_issue_pair(xqc_t *c, const xqc_peer_t *p, xqc_gate_t *g, int pair,
                            Xqz__ArenaJob *aj, char *fen) {
  xq_errbuf_t eb;
  if (pair < 0 || xqc_gate_opening_fen(g, pair, fen, &eb) < 0) return false;
  char who[XQC_IDENTITY_MAX];
  xqc_peer_identity(p, who, sizeof who);
  /* The holder is stored before the pair goes out: a pair handed out unsaved (a locked or
   * full campaign.db) would come back after a restart with no holder, and its honest
   * result be refused as forged. Such a pair stays where it was; the worker plays
   * self-play meanwhile. */
  if (xqc_store_pair_issued(c->db, g->match_id, pair, who) < 0) {
    c->pairs_unsaved++;
    uint64_t now = xqc_now_ms();
    if (!c->pairs_unsaved_log_ms || now - c->pairs_unsaved_log_ms >= 60000) {
      XQ_LOGW(COMP, "arena pair kept back: its holder could not be saved in campaign.db"
              " (check the campaign disk, or what holds the database locked); workers play"
              " self-play meanwhile match=%llu pair=%d kept_back=%llu",
              (unsigned long long)g->match_id, pair, (unsigned long long)c->pairs_unsaved);
      c->pairs_unsaved_log_ms = now;
    }
    return false;
  }
  xqc_gate_issue(g, pair, who, xqc_now_ms());
  xqz__arena_job__init(aj);
  aj->match_id = g->match_id;
  aj->net_a = g->cand;
  aj->net_b = g->best; /* 0 for an anchor match */
  if (g == &c->anchor.gate) aj->anchor_b = c->anchor.spec;
  aj->opening_fen = fen;
  aj->pair_index = (uint32_t)pair;
  aj->sims = (uint32_t)c->cfg.gating_sims;
  aj->max_plies = (uint32_t)c->cfg.max_plies;
  aj->adjudicate_material = (float)c->cfg.adjudicate_material;
  xqc_arena_precision_t prec = c->cfg.arena_precision;
  aj->precision = prec == XQC_ARENA_FP32 ? XQZ__ARENA_PRECISION__ARENA_PRECISION_FP32
                : prec == XQC_ARENA_BF16 ? XQZ__ARENA_PRECISION__ARENA_PRECISION_BF16
                                         : XQZ__ARENA_PRECISION__ARENA_PRECISION_WORKER;
  return true;
}

bool xqc_promote_arena_job(xqc_t *c, const xqc_peer_t *p, Xqz__ArenaJob *aj, char *fen) {
  /* Every other job is an arena slot: a gating pair first, else an anchor pair. While a
   * gating match is open, one self-play slot in two goes to an anchor pair too, so that
   * back-to-back gating matches (one worker, frequent candidates) never starve the anchors
   * (measured: net 1 stayed unmeasured for 7 minutes of a quickstart without it); gating
   * keeps every arena slot. Anchor pairs only to workers that play them. A population's
   * round takes its share of the arena slots (population_round.h), and any slot that
   * neither gating nor the anchors use. */
  bool arena_slot = c->jobs_served & 1, anchor_slot = c->gate.open && c->jobs_served % 4 == 2;
  if (!arena_slot && !anchor_slot) return false;
  /* A pair is issued to its holder's identity, which a connection gets from its Hello: a
   * JobRequest that reaches a restarted coordinator ahead of the worker's new Hello (it
   * sat in the socket's queue) would be issued to a connection id no later message
   * carries, so its result would be refused and the pair wait out its deadline. Such a
   * connection gets self-play. */
  if (!p->hello) return false;
  /* bf16 pairs go only to workers whose CPU runs bf16 and that honour the pin
   * (arena_precision); the others play self-play. An fp32 pair goes to any worker: one
   * older than the pin plays its own precision, fp32 unless it was started with
   * --precision bf16 or auto (docs/operations.md), so that a lab that upgrades the
   * coordinator first keeps gating. */
  const uint32_t need_bf16 = XQ_FEATURE_ARENA_PRECISION | XQ_FEATURE_BF16;
  if (c->cfg.arena_precision == XQC_ARENA_BF16 && (p->features & need_bf16) != need_bf16)
    return false;
  if (arena_slot && xqc_round_arena_job(c, p, aj, fen)) return true;
  uint64_t now = xqc_now_ms();
  xqc_gate_t *g = &c->gate;
  /* A decided match waiting to be stored hands out nothing more. */
  int pair = arena_slot && g->open && !c->verdict.active
                 ? xqc_gate_next_pair(g, now, xqc_promote_pair_deadline_ms(c)) : -1;
  if (pair < 0 && c->anchor.gate.open && (p->features & XQ_FEATURE_ANCHOR_JOBS)) {
    g = &c->anchor.gate;
    pair = xqc_gate_next_pair(g, now, xqc_promote_pair_deadline_ms(c));
  }
  if (pair >= 0) return xqc_promote_issue_pair(c, p, g, pair, aj, fen);
  return arena_slot && xqc_round_arena_spare(c, p, aj, fen);
}

static void publish_announce(xqc_t *c, uint64_t parent) {
  xq_errbuf_t eb;
  if (xqc_nets_load(&c->nets, c->dir, c->best, &eb) < 0) {
    XQ_LOGE(COMP, "promoted net file unreadable reason=\"%s\"", eb.msg);
    return;
  }
  Xqz__Envelope env;
  Xqz__NetAnnounce a;
  xq_msg_net_announce(&env, &a, c->best, c->nets.size, c->nets.crc);
  a.parent_id = parent;
  a.elo = c->best_elo;
  int rc = xq_wire_send(c->pub, NULL, 0, &env, ZMQ_DONTWAIT);
  if (rc < 0) XQ_LOGW(COMP, "announce not published err=\"%s\"", xq_strerror(rc));
}

/* The candidate's net file before a promotion is stored: 0 when it reads back whole; 1
 * when it is missing or damaged for good (the promotion becomes a rejection: no worker
 * could play it); XQ_EIO when it cannot be read now (the decision waits). */
static int check_net_file(xqc_t *c, xqc_gate_verdict_t *v) {
  char path[1024];
  xqc_net_path(path, sizeof path, c->dir, v->cand);
  nn_file_meta_t meta;
  xq_errbuf_t eb;
  int rc = nn_file_info(path, &meta, 1, &eb);
  if (rc == 0 && meta.net_id == v->cand) return 0;
  if (rc == 0 || rc != XQ_EIO || access(path, F_OK) != 0) {
    XQ_LOGE(COMP, "the candidate's net file is missing or damaged: the match is recorded as"
            " rejected, not promoted (no worker could play it) net=%016llx file=%s"
            " error=\"%s\"", (unsigned long long)v->cand, path,
            rc == 0 ? "another net id inside" : eb.msg);
    return 1;
  }
  snprintf(v->cause, sizeof v->cause, "%s", eb.msg);
  return XQ_EIO;
}

/* Stores the decision v in one transaction; 0 when it is durable, else XQ_EIO with the
 * cause (the database file and SQLite's reason) in v->cause and nothing changed. */
static int store_verdict(xqc_t *c, xqc_gate_verdict_t *v) {
  if (c->db_lost) {
    snprintf(v->cause, sizeof v->cause, "%s/campaign.db was deleted or replaced while the"
             " coordinator ran (see the error above)", c->dir);
    return XQ_EIO;
  }
  if (v->promote) {
    int k = check_net_file(c, v);
    if (k < 0) return k;
    if (k > 0) v->promote = false;
  }
  xqc_db_t *db = c->db;
  xqc_match_row_t row = {v->match_id, v->cand, v->best, v->w, v->d, v->l, v->score, v->elo,
                         v->promote ? "promoted" : "rejected"};
  int rc = xqc_db_begin(db);
  if (rc == 0) rc = xqc_db_add_match(db, &row);
  if (rc == 0) rc = xqc_store_match_closed(db, v->match_id);
  if (rc == 0 && v->promote) rc = xqc_db_set_net_state(db, v->best, "retired", c->best_elo);
  if (rc == 0)
    rc = xqc_db_set_net_state(db, v->cand, v->promote ? "best" : "rejected",
                              v->promote ? v->new_elo : c->best_elo + v->elo);
  if (rc == 0 && v->promote)
    rc = xqc_db_add_promotion(db, v->cand, v->best, v->step, v->match_id, v->score,
                              v->new_elo);
  if (rc == 0) rc = xqc_db_commit(db);
  if (rc < 0) {
    char why[200];
    xqc_db_cause(db, why, sizeof why);
    snprintf(v->cause, sizeof v->cause, "%s/campaign.db: %s", c->dir, why);
    xqc_db_rollback(db);
  }
  return rc;
}

/* After v is durable: promotions.log, Status.last_gating, the best net in memory, the PUB
 * announcement, the net files, the anchors; then the match closes and a waiting candidate
 * opens the next one. */
static void announce_verdict(xqc_t *c, uint64_t now) {
  xqc_gate_verdict_t *v = &c->verdict;
  xqc_gate_t *g = &c->gate;
  xq_errbuf_t eb;
  char line[600];
  snprintf(line, sizeof line,
           "{\"net\":\"%016llx\",\"parent\":\"%016llx\",\"step\":%lld,\"match\":%llu,"
           "\"w\":%lld,\"d\":%lld,\"l\":%lld,\"score\":%.4f,\"match_elo\":%.1f,"
           "\"elo\":%.1f,\"promoted\":%s,\"mode\":\"%s\",\"time\":%lld,"
           "\"games\":%llu,\"positions\":%llu}",
           (unsigned long long)v->cand, (unsigned long long)v->best, (long long)v->step,
           (unsigned long long)v->match_id, (long long)v->w, (long long)v->d, (long long)v->l,
           v->score, v->elo, v->promote ? v->new_elo : c->best_elo,
           v->promote ? "true" : "false", xqc_gating_name(c->cfg.gating), (long long)time(NULL),
           (unsigned long long)c->games, (unsigned long long)c->positions);
  if (xqc_campaign_log_line(c->dir, "promotions.log", line, &eb) < 0)
    XQ_LOGE(COMP, "promotions.log not written; campaign.db holds the decision (xqz promotions"
            " reads it) reason=\"%s\"", eb.msg);
  describe(c, v->cand, v->w, v->d, v->l, v->score, v->promote ? "promoted" : "rejected");
  if (v->promote) {
    c->best = v->cand;
    c->best_elo = v->new_elo;
    c->promotions++;
    publish_announce(c, c->gate.cand_parent);
    xqc_anchor_schedule(c);
  }
  xqc_net_files_decided(c->dir, v->cand, v->promote, c->cfg.keep_rejected_nets);
  if (v->tries)
    XQ_LOGI(COMP, "gating decision stored after waiting for campaign.db; now announced"
            " match=%llu tries=%d waited_ms=%llu", (unsigned long long)v->match_id, v->tries + 1,
            (unsigned long long)(now - v->since_ms));
  XQ_LOGI(COMP, "gating decided %s", c->last_gating);
  memset(v, 0, sizeof *v);
  xqc_gate_close(g);
  if (c->queued_cand) {
    uint64_t q = c->queued_cand;
    c->queued_cand = 0;
    open_match(c, q, c->best, c->queued_step);
  }
}

/* Tries to store the waiting decision (when its retry is due) and announces it once
 * stored; a failure is logged with its cause, then retried later from the timer. */
static void settle(xqc_t *c, uint64_t now) {
  xqc_gate_verdict_t *v = &c->verdict;
  if (!v->active || now < v->next_try_ms) return;
  if (store_verdict(c, v) == 0) {
    announce_verdict(c, now);
    return;
  }
  v->tries++;
  uint64_t wait = 100ull << (v->tries < 5 ? v->tries : 5);
  if (wait > 2000) wait = 2000;
  v->next_try_ms = now + wait;
  if (v->tries == 1 || v->tries % 30 == 0)
    XQ_LOGE(COMP, "gating decision not stored: it waits, not announced, and is retried every"
            " %llu ms until campaign.db takes it. If another program holds the database"
            " (a sqlite3 shell inside a transaction), end its transaction; if the disk is"
            " full, free space match=%llu candidate=%016llx decision=%s tries=%d"
            " waited_ms=%llu cause=\"%s\"", (unsigned long long)wait,
            (unsigned long long)v->match_id, (unsigned long long)v->cand,
            v->promote ? "promote" : "reject", v->tries,
            (unsigned long long)(now - v->since_ms), v->cause);
}

/* The gate decided d: the decision is kept (gating.h) and stored, then announced. */
static void close_match(xqc_t *c, xqc_gate_decision_t d) {
  xqc_gate_t *g = &c->gate;
  xqc_gate_verdict_t *v = &c->verdict;
  double score, elo;
  xqc_gate_score(g, &score, &elo);
  uint64_t now = xqc_now_ms();
  *v = (xqc_gate_verdict_t){.active = true, .promote = d == XQC_GATE_PROMOTE,
                            .match_id = g->match_id, .cand = g->cand, .best = g->best,
                            .step = g->cand_step, .w = g->w, .d = g->d, .l = g->l,
                            .score = score, .elo = elo, .new_elo = c->best_elo + elo,
                            .since_ms = now};
  settle(c, now);
}

/* Whether campaign.db is still the file opened at start. A database deleted or replaced
 * under a running coordinator takes every later write with it (they go to the old file):
 * this is said loudly (at once, then once a minute), a copy of the live database is
 * written beside it (campaign.db.rescue) so nothing the coordinator knows is lost, and
 * gating decisions wait (store_verdict) until the file is back. */
static void watch_db(xqc_t *c, uint64_t now) {
  uint64_t dev = 0, ino = 0;
  bool same = xqc_campaign_db_id(c->dir, &dev, &ino) == 0 && dev == c->db_dev &&
              ino == c->db_ino;
  static uint64_t last_log_ms;
  if (same) {
    if (c->db_lost)
      XQ_LOGI(COMP, "campaign.db is back (the file opened at start); decisions are stored"
              " again file=%s/campaign.db", c->dir);
    c->db_lost = false;
    return;
  }
  if (c->db_lost && now - last_log_ms < 60000) return;
  bool first = !c->db_lost;
  c->db_lost = true;
  last_log_ms = now;
  char rescue[1024] = "";
  if (first) {
    xq_errbuf_t eb;
    snprintf(rescue, sizeof rescue, "%s/campaign.db.rescue", c->dir);
    if (xqc_db_backup(c->db, rescue, &eb) < 0) {
      XQ_LOGE(COMP, "cannot write a rescue copy of campaign.db error=\"%s\"", eb.msg);
      rescue[0] = 0;
    }
  }
  XQ_LOGE(COMP, "campaign.db was %s while the coordinator runs: its writes go to the file"
          " opened at start, which a restart would not find, and gating decisions wait."
          " Recover: put the original file back (mv it back to campaign.db), or stop the"
          " coordinator and rename campaign.db.rescue (a copy of the live database, written"
          " when this was found) to campaign.db before starting it again file=%s/campaign.db"
          " rescue=%s", dev || ino ? "replaced by another file" : "deleted or moved away",
          c->dir, rescue[0] ? rescue : "(see earlier lines)");
}

void xqc_promote_candidate_lost(xqc_t *c, const char *why) {
  if (!c->gate.open || c->verdict.active) return;
  XQ_LOGW(COMP, "the open match's candidate cannot be served: the match closes with it"
          " rejected, and gating moves on match=%llu candidate=%016llx why=\"%s\"",
          (unsigned long long)c->gate.match_id, (unsigned long long)c->gate.cand, why);
  close_match(c, XQC_GATE_REJECT);
}

void xqc_promote_best_lost(xqc_t *c, const char *why) {
  uint64_t bad = c->best, prev = 0;
  double prev_elo = 0;
  xq_errbuf_t eb = {{0}};
  if (xqc_nets_previous_best(c->db, c->dir, bad, &prev, &prev_elo, &eb) < 0) {
    XQ_LOGE(COMP, "the best net cannot be served and no earlier best net is intact: restore"
            " nets/%016llx.xqzn from a backup (or a worker's cache of it) why=\"%s\""
            " error=\"%s\"", (unsigned long long)bad, why, eb.msg);
    return;
  }
  xqc_nets_record_fallback(c->db, c->dir, bad, prev, prev_elo, why);
  c->best = prev;
  c->best_elo = prev_elo;
  xqc_net_files_open(c->dir, prev);
  publish_announce(c, 0);
  /* An open match played the lost net: it is played again against the new best. */
  if (c->gate.open && !c->verdict.active && c->gate.best == bad) {
    uint64_t cand = c->gate.cand;
    int64_t step = c->gate.cand_step;
    stored(xqc_store_match_closed(c->db, c->gate.match_id), "match against a lost best");
    xqc_gate_close(&c->gate);
    open_match(c, cand, prev, step);
  }
}

void xqc_promote_tick(xqc_t *c, uint64_t now_ms) {
  if (now_ms - c->last_db_check_ms >= XQC_DB_CHECK_MS) {
    c->last_db_check_ms = now_ms;
    watch_db(c, now_ms);
  }
  settle(c, now_ms);
}

bool xqc_promote_score_pair(xqc_t *c, xqc_peer_t *p, uint64_t rq, xqc_gate_t *g,
                            const Xqz__ArenaResult *r) {
  if (!p->worker_id[0]) {
    /* No Hello on this connection yet: most likely a result the worker queued before a
     * restart of this coordinator, delivered ahead of its new Hello. Its identity is not
     * known, so it cannot be checked: the worker says Hello and sends it again. */
    xqc_reply_error(c, p->rid, p->rid_len, rq, XQ_ERROR_HELLO_FIRST,
                    "arena result from a connection that has not said Hello: say Hello,"
                    " then send it again");
    return false;
  }
  char who[XQC_IDENTITY_MAX];
  xqc_peer_identity(p, who, sizeof who);
  int pair = r->pair_index >= (uint32_t)g->npairs ? -1 : (int)r->pair_index;
  switch (xqc_gate_check(g, pair, who, xqc_now_ms(), xqc_promote_pair_deadline_ms(c))) {
  case XQC_GATE_TAKE: break;
  case XQC_GATE_STALE:
    /* Honest but late: the pair went to another worker, or was scored already. */
    send_ack(c, p, rq, r->pair_index, false, "pair re-issued or already scored");
    return false;
  case XQC_GATE_FORGED:
    xqc_peer_fault(c, p, "arena result for a pair not issued to this peer");
    send_ack(c, p, rq, r->pair_index, false, "pair not issued to this peer");
    return false;
  }
  if (xqc_gate_result(g, pair, r->result_a_red, r->result_a_black) < 0) {
    xqc_peer_fault(c, p, "bad arena result");
    send_ack(c, p, rq, r->pair_index, false, "bad pair index or result");
    return false;
  }
  stored(xqc_store_pair_result(c->db, g->match_id, pair, r->result_a_red, r->result_a_black),
         "pair result");
  send_ack(c, p, rq, r->pair_index, true, "");
  return true;
}

/* Whether the Hello (arg) lists pair `pair` of match_id among those its worker holds. */
static bool hello_holds(uint64_t match_id, int pair, void *arg) {
  const Xqz__Hello *h = arg;
  for (size_t i = 0; i < h->n_holding; i++)
    if (h->holding[i]->match_id == match_id && h->holding[i]->pair_index == (uint32_t)pair)
      return true;
  return false;
}

void xqc_promote_hello_holding(xqc_t *c, const xqc_peer_t *p, const Xqz__Hello *h) {
  if (!(h->features & XQ_FEATURE_HOLDING)) return; /* an older worker: deadlines only */
  char who[XQC_IDENTITY_MAX];
  xqc_peer_identity(p, who, sizeof who);
  if (h->n_holding > XQ_HOLDING_MAX) { /* each pair would scan the whole list */
    XQ_LOGW(COMP, "Hello lists more arena pairs than any worker holds; the list is ignored,"
            " its pairs wait for their deadline peer=%s listed=%zu max=%d", who, h->n_holding,
            XQ_HOLDING_MAX);
    return;
  }
  void *arg = (void *)(uintptr_t)h; /* read only */
  int n = xqc_gate_release(&c->gate, who, hello_holds, arg) +
          xqc_gate_release(&c->anchor.gate, who, hello_holds, arg) +
          xqc_round_release(c, who, hello_holds, arg);
  if (n)
    XQ_LOGI(COMP, "arena pairs handed out again: issued to this worker, its Hello does not"
            " hold them (their job was lost in a restart) worker=%s pairs=%d", who, n);
}

void xqc_promote_arena_result(xqc_t *c, xqc_peer_t *p, uint64_t rq, const Xqz__ArenaResult *r) {
  /* A decided match (also one waiting to be stored) takes no more results. */
  xqc_gate_t *g = c->gate.open && !c->verdict.active && r->match_id == c->gate.match_id
                    ? &c->gate
                : c->anchor.gate.open && r->match_id == c->anchor.gate.match_id ? &c->anchor.gate
                : NULL;
  if (!g && xqc_round_arena_result(c, p, rq, r)) return;
  if (!g) {
    /* A late result of a closed match: harmless, acknowledged and ignored. */
    send_ack(c, p, rq, r->pair_index, false, "match closed");
    return;
  }
  if (!xqc_promote_score_pair(c, p, rq, g, r)) return;
  if (g == &c->anchor.gate) {
    xqc_anchor_scored(c);
    return;
  }
  xqc_gate_decision_t d = xqc_gate_decide(&c->gate, &c->cfg);
  if (d != XQC_GATE_OPEN) close_match(c, d);
}

/* Whether net id is stored already, in nets/ (path) or among the rejected: 1 with the
 * same bytes as net, -1 with others, 0 if not stored. */
static int known_net(const xqc_t *c, const char *path, uint64_t id, const ProtobufCBinaryData *net) {
  char rejected[1024];
  snprintf(rejected, sizeof rejected, "%s/nets/" XQ_CAMPAIGN_REJECTED_DIR "/%016llx.xqzn",
           c->dir, (unsigned long long)id);
  const char *paths[2] = {path, rejected};
  for (int k = 0; k < 2; k++) {
    unsigned char *have = NULL;
    size_t have_len = 0;
    if (xq_read_file(paths[k], XQ_WIRE_MAX_MESSAGE, &have, &have_len, NULL) != 0) continue;
    bool same = have_len == net->len && memcmp(have, net->data, have_len) == 0;
    free(have);
    return same ? 1 : -1;
  }
  return 0;
}

void xqc_promote_candidate(xqc_t *c, xqc_peer_t *p, uint64_t rq, const Xqz__CandidateNet *cn) {
  xq_errbuf_t eb;
  nn_model_t *m = NULL;
  nn_file_meta_t meta;
  int rc = nn_file_decode(&m, &meta, cn->net.data, cn->net.len, &eb);
  nn_model_free(&m);
  if (rc < 0) {
    xqc_peer_fault(c, p, "candidate net does not decode");
    send_ack(c, p, rq, cn->step, false, eb.msg);
    return;
  }
  if (cn->step > XQC_STEP_MAX) {
    xqc_peer_fault(c, p, "candidate step out of range");
    send_ack(c, p, rq, cn->step, false, "step out of range");
    return;
  }
  if (meta.net_id == 0) {
    /* 0 is the "no net" value everywhere (Hello, jobs, announces): never a candidate. */
    xqc_peer_fault(c, p, "candidate with net id 0");
    send_ack(c, p, rq, cn->step, false, "net id 0 is the no-net value; give the net an id");
    return;
  }
  char why[400];
  if (!xqc_identity_candidate_ok(c, p, &meta, why, sizeof why)) {
    send_ack(c, p, rq, cn->step, false, why);
    return;
  }
  /* A population member's candidate: its slot checked and its checkpoint stored first. */
  int slot = c->cfg.population > 0
                 ? xqc_members_candidate_check(c, p, cn, meta.net_id, why, sizeof why) : -1;
  if (slot == XQ_EIO) {
    xqc_reply_error(c, p->rid, p->rid_len, rq, XQ_ERROR_INTERNAL, why);
    return;
  }
  if (slot < -1) {
    send_ack(c, p, rq, cn->step, false, why);
    return;
  }
  if ((int64_t)cn->step > c->trainer_step) c->trainer_step = (int64_t)cn->step;
  char path[1024];
  xqc_net_path(path, sizeof path, c->dir, meta.net_id);
  int known = known_net(c, path, meta.net_id, &cn->net);
  char state[16] = "";
  if (known > 0 && xqc_db_net_state(c->db, meta.net_id, state, sizeof state, NULL) < 0)
    snprintf(state, sizeof state, "?");
  if (known < 0 || (known > 0 && state[0])) {
    /* A trainer uploads a candidate again when its Ack was lost (a coordinator restart):
     * the same bytes are acknowledged again and change nothing, also after the gate
     * rejected them; another net under a known id is refused. */
    send_ack(c, p, rq, cn->step, known > 0, known > 0 ? "" : "net id already known");
    return;
  }
  /* known > 0 with no row: the file was stored, its row was not (campaign.db was locked
   * or full); the resend completes it. */
  const void *parts[1] = {cn->net.data};
  size_t sizes[1] = {cn->net.len};
  if (!known && xq_atomic_write(path, parts, sizes, 1, &eb) < 0) {
    XQ_LOGE(COMP, "cannot store candidate reason=\"%s\"", eb.msg);
    xqc_reply_error(c, p->rid, p->rid_len, rq, XQ_ERROR_INTERNAL, "cannot store the net");
    return;
  }
  if (xqc_db_add_net(c->db, meta.net_id, c->best, (int64_t)cn->step, "candidate") < 0) {
    /* Not acknowledged: the trainer resends it (trainer.c), and the resend stores the row. */
    char cause[200];
    xqc_db_cause(c->db, cause, sizeof cause);
    XQ_LOGE(COMP, "candidate not recorded in campaign.db; not acknowledged, the trainer"
            " resends it net=%016llx file=%s/campaign.db cause=\"%s\"",
            (unsigned long long)meta.net_id, c->dir, cause);
    xqc_reply_error(c, p->rid, p->rid_len, rq, XQ_ERROR_INTERNAL,
                    "campaign.db cannot take the candidate now; resend it later");
    return;
  }
  XQ_LOGI(COMP, "candidate received net=%016llx step=%llu bytes=%zu",
          (unsigned long long)meta.net_id, (unsigned long long)cn->step, cn->net.len);
  if (slot >= 0) {
    /* A member's candidate: the population's round rates it; the leader's is gated. */
    xqc_members_candidate_stored(c, slot, meta.net_id, (int64_t)cn->step);
    send_ack(c, p, rq, cn->step, true, "");
    return;
  }
  send_ack(c, p, rq, cn->step, true, "");
  xqc_promote_gate_net(c, meta.net_id, (int64_t)cn->step);
}

void xqc_promote_gate_net(xqc_t *c, uint64_t net, int64_t step) {
  if (c->gate.open) {
    c->queued_cand = net;
    c->queued_step = step;
    return;
  }
  open_match(c, net, c->best, step);
}
