/*
 * loop.c: the coordinator's event loop. libuv watches the ROUTER's ZMQ_FD; because that
 * fd is edge-triggered, every wake-up (and every timer tick, since our own sends can
 * consume the edge) drains ZMQ_EVENTS/ZMQ_POLLIN until it is empty. One timer does fsync
 * batching (acks go out after the fsync), peer timeouts and the status line. SIGINT and
 * SIGTERM stop the loop; main.c then flushes and closes everything. Each message is
 * dispatched to its handler: the small ones are here; peers.c keeps the peer table,
 * nets.c serves net files, promote.c runs candidates and gating, ingest.c takes games,
 * admin.c bans.
 */
#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zmq.h>

#include "campaign.h"
#include "coord.h"
#include "guard.h"
#include "identity.h"
#include "net_files.h"
#include "roles.h"
#include "rules/fen.h"
#include "status.h"
#include "support/log.h"
#include "web.h"
#include "wire/endpoint.h"
#include "wire/wire.h"

#define COMP "coordinator"

uint64_t xqc_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

void xqc_reply(xqc_t *c, const uint8_t *rid, size_t rid_len, Xqz__Envelope *env) {
  int rc = xq_wire_send(c->router, rid, rid_len, env, ZMQ_DONTWAIT);
  if (rc < 0) XQ_LOGW(COMP, "reply not sent (peer gone or slow) err=\"%s\"", xq_strerror(rc));
  else c->reply_bytes += xqz__envelope__get_packed_size(env); /* per peer in dispatch */
}

void xqc_reply_error(xqc_t *c, const uint8_t *rid, size_t rid_len, uint64_t request_id,
                     unsigned code, const char *msg) {
  Xqz__Envelope env;
  Xqz__Error e;
  xq_wire_init(&env);
  xqz__error__init(&e);
  e.code = code;
  e.message = (char *)msg;
  env.request_id = request_id;
  env.body_case = XQZ__ENVELOPE__BODY_ERROR;
  env.error = &e;
  xqc_reply(c, rid, rid_len, &env);
}

static void fill_settings(const xqc_t *c, Xqz__SelfplaySettings *s) {
  const xqc_config_t *cfg = &c->cfg;
  xqc_self_balance_cfg_t sc = xqc_status_self_balance_cfg(c);
  xqz__selfplay_settings__init(s);
  s->sims = (uint32_t)xqc_self_balance_sims(&c->self_balance, &sc);
  s->fast_sims = (uint32_t)cfg->fast_sims;
  s->full_frac = (float)cfg->full_frac;
  s->max_plies = (uint32_t)cfg->max_plies;
  s->noise_frac = (float)cfg->noise_frac;
  s->dirichlet_alpha = (float)cfg->dirichlet_alpha;
  s->temp_plies = (uint32_t)cfg->temp_plies;
  s->temp_final = (float)cfg->temp_final;
  s->resign_threshold = (float)cfg->resign_threshold;
  s->no_resign_frac = (float)cfg->no_resign_frac;
  s->mate_probe = (uint32_t)cfg->mate_probe;
  s->search = (uint32_t)cfg->search; /* xqc_search_t is the wire value */
  s->gumbel_actions = (uint32_t)cfg->gumbel_actions;
}

/* Copies a peer's free text (host name, version) into out (n bytes) with every byte that
 * is not printable ASCII, and every quote or backslash, replaced by '?': it is stored,
 * shown by the views and logged inside quotes. */
static void clean_text(char *out, size_t n, const char *s) {
  size_t k = 0;
  for (const unsigned char *q = (const unsigned char *)(s ? s : ""); *q && k + 1 < n; q++)
    out[k++] = *q < ' ' || *q > '~' || *q == '"' || *q == '\\' ? '?' : (char)*q;
  out[k] = '\0';
}

