/* link.c: DEALER + SUB connection to the coordinator (see link.h). */
#include "link.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zmq.h>

#include "support/log.h"
#include "wire/peer.h"
#include "wire/wire.h"
#include "support/clock.h"

#define BACKOFF_MIN_MS 1000
#define BACKOFF_MAX_MS 60000

/* The dealer's monitor (connects, handshakes, disconnects), set up before it connects so
 * no event is missed; without one the link still works, only those log lines are lost. */
static int open_monitor(void *dealer, void *arg, xq_errbuf_t *eb) {
  (void)eb;
  static int nmon;
  xq_link_t *l = arg;
  char ep[64];
  snprintf(ep, sizeof ep, "inproc://xqz-worker-monitor-%d", nmon++);
  int events = ZMQ_EVENT_CONNECTED | ZMQ_EVENT_HANDSHAKE_SUCCEEDED |
               ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL | ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL |
               ZMQ_EVENT_HANDSHAKE_FAILED_AUTH | ZMQ_EVENT_DISCONNECTED;
  if (zmq_socket_monitor(dealer, ep, events) == 0) {
    l->monitor = zmq_socket(l->ctx, ZMQ_PAIR);
    if (l->monitor && zmq_connect(l->monitor, ep)) {
      zmq_close(l->monitor);
      l->monitor = NULL;
    }
  }
  return 0;
}

static int open_dealer(xq_link_t *l, xq_errbuf_t *eb) {
  if (l->monitor) zmq_close(l->monitor);
  l->monitor = NULL;
  l->connects = 0;
  xq_peer_opts_t opts = {0};
  opts.set_sndhwm = true;
  opts.sndhwm = 10000;
  opts.before_connect = open_monitor;
  opts.arg = l;
  return xq_peer_open(&l->dealer, l->ctx, l->coord, &l->curve, &opts, eb);
}

static int link_open(xq_link_t *l, const char *coord, const char *pub, const xq_curve_t *curve,
                     xq_errbuf_t *eb) {
  memset(l, 0, sizeof *l);
  if (curve) l->curve = *curve;
  snprintf(l->coord, sizeof l->coord, "%s", coord);
  snprintf(l->pub, sizeof l->pub, "%s", pub);
  l->backoff_ms = BACKOFF_MIN_MS;
  l->next_request_id = 1;
  l->ctx = zmq_ctx_new();
  if (!l->ctx) return xq_err_set(eb, XQ_EIO, "zmq_ctx_new: %s", zmq_strerror(zmq_errno()));
  int rc = open_dealer(l, eb);
  if (rc) return rc;
  l->sub = zmq_socket(l->ctx, ZMQ_SUB);
  if (!l->sub)
    return xq_err_set(eb, XQ_EIO, "zmq_socket(SUB) for the coordinator's announcements: %s",
                      zmq_strerror(zmq_errno()));
  rc = xq_curve_apply_client(l->sub, &l->curve, eb);
  if (rc) return rc;
  if (xq_wire_socket_setup(l->sub) || zmq_setsockopt(l->sub, ZMQ_SUBSCRIBE, "", 0))
    return xq_err_set(eb, XQ_EIO, "socket options (ZMQ_SUBSCRIBE) on the announcements' socket:"
                      " %s", zmq_strerror(zmq_errno()));
  if (zmq_connect(l->sub, l->pub))
    return xq_err_set(eb, XQ_EIO, "zmq_connect(%s) for the coordinator's announcements: %s",
                      l->pub, zmq_strerror(zmq_errno()));
  l->last_rx_ms = xq_clock_ms();
  return 0;
}

int xq_link_open(xq_link_t *l, const char *coord, const char *pub, const xq_curve_t *curve,
                 xq_errbuf_t *eb) {
  int rc = link_open(l, coord, pub, curve, eb);
  if (rc) xq_link_close(l); /* what was made, freed: the sockets, then the context */
  return rc;
}

void xq_link_close(xq_link_t *l) {
  if (l->monitor) zmq_close(l->monitor);
  xq_peer_close(&l->dealer);
  if (l->sub) zmq_close(l->sub);
  if (l->ctx) zmq_ctx_term(l->ctx);
  l->dealer = l->sub = l->ctx = l->monitor = NULL;
  memset(&l->curve, 0, sizeof l->curve);
}

int xq_link_reconnect(xq_link_t *l, xq_errbuf_t *eb) {
  xq_peer_close(&l->dealer);
  int64_t now = xq_clock_ms();
  l->next_connect_ms = now + l->backoff_ms;
  l->backoff_ms = l->backoff_ms * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS : l->backoff_ms * 2;
  l->reconnects++;
  l->last_rx_ms = now;
  return open_dealer(l, eb);
}

int xq_link_send(xq_link_t *l, Xqz__Envelope *env) {
  if (!env->request_id) env->request_id = l->next_request_id++;
  return xq_wire_send(l->dealer, NULL, 0, env, ZMQ_DONTWAIT);
}

