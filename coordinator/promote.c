/*
 * promote.c: the promotion lifecycle. A CandidateNet is stored (nets/<id>.xqzn and a
 * "candidate" row) and opens a gating match against the best net (one match at a time: a
 * candidate arriving during a match waits, the latest one winning). The match's pairs go
 * out as arena jobs; each ArenaResult is scored (gating.h) until the gate decides. A
 * decision writes the matches row and the promotions log; a promotion also makes the
 * candidate the best net and announces it on the PUB socket.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zmq.h>

#include "campaign.h"
#include "coord.h"
#include "identity.h"
#include "net_files.h"
#include "match_store.h"
#include "nn/nn_file.h"
#include "support/atomic_file.h"
#include "support/campaign_nets.h"
#include "support/log.h"
#include "wire/wire.h"

#define COMP "coordinator"

/* Answers an ArenaResult or a CandidateNet. */
static void send_ack(xqc_t *c, xqc_peer_t *p, uint64_t rq, uint64_t seq, bool ok,
                     const char *reason) {
  Xqz__Envelope env;
  Xqz__Ack a;
  xq_wire_init(&env);
  xqz__ack__init(&a);
  /* Empty worker id: this Ack answers an ArenaResult or a CandidateNet, never a game, so
   * a worker must not mistake it for the ack of a spooled game with the same seq. */
  a.worker_id = "";
  a.seq = seq;
  a.accepted = ok;
  a.reason = (char *)reason;
  env.request_id = rq;
  env.body_case = XQZ__ENVELOPE__BODY_ACK;
  env.ack = &a;
  xqc_reply(c, p->rid, p->rid_len, &env);
}

/* Logs a failed write of the open match: the match goes on, a restart would replay it. */
static void stored(int rc, const char *what) {
  if (rc < 0)
    XQ_LOGW(COMP, "open match not saved in campaign.db; it goes on, but a restart would play"
            " the unsaved part again (check the campaign disk) what=%s", what);
}