static void on_hello(xqc_t *c, xqc_peer_t *p, uint64_t rq, const Xqz__Hello *h) {
  if (!xqc_identity_hello_ok(c, p, rq, h)) return;
  const char *wid = h->worker_id ? h->worker_id : "";
  char why[400];
  int rc = xqc_peer_claim(c, p, wid, why, sizeof why);
  if (rc == XQ_EINVAL) {
    xqc_peer_fault(c, p, why);
    xqc_reply_error(c, p->rid, p->rid_len, rq, XQ_ERROR_WORKER_ID, why);
    return;
  }
  if (rc < 0) {
    xqc_peer_refuse_claim(c, p, rq, why);
    return;
  }
  snprintf(p->worker_id, sizeof p->worker_id, "%s", wid);
  p->role = h->role;
  p->features = h->features;
  p->hello = true;
  xqc_worker_t *ws = xqc_workers_get(&c->workers, wid, xqc_now_ms(),
                                     (uint64_t)c->cfg.worker_timeout_ms);
  char host[sizeof ws->host], version[sizeof ws->version];
  clean_text(host, sizeof host, h->host);
  clean_text(version, sizeof version, h->software_version);
  if (ws) {
    memcpy(ws->host, host, sizeof host);
    memcpy(ws->version, version, sizeof version);
    ws->threads = h->threads;
    ws->role = h->role;
    xqc_worker_touch(ws, xqc_now_ms());
    xqc_peer_worker_sync(c, p, ws);
  }
  XQ_LOGI(COMP, "hello worker=%s role=%d host=\"%s\" threads=%u version=\"%s\" address=%s",
          wid, h->role, host, h->threads, version, p->address);
  Xqz__Envelope env;
  Xqz__Welcome w;
  Xqz__SelfplaySettings s;
  xq_wire_init(&env);
  xqz__welcome__init(&w);
  fill_settings(c, &s);
  w.worker_id = (char *)wid;
  w.best_net_id = c->best;
  w.settings = &s;
  w.heartbeat_ms = (uint32_t)c->cfg.heartbeat_ms;
  w.campaign_id = c->campaign_id;
  env.request_id = rq;
  env.body_case = XQZ__ENVELOPE__BODY_WELCOME;
  env.welcome = &w;
  xqc_reply(c, p->rid, p->rid_len, &env);
}

static void on_heartbeat(xqc_t *c, xqc_peer_t *p, uint64_t rq, const Xqz__Heartbeat *h) {
  p->net_id = h->net_id;
  xqc_worker_t *w = xqc_workers_find(&c->workers, p->worker_id);
  if (w && w->net_id != h->net_id) {
    w->net_id = h->net_id;
    w->dirty = true;
  }
  if (w) { /* a paused worker is alive, playing nothing (docs/protocol.md, Heartbeat) */
    const char *why = h->paused && h->pause_reason ? h->pause_reason : "";
    if (w->paused != h->paused)
      XQ_LOGI(COMP, "worker %s worker=%s reason=%.15s", h->paused ? "paused" : "resumed",
              w->id, why);
    w->paused = h->paused;
    snprintf(w->pause_reason, sizeof w->pause_reason, "%s", why);
  }
  if (h->games_done > p->games_done) p->games_done = h->games_done;
  /* Echo: the peer learns the coordinator is alive and which net is best. */
  Xqz__Envelope env;
  Xqz__Heartbeat r;
  xq_wire_init(&env);
  xqz__heartbeat__init(&r);
  r.worker_id = h->worker_id;
  r.net_id = c->best;
  r.games_done = p->games_done;
  env.request_id = rq;
  env.body_case = XQZ__ENVELOPE__BODY_HEARTBEAT;
  env.heartbeat = &r;
  xqc_reply(c, p->rid, p->rid_len, &env);
}

