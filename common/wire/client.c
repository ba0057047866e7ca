/* client.c: request/reply over a DEALER for the xqz CLI (see client.h). */
#include "wire/client.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <zmq.h>

#include "support/clock.h"
#include "wire/endpoint.h"
#include "wire/peer.h"
#include "wire/wire.h"

int xq_client_open(xq_client_t *cl, const char *addr, const xq_curve_t *curve, xq_errbuf_t *eb) {
  memset(cl, 0, sizeof *cl);
  snprintf(cl->addr, sizeof cl->addr, "%s", addr);
  cl->next_request_id = 1;
  int rc = xq_endpoint_check(addr, "the coordinator's address", eb);
  if (rc < 0) return rc;
  cl->ctx = zmq_ctx_new();
  if (!cl->ctx) return xq_err_set(eb, XQ_EIO, "zmq_ctx_new: %s", zmq_strerror(errno));
  rc = xq_peer_open(&cl->sock, cl->ctx, addr, curve, NULL, eb);
  if (rc < 0) xq_client_close(cl); /* nothing is left for the caller to close */
  return rc;
}

void xq_client_close(xq_client_t *cl) {
  xq_peer_close(&cl->sock);
  if (cl->ctx) zmq_ctx_term(cl->ctx);
  cl->ctx = NULL;
}

int xq_client_call(xq_client_t *cl, Xqz__Envelope *env, int timeout_ms, Xqz__Envelope **reply,
                   xq_errbuf_t *eb) {
  *reply = NULL;
  env->request_id = cl->next_request_id++;
  int rc = xq_wire_send(cl->sock, NULL, 0, env, 0);
  if (rc < 0) return xq_err_set(eb, rc, "send to %s: %s", cl->addr, zmq_strerror(errno));
  int64_t deadline = xq_clock_ms() + timeout_ms;
  for (;;) {
    int64_t left = deadline - xq_clock_ms();
    if (left <= 0) break;
    zmq_pollitem_t it = {cl->sock, 0, ZMQ_POLLIN, 0};
    if (zmq_poll(&it, 1, (long)left) < 0) {
      if (errno == EINTR) continue;
      return xq_err_set(eb, XQ_EIO, "poll: %s", zmq_strerror(errno));
    }
    if (!(it.revents & ZMQ_POLLIN)) continue;
    Xqz__Envelope *r = NULL;
    rc = xq_wire_recv(cl->sock, NULL, NULL, &r, ZMQ_DONTWAIT, eb);
    if (rc == XQ_EIO) continue;
    if (rc < 0) return rc; /* eb says why (e.g. a different protocol version) */
    if (r->request_id == env->request_id) {
      *reply = r;
      return 0;
    }
    xq_wire_free(&r); /* a late answer to an earlier request */
  }
  return xq_err_set(eb, XQ_EIO, "no answer from the coordinator at %s within %d ms (is it "
                    "running, is the address right, is this key allowed?)", cl->addr,
                    timeout_ms);
}
