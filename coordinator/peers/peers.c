/*
 * peers.c: what a peer is, without the coordinator's state (see peers.h): the identity
 * faults are counted against, the rule for a worker id, the worker id a message names.
 * The table of peers and every function on it are the top floor's (peer_table.c).
 */
#include "peers.h"

#include <stdio.h>
#include <string.h>

/* The identity of (key, worker id) as cutoff.h and the logs name it; without a worker id,
 * the connection (rid) stands in. */
void xqc_peer_identity_of(const char *key, const char *wid, const uint8_t *rid, size_t rid_len,
                          char *buf, size_t n) {
  size_t k = key[0] ? (size_t)snprintf(buf, n, "key:%s/", key) : 0;
  if (k >= n) return;
  if (wid && wid[0]) {
    snprintf(buf + k, n - k, "worker:%s", wid);
    return;
  }
  k += (size_t)snprintf(buf + k, n - k, "conn:");
  for (size_t i = 0; i < rid_len && k + 3 < n; i++)
    k += (size_t)snprintf(buf + k, n - k, "%02x", rid[i]);
}

void xqc_peer_identity(const xqc_peer_t *p, char *buf, size_t n) {
  xqc_peer_identity_of(p->key, p->worker_id, p->rid, p->rid_len, buf, n);
}

bool xqc_worker_id_ok(const char *wid) {
  size_t n = strlen(wid);
  if (n == 0 || n >= sizeof ((xqc_peer_t *)0)->worker_id) return false;
  for (const unsigned char *q = (const unsigned char *)wid; *q; q++)
    if (*q <= ' ' || *q > '~' || *q == '"' || *q == '\\') return false;
  return true;
}

/* The worker id a message speaks for (Hello, GameRecord), or NULL. */
const char *xqc_named_worker(const Xqz__Envelope *env) {
  switch (env->body_case) {
  case XQZ__ENVELOPE__BODY_HELLO: return env->hello->worker_id;
  case XQZ__ENVELOPE__BODY_GAME: return env->game->worker_id;
  default: return NULL;
  }
}