static void on_job_request(xqc_t *c, xqc_peer_t *p, uint64_t rq) {
  Xqz__Envelope env;
  Xqz__Job job;
  Xqz__SelfplayJob sp;
  Xqz__ArenaJob aj;
  Xqz__SelfplaySettings s;
  char fen[XQ_FEN_MAX];
  xq_wire_init(&env);
  xqz__job__init(&job);
  c->jobs_served++;
  if (xqc_promote_arena_job(c, p, &aj, fen)) {
    job.kind_case = XQZ__JOB__KIND_ARENA;
    job.arena = &aj;
  } else {
    xqz__selfplay_job__init(&sp);
    fill_settings(c, &s);
    sp.net_id = c->best;
    sp.settings = &s;
    sp.games = (uint32_t)c->cfg.games_per_job;
    job.kind_case = XQZ__JOB__KIND_SELFPLAY;
    job.selfplay = &sp;
  }
  env.request_id = rq;
  env.body_case = XQZ__ENVELOPE__BODY_JOB;
  env.job = &job;
  xqc_reply(c, p->rid, p->rid_len, &env);
}

static void send_wait(xqc_t *c, xqc_peer_t *p, uint64_t rq, uint32_t ms, const char *why) {
  Xqz__Envelope env;
  Xqz__Wait w;
  xq_wire_init(&env);
  xqz__wait__init(&w);
  w.retry_ms = ms;
  w.reason = (char *)why;
  env.request_id = rq;
  env.body_case = XQZ__ENVELOPE__BODY_WAIT;
  env.wait = &w;
  xqc_reply(c, p->rid, p->rid_len, &env);
}

/* A loss the trainer may report: finite, not negative, below XQC_LOSS_MAX. */
static bool loss_ok(float x) { return isfinite(x) && x >= 0.0f && x <= XQC_LOSS_MAX; }

/* Checks the trainer's report riding on a BatchRequest; false with the reason in why. */
static bool report_ok(const Xqz__BatchRequest *r, char *why, size_t n) {
  if (r->trainer_step > XQC_STEP_MAX) {
    snprintf(why, n, "trainer_step %llu is out of range (at most %llu)",
             (unsigned long long)r->trainer_step, (unsigned long long)XQC_STEP_MAX);
    return false;
  }
  if (r->loss_steps && (!loss_ok(r->loss) || !loss_ok(r->loss_policy) ||
                        !loss_ok(r->loss_value))) {
    snprintf(why, n, "losses must be finite and in 0..%g: loss=%g policy=%g value=%g",
             XQC_LOSS_MAX, (double)r->loss, (double)r->loss_policy, (double)r->loss_value);
    return false;
  }
  return true;
}

static void on_batch_request(xqc_t *c, xqc_peer_t *p, uint64_t rq, const Xqz__BatchRequest *r) {
  if (!xqc_identity_batch_ok(c, p, rq, r)) return;
  char why[200];
  if (!report_ok(r, why, sizeof why)) {
    /* Refused whole: a trainer whose losses went NaN should stop, not train on. */
    c->bad_reports++;
    xqc_peer_fault(c, p, why);
    xqc_reply_error(c, p->rid, p->rid_len, rq, XQ_ERROR_BAD_FIELD, why);
    return;
  }
  /* The step never goes back: a trainer resumed from an older checkpoint reports a lower
   * step until it catches up, and its reports are not stored until then. */
  if ((int64_t)r->trainer_step >= c->trainer_step) {
    c->trainer_step = (int64_t)r->trainer_step;
    xqc_status_loss_report(c, r);
  }
  uint32_t n = r->size ? r->size : (uint32_t)c->cfg.batch_size;
  if (n > 8192) n = 8192;
  if (c->replay.count < (uint64_t)c->cfg.min_positions) {
    snprintf(why, sizeof why, "window holds %llu of %lld positions needed to start",
             (unsigned long long)c->replay.count, (long long)c->cfg.min_positions);
    send_wait(c, p, rq, 2000, why);
    xqc_status_batch_answered(c, p, XQC_BATCH_FILLING);
    return;
  }
  /* Since this start: the positions of the rebuilt window were paced before (coord.h). */
  const uint64_t paced = c->positions - c->positions_at_open;
  if ((double)(c->samples_served + n) > c->cfg.reuse * (double)paced) {
    snprintf(why, sizeof why, "pacing: %llu samples served for %llu positions since start"
             " (reuse %g)", (unsigned long long)c->samples_served, (unsigned long long)paced,
             c->cfg.reuse);
    send_wait(c, p, rq, 1000, why);
    xqc_status_batch_answered(c, p, XQC_BATCH_PACED);
    return;
  }
  xqc_batch_t b;
  const xqc_sample_opts_t so = {(float)c->cfg.value_target_q, (float)c->cfg.colour_swap};
  if (xqc_replay_sample(&c->replay, &c->rng, (int)n, &so, &b) < 0) {
    xqc_reply_error(c, p->rid, p->rid_len, rq, XQ_ERROR_INTERNAL, "out of memory");
    return;
  }
  Xqz__Envelope env;
  Xqz__Batch bm;
  xq_wire_init(&env);
  xqz__batch__init(&bm);
  bm.n_samples = (size_t)b.n;
  bm.samples = b.ptrs;
  bm.window_positions = c->replay.count;
  bm.total_positions = c->positions;
  bm.best_net_id = c->best;
  bm.campaign_id = c->campaign_id;
  env.request_id = rq;
  env.body_case = XQZ__ENVELOPE__BODY_BATCH;
  env.batch = &bm;
  xqc_reply(c, p->rid, p->rid_len, &env);
  c->samples_served += (uint64_t)b.n;
  /* The pacing's promise: at most R samples per position ingested, give or take a batch. */
  assert((double)c->samples_served <= c->cfg.reuse * (double)paced + n);
  xqc_status_batch_answered(c, p, XQC_BATCH_SERVED);
  xqc_batch_free(&b);
}

