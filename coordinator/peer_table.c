/*
 * peer_table.c: the peer table in xqc_t (peers/peers.h says what a peer is): finding a
 * routing id's peer, who owns a worker id, a peer's roles (roles.h; commands.c refuses a
 * request they do not allow), counting faults and cutting identities off (cutoff.h),
 * refusing a peer of another protocol version, and forgetting peers that went silent.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coord.h"
#include "peers/peers.h"
#include "peers/roles.h"
#include "support/log.h"
#include "wire/messages.h"
#include "wire/wire.h"

#define COMP "coordinator"

/* The live connection other than p, from another address, whose Hello named wid without
 * CURVE, or NULL. A connection from the owner's own address takes the id over: that is the
 * worker reconnecting (after a network cut its old connection still looks alive). */
static const xqc_peer_t *connection_owner(const xqc_t *c, const xqc_peer_t *p, const char *wid) {
  uint64_t now = xqc_now_ms();
  for (int i = 0; i < c->peers.n; i++) {
    const xqc_peer_t *q = &c->peers.list[i];
    if (q == p || !q->hello || q->key[0] || strcmp(q->worker_id, wid)) continue;
    if (p->address[0] && !strcmp(q->address, p->address)) continue;
    if (now - q->last_seen_ms <= (uint64_t)c->cfg.worker_timeout_ms) return q;
  }
  return NULL;
}

int xqc_peer_claim(xqc_t *c, xqc_peer_t *p, const char *wid, char *why, size_t n) {
  char shown[64];
  xq_log_escape(shown, sizeof shown, wid);
  if (!xqc_worker_id_ok(wid)) {
    snprintf(why, n, "worker id \"%s\" refused: a worker id is 1 to 127 printable ASCII"
             " characters without spaces, quotes or backslashes", shown);
    return XQ_EINVAL;
  }
  if (!p->key[0]) {
    if (!connection_owner(c, p, wid)) return 0;
    snprintf(why, n, "worker id %s is in use by a connection from another address: retry"
             " when it has been silent for worker_timeout_ms (%lld ms), or give this worker an"
             " --id of its own", wid, (long long)c->cfg.worker_timeout_ms);
    return XQ_EMISMATCH;
  }
  const char *owner = xqc_sources_key_of(&c->window.sources, wid);
  if (owner[0] && strcmp(owner, p->key)) {
    snprintf(why, n, "worker id %s belongs to another key (%.8s...): give this worker an"
             " --id of its own", wid, owner);
    return XQ_EMISMATCH;
  }
  if (owner[0]) return 0;
  int changed = 0;
  if (xqc_sources_get(&c->window.sources, wid, p->key, &changed) == XQC_SOURCE_NONE) {
    snprintf(why, n, "the coordinator is out of memory");
    return XQ_ENOMEM;
  }
  if (changed && xqc_db_worker_key_set(c->db, wid, p->key) < 0)
    XQ_LOGW(COMP, "cannot record the owner of a worker id; it is held until a restart only"
            " worker=%s key=%s", wid, p->key);
  return 0;
}

void xqc_peer_refuse_claim(xqc_t *c, xqc_peer_t *p, uint64_t rq, const char *why) {
  c->stats.claims_refused++;
  if (!p->claim_refused) {
    char id[XQC_IDENTITY_MAX];
    xqc_peer_identity(p, id, sizeof id);
    p->claim_refused = true;
    XQ_LOGW(COMP, "worker id refused (logged once per connection) peer=%s address=%s"
            " reason=\"%s\"", id, p->address, why);
  }
  xqc_reply_error(c, p->rid, p->rid_len, rq, XQ_ERROR_WORKER_ID, why);
}

unsigned xqc_peer_roles(xqc_t *c, const xqc_peer_t *p) {
  xqc_role_facts_t f = {c->peers.auth.on, xqc_auth_is_trainer(&c->peers.auth, p->key),
                        xqc_auth_is_admin(&c->peers.auth, p->key), p->address,
                        c->cfg.trainer_addresses, p->enrolling};
  return xqc_roles_of(&f);
}

