/*
 * guard.h: what the ROUTER lets a connection cost and claim, checked before a message is
 * dispatched (issue 47).
 *
 * Routing ids: libzmq's ROUTER names a peer that sets no ZMQ_ROUTING_ID with 0x00 and a
 * 32-bit counter, and in libzmq 4.3.4 (also its master in 2026) it asserts when that
 * counter reaches an id a client has claimed for itself (router.cpp identify_peer ->
 * add_out_pipe: "Assertion failed: ok (src/socket_base.cpp:2128)"). The counter starts at
 * libc rand()'s first values (random.cpp generate_random; seed_random is never called), so
 * without a seed it starts at the same id in every process. xqc_guard_seed_routing_ids seeds
 * rand() from getrandom before the ROUTER is made, so the next ids cannot be guessed; the
 * loop turns ZMQ_ROUTER_HANDOVER off, so an id in use cannot be taken over; and a message
 * under an id that is not of libzmq's form (our worker, trainer and CLI never set one) is
 * refused. A routing id names one connection: a message under it from another address or
 * another CURVE key than its first message is refused and never speaks for that peer.
 *
 * Replies in flight: a peer that asks and never reads makes libzmq queue every reply.
 * xqc_guard_unread_ok estimates the bytes sent to a connection that its end has not taken
 * (bytes of replies sent minus the bytes its TCP stack acknowledged, from TCP_INFO on the
 * connection's descriptor), and the loop refuses another large reply above
 * XQC_GUARD_UNREAD_MAX.
 */
#ifndef XQC_GUARD_H
#define XQC_GUARD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "peers/peers.h"
#include "wire/wire.h"

/* Reply bytes a connection may leave unread before a request for a large reply (a net
 * chunk, a status, promotions) is refused: four net chunks. An honest worker asks for the
 * next chunk only after it read the last one, so it stays near 0. */
#define XQC_GUARD_UNREAD_MAX (4u << 20)
/* Messages the ROUTER queues per connection (ZMQ_SNDHWM; beyond it libzmq drops them): a
 * worker may have 256 games in flight and gets their acks in one burst, plus heartbeats
 * and jobs. */
#define XQC_GUARD_SNDHWM 512

/* Messages refused for their routing id: the count, and when the last log line said so. */
typedef struct {
  uint64_t refused, last_log_ms;
} xqc_guard_t;

/* Seeds libc's rand(), which libzmq uses for the ROUTER's first routing id, from
 * getrandom; call before the ROUTER socket is created. Returns 0 or XQ_EIO. */
int xqc_guard_seed_routing_ids(void);

/* true when a message under rid may be dispatched, given the peer table (npeers entries);
 * otherwise why (n bytes) says why it is refused: a routing id of another form than
 * libzmq's own (the client chose it), or one whose peer entry came from another address or
 * key. Counted in g and logged (rate-limited). */
bool xqc_guard_rid_ok(xqc_guard_t *g, const xqc_peer_t *peers, int npeers, const uint8_t *rid,
                      size_t rid_len, const xq_wire_head_t *head, char *why, size_t n);

/* true when the peer may be sent another large reply: its unread reply bytes (above) are at
 * most XQC_GUARD_UNREAD_MAX, or unknown (not TCP). *unread gets the estimate. */
bool xqc_guard_unread_ok(const xqc_peer_t *p, uint64_t *unread);

#endif