static uint32_t count_workers(const xqc_t *c) {
  return xqc_workers_alive(&c->workers, XQZ__ROLE__ROLE_WORKER, xqc_now_ms(),
                           (uint64_t)c->cfg.worker_timeout_ms);
}

static void on_status(xqc_t *c, xqc_peer_t *p, uint64_t rq) {
  Xqz__Status *s = NULL;
  int rc = xqc_status_build(c, &s);
  if (rc < 0) {
    XQ_LOGE(COMP, "status not built err=\"%s\"", xq_strerror(rc));
    xqc_reply_error(c, p->rid, p->rid_len, rq, XQ_ERROR_INTERNAL, "status not available");
    return;
  }
  Xqz__Envelope env;
  xq_wire_init(&env);
  env.request_id = rq;
  env.body_case = XQZ__ENVELOPE__BODY_STATUS;
  env.status = s;
  xqc_reply(c, p->rid, p->rid_len, &env);
  xqc_status_free(&s);
}

static void on_promotions(xqc_t *c, xqc_peer_t *p, uint64_t rq,
                          const Xqz__PromotionsRequest *r) {
  Xqz__Promotions *pr = NULL;
  int rc = xqc_promotions_build(c, r->after_match_id, &pr);
  if (rc < 0) {
    XQ_LOGE(COMP, "promotions not built err=\"%s\"", xq_strerror(rc));
    xqc_reply_error(c, p->rid, p->rid_len, rq, XQ_ERROR_INTERNAL, "promotions not available");
    return;
  }
  Xqz__Envelope env;
  xq_wire_init(&env);
  env.request_id = rq;
  env.body_case = XQZ__ENVELOPE__BODY_PROMOTIONS;
  env.promotions = pr;
  xqc_reply(c, p->rid, p->rid_len, &env);
  xqc_promotions_free(&pr);
}

/* Requests whose reply may be large, answered only while the peer reads its replies. */
static bool large_reply(int body) {
  return body == XQZ__ENVELOPE__BODY_NET_REQUEST || body == XQZ__ENVELOPE__BODY_STATUS_REQUEST ||
         body == XQZ__ENVELOPE__BODY_PROMOTIONS_REQUEST;
}

/* false (refused, counted as a fault) when p asks for another large reply while more than
 * XQC_GUARD_UNREAD_MAX bytes of its replies are unread (guard.h). */
