/*
 * loop.c: the coordinator's event loop. libuv watches the ROUTER's ZMQ_FD; because that
 * fd is edge-triggered, every wake-up (and every timer tick, since our own sends can
 * consume the edge) drains ZMQ_EVENTS/ZMQ_POLLIN until it is empty. One timer does fsync
 * batching (acks go out after the fsync), peer timeouts and the status line. SIGINT and
 * SIGTERM stop the loop; main.c then flushes and closes everything. Each message that
 * decodes, from a peer that is admitted (peers.c), goes to xqc_dispatch (commands.c): the
 * command table checks the sender's roles and calls the message's handler.
 */
#include <stdio.h>
#include <zmq.h>

#include "storage/campaign.h"
#include "commands.h"
#include "coord.h"
#include "members_wire.h"
#include "peers/guard.h"
#include "storage/net_files.h"
#include "peers/roles.h"
#include "status.h"
#include "support/log.h"
#include "web_routes.h"
#include "wire/endpoint.h"
#include "wire/wire.h"

#define COMP "coordinator"

static uint32_t count_workers(const xqc_t *c) {
  return xqc_workers_alive(&c->stats.workers, XQZ__ROLE__ROLE_WORKER, xqc_now_ms(),
                           (uint64_t)c->cfg.worker_timeout_ms);
}

/* Takes every message waiting on the ROUTER: routing ids checked (guard.h), peers admitted
 * (peers.c), versions and decoding checked, then each dispatched (commands.c). */
static void drain(xqc_t *c) {
  for (;;) {
    int ev = 0;
    size_t evlen = sizeof ev;
    if (zmq_getsockopt(c->router, ZMQ_EVENTS, &ev, &evlen) != 0 || !(ev & ZMQ_POLLIN)) return;
    uint8_t rid[XQC_RID_MAX];
    size_t rid_len = 0;
    Xqz__Envelope *env = NULL;
    xq_errbuf_t eb;
    eb.msg[0] = '\0';
    xq_wire_head_t head;
    int rc = xq_wire_recv_head(c->router, rid, &rid_len, &env, ZMQ_DONTWAIT, &head, &eb);
    if (rc == XQ_EIO) continue; /* EAGAIN or a vanished frame: look at ZMQ_EVENTS again */
    char why[200];
    if (!xqc_guard_rid_ok(&c->peers.guard, c->peers.list, c->peers.n, rid, rid_len, &head, why,
                          sizeof why)) {
      xq_wire_free(&env);
      xqc_reply_error(c, rid, rid_len, head.request_id, XQ_ERROR_NOT_ALLOWED, why);
      continue;
    }
    int pi = xqc_peers_admit(c, rid, rid_len, &head, rc == 0 ? env : NULL);
    if (pi < 0) {
      xq_wire_free(&env); /* out of memory, or a cut-off identity: ignored */
      continue;
    }
    xqc_peer_t *p = &c->peers.list[pi];
    if (rc == XQ_EVERSION) {
      xqc_peer_refuse_version(c, p, &head);
      continue;
    }
    if (rc < 0) {
      xqc_peer_fault(c, p, eb.msg[0] ? eb.msg : xq_strerror(rc));
      if (!p->cut)
        xqc_reply_error(c, rid, rid_len, 0, XQ_ERROR_MALFORMED,
                        eb.msg[0] ? eb.msg : xq_strerror(rc));
      continue;
    }
    xqc_dispatch(c, pi, env);
    xq_wire_free(&env);
  }
}

static void on_router(uv_poll_t *h, int status, int events) {
  (void)status;
  (void)events;
  drain(h->data);
}

static void status_line(xqc_t *c) {
  char gating[200], anchors[200];
  if (c->gate.open)
    snprintf(gating, sizeof gating, "match open, %lld of %d games",
             (long long)(c->gate.w + c->gate.d + c->gate.l), 2 * c->gate.npairs);
  else
    snprintf(gating, sizeof gating, "%s", c->last_gating);
  if (xqc_anchor_summary(c, anchors, sizeof anchors) < 0) anchors[0] = 0;
  char measuring[120] = "";
  const xqc_gate_t *ag = &c->anchor.gate;
  if (ag->open)
    snprintf(measuring, sizeof measuring, "vs %s, %lld of %d games", c->anchor.spec,
             (long long)(ag->w + ag->d + ag->l), 2 * ag->npairs);
  XQ_LOGI(COMP, "status games=%llu positions=%llu window=%llu workers=%u best=%016llx "
          "trainer_step=%lld served=%llu rejected=%llu duplicates=%llu copies=%llu"
          " refused_roles=%llu refused_ids=%llu bad_reports=%llu gating=\"%s\""
          " anchors=\"%s\" anchor_match=\"%s\"",
          (unsigned long long)c->games, (unsigned long long)c->positions,
          (unsigned long long)c->window.replay.count, count_workers(c), (unsigned long long)c->best,
          (long long)c->trainer_step, (unsigned long long)c->window.samples_served,
          (unsigned long long)c->rejected_games, (unsigned long long)c->duplicates,
          (unsigned long long)c->stats.replayed_games, (unsigned long long)c->stats.role_refusals,
          (unsigned long long)c->stats.claims_refused, (unsigned long long)c->stats.bad_reports,
          gating, anchors, measuring);
}