/* Drains the monitor: every event is a two-frame message (event + endpoint). */
static void drain_monitor(xq_link_t *l) {
  for (;;) {
    zmq_msg_t m;
    zmq_msg_init(&m);
    if (zmq_msg_recv(&m, l->monitor, ZMQ_DONTWAIT) < 0) {
      zmq_msg_close(&m);
      return;
    }
    int more = zmq_msg_more(&m);
    if (zmq_msg_size(&m) >= 2) {
      uint16_t ev;
      uint32_t value = 0;
      memcpy(&ev, zmq_msg_data(&m), 2);
      if (zmq_msg_size(&m) >= 6) memcpy(&value, (const char *)zmq_msg_data(&m) + 2, 4);
      if (ev == ZMQ_EVENT_CONNECTED) {
        if (++l->connects > 1) l->reconnected = 1;
        l->conn_state = 0;
      }
      if (ev == ZMQ_EVENT_HANDSHAKE_SUCCEEDED) {
        l->handshake_failures = 0;
        l->conn_state = 1;
      }
      if (ev & (ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL | ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL |
                ZMQ_EVENT_HANDSHAKE_FAILED_AUTH)) {
        l->handshake_failures++;
        l->conn_state = 2;
        l->auth_refused = ev == ZMQ_EVENT_HANDSHAKE_FAILED_AUTH;
        /* A peer that closes during the handshake (no detail) or refuses our socket type
         * (invalid metadata) is no ROUTER; a CURVE peer says "mechanism mismatch". */
        l->wrong_type = ev == ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL ||
                        (ev == ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL &&
                         value == ZMQ_PROTOCOL_ERROR_ZMTP_INVALID_METADATA);
      }
      if (ev == ZMQ_EVENT_DISCONNECTED && l->conn_state == 0) {
        /* Closed by the peer before any handshake result: a PUB socket does this to a
         * DEALER (libzmq 4.3 reports no failure on the DEALER's side). */
        l->handshake_failures++;
        l->conn_state = 2;
        l->auth_refused = 0;
        l->wrong_type = 1;
      }
    }
    zmq_msg_close(&m);
    while (more) {
      zmq_msg_init(&m);
      if (zmq_msg_recv(&m, l->monitor, ZMQ_DONTWAIT) < 0) more = 0;
      else more = zmq_msg_more(&m);
      zmq_msg_close(&m);
    }
  }
}

const char *xq_link_handshake_hint(const xq_link_t *l) {
  if (l->handshake_failures < XQ_LINK_HANDSHAKE_HINT_AFTER) return NULL;
  if (l->wrong_type && !l->curve.on) {
    static char hint[512];
    const char *colon = strrchr(l->coord, ':');
    long port = colon ? strtol(colon + 1, NULL, 10) : 0;
    if (port > 1)
      snprintf(hint, sizeof hint, "%s answers as another kind of ZeroMQ socket: this looks"
               " like the coordinator's PUB port (its ROUTER port + 1); give --coordinator"
               " %.*s:%ld", l->coord, (int)(colon - l->coord), l->coord, port - 1);
    else
      snprintf(hint, sizeof hint, "%s answers as another kind of ZeroMQ socket: this looks"
               " like the coordinator's PUB port (its ROUTER port + 1); give --coordinator"
               " the ROUTER port", l->coord);
    return hint;
  }
  if (l->auth_refused)
    return "the coordinator refuses this worker's key: copy this worker's .pub into the"
           " coordinator's curve_allow_dir (it re-reads the directory by itself)";
  if (!l->curve.on)
    return "the coordinator's port answers but the handshake fails: it probably uses CURVE;"
           " give --server-key (the coordinator's .pub) and --key (this worker's .secret,"
           " from xqz keygen)";
  return "the CURVE handshake fails: --server-key must be the coordinator's .pub and --key"
         " this worker's own .secret (not swapped, not another campaign's), and the"
         " coordinator must run with curve_secret_key";
}

int xq_link_poll(xq_link_t *l, int timeout_ms, Xqz__Envelope **out, int *from_pub) {
  *out = NULL;
  /* No dealer (its reconnect failed: the next one is due): fd -1 makes poll skip it. */
  zmq_pollitem_t items[3] = {{l->dealer, l->dealer ? 0 : -1, ZMQ_POLLIN, 0},
                             {l->sub, 0, ZMQ_POLLIN, 0}, {l->monitor, 0, ZMQ_POLLIN, 0}};
  int n = zmq_poll(items, l->monitor ? 3 : 2, timeout_ms);
  if (n < 0) return errno == EINTR ? 0 : XQ_EIO;
  if (l->monitor && (items[2].revents & ZMQ_POLLIN)) drain_monitor(l);
  for (int i = 0; i < 2; i++) {
    if (!(items[i].revents & ZMQ_POLLIN)) continue;
    xq_errbuf_t eb = {{0}};
    int rc = xq_wire_recv(i ? l->sub : l->dealer, NULL, NULL, out, ZMQ_DONTWAIT, &eb);
    if (rc == XQ_EVERSION) {
      snprintf(l->version_error, sizeof l->version_error, "%s", eb.msg);
      return rc;
    }
    if (rc) {
      if (rc != XQ_EIO) XQ_LOGW("worker", "dropped a malformed message from the coordinator error=\"%s\"", eb.msg);
      return 0;
    }
    *from_pub = i;
    if (!i) {
      l->last_rx_ms = xq_clock_ms();
      l->backoff_ms = BACKOFF_MIN_MS;
    }
    return 1;
  }
  return 0;
}