static bool reader_ok(xqc_t *c, xqc_peer_t *p, int body, uint64_t rq) {
  uint64_t unread;
  if (!large_reply(body) || xqc_guard_unread_ok(p, &unread)) return true;
  char why[200];
  snprintf(why, sizeof why, "%llu bytes of replies unread: read them before asking for more"
           " (at most %u unread)", (unsigned long long)unread, XQC_GUARD_UNREAD_MAX);
  xqc_peer_error(c, p, why);
  if (!p->cut) xqc_reply_error(c, p->rid, p->rid_len, rq, XQ_ERROR_BAD_FIELD, why);
  return false;
}

static void dispatch_body(xqc_t *c, int pi, Xqz__Envelope *env);

/* Dispatches env from peer pi and charges the bytes of its replies to the peer. */
static void dispatch(xqc_t *c, int pi, Xqz__Envelope *env) {
  uint64_t before = c->reply_bytes;
  dispatch_body(c, pi, env);
  c->peers[pi].sent_bytes += c->reply_bytes - before;
}

static void dispatch_body(xqc_t *c, int pi, Xqz__Envelope *env) {
  xqc_peer_t *p = &c->peers[pi];
  uint64_t rq = env->request_id;
  if (p->hello) {
    xqc_worker_t *w = xqc_workers_find(&c->workers, p->worker_id);
    if (w) xqc_worker_touch(w, xqc_now_ms());
  }
  /* A banned peer's games get a refusing Ack (ingest.c) so it stops resending them;
   * anything else it asks gets an Error. */
  if (env->body_case != XQZ__ENVELOPE__BODY_GAME &&
      (xqc_peer_banned(c, p) || xqc_bans_match(&c->bans, xqc_named_worker(env), NULL))) {
    xqc_reply_error(c, p->rid, p->rid_len, rq, XQ_ERROR_BANNED, "banned");
    return;
  }
  char why[400];
  if (!xqc_peer_allowed(c, p, (int)env->body_case, why, sizeof why)) {
    if (env->body_case == XQZ__ENVELOPE__BODY_ADMIN_REQUEST) xqc_admin_refuse(c, p, rq, why);
    else xqc_reply_error(c, p->rid, p->rid_len, rq, XQ_ERROR_NOT_ALLOWED, why);
    return;
  }
  if (!reader_ok(c, p, (int)env->body_case, rq)) return;
  switch (env->body_case) {
  case XQZ__ENVELOPE__BODY_HELLO: on_hello(c, p, rq, env->hello); break;
  case XQZ__ENVELOPE__BODY_HEARTBEAT: on_heartbeat(c, p, rq, env->heartbeat); break;
  case XQZ__ENVELOPE__BODY_JOB_REQUEST: on_job_request(c, p, rq); break;
  case XQZ__ENVELOPE__BODY_GAME: xqc_ingest_game(c, p, rq, env->game); break;
  case XQZ__ENVELOPE__BODY_ARENA_RESULT:
    xqc_promote_arena_result(c, p, rq, env->arena_result);
    break;
  case XQZ__ENVELOPE__BODY_NET_REQUEST: xqc_nets_request(c, p, rq, env->net_request); break;
  case XQZ__ENVELOPE__BODY_BATCH_REQUEST: on_batch_request(c, p, rq, env->batch_request); break;
  case XQZ__ENVELOPE__BODY_CANDIDATE: xqc_promote_candidate(c, p, rq, env->candidate); break;
  case XQZ__ENVELOPE__BODY_STATUS_REQUEST: on_status(c, p, rq); break;
  case XQZ__ENVELOPE__BODY_PROMOTIONS_REQUEST:
    on_promotions(c, p, rq, env->promotions_request);
    break;
  case XQZ__ENVELOPE__BODY_ADMIN_REQUEST: xqc_admin_request(c, p, rq, env->admin_request); break;
  default:
    xqc_peer_fault(c, p, "unexpected message type");
    xqc_reply_error(c, p->rid, p->rid_len, rq, XQ_ERROR_UNEXPECTED, "unexpected message type");
    break;
  }
}

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
    if (!xqc_guard_rid_ok(c, rid, rid_len, &head, why, sizeof why)) {
      xq_wire_free(&env);
      xqc_reply_error(c, rid, rid_len, head.request_id, XQ_ERROR_NOT_ALLOWED, why);
      continue;
    }
    int pi = xqc_peers_admit(c, rid, rid_len, &head, rc == 0 ? env : NULL);
    if (pi < 0) {
      xq_wire_free(&env); /* out of memory, or a cut-off identity: ignored */
      continue;
    }
    xqc_peer_t *p = &c->peers[pi];
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
    dispatch(c, pi, env);
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
          (unsigned long long)c->replay.count, count_workers(c), (unsigned long long)c->best,
          (long long)c->trainer_step, (unsigned long long)c->samples_served,
          (unsigned long long)c->rejected_games, (unsigned long long)c->duplicates,
          (unsigned long long)c->replayed_games, (unsigned long long)c->role_refusals,
          (unsigned long long)c->claims_refused, (unsigned long long)c->bad_reports,
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
  if (now - c->last_workers_save_ms >= 1000) {
    c->last_workers_save_ms = now;
    xqc_workers_save(&c->workers, c->db);
  }
  if (now - c->last_status_ms >= (uint64_t)c->cfg.status_ms) {
    c->last_status_ms = now;
    status_line(c);
  }
  xqc_promote_tick(c, now); /* a gating decision waiting for campaign.db; its file's identity */
  xqc_peers_expire(c, now);
  xqc_auth_drain(&c->auth);
  drain(c); /* our sends may have consumed the fd's edge */
}

