/*
 * peer.h: one way to open a client connection to the coordinator. The worker (link.c), the
 * trainer, the CLI's request/reply (client.c) and `xqz bench coordinator`'s simulated peers
 * each open their DEALER here: the wire's socket options (xq_wire_socket_setup), CURVE when
 * curve->on, the caller's few extra options, then zmq_connect. A failure is one message
 * naming the call that failed and the coordinator's address.
 *
 * Ownership: the socket is the caller's (on the caller's context) from xq_peer_open until
 * xq_peer_close; on failure nothing is left open.
 */
#ifndef XQ_PEER_H
#define XQ_PEER_H

#include <stdbool.h>

#include "support/error.h"
#include "wire/curve.h"

/* What differs between the peers; zero-initialised options change nothing. */
typedef struct {
  bool set_sndhwm;   /* set ZMQ_SNDHWM to sndhwm (0: unlimited) */
  int sndhwm;
  bool set_rcvhwm;   /* set ZMQ_RCVHWM to rcvhwm (0: unlimited) */
  int rcvhwm;
  bool set_linger;   /* set ZMQ_LINGER to linger ms (the wire's own is 1000) */
  int linger;
  bool immediate;    /* ZMQ_IMMEDIATE: queue nothing while not connected */
  /* Called on the socket just before zmq_connect (a monitor, say); a negative return, with
   * eb set, fails the open. May be NULL. */
  int (*before_connect)(void *sock, void *arg, xq_errbuf_t *eb);
  void *arg;
} xq_peer_opts_t;

/* Opens a DEALER on ctx connected to addr (curve and opts may be NULL). 0 with *sock set;
 * XQ_EIO (or the hook's code) with *sock NULL and eb saying which call failed for addr. */
int xq_peer_open(void **sock, void *ctx, const char *addr, const xq_curve_t *curve,
                 const xq_peer_opts_t *opts, xq_errbuf_t *eb);
/* Closes *sock (NULL-safe) and sets it to NULL. */
void xq_peer_close(void **sock);

#endif
