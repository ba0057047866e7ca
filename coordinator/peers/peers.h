/*
 * peers.h: the coordinator's peers. A peer is one ROUTER routing id (one connection); it
 * carries the identity its messages speak for (its CURVE key, the worker id of its
 * Hello), where it connects from (its roles follow from that, roles.h), and the faults
 * counted against it. Faults and cut-offs are kept per identity in cutoff.h, so forgetting
 * a silent peer never lifts a cut. The table itself lives in xqc_peers_t (table.h), and the
 * functions on it in the top floor's peer_table.c; peers.c holds those that need no
 * coordinator state.
 *
 * A worker id belongs to whoever claimed it first: with CURVE the first key to say Hello
 * or send a game under it (recorded in the campaign's worker_keys, so it survives
 * restarts), without CURVE the connection whose Hello named it, for as long as that
 * connection is alive (heard from within worker_timeout_ms), or until a connection from the
 * same IP address (the worker reconnecting) takes it over. Games under a worker id from
 * anyone else are refused, so (worker id, seq) is in effect (key, worker id, seq), and a
 * Hello under someone else's id gives nothing to charge faults to but the connection.
 */
#ifndef XQC_PEERS_H
#define XQC_PEERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wire/curve.h"
#include "xqz.pb-c.h"

#define XQC_RID_MAX 255

typedef struct {
  uint8_t rid[XQC_RID_MAX];
  size_t rid_len;
  char worker_id[128];
  /* The peer's identity: its CURVE public key (Z85, the "User-Id" of its messages as set
   * by the ZAP handler); empty when CURVE is off. */
  char key[XQ_Z85_KEY_LEN + 1];
  char address[64];       /* IP address it connects from ("" when not TCP) */
  int fd;                 /* its connection's descriptor (libzmq's; -1 unknown), guard.h */
  uint64_t sent_bytes;    /* bytes of the replies dispatch sent it (guard.h) */
  int role;               /* the role its Hello claims (statistics only: roles.h decides) */
  uint32_t features;      /* its Hello's XQ_FEATURE_* bits (0 before a Hello) */
  uint64_t last_seen_ms;
  uint64_t net_id, games_done;
  int64_t errors, rejected;
  bool hello, alive;
  bool cut;               /* its identity is cut off now (cutoff.h) */
  bool version_refused;   /* its protocol version was refused (logged once) */
  bool role_refused;      /* a request its roles do not allow was refused (logged once) */
  bool claim_refused;     /* a worker id it does not own was refused (logged once) */
  bool copy_refused;      /* a copy of a game in the window was refused (logged once) */
  bool enrolling;         /* with CURVE, its key was in no allow dir when it first spoke: let
                           * in while a token is open, it may send EnrolRequest only (enrol.h) */
} xqc_peer_t;

/* The identity faults and cut-offs are counted against (cutoff.h): "key:<Z85>/" before
 * the rest with CURVE, then "worker:<id>" when wid is given, else "conn:<rid in hex>". */
void xqc_peer_identity_of(const char *key, const char *wid, const uint8_t *rid, size_t rid_len,
                          char *buf, size_t n);
/* The same for peer p (its key, the worker id of its Hello, its routing id). */
void xqc_peer_identity(const xqc_peer_t *p, char *buf, size_t n);
/* The worker id a message speaks for (Hello, GameRecord), or NULL. */
const char *xqc_named_worker(const Xqz__Envelope *env);
/* true when wid may be a worker id: 1 to 127 bytes of printable ASCII without spaces,
 * quotes or backslashes (so it cannot forge a log field or a line). */
bool xqc_worker_id_ok(const char *wid);

#endif
