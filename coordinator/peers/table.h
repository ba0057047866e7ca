/*
 * table.h: the peer room's state, one struct the coordinator holds (xqc_t.peers): the
 * table of connections (peers.h), who may connect and in which role (auth.h), the
 * identities cut off (cutoff.h), the bans (bans.h) and the routing ids refused (guard.h).
 * The functions on the table are the top floor's (peer_table.c), since they answer peers;
 * this room's modules each take the part they need.
 *
 * Ownership: the coordinator owns the struct; list is malloc'd (n used, cap allocated).
 */
#ifndef XQC_PEERS_TABLE_H
#define XQC_PEERS_TABLE_H

#include "peers/auth.h"
#include "peers/bans.h"
#include "peers/cutoff.h"
#include "peers/guard.h"
#include "peers/peers.h"

typedef struct {
  xqc_peer_t *list; /* (cap) n used: one per routing id heard from recently */
  int n, cap;
  xqc_auth_t auth;
  xqc_cutoff_t cutoff;
  xqc_bans_t bans;
  xqc_guard_t guard; /* messages under a routing id refused */
} xqc_peers_t;

#endif