static void on_timer(uv_timer_t *t) {
  xqc_t *c = t->data;
  uint64_t now = xqc_now_ms();
  xqc_ingest_flush(c);
  xqc_status_rate_sample(c, now);
  xqc_status_balance_tick(c, now);
  xqc_status_throughput_tick(c, false);
  /* Worker statistics are worth a transaction a second, not one per fsync tick. */
  if (now - c->stats.last_workers_save_ms >= 1000) {
    c->stats.last_workers_save_ms = now;
    xqc_workers_save(&c->stats.workers, c->db);
  }
  if (now - c->last_status_ms >= (uint64_t)c->cfg.status_ms) {
    c->last_status_ms = now;
    status_line(c);
  }
  xqc_promote_tick(c, now); /* a gating decision waiting for campaign.db; its file's identity */
  xqc_peers_expire(c, now);
  xqc_members_tick(c, now); /* population slots of silent trainers freed */
  xqc_auth_drain(&c->peers.auth);
  drain(c); /* our sends may have consumed the fd's edge */
}

static void on_signal(uv_signal_t *s, int signum) {
  xqc_t *c = s->data;
  XQ_LOGI(COMP, "stopping signal=%d", signum);
  c->stopping = true;
  uv_stop(c->loop);
}

static void on_close(uv_handle_t *h) { (void)h; }

/* Closes what open_sockets made (NULL-safe), so a failed start leaks nothing. */
static void close_sockets(xqc_t *c) {
  if (c->router) zmq_close(c->router);
  if (c->pub) zmq_close(c->pub);
  c->router = c->pub = NULL;
  xqc_auth_unbind(&c->peers.auth);
  if (c->zctx) zmq_ctx_term(c->zctx);
  c->zctx = NULL;
}

/* The ZeroMQ side: the context, the ROUTER and the PUB with their options, the ZAP handler,
 * both binds. On failure everything made is closed again and eb says which step failed. */
static int open_sockets(xqc_t *c, xq_errbuf_t *eb) {
  int rc = 0;
  if (!(c->zctx = zmq_ctx_new()))
    return xq_err_set(eb, XQ_EIO, "zmq_ctx_new: %s", zmq_strerror(zmq_errno()));
  /* Before the ROUTER exists: its first routing id comes from rand() (guard.h). */
  if (xqc_guard_seed_routing_ids() < 0) {
    rc = xq_err_set(eb, XQ_EIO, "getrandom failed: cannot make routing ids unpredictable");
    goto fail;
  }
  c->router = zmq_socket(c->zctx, ZMQ_ROUTER);
  c->pub = zmq_socket(c->zctx, ZMQ_PUB);
  if (!c->router || !c->pub) {
    rc = xq_err_set(eb, XQ_EIO, "zmq sockets: %s", zmq_strerror(zmq_errno()));
    goto fail;
  }
  /* No handover: a connection may not take over a routing id in use (guard.h). A bounded
   * queue per connection: the unread bytes are bounded by the loop (reader_ok). */
  int off = 0, hwm = XQC_GUARD_SNDHWM;
  int64_t maxmsg = c->cfg.max_message_bytes;
  if (xq_wire_socket_setup(c->router) < 0 || xq_wire_socket_setup(c->pub) < 0 ||
      zmq_setsockopt(c->router, ZMQ_ROUTER_HANDOVER, &off, sizeof off) != 0 ||
      zmq_setsockopt(c->router, ZMQ_SNDHWM, &hwm, sizeof hwm) != 0 ||
      zmq_setsockopt(c->router, ZMQ_MAXMSGSIZE, &maxmsg, sizeof maxmsg) != 0) {
    rc = xq_err_set(eb, XQ_EIO, "zmq socket options: %s", zmq_strerror(zmq_errno()));
    goto fail;
  }
  /* The ZAP handler must be bound before the CURVE sockets accept anyone. */
  rc = xqc_auth_bind(&c->peers.auth, c->zctx, eb);
  if (rc == 0) rc = xqc_auth_apply(&c->peers.auth, c->router, eb);
  if (rc == 0) rc = xqc_auth_apply(&c->peers.auth, c->pub, eb);
  if (rc < 0) goto fail;
  if (!c->peers.auth.on && (!xqc_endpoint_is_loopback(c->cfg.router) ||
                      !xqc_endpoint_is_loopback(c->cfg.pub)))
    XQ_LOGW(COMP, "listening beyond this machine without CURVE: anyone who reaches the ports"
            " may send games and claim worker ids (admin and trainer requests are taken"
            " from loopback and trainer_addresses only); set curve_secret_key and"
            " curve_allow_dir on a shared network router=%s pub=%s", c->cfg.router,
            c->cfg.pub);
  if ((rc = xq_endpoint_check(c->cfg.router, "router", eb)) < 0 ||
      (rc = xq_endpoint_check(c->cfg.pub, "pub", eb)) < 0)
    goto fail;
  if (zmq_bind(c->router, c->cfg.router) != 0) {
    rc = xq_err_set(eb, XQ_EIO, "cannot bind router %s: %s (another coordinator?)",
                    c->cfg.router, zmq_strerror(zmq_errno()));
    goto fail;
  }
  if (zmq_bind(c->pub, c->cfg.pub) != 0) {
    rc = xq_err_set(eb, XQ_EIO, "cannot bind pub %s: %s", c->cfg.pub, zmq_strerror(zmq_errno()));
    goto fail;
  }
  return 0;
fail:
  close_sockets(c);
  return rc;
}

