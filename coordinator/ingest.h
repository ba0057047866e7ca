/*
 * ingest.h: games in, acks out (ingest.c).
 * Top floor: the functions take the coordinator's state (coord.h, which includes this
 * header after xqc_t).
 */
#ifndef XQC_INGEST_H
#define XQC_INGEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "peers/peers.h"
#include "support/error.h"
#include "xqz.pb-c.h"

typedef struct xqc_s xqc_t; /* coord.h */

/* Rebuilds the seen set and the replay window from the segment files. */
int xqc_ingest_open(xqc_t *c, xq_errbuf_t *eb);
void xqc_ingest_game(xqc_t *c, xqc_peer_t *p, uint64_t request_id, const Xqz__GameRecord *g);
/* fsyncs the segments and sends the queued acks. */
void xqc_ingest_flush(xqc_t *c);
/* After a ban: drops the queued acks of banned senders and their samples from the window.
 * Returns the number of positions removed; *acks_dropped gets the acks dropped. */
uint64_t xqc_ingest_purge_banned(xqc_t *c, int *acks_dropped);

#endif
