/* peer.c: a DEALER connected to the coordinator (see peer.h). */
#include "wire/peer.h"

#include <stddef.h>
#include <zmq.h>

#include "wire/wire.h"

/* Sets an int option; true on success. */
static bool set_int(void *sock, int opt, int v) {
  return zmq_setsockopt(sock, opt, &v, sizeof v) == 0;
}

int xq_peer_open(void **sock, void *ctx, const char *addr, const xq_curve_t *curve,
                 const xq_peer_opts_t *opts, xq_errbuf_t *eb) {
  static const xq_peer_opts_t none;
  if (!opts) opts = &none;
  *sock = zmq_socket(ctx, ZMQ_DEALER);
  if (!*sock)
    return xq_err_set(eb, XQ_EIO, "zmq_socket(DEALER) for the coordinator at %s failed: %s",
                      addr, zmq_strerror(zmq_errno()));
  const char *call = NULL; /* the call that failed */
  xq_errbuf_t ceb = {{0}};
  if (xq_wire_socket_setup(*sock)) call = "socket options";
  else if (opts->set_sndhwm && !set_int(*sock, ZMQ_SNDHWM, opts->sndhwm))
    call = "zmq_setsockopt(ZMQ_SNDHWM)";
  else if (opts->set_rcvhwm && !set_int(*sock, ZMQ_RCVHWM, opts->rcvhwm))
    call = "zmq_setsockopt(ZMQ_RCVHWM)";
  else if (opts->set_linger && !set_int(*sock, ZMQ_LINGER, opts->linger))
    call = "zmq_setsockopt(ZMQ_LINGER)";
  else if (opts->immediate && !set_int(*sock, ZMQ_IMMEDIATE, 1))
    call = "zmq_setsockopt(ZMQ_IMMEDIATE)";
  if (!call && xq_curve_apply_client(*sock, curve, &ceb) < 0) {
    xq_peer_close(sock);
    return xq_err_set(eb, XQ_EIO, "CURVE keys for the coordinator at %s: %s", addr, ceb.msg);
  }
  if (!call && opts->before_connect) {
    int rc = opts->before_connect(*sock, opts->arg, eb);
    if (rc < 0) {
      xq_peer_close(sock);
      return rc;
    }
  }
  if (!call && zmq_connect(*sock, addr)) call = "zmq_connect";
  if (call) {
    int e = zmq_errno();
    xq_peer_close(sock);
    return xq_err_set(eb, XQ_EIO, "%s for the coordinator at %s failed: %s", call, addr,
                      zmq_strerror(e));
  }
  return 0;
}

void xq_peer_close(void **sock) {
  if (*sock) zmq_close(*sock);
  *sock = NULL;
}