/* Closes every libuv handle watch_handles started and runs the loop until their close
 * callbacks ran; then the loop itself. */
static void close_handles(xqc_t *c) {
  uv_handle_t *h[] = {(uv_handle_t *)&c->router_poll, (uv_handle_t *)&c->timer,
                      (uv_handle_t *)&c->sigint, (uv_handle_t *)&c->sigterm};
  for (size_t i = 0; i < sizeof h / sizeof h[0]; i++)
    if (h[i]->loop && !uv_is_closing(h[i])) uv_close(h[i], on_close);
  xqc_auth_unwatch(&c->peers.auth);
  xqc_web_stop(c);
  uv_run(c->loop, UV_RUN_DEFAULT);
  uv_loop_close(c->loop);
}

/* The libuv side: the web server, the ROUTER's fd, the ZAP socket, the timer and the
 * signals. Each call is checked; on failure eb names it and close_handles undoes the rest. */
static int watch_handles(xqc_t *c, xq_errbuf_t *eb) {
  int fd, rc;
  size_t fdlen = sizeof fd;
  if (zmq_getsockopt(c->router, ZMQ_FD, &fd, &fdlen) != 0)
    return xq_err_set(eb, XQ_EIO, "zmq_getsockopt(ZMQ_FD) of the router: %s",
                      zmq_strerror(zmq_errno()));
  if (xqc_web_start(c, eb) < 0) return XQ_EIO;
#define UV_CHECK(call, what)                                                              \
  if ((rc = (call)) < 0)                                                                 \
    return xq_err_set(eb, XQ_EIO, "%s (%s): %s", #call, what, uv_strerror(rc))
  UV_CHECK(uv_poll_init(c->loop, &c->router_poll, fd), "the router's fd");
  c->router_poll.data = c;
  UV_CHECK(uv_poll_start(&c->router_poll, UV_READABLE, on_router), "the router's fd");
  if (xqc_auth_watch(&c->peers.auth, c->loop) < 0)
    return xq_err_set(eb, XQ_EIO, "cannot watch the ZAP handler's socket (logged above)");
  UV_CHECK(uv_timer_init(c->loop, &c->timer), "the fsync and status timer");
  c->timer.data = c;
  uint64_t tick = (uint64_t)c->cfg.fsync_ms;
  UV_CHECK(uv_timer_start(&c->timer, on_timer, tick, tick), "the fsync and status timer");
  UV_CHECK(uv_signal_init(c->loop, &c->sigint), "SIGINT");
  UV_CHECK(uv_signal_init(c->loop, &c->sigterm), "SIGTERM");
  c->sigint.data = c->sigterm.data = c;
  UV_CHECK(uv_signal_start(&c->sigint, on_signal, SIGINT), "SIGINT");
  UV_CHECK(uv_signal_start(&c->sigterm, on_signal, SIGTERM), "SIGTERM");
#undef UV_CHECK
  return 0;
}

int xqc_run(xqc_t *c, xq_errbuf_t *eb) {
  int rc = open_sockets(c, eb);
  if (rc < 0) return rc;
  c->loop = uv_default_loop();
  c->stats.start_ms = xqc_now_ms();
  xqc_status_rate_sample(c, c->stats.start_ms);
  if ((rc = watch_handles(c, eb)) < 0) {
    close_handles(c);
    close_sockets(c);
    return rc;
  }
  xqc_promote_resume(c);
  xqc_round_resume(c);
  xqc_campaign_record_endpoints(c->dir, &c->cfg);
  xqc_net_files_open(c->dir, c->best);
  xqc_anchor_resume(c);
  xqc_status_throughput_tick(c, true); /* the counters as rebuilt from the segments */
  XQ_LOGI(COMP, "listening router=%s pub=%s best=%016llx curve=%s campaign=%016llx",
          c->cfg.router, c->cfg.pub, (unsigned long long)c->best, c->peers.auth.on ? "on" : "off",
          (unsigned long long)c->campaign_id);
  status_line(c);
  drain(c);
  uv_run(c->loop, UV_RUN_DEFAULT);
  /* Stopping: make everything acknowledged durable, send the last acks, close. */
  xqc_ingest_flush(c);
  xqc_workers_save(&c->stats.workers, c->db);
  xqc_status_throughput_tick(c, true);
  status_line(c);
  close_handles(c);
  close_sockets(c);
  xqc_nets_close(&c->nets);
  return 0;
}
