/*
 * requests.c: the small requests, answered from the coordinator's state: Hello (identity
 * checked, worker id claimed, Welcome with the self-play settings; a trainer's claims a
 * population member's slot instead, members_wire.h), Heartbeat (echoed with
 * the best net), JobRequest (an arena pair when one is due, else self-play), BatchRequest
 * (the trainer's report stored, then a batch, or a Wait while the window fills or the
 * pacing holds it back; in a population each member is paced on its own and told its
 * Member), StatusRequest, PromotionsRequest and NetRequest (a net in chunks
 * from the cache of storage/nets.c). They are rows of the command
 * table (commands.def); dispatch has checked the sender's roles before any of them runs.
 */
#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "coord.h"
#include "identity.h"
#include "members_wire.h"
#include "rules/fen.h"
#include "status.h"
#include "support/log.h"
#include "wire/messages.h"
#include "wire/wire.h"

#define COMP "coordinator"

static void fill_settings(const xqc_t *c, Xqz__SelfplaySettings *s) {
  const xqc_config_t *cfg = &c->cfg;
  xqc_self_balance_cfg_t sc = xqc_status_self_balance_cfg(c);
  xqz__selfplay_settings__init(s);
  s->sims = (uint32_t)xqc_self_balance_sims(&c->stats.self_balance, &sc);
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


/* A trainer's Hello: never a worker id nor a row of the workers table. In a population it
 * claims a member slot (members_wire.h) and its Welcome carries the Member; else a plain
 * Welcome (one trainer goes on as before populations). */
static void trainer_hello(xqc_t *c, xqc_peer_t *p, uint64_t rq, const Xqz__Hello *h) {
  Xqz__Member m;
  Xqz__MemberSettings ms;
  int slot = -1;
  if (c->cfg.population > 0 && (slot = xqc_members_hello(c, p, rq, h, &m, &ms)) < 0) return;
  p->role = h->role;
  p->features = h->features;
  if (slot < 0) {
    char host[64];
    xqc_clean_text(host, sizeof host, h->host);
    XQ_LOGI(COMP, "hello trainer host=\"%s\" address=%s", host, p->address);
  }
  Xqz__Envelope env;
  Xqz__Welcome w;
  Xqz__SelfplaySettings s;
  fill_settings(c, &s);
  xq_msg_welcome(&env, &w, "", c->best, &s, (uint32_t)c->cfg.heartbeat_ms, c->campaign_id);
  if (slot >= 0) w.member = &m;
  env.request_id = rq;
  xqc_reply(c, p->rid, p->rid_len, &env);
}

void xqc_cmd_hello(xqc_t *c, xqc_peer_t *p, uint64_t rq, const Xqz__Envelope *msg) {
  const Xqz__Hello *h = msg->hello;
  if (!xqc_identity_hello_ok(c, p, rq, h)) return;
  if (h->role == XQZ__ROLE__ROLE_TRAINER) {
    trainer_hello(c, p, rq, h);
    return;
  }
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
  xqc_promote_hello_holding(c, p, h);
  xqc_worker_t *ws = xqc_workers_get(&c->stats.workers, wid, xqc_now_ms(),
                                     (uint64_t)c->cfg.worker_timeout_ms);
  char host[sizeof ws->host], version[sizeof ws->version], prec[sizeof ws->precision];
  xqc_clean_text(host, sizeof host, h->host);
  xqc_clean_text(version, sizeof version, h->software_version);
  xqc_clean_text(prec, sizeof prec, h->precision);
  if (ws) {
    memcpy(ws->host, host, sizeof host);
    memcpy(ws->version, version, sizeof version);
    memcpy(ws->precision, prec, sizeof prec);
    ws->threads = h->threads;
    ws->role = h->role;
    xqc_worker_touch(ws, xqc_now_ms());
    xqc_peer_worker_sync(c, p, ws);
  }
  XQ_LOGI(COMP, "hello worker=%s role=%d host=\"%s\" threads=%u version=\"%s\" precision=%s"
          " address=%s", wid, h->role, host, h->threads, version, prec[0] ? prec : "-",
          p->address);
  Xqz__Envelope env;
  Xqz__Welcome w;
  Xqz__SelfplaySettings s;
  fill_settings(c, &s);
  xq_msg_welcome(&env, &w, wid, c->best, &s, (uint32_t)c->cfg.heartbeat_ms, c->campaign_id);
  env.request_id = rq;
  xqc_reply(c, p->rid, p->rid_len, &env);
}

void xqc_cmd_heartbeat(xqc_t *c, xqc_peer_t *p, uint64_t rq, const Xqz__Envelope *msg) {
  const Xqz__Heartbeat *h = msg->heartbeat;
  p->net_id = h->net_id;
  xqc_worker_t *w = xqc_workers_find(&c->stats.workers, p->worker_id);
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
  xq_msg_heartbeat(&env, &r, h->worker_id, c->best, p->games_done);
  env.request_id = rq;
  xqc_reply(c, p->rid, p->rid_len, &env);
}

void xqc_cmd_job_request(xqc_t *c, xqc_peer_t *p, uint64_t rq, const Xqz__Envelope *msg) {
  (void)msg;
  Xqz__Envelope env;
  Xqz__Job job;
  Xqz__SelfplayJob sp;
  Xqz__ArenaJob aj;
  Xqz__SelfplaySettings s;
  char fen[XQ_FEN_MAX];
  c->jobs_served++;
  if (xqc_promote_arena_job(c, p, &aj, fen)) {
    xq_msg_job_arena(&env, &job, &aj);
  } else {
    fill_settings(c, &s);
    xq_msg_job_selfplay(&env, &job, &sp, c->best, &s, (uint32_t)c->cfg.games_per_job);
  }
  env.request_id = rq;
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

void xqc_cmd_batch_request(xqc_t *c, xqc_peer_t *p, uint64_t rq, const Xqz__Envelope *msg) {
  const Xqz__BatchRequest *r = msg->batch_request;
  if (!xqc_identity_batch_ok(c, p, rq, r)) return;
  char why[200];
  if (!report_ok(r, why, sizeof why)) {
    /* Refused whole: a trainer whose losses went NaN should stop, not train on. */
    c->stats.bad_reports++;
    xqc_peer_fault(c, p, why);
    xqc_reply_error(c, p->rid, p->rid_len, rq, XQ_ERROR_BAD_FIELD, why);
    return;
  }
  /* In a population: the member's slot, its checks, and its own pacing (each member may
   * take R samples per fresh position). */
  int slot = c->cfg.population > 0 ? xqc_members_batch(c, p, rq, r) : -1;
  if (c->cfg.population > 0 && slot < 0) return;
  xqc_member_t *member = slot >= 0 ? &c->members.slot[slot] : NULL;
  /* The step never goes back: a trainer resumed from an older checkpoint reports a lower
   * step until it catches up, and its reports are not stored until then. */
  if ((int64_t)r->trainer_step >= c->trainer_step) {
    c->trainer_step = (int64_t)r->trainer_step;
    xqc_status_loss_report(c, r);
  }
  uint32_t n = r->size ? r->size : (uint32_t)c->cfg.batch_size;
  if (n > 8192) n = 8192;
  /* Since this start: the positions of the rebuilt window were paced before (coord.h). */
  const uint64_t paced = c->positions - c->window.positions_at_open;
  const xqc_pacing_rule_t rule = {(uint64_t)c->cfg.min_positions, c->cfg.reuse};
  const uint64_t served = member ? member->served : c->window.samples_served;
  uint32_t wait_ms;
  xqc_pace_t pace = xqc_pace(&rule, c->window.replay.count, paced, served, n, &wait_ms, why,
                             sizeof why);
  if (pace != XQC_PACE_SERVE) {
    if (member) xqc_members_wait(c, p, rq, slot, wait_ms, why);
    else xqc_reply_wait(c, p->rid, p->rid_len, rq, wait_ms, why);
    xqc_status_batch_answered(c, p, pace == XQC_PACE_FILLING ? XQC_BATCH_FILLING
                                                             : XQC_BATCH_PACED);
    return;
  }
  xqc_batch_t b;
  const xqc_sample_opts_t so = {(float)c->cfg.value_target_q, (float)c->cfg.colour_swap};
  if (xqc_replay_sample(&c->window.replay, &c->rng, (int)n, &so, &b) < 0) {
    xqc_reply_error(c, p->rid, p->rid_len, rq, XQ_ERROR_INTERNAL, "out of memory");
    return;
  }
  Xqz__Envelope env;
  Xqz__Batch bm;
  Xqz__Member mm;
  Xqz__MemberSettings ms;
  xq_msg_batch(&env, &bm, b.ptrs, (size_t)b.n);
  bm.window_positions = c->window.replay.count;
  bm.total_positions = c->positions;
  bm.best_net_id = c->best;
  bm.campaign_id = c->campaign_id;
  if (member) {
    xqc_members_fill(c, slot, &mm, &ms);
    bm.member = &mm;
  }
  env.request_id = rq;
  xqc_reply(c, p->rid, p->rid_len, &env);
  c->window.samples_served += (uint64_t)b.n; /* every member's, in a population */
  uint64_t *mine = member ? &member->served : &c->window.samples_served;
  if (member) *mine += (uint64_t)b.n;
  /* The pacing's promise: at most R samples per position ingested (per member in a
   * population), give or take a batch. */
  assert((double)*mine <= c->cfg.reuse * (double)paced + n);
  xqc_status_batch_answered(c, p, XQC_BATCH_SERVED);
  xqc_batch_free(&b);
}

void xqc_cmd_status(xqc_t *c, xqc_peer_t *p, uint64_t rq, const Xqz__Envelope *msg) {
  (void)msg;
  Xqz__Status *s = NULL;
  int rc = xqc_status_build(c, &s);
  if (rc < 0) {
    XQ_LOGE(COMP, "status not built err=\"%s\"", xq_strerror(rc));
    xqc_reply_error(c, p->rid, p->rid_len, rq, XQ_ERROR_INTERNAL, "status not available");
    return;
  }
  Xqz__Envelope env;
  xq_msg_status(&env, s);
  env.request_id = rq;
  xqc_reply(c, p->rid, p->rid_len, &env);
  xqc_status_free(&s);
}

void xqc_cmd_promotions(xqc_t *c, xqc_peer_t *p, uint64_t rq, const Xqz__Envelope *msg) {
  const Xqz__PromotionsRequest *r = msg->promotions_request;
  Xqz__Promotions *pr = NULL;
  int rc = xqc_promotions_build(c, r->after_match_id, &pr);
  if (rc < 0) {
    XQ_LOGE(COMP, "promotions not built err=\"%s\"", xq_strerror(rc));
    xqc_reply_error(c, p->rid, p->rid_len, rq, XQ_ERROR_INTERNAL, "promotions not available");
    return;
  }
  Xqz__Envelope env;
  xq_msg_promotions(&env, pr);
  env.request_id = rq;
  xqc_reply(c, p->rid, p->rid_len, &env);
  xqc_promotions_free(&pr);
}

/* A net that cannot be served: quarantined when damaged, and when it is the open match's
 * candidate or the best net, promote.c moves gating or self-play on; a population's round
 * drops it (population_round.h). Other nets (an old one a worker still asks for) are
 * answered "not found" only. */
static void unservable(xqc_t *c, uint64_t id, bool damaged, const char *why) {
  if (damaged) xqc_nets_quarantine(c->dir, id, why);
  if (c->gate.open && id == c->gate.cand) xqc_promote_candidate_lost(c, why);
  else if (id == c->best) xqc_promote_best_lost(c, why);
  xqc_round_net_lost(c, id, why);
}

void xqc_cmd_net_request(xqc_t *c, xqc_peer_t *p, uint64_t rq, const Xqz__Envelope *msg) {
  const Xqz__NetRequest *r = msg->net_request;
  xq_errbuf_t eb = {{0}};
  xqc_nets_t *g = &c->nets;
  bool damaged = false;
  if (!r->net_id || xqc_nets_load_ex(g, c->dir, r->net_id, &damaged, &eb) < 0) {
    if (r->net_id) unservable(c, r->net_id, damaged, eb.msg);
    char why[300];
    snprintf(why, sizeof why, "net %016llx %s; ask for another job",
             (unsigned long long)r->net_id, damaged ? "is damaged on the coordinator" : "not found");
    xqc_reply_error(c, p->rid, p->rid_len, rq, XQ_ERROR_NOT_FOUND, why);
    return;
  }
  if (r->offset > g->size) {
    xqc_peer_fault(c, p, "net request offset past the end");
    xqc_reply_error(c, p->rid, p->rid_len, rq, XQ_ERROR_BAD_FIELD,
                    "offset past the end of the net");
    return;
  }
  size_t max = r->max_bytes ? r->max_bytes : XQ_WIRE_NET_CHUNK;
  if (max > XQ_WIRE_NET_CHUNK) max = XQ_WIRE_NET_CHUNK;
  size_t n = g->size - (size_t)r->offset;
  if (n > max) n = max;
  Xqz__Envelope env;
  Xqz__NetChunk ch;
  xq_msg_net_chunk(&env, &ch, r->net_id, r->offset, g->size, g->crc,
                   (const uint8_t *)g->data + r->offset, n);
  env.request_id = rq;
  xqc_reply(c, p->rid, p->rid_len, &env);
}