bool xqc_peer_banned(const xqc_t *c, const xqc_peer_t *p) {
  return xqc_bans_match(&c->peers.bans, p->worker_id, p->key);
}

void xqc_peer_worker_sync(xqc_t *c, const xqc_peer_t *p, xqc_worker_t *w) {
  if (!w) return;
  if (p->key[0] && strcmp(w->key, p->key)) {
    snprintf(w->key, sizeof w->key, "%s", p->key);
    w->dirty = true;
  }
  bool banned = xqc_bans_match(&c->peers.bans, w->id, w->key);
  if (banned != w->banned) {
    w->banned = banned;
    w->dirty = true;
  }
}

static xqc_cutoff_limits_t cutoff_limits(const xqc_t *c) {
  xqc_cutoff_limits_t lim = {c->cfg.max_peer_errors, (uint64_t)c->cfg.fault_window_s * 1000u,
                             (uint64_t)c->cfg.cutoff_s * 1000u};
  return lim;
}

void xqc_peer_error(xqc_t *c, xqc_peer_t *p, const char *what) {
  char id[XQC_IDENTITY_MAX];
  xqc_peer_identity(p, id, sizeof id);
  p->errors++;
  if (what)
    XQ_LOGW(COMP, "bad message from peer peer=%s errors=%lld what=\"%s\"", id,
            (long long)p->errors, what);
  xqc_cutoff_limits_t lim = cutoff_limits(c);
  if (xqc_cutoff_fault(&c->peers.cutoff, id, xqc_now_ms(), &lim)) p->cut = true;
}

void xqc_peer_fault(xqc_t *c, xqc_peer_t *p, const char *what) {
  xqc_worker_t *w = xqc_workers_find(&c->stats.workers, p->worker_id);
  if (w) {
    w->faults++;
    w->dirty = true;
  }
  xqc_peer_error(c, p, what);
}

void xqc_peer_refuse_version(xqc_t *c, xqc_peer_t *p, const xq_wire_head_t *head) {
  char text[200], name[XQC_IDENTITY_MAX];
  xq_wire_version_text(text, sizeof text, head->version, "coordinator");
  if (!p->version_refused) {
    p->version_refused = true;
    xqc_peer_identity(p, name, sizeof name);
    XQ_LOGW(COMP, "refused peer: %s peer=%s", text, name);
  }
  xqc_peer_error(c, p, NULL);
  if (p->cut) return;
  Xqz__Envelope env;
  Xqz__Error e;
  xq_msg_error(&env, &e, XQ_ERROR_PROTOCOL_VERSION, text);
  env.version = head->version;
  env.request_id = head->request_id;
  xqc_reply(c, p->rid, p->rid_len, &env);
}

/* The index of the peer of routing id rid, added when new; -1 when out of memory. */
static int peer_get(xqc_t *c, const uint8_t *rid, size_t rid_len) {
  for (int i = 0; i < c->peers.n; i++)
    if (c->peers.list[i].rid_len == rid_len && memcmp(c->peers.list[i].rid, rid, rid_len) == 0)
      return i;
  if (c->peers.n == c->peers.cap) {
    int ncap = c->peers.cap ? c->peers.cap * 2 : 16;
    xqc_peer_t *np = realloc(c->peers.list, (size_t)ncap * sizeof *np);
    if (!np) return -1;
    c->peers.list = np;
    c->peers.cap = ncap;
  }
  xqc_peer_t *p = &c->peers.list[c->peers.n];
  memset(p, 0, sizeof *p);
  memcpy(p->rid, rid, rid_len);
  p->rid_len = rid_len;
  p->last_seen_ms = xqc_now_ms();
  return c->peers.n++;
}

