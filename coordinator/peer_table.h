/*
 * peer_table.h: the functions on the peer table (peer_table.c; the table is
 * peers/table.h's xqc_peers_t, a peer peers/peers.h's xqc_peer_t).
 * Top floor: the functions take the coordinator's state (coord.h, which includes this
 * header after xqc_t).
 */
#ifndef XQC_PEER_TABLE_H
#define XQC_PEER_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "peers/peers.h"
#include "peers/workers.h"
#include "wire/wire.h"
#include "xqz.pb-c.h"

typedef struct xqc_s xqc_t; /* coord.h */

/* The peer a message from routing id rid with header head (its CURVE key, "" without
 * CURVE, and its address) comes from: its index in c->peers.list, added when new; -1 when
 * the message is to be ignored (out of memory, or its identity is cut off). env is the
 * decoded message (NULL when it did not decode): without CURVE, the worker id it names is
 * checked for a cut too. */
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

#endif