static void open_match(xqc_t *c, uint64_t cand, uint64_t parent, int64_t step) {
  xq_errbuf_t eb;
  uint64_t mid = c->next_match_id++;
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
  if (xqc_db_pending_candidate(c->db, &pend, &pend_step) < 0 || !pend) pend = 0;
  xqc_open_match_t m;
  bool found = false;
  if (xqc_store_match_find(c->db, "gating", &m, &found) < 0) found = false;
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
static uint64_t pair_deadline_ms(const xqc_t *c) { return (uint64_t)c->cfg.worker_timeout_ms * 2; }

bool xqc_promote_arena_job(xqc_t *c, const xqc_peer_t *p, Xqz__ArenaJob *aj, char *fen) {
  /* Every other job is an arena slot: a gating pair first, else an anchor pair. While a
   * gating match is open, one self-play slot in two goes to an anchor pair too, so that
   * back-to-back gating matches (one worker, frequent candidates) never starve the anchors
   * (measured: net 1 stayed unmeasured for 7 minutes of a quickstart without it); gating
   * keeps every arena slot. Anchor pairs only to workers that play them. */
  bool arena_slot = c->jobs_served & 1, anchor_slot = c->gate.open && c->jobs_served % 4 == 2;
  if (!arena_slot && !anchor_slot) return false;
  uint64_t now = xqc_now_ms();
  xqc_gate_t *g = &c->gate;
  int pair = arena_slot && g->open ? xqc_gate_next_pair(g, now, pair_deadline_ms(c)) : -1;
  if (pair < 0 && c->anchor.gate.open && (p->features & XQ_FEATURE_ANCHOR_JOBS)) {
    g = &c->anchor.gate;
    pair = xqc_gate_next_pair(g, now, pair_deadline_ms(c));
  }
  xq_errbuf_t eb;
  if (pair < 0 || xqc_gate_opening_fen(g, pair, fen, &eb) < 0) return false;
  char who[XQC_IDENTITY_MAX];
  xqc_peer_identity(p, who, sizeof who);
  xqc_gate_issue(g, pair, who, now);
  stored(xqc_store_pair_issued(c->db, g->match_id, pair, who), "pair issued");
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
  return true;
}

static void publish_announce(xqc_t *c) {
  xq_errbuf_t eb;
  if (xqc_nets_load(&c->nets, c->dir, c->best, &eb) < 0) {
    XQ_LOGE(COMP, "promoted net file unreadable reason=\"%s\"", eb.msg);
    return;
  }
  Xqz__Envelope env;
  Xqz__NetAnnounce a;
  xq_wire_init(&env);
  xqz__net_announce__init(&a);
  a.net_id = c->best;
  a.parent_id = c->gate.cand_parent;
  a.size = c->nets.size;
  a.file_crc32 = c->nets.crc;
  a.elo = c->best_elo;
  env.body_case = XQZ__ENVELOPE__BODY_NET_ANNOUNCE;
  env.net_announce = &a;
  int rc = xq_wire_send(c->pub, NULL, 0, &env, ZMQ_DONTWAIT);
  if (rc < 0) XQ_LOGW(COMP, "announce not published err=\"%s\"", xq_strerror(rc));
}

static void close_match(xqc_t *c, xqc_gate_decision_t d) {
  xqc_gate_t *g = &c->gate;
  double score, elo;
  xqc_gate_score(g, &score, &elo);
  bool promote = d == XQC_GATE_PROMOTE;
  xqc_match_row_t row = {g->match_id, g->cand, g->best, g->w, g->d, g->l, score, elo,
                         promote ? "promoted" : "rejected"};
  xqc_db_add_match(c->db, &row);
  stored(xqc_store_match_closed(c->db, g->match_id), "match decided");
  double new_elo = c->best_elo + elo;
  xq_errbuf_t eb;
  char line[600];
  snprintf(line, sizeof line,
           "{\"net\":\"%016llx\",\"parent\":\"%016llx\",\"step\":%lld,\"match\":%llu,"
           "\"w\":%lld,\"d\":%lld,\"l\":%lld,\"score\":%.4f,\"match_elo\":%.1f,"
           "\"elo\":%.1f,\"promoted\":%s,\"mode\":\"%s\",\"time\":%lld,"
           "\"games\":%llu,\"positions\":%llu}",
           (unsigned long long)g->cand, (unsigned long long)g->best, (long long)g->cand_step,
           (unsigned long long)g->match_id, (long long)g->w, (long long)g->d, (long long)g->l,
           score, elo, promote ? new_elo : c->best_elo, promote ? "true" : "false",
           xqc_gating_name(c->cfg.gating), (long long)time(NULL), (unsigned long long)c->games,
           (unsigned long long)c->positions);
  if (xqc_campaign_log_line(c->dir, "promotions.log", line, &eb) < 0)
    XQ_LOGE(COMP, "promotions.log not written reason=\"%s\"", eb.msg);
  describe(c, g->cand, g->w, g->d, g->l, score, promote ? "promoted" : "rejected");
  if (promote) {
    xqc_db_set_net_state(c->db, g->best, "retired", c->best_elo);
    xqc_db_set_net_state(c->db, g->cand, "best", new_elo);
    xqc_db_add_promotion(c->db, g->cand, g->best, g->cand_step, g->match_id, score, new_elo);
    c->best = g->cand;
    c->best_elo = new_elo;
    c->promotions++;
    publish_announce(c);
    xqc_anchor_schedule(c);
  } else {
    xqc_db_set_net_state(c->db, g->cand, "rejected", c->best_elo + elo);
  }
  xqc_net_files_decided(c->dir, g->cand, promote);
  XQ_LOGI(COMP, "gating decided %s", c->last_gating);
  xqc_gate_close(g);
  if (c->queued_cand) {
    uint64_t q = c->queued_cand;
    c->queued_cand = 0;
    open_match(c, q, c->best, c->queued_step);
  }
}

void xqc_promote_arena_result(xqc_t *c, xqc_peer_t *p, uint64_t rq, const Xqz__ArenaResult *r) {
  xqc_gate_t *g = c->gate.open && r->match_id == c->gate.match_id ? &c->gate
                : c->anchor.gate.open && r->match_id == c->anchor.gate.match_id ? &c->anchor.gate
                : NULL;
  if (!g) {
    /* A late result of a closed match: harmless, acknowledged and ignored. */
    send_ack(c, p, rq, r->pair_index, false, "match closed");
    return;
  }
  char who[XQC_IDENTITY_MAX];
  xqc_peer_identity(p, who, sizeof who);
  int pair = r->pair_index >= (uint32_t)g->npairs ? -1 : (int)r->pair_index;
  switch (xqc_gate_check(g, pair, who, xqc_now_ms(), pair_deadline_ms(c))) {
  case XQC_GATE_TAKE: break;
  case XQC_GATE_STALE:
    /* Honest but late: the pair went to another worker, or was scored already. */
    send_ack(c, p, rq, r->pair_index, false, "pair re-issued or already scored");
    return;
  case XQC_GATE_FORGED:
    xqc_peer_fault(c, p, "arena result for a pair not issued to this peer");
    send_ack(c, p, rq, r->pair_index, false, "pair not issued to this peer");
    return;
  }
  if (xqc_gate_result(g, pair, r->result_a_red, r->result_a_black) < 0) {
    xqc_peer_fault(c, p, "bad arena result");
    send_ack(c, p, rq, r->pair_index, false, "bad pair index or result");
    return;
  }
  stored(xqc_store_pair_result(c->db, g->match_id, pair, r->result_a_red, r->result_a_black),
         "pair result");
  send_ack(c, p, rq, r->pair_index, true, "");
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
  char why[400];
  if (!xqc_identity_candidate_ok(c, p, &meta, why, sizeof why)) {
    send_ack(c, p, rq, cn->step, false, why);
    return;
  }
  if ((int64_t)cn->step > c->trainer_step) c->trainer_step = (int64_t)cn->step;
  char path[1024];
  xqc_net_path(path, sizeof path, c->dir, meta.net_id);
  int known = known_net(c, path, meta.net_id, &cn->net);
  if (known) {
    /* A trainer uploads a candidate again when its Ack was lost (a coordinator restart):
     * the same bytes are acknowledged again and change nothing, also after the gate
     * rejected them; another net under a known id is refused. */
    send_ack(c, p, rq, cn->step, known > 0, known > 0 ? "" : "net id already known");
    return;
  }
  const void *parts[1] = {cn->net.data};
  size_t sizes[1] = {cn->net.len};
  if (xq_atomic_write(path, parts, sizes, 1, &eb) < 0) {
    XQ_LOGE(COMP, "cannot store candidate reason=\"%s\"", eb.msg);
    xqc_reply_error(c, p->rid, p->rid_len, rq, XQ_ERROR_INTERNAL, "cannot store the net");
    return;
  }
  xqc_db_add_net(c->db, meta.net_id, c->best, (int64_t)cn->step, "candidate");
  XQ_LOGI(COMP, "candidate received net=%016llx step=%llu bytes=%zu",
          (unsigned long long)meta.net_id, (unsigned long long)cn->step, cn->net.len);
  send_ack(c, p, rq, cn->step, true, "");
  if (c->gate.open) {
    c->queued_cand = meta.net_id;
    c->queued_step = (int64_t)cn->step;
    return;
  }
  open_match(c, meta.net_id, c->best, (int64_t)cn->step);
}