static void on_signal(uv_signal_t *s, int signum) {
  xqc_t *c = s->data;
  XQ_LOGI(COMP, "stopping signal=%d", signum);
  c->stopping = true;
  uv_stop(c->loop);
}

static void on_close(uv_handle_t *h) { (void)h; }

int xqc_run(xqc_t *c, xq_errbuf_t *eb) {
  c->zctx = zmq_ctx_new();
  /* Before the ROUTER exists: its first routing id comes from rand() (guard.h). */
  if (xqc_guard_seed_routing_ids() < 0)
    return xq_err_set(eb, XQ_EIO, "getrandom failed: cannot make routing ids unpredictable");
  c->router = zmq_socket(c->zctx, ZMQ_ROUTER);
  c->pub = zmq_socket(c->zctx, ZMQ_PUB);
  if (!c->router || !c->pub) return xq_err_set(eb, XQ_EIO, "zmq sockets: %s", zmq_strerror(zmq_errno()));
  /* No handover: a connection may not take over a routing id in use (guard.h). A bounded
   * queue per connection: the unread bytes are bounded by the loop (reader_ok). */
  int off = 0, hwm = XQC_GUARD_SNDHWM;
  int64_t maxmsg = c->cfg.max_message_bytes;
  if (xq_wire_socket_setup(c->router) < 0 || xq_wire_socket_setup(c->pub) < 0 ||
      zmq_setsockopt(c->router, ZMQ_ROUTER_HANDOVER, &off, sizeof off) != 0 ||
      zmq_setsockopt(c->router, ZMQ_SNDHWM, &hwm, sizeof hwm) != 0 ||
      zmq_setsockopt(c->router, ZMQ_MAXMSGSIZE, &maxmsg, sizeof maxmsg) != 0)
    return xq_err_set(eb, XQ_EIO, "zmq socket options: %s", zmq_strerror(zmq_errno()));
  /* The ZAP handler must be bound before the CURVE sockets accept anyone. */
  int rc = xqc_auth_bind(&c->auth, c->zctx, eb);
  if (rc == 0) rc = xqc_auth_apply(&c->auth, c->router, eb);
  if (rc == 0) rc = xqc_auth_apply(&c->auth, c->pub, eb);
  if (rc < 0) return rc;
  if (!c->auth.on && (!xqc_endpoint_is_loopback(c->cfg.router) ||
                      !xqc_endpoint_is_loopback(c->cfg.pub)))
    XQ_LOGW(COMP, "listening beyond this machine without CURVE: anyone who reaches the ports"
            " may send games and claim worker ids (admin and trainer requests are taken"
            " from loopback and trainer_addresses only); set curve_secret_key and"
            " curve_allow_dir on a shared network router=%s pub=%s", c->cfg.router,
            c->cfg.pub);
  if ((rc = xq_endpoint_check(c->cfg.router, "router", eb)) < 0 ||
      (rc = xq_endpoint_check(c->cfg.pub, "pub", eb)) < 0)
    return rc;
  if (zmq_bind(c->router, c->cfg.router) != 0)
    return xq_err_set(eb, XQ_EIO, "cannot bind router %s: %s (another coordinator?)",
                      c->cfg.router, zmq_strerror(zmq_errno()));
  if (zmq_bind(c->pub, c->cfg.pub) != 0)
    return xq_err_set(eb, XQ_EIO, "cannot bind pub %s: %s", c->cfg.pub, zmq_strerror(zmq_errno()));
  int fd;
  size_t fdlen = sizeof fd;
  zmq_getsockopt(c->router, ZMQ_FD, &fd, &fdlen);
  c->loop = uv_default_loop();
  c->start_ms = xqc_now_ms();
  xqc_status_rate_sample(c, c->start_ms);
  if (xqc_web_start(c, eb) < 0) {
    zmq_close(c->router);
    zmq_close(c->pub);
    zmq_ctx_term(c->zctx);
    uv_loop_close(c->loop);
    return XQ_EIO;
  }
  uv_poll_init(c->loop, &c->router_poll, fd);
  c->router_poll.data = c;
  uv_poll_start(&c->router_poll, UV_READABLE, on_router);
  xqc_auth_watch(&c->auth, c->loop);
  uv_timer_init(c->loop, &c->timer);
  c->timer.data = c;
  uint64_t tick = (uint64_t)c->cfg.fsync_ms;
  uv_timer_start(&c->timer, on_timer, tick, tick);
  uv_signal_init(c->loop, &c->sigint);
  uv_signal_init(c->loop, &c->sigterm);
  c->sigint.data = c->sigterm.data = c;
  uv_signal_start(&c->sigint, on_signal, SIGINT);
  uv_signal_start(&c->sigterm, on_signal, SIGTERM);
  xqc_promote_resume(c);
  xqc_campaign_record_endpoints(c->dir, &c->cfg);
  xqc_net_files_open(c->dir, c->best);
  xqc_anchor_resume(c);
  xqc_status_throughput_tick(c, true); /* the counters as rebuilt from the segments */
  XQ_LOGI(COMP, "listening router=%s pub=%s best=%016llx curve=%s campaign=%016llx",
          c->cfg.router, c->cfg.pub, (unsigned long long)c->best, c->auth.on ? "on" : "off",
          (unsigned long long)c->campaign_id);
  status_line(c);
  drain(c);
  uv_run(c->loop, UV_RUN_DEFAULT);
  /* Stopping: make everything acknowledged durable, send the last acks, close. */
  xqc_ingest_flush(c);
  xqc_workers_save(&c->workers, c->db);
  xqc_status_throughput_tick(c, true);
  status_line(c);
  uv_close((uv_handle_t *)&c->router_poll, on_close);
  xqc_auth_unwatch(&c->auth);
  uv_close((uv_handle_t *)&c->timer, on_close);
  uv_close((uv_handle_t *)&c->sigint, on_close);
  uv_close((uv_handle_t *)&c->sigterm, on_close);
  xqc_web_stop(c);
  uv_run(c->loop, UV_RUN_DEFAULT);
  uv_loop_close(c->loop);
  zmq_close(c->router);
  zmq_close(c->pub);
  xqc_auth_unbind(&c->auth);
  zmq_ctx_term(c->zctx);
  xqc_nets_close(&c->nets);
  return 0;
}