int xqc_peers_admit(xqc_t *c, const uint8_t *rid, size_t rid_len, const xq_wire_head_t *head,
                    const Xqz__Envelope *env) {
  const char *key = head->user_id;
  int pi = rid_len ? peer_get(c, rid, rid_len) : -1;
  if (pi < 0) return -1;
  xqc_peer_t *p = &c->peers.list[pi];
  if (strcmp(p->key, key)) {
    /* A routing id handed over to a connection with another key is another peer. */
    if (p->key[0]) {
      uint64_t seen = p->last_seen_ms;
      memset(p, 0, sizeof *p);
      memcpy(p->rid, rid, rid_len);
      p->rid_len = rid_len;
      p->last_seen_ms = seen;
    }
    memcpy(p->key, key, sizeof p->key);
    /* Decided once per connection: after its key is enrolled it connects again as a worker. */
    p->enrolling = c->peers.auth.on && key[0] && !xqc_keyset_find(&c->peers.auth.allow, key);
  }
  if (head->peer_address[0]) memcpy(p->address, head->peer_address, sizeof p->address);
  p->fd = head->fd;
  uint64_t now = xqc_now_ms();
  p->last_seen_ms = now;
  char id[XQC_IDENTITY_MAX];
  xqc_peer_identity(p, id, sizeof id);
  p->cut = xqc_cutoff_active(&c->peers.cutoff, id, now);
  if (p->cut) return -1;
  if (p->enrolling && (!env || env->body_case != XQZ__ENVELOPE__BODY_ENROL_REQUEST)) {
    /* Let in only to enrol (auth.c): anything else is refused before dispatch and counted,
     * so the worker and observer roles every allowed key has are never this peer's. */
    const char *why = "not allowed: this key is not in the coordinator's curve_allow_dir;"
                      " while an enrolment token is open it may send EnrolRequest only";
    xqc_peer_fault(c, p, why);
    if (!p->cut) xqc_reply_error(c, rid, rid_len, head->request_id, XQ_ERROR_NOT_ALLOWED, why);
    return -1;
  }
  const char *named = env ? xqc_named_worker(env) : NULL;
  if (named && named[0] && strcmp(named, p->worker_id)) {
    /* A cut-off worker on a new connection is known by the (key,) worker id its Hello or
     * its games carry. */
    xqc_peer_identity_of(p->key, named, p->rid, p->rid_len, id, sizeof id);
    if (xqc_cutoff_active(&c->peers.cutoff, id, now)) return -1;
  }
  return pi;
}

void xqc_peers_expire(xqc_t *c, uint64_t now) {
  xqc_cutoff_limits_t lim = cutoff_limits(c);
  xqc_cutoff_expire(&c->peers.cutoff, now, &lim);
  /* Peers silent for ten timeouts are forgotten (a reconnecting worker gets a new routing
   * id); cut-offs are kept by identity (cutoff.h), so forgetting a peer does not lift one.
   * Queued acks hold their own copy of the routing id, so forgetting a peer never loses an
   * ack. */
  int kept = 0;
  for (int i = 0; i < c->peers.n; i++) {
    xqc_peer_t *p = &c->peers.list[i];
    uint64_t silent = now - p->last_seen_ms;
    bool alive = silent <= (uint64_t)c->cfg.worker_timeout_ms;
    /* Only a worker is expected to keep talking: a CLI request or a trainer between batch
     * requests (no worker id) going quiet is news to nobody. */
    if (p->alive && !alive && p->worker_id[0])
      XQ_LOGW(COMP, "worker silent, presumed gone; it is shown as not alive until it talks"
              " again worker=%s address=%s", p->worker_id, p->address[0] ? p->address : "-");
    p->alive = alive;
    if (silent > 10u * (uint64_t)c->cfg.worker_timeout_ms) continue;
    if (kept != i) c->peers.list[kept] = *p;
    kept++;
  }
  c->peers.n = kept;
}
