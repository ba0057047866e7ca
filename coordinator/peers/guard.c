/*
 * guard.c: routing ids and replies in flight (see guard.h).
 */
#include "guard.h"

#include <errno.h>
#include <linux/tcp.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>

#include "clock.h"
#include "support/log.h"

#define COMP "coordinator"

int xqc_guard_seed_routing_ids(void) {
  unsigned seed;
  if (getrandom(&seed, sizeof seed, 0) != (ssize_t)sizeof seed) return XQ_EIO;
  srand(seed);
  return 0;
}

/* libzmq's own routing ids: 0x00 then a 32-bit counter. */
static bool rid_generated(const uint8_t *rid, size_t rid_len) {
  return rid_len == 5 && rid[0] == 0;
}

/* The peer entry of rid, or NULL. */
static const xqc_peer_t *peer_of(const xqc_peer_t *peers, int npeers, const uint8_t *rid,
                                 size_t rid_len) {
  for (int i = 0; i < npeers; i++)
    if (peers[i].rid_len == rid_len && !memcmp(peers[i].rid, rid, rid_len)) return &peers[i];
  return NULL;
}

/* Counts a refused routing id; logs the first and then one a minute with the count. */
static void refused(xqc_guard_t *g, const xq_wire_head_t *head, const char *why) {
  g->refused++;
  uint64_t now = xqc_now_ms();
  if (g->refused > 1 && now - g->last_log_ms < 60000) return;
  g->last_log_ms = now;
  XQ_LOGW(COMP, "message refused: its routing id is not the connection's own (logged once a"
          " minute) address=%s key=%.8s refused=%llu reason=\"%s\"",
          head->peer_address[0] ? head->peer_address : "-",
          head->user_id[0] ? head->user_id : "-", (unsigned long long)g->refused, why);
}

bool xqc_guard_rid_ok(xqc_guard_t *g, const xqc_peer_t *peers, int npeers, const uint8_t *rid,
                      size_t rid_len, const xq_wire_head_t *head, char *why, size_t n) {
  if (!rid_generated(rid, rid_len)) {
    snprintf(why, n, "routing ids chosen by the client are refused: do not set"
             " ZMQ_ROUTING_ID (the coordinator names each connection itself)");
    refused(g, head, why);
    return false;
  }
  const xqc_peer_t *p = peer_of(peers, npeers, rid, rid_len);
  if (!p) return true;
  bool same_key = !strcmp(p->key, head->user_id);
  bool same_address = !p->address[0] || !strcmp(p->address, head->peer_address);
  if (same_key && same_address) return true;
  snprintf(why, n, "this routing id belongs to another connection (%s): reconnect without"
           " setting ZMQ_ROUTING_ID", same_key ? "another address" : "another key");
  refused(g, head, why);
  return false;
}

/* Bytes the TCP stack of fd has had acknowledged by the other end; false when unknown. */
static bool bytes_acked(int fd, uint64_t *acked) {
  struct tcp_info ti;
  socklen_t len = sizeof ti;
  memset(&ti, 0, sizeof ti);
  if (fd < 0 || getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) != 0) return false;
  if (len < offsetof(struct tcp_info, tcpi_bytes_acked) + sizeof ti.tcpi_bytes_acked)
    return false; /* a kernel before 4.1 */
  *acked = ti.tcpi_bytes_acked;
  return true;
}

bool xqc_guard_unread_ok(const xqc_peer_t *p, uint64_t *unread) {
  uint64_t acked = 0;
  *unread = 0;
  if (!bytes_acked(p->fd, &acked)) return true;
  /* The acknowledged bytes include the handshake, framing and the acks sent outside
   * dispatch, so this errs towards the peer. */
  *unread = p->sent_bytes > acked ? p->sent_bytes - acked : 0;
  return *unread <= XQC_GUARD_UNREAD_MAX;
}
