/*
 * auth.h: CURVE on the coordinator's sockets and the ZAP handler that decides who may
 * connect. With curve_secret_key set, the ROUTER and the PUB are CURVE servers; libzmq
 * asks the ZAP handler (a REP socket at inproc://zeromq.zap.01 on the coordinator's
 * context, serviced in the libuv loop like the ROUTER) about every new connection. A
 * client is allowed when its public key's .pub file is in curve_allow_dir; the reply's
 * user id is the key (Z85), which every message from that connection then carries as its
 * "User-Id" (xq_wire_head_t.user_id from xq_wire_recv_head). Each refusal is logged at most once per key per minute.
 * While an enrolment token is open (enrol_until_s), an unknown key is let in too, with its
 * key as user id; such a connection may only enrol (roles.h, peers.c).
 * Keys in curve_admin_dir are admins and keys in curve_trainer_dir trainers (every allowed
 * key when that is unset, as before it existed); roles.h says what each role may send.
 *
 * Ownership: the caller owns the struct. Order: xqc_auth_open (at start, so a wrong
 * setting stops the coordinator at once), xqc_auth_bind on the zmq context, xqc_auth_watch
 * once the loop exists; xqc_auth_unwatch and xqc_auth_unbind before the context is
 * terminated; xqc_auth_close last (it also unbinds).
 */
#ifndef XQC_AUTH_H
#define XQC_AUTH_H

#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "config.h"
#include "keyset.h"
#include "wire/curve.h"

#define XQC_AUTH_REFUSAL_SLOTS 64

typedef struct {
  bool on;              /* CURVE enabled */
  xq_curve_t curve;     /* the coordinator's own keys */
  xqc_keyset_t allow;   /* curve_allow_dir */
  xqc_keyset_t admin;   /* curve_admin_dir (n = 0 and dir empty when unset) */
  xqc_keyset_t trainer; /* curve_trainer_dir (likewise) */
  bool admin_dir_set, trainer_dir_set;
  void *zap;            /* REP socket, NULL when CURVE is off */
  uv_poll_t poll;
  bool watching;
  uint64_t allowed, refused; /* handshakes answered */
  int64_t enrol_until_s; /* unix seconds: until then a key in no allow dir is let in to enrol
                          * (an open token; enrol.h keeps it); 0: closed */
  struct {
    char key[XQ_Z85_KEY_LEN + 1];
    uint64_t logged_ms;
  } refusals[XQC_AUTH_REFUSAL_SLOTS]; /* last refusal logged per key (a small LRU) */
} xqc_auth_t;

/* Loads the keys named by cfg. Errors say which setting is wrong. */
int xqc_auth_open(xqc_auth_t *a, const xqc_config_t *cfg, xq_errbuf_t *eb);
/* When CURVE is on, binds the ZAP handler on zctx; before the ROUTER and the PUB bind. */
int xqc_auth_bind(xqc_auth_t *a, void *zctx, xq_errbuf_t *eb);
void xqc_auth_unbind(xqc_auth_t *a);
/* Makes sock a CURVE server (no-op when CURVE is off); before bind. */
int xqc_auth_apply(xqc_auth_t *a, void *sock, xq_errbuf_t *eb);
/* Services the ZAP socket from loop. Returns 0, or XQ_EIO after logging the call that failed
 * (zmq_getsockopt(ZMQ_FD), uv_poll_init or uv_poll_start): the handshakes of CURVE peers
 * would go unanswered, so the caller stops. */
int xqc_auth_watch(xqc_auth_t *a, uv_loop_t *loop);
/* Answers every pending ZAP request (the fd is edge-triggered: also call from a timer). */
void xqc_auth_drain(xqc_auth_t *a);
/* With CURVE: true when the key (a message's User-Id) is in curve_admin_dir. */
bool xqc_auth_is_admin(xqc_auth_t *a, const char *user_id);
/* With CURVE: true when the key is in curve_trainer_dir (any key when that is unset). */
bool xqc_auth_is_trainer(xqc_auth_t *a, const char *user_id);
/* Stops watching (uv_close; run the loop once more afterwards). */
void xqc_auth_unwatch(xqc_auth_t *a);
void xqc_auth_close(xqc_auth_t *a);

#endif
