/*
 * link.h: the worker's connection to the coordinator: a DEALER to its ROUTER (requests
 * and replies, one envelope per frame) and a SUB to its PUB (NetAnnounce), both with
 * CURVE when the worker has keys (--server-key, --key). The link
 * tracks when the coordinator last answered; the agent (agent.c) decides on timeouts.
 * Reconnecting closes and reopens the DEALER, so requests lost with the old connection
 * are resent by their owners, with a growing backoff (1 s doubling to 60 s). A socket
 * monitor reports when the DEALER's TCP connection is made again (the coordinator
 * restarted): the agent then says Hello again and resends everything unacknowledged.
 * Owned by one thread: ZeroMQ sockets are not thread-safe.
 */
#ifndef XQ_WORKER_LINK_H
#define XQ_WORKER_LINK_H

#include <stdint.h>

#include "support/error.h"
#include "wire/curve.h"
#include "xqz.pb-c.h"

typedef struct {
  void *ctx, *dealer, *sub;
  void *monitor;           /* PAIR receiving the DEALER's connection events */
  int connects;            /* TCP connections made by the current DEALER */
  int reconnected;         /* set when the DEALER connected again (peer restarted) */
  int handshake_failures;  /* ZMTP/CURVE handshakes failed since the last that succeeded */
  int auth_refused;        /* the last failure was the coordinator's ZAP refusing our key */
  int wrong_type;          /* the last failure: the peer closed during the handshake or
                            * refused our socket type (e.g. the coordinator's PUB port) */
  int conn_state;          /* current TCP connection: 0 handshaking, 1 done, 2 failed */
  char coord[256], pub[256];
  int64_t last_rx_ms;      /* last message from the coordinator (ROUTER side) */
  int64_t backoff_ms;      /* wait before the next reconnect */
  int64_t next_connect_ms; /* earliest time of the next reconnect */
  uint64_t next_request_id;
  int64_t reconnects;
  char version_error[256]; /* why the last XQ_EVERSION was returned */
  xq_curve_t curve;        /* CURVE keys for both sockets (curve.on = false: plain TCP) */
} xq_link_t;

/* curve may be NULL (plain TCP); it is copied. On failure (eb names the call that failed)
 * everything it made is closed again: no xq_link_close is needed. */
int xq_link_open(xq_link_t *l, const char *coord, const char *pub, const xq_curve_t *curve,
                 xq_errbuf_t *eb);
void xq_link_close(xq_link_t *l);
/* Reopens the DEALER (the SUB reconnects by itself); doubles the backoff. */
int xq_link_reconnect(xq_link_t *l, xq_errbuf_t *eb);
/* After a few failed handshakes in a row (XQ_LINK_HANDSHAKE_HINT_AFTER: the port answers,
 * the handshake does not), the likely cause and its fix in one sentence: the port is
 * another ZeroMQ socket (the coordinator's PUB port, router + 1), keys missing against a
 * CURVE coordinator, keys swapped or not the coordinator's, or this key not allowed; NULL
 * while handshakes succeed. Static storage, valid until the next call. */
#define XQ_LINK_HANDSHAKE_HINT_AFTER 3
const char *xq_link_handshake_hint(const xq_link_t *l);
/* Sends env (request_id filled in when 0); never blocks (a full queue drops: the owner
 * resends on its timeout). Returns 0 or XQ_EIO. */
int xq_link_send(xq_link_t *l, Xqz__Envelope *env);
/* Waits up to timeout_ms for one message on either socket. Returns 1 with *out set
 * (*from_pub tells which socket), 0 on timeout, or an error (a malformed message is
 * logged, dropped and reported as 0). XQ_EVERSION: the coordinator speaks another
 * protocol version (l->version_error says which); retrying cannot help. */
int xq_link_poll(xq_link_t *l, int timeout_ms, Xqz__Envelope **out, int *from_pub);

#endif
