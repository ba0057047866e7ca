/*
 * peers.h: the coordinator's peers. A peer is one ROUTER routing id (one connection); it
 * carries the identity its messages speak for (its CURVE key, the worker id of its
 * Hello), its role, and the faults counted against it. Faults and cut-offs are kept per
 * identity in cutoff.h, so forgetting a silent peer never lifts a cut. The table itself
 * lives in xqc_t (coord.h); peers.c holds every function on it.
 */
#ifndef XQC_PEERS_H
#define XQC_PEERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wire/curve.h"

#define XQC_RID_MAX 255

typedef struct {
  uint8_t rid[XQC_RID_MAX];
  size_t rid_len;
  char worker_id[128];
  /* The peer's identity: its CURVE public key (Z85, the "User-Id" of its messages as set
   * by the ZAP handler); empty when CURVE is off. */
  char key[XQ_Z85_KEY_LEN + 1];
  int role;
  uint64_t last_seen_ms;
  uint64_t net_id, games_done;
  int64_t errors, rejected;
  bool hello, alive;
  bool cut;               /* its identity is cut off now (cutoff.h) */
  bool version_refused;   /* its protocol version was refused (logged once) */
} xqc_peer_t;

#endif
