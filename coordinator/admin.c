/*
 * admin.c: operator commands (AdminRequest): ban and unban a worker id or a CURVE key.
 * Only the admin role may send them (roles.h: with CURVE the keys in curve_admin_dir,
 * without CURVE loopback peers); dispatch checks it before xqc_admin_request. A ban takes effect at once: the
 * sender's queued acks are dropped, its positions leave the replay window, and its next
 * games are refused (ingest.c); its games stay in the segment files but are skipped when
 * the window is rebuilt. Unban accepts new games again (removed positions come back only
 * when the window is rebuilt at the next start).
 */
#include <stdio.h>
#include <string.h>

#include "coord.h"
#include "enrol.h"
#include "support/log.h"
#include "wire/messages.h"
#include "wire/wire.h"

#define COMP "admin"

void xqc_admin_reply(xqc_t *c, xqc_peer_t *p, uint64_t rq, bool ok, const char *msg,
                     const char *token) {
  Xqz__Envelope env;
  Xqz__AdminResult r;
  xq_msg_admin_result(&env, &r, ok, msg);
  if (token) r.token = (char *)token;
  env.request_id = rq;
  xqc_reply(c, p->rid, p->rid_len, &env);
}

static void ban(xqc_t *c, xqc_peer_t *p, uint64_t rq, const char *target, const char *reason,
                const char *by) {
  xq_errbuf_t eb;
  char msg[400];
  if (xqc_bans_add(&c->peers.bans, c->db, target, reason, &eb) < 0) {
    xqc_admin_reply(c, p, rq, false, eb.msg, NULL);
    return;
  }
  int acks = 0;
  uint64_t removed = xqc_ingest_purge_banned(c, &acks);
  xqc_admin_mark_workers(c);
  XQ_LOGW(COMP, "banned target=%s reason=\"%s\" by=%s positions_removed=%llu acks_dropped=%d"
          " window=%llu", target, reason, by, (unsigned long long)removed, acks,
          (unsigned long long)c->window.replay.count);
  snprintf(msg, sizeof msg, "banned %s: %llu positions removed from the window, %d pending "
           "acks dropped; its stored games stay on disk", target, (unsigned long long)removed,
           acks);
  xqc_admin_reply(c, p, rq, true, msg, NULL);
}

static void unban(xqc_t *c, xqc_peer_t *p, uint64_t rq, const char *target, const char *by) {
  xq_errbuf_t eb;
  char msg[300];
  int rc = xqc_bans_remove(&c->peers.bans, c->db, target, &eb);
  if (rc < 0) {
    xqc_admin_reply(c, p, rq, false, eb.msg, NULL);
    return;
  }
  if (rc == 0) {
    snprintf(msg, sizeof msg, "%.200s is not banned", target);
    xqc_admin_reply(c, p, rq, false, msg, NULL);
    return;
  }
  xqc_admin_mark_workers(c);
  XQ_LOGW(COMP, "unbanned target=%s by=%s", target, by);
  snprintf(msg, sizeof msg, "unbanned %.200s: its new games are accepted", target);
  xqc_admin_reply(c, p, rq, true, msg, NULL);
}

void xqc_admin_refuse(xqc_t *c, xqc_peer_t *p, uint64_t rq, const char *why) {
  xqc_admin_reply(c, p, rq, false, why, NULL);
}

void xqc_admin_mark_workers(xqc_t *c) {
  for (int i = 0; i < c->stats.workers.n; i++) {
    xqc_worker_t *w = &c->stats.workers.w[i];
    bool banned = xqc_bans_match(&c->peers.bans, w->id, w->key);
    if (banned != w->banned) {
      w->banned = banned;
      w->dirty = true;
    }
  }
}

void xqc_admin_request(xqc_t *c, xqc_peer_t *p, uint64_t rq, const Xqz__AdminRequest *r) {
  char by[XQC_IDENTITY_MAX];
  xqc_peer_identity(p, by, sizeof by);
  const char *target = r->target ? r->target : "";
  const char *reason = r->reason ? r->reason : "";
  switch (r->action) {
  case XQZ__ADMIN_REQUEST__ACTION__ACTION_BAN: ban(c, p, rq, target, reason, by); break;
  case XQZ__ADMIN_REQUEST__ACTION__ACTION_UNBAN: unban(c, p, rq, target, by); break;
  case XQZ__ADMIN_REQUEST__ACTION__ACTION_ENROL_TOKEN: xqc_enrol_token(c, p, rq, r); break;
  default:
    xqc_peer_fault(c, p, "unknown admin action");
    xqc_admin_reply(c, p, rq, false, "unknown admin action", NULL);
    break;
  }
}
