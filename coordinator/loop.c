/*
 * loop.c: the coordinator's event loop. libuv watches the ROUTER's ZMQ_FD; because that
 * fd is edge-triggered, every wake-up (and every timer tick, since our own sends can
 * consume the edge) drains ZMQ_EVENTS/ZMQ_POLLIN until it is empty. One timer does fsync
 * batching (acks go out after the fsync), peer timeouts and the status line. SIGINT and
 * SIGTERM stop the loop; main.c then flushes and closes everything.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zmq.h>

#include "campaign.h"
#include "coord.h"
#include "identity.h"
#include "status.h"
#include "nn/nn_file.h"
#include "rules/fen.h"
#include "support/atomic_file.h"
#include "support/crc32.h"
#include "support/log.h"
#include "web.h"
#include "wire/wire.h"

#define COMP "coordinator"

enum { ERR_MALFORMED = 1, ERR_UNEXPECTED = 2, ERR_NOT_FOUND = 3, ERR_BAD_FIELD = 4,
       ERR_INTERNAL = 5, ERR_BANNED = XQ_ERROR_BANNED };

uint64_t xqc_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

void xqc_reply(xqc_t *c, const uint8_t *rid, size_t rid_len, Xqz__Envelope *env) {
  int rc = xq_wire_send(c->router, rid, rid_len, env, ZMQ_DONTWAIT);
  if (rc < 0) XQ_LOGW(COMP, "reply not sent (peer gone or slow) err=\"%s\"", xq_strerror(rc));
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

void xqc_peer_identity(const xqc_peer_t *p, char *buf, size_t n) {
  if (p->key[0]) {
    snprintf(buf, n, "key:%s", p->key);
    return;
  }
  if (p->worker_id[0]) {
    snprintf(buf, n, "worker:%s", p->worker_id);
    return;
  }
  size_t k = (size_t)snprintf(buf, n, "conn:");
  for (size_t i = 0; i < p->rid_len && k + 3 < n; i++)
    k += (size_t)snprintf(buf + k, n - k, "%02x", p->rid[i]);
}

bool xqc_peer_banned(const xqc_t *c, const xqc_peer_t *p) {
  return xqc_bans_match(&c->bans, p->worker_id, p->key);
}

void xqc_peer_worker_sync(xqc_t *c, const xqc_peer_t *p, xqc_worker_t *w) {
  if (!w) return;
  if (p->key[0] && strcmp(w->key, p->key)) {
    snprintf(w->key, sizeof w->key, "%s", p->key);
    w->dirty = true;
  }
  bool banned = xqc_bans_match(&c->bans, w->id, w->key);
  if (banned != w->banned) {
    w->banned = banned;
    w->dirty = true;
  }
}

static xqc_cutoff_limits_t cutoff_limits(const xqc_t *c) {
  xqc_cutoff_limits_t lim = {c->cfg.max_peer_errors, (uint64_t)c->cfg.fault_window_s * 1000u,
                             (uint64_t)c->cfg.cutoff_s * 1000u};
  return lim;
}

/* Counts an error against p's identity (logged when `what` is given); cuts the identity
 * off over the limit (cutoff.h). */
static void count_error(xqc_t *c, xqc_peer_t *p, const char *what) {
  char id[XQC_IDENTITY_MAX];
  xqc_peer_identity(p, id, sizeof id);
  p->errors++;
  if (what)
    XQ_LOGW(COMP, "bad message from peer peer=%s errors=%lld what=\"%s\"", id,
            (long long)p->errors, what);
  xqc_cutoff_limits_t lim = cutoff_limits(c);
  if (xqc_cutoff_fault(&c->cutoff, id, xqc_now_ms(), &lim)) p->cut = true;
}

void xqc_peer_error(xqc_t *c, xqc_peer_t *p, const char *what) { count_error(c, p, what); }

/* A peer of another protocol version: logged once per peer, answered with an Error in an
 * envelope of the peer's own version (so it can read it), counted like a bad message. */
static void refuse_version(xqc_t *c, xqc_peer_t *p, const xq_wire_head_t *head) {
  char text[200], name[XQC_IDENTITY_MAX];
  xq_wire_version_text(text, sizeof text, head->version, "coordinator");
  if (!p->version_refused) {
    p->version_refused = true;
    xqc_peer_identity(p, name, sizeof name);
    XQ_LOGW(COMP, "refused peer: %s peer=%s", text, name);
  }
  count_error(c, p, NULL);
  if (p->cut) return;
  Xqz__Envelope env;
  Xqz__Error e;
  xq_wire_init(&env);
  xqz__error__init(&e);
  env.version = head->version;
  e.code = XQ_ERROR_PROTOCOL_VERSION;
  e.message = text;
  env.request_id = head->request_id;
  env.body_case = XQZ__ENVELOPE__BODY_ERROR;
  env.error = &e;
  xqc_reply(c, p->rid, p->rid_len, &env);
}

void xqc_peer_fault(xqc_t *c, xqc_peer_t *p, const char *what) {
  xqc_worker_t *w = xqc_workers_find(&c->workers, p->worker_id);
  if (w) {
    w->faults++;
    w->dirty = true;
  }
  xqc_peer_error(c, p, what);
}

static int peer_get(xqc_t *c, const uint8_t *rid, size_t rid_len) {
  for (int i = 0; i < c->npeers; i++)
    if (c->peers[i].rid_len == rid_len && memcmp(c->peers[i].rid, rid, rid_len) == 0) return i;
  if (c->npeers == c->cap_peers) {
    int ncap = c->cap_peers ? c->cap_peers * 2 : 16;
    xqc_peer_t *np = realloc(c->peers, (size_t)ncap * sizeof *np);
    if (!np) return -1;
    c->peers = np;
    c->cap_peers = ncap;
  }
  xqc_peer_t *p = &c->peers[c->npeers];
  memset(p, 0, sizeof *p);
  memcpy(p->rid, rid, rid_len);
  p->rid_len = rid_len;
  p->last_seen_ms = xqc_now_ms();
  return c->npeers++;
}

static void fill_settings(const xqc_config_t *cfg, Xqz__SelfplaySettings *s) {
  xqz__selfplay_settings__init(s);
  s->sims = (uint32_t)cfg->sims;
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
}

static void on_hello(xqc_t *c, xqc_peer_t *p, uint64_t rq, const Xqz__Hello *h) {
  if (!xqc_identity_hello_ok(c, p, rq, h)) return;
  const char *wid = h->worker_id ? h->worker_id : "";
  if (strlen(wid) >= sizeof p->worker_id) {
    xqc_peer_fault(c, p, "worker id too long");
    xqc_reply_error(c, p->rid, p->rid_len, rq, ERR_BAD_FIELD, "worker id too long");
    return;
  }
  snprintf(p->worker_id, sizeof p->worker_id, "%s", wid);
  p->role = h->role;
  p->hello = true;
  xqc_worker_t *ws = xqc_workers_get(&c->workers, wid, xqc_now_ms(),
                                     (uint64_t)c->cfg.worker_timeout_ms);
  if (ws) {
    snprintf(ws->host, sizeof ws->host, "%s", h->host ? h->host : "");
    snprintf(ws->version, sizeof ws->version, "%s",
             h->software_version ? h->software_version : "");
    ws->threads = h->threads;
    ws->role = h->role;
    xqc_worker_touch(ws, xqc_now_ms());
    xqc_peer_worker_sync(c, p, ws);
  }
  XQ_LOGI(COMP, "hello worker=%s role=%d host=%s threads=%u version=%s", wid, h->role,
          h->host ? h->host : "", h->threads, h->software_version ? h->software_version : "");
  Xqz__Envelope env;
  Xqz__Welcome w;
  Xqz__SelfplaySettings s;
  xq_wire_init(&env);
  xqz__welcome__init(&w);
  fill_settings(&c->cfg, &s);
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
  int pair = -1;
  if (c->gate.open && (c->jobs_served & 1))
    pair = xqc_gate_next_pair(&c->gate, xqc_now_ms(), (uint64_t)c->cfg.worker_timeout_ms * 2);
  xq_errbuf_t eb;
  if (pair >= 0 && xqc_gate_opening_fen(&c->gate, pair, fen, &eb) == 0) {
    c->gate.state[pair] = 1;
    c->gate.issued_ms[pair] = xqc_now_ms();
    xqz__arena_job__init(&aj);
    aj.match_id = c->gate.match_id;
    aj.net_a = c->gate.cand;
    aj.net_b = c->gate.best;
    aj.opening_fen = fen;
    aj.pair_index = (uint32_t)pair;
    aj.sims = (uint32_t)c->cfg.gating_sims;
    aj.max_plies = (uint32_t)c->cfg.max_plies;
    aj.adjudicate_material = (float)c->cfg.adjudicate_material;
    job.kind_case = XQZ__JOB__KIND_ARENA;
    job.arena = &aj;
  } else {
    xqz__selfplay_job__init(&sp);
    fill_settings(&c->cfg, &s);
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

/* One-entry cache of the size and CRC of the net file served last. */
static struct {
  uint64_t id;
  unsigned char *data;
  size_t size;
  uint32_t crc;
} g_net;

static int net_file(xqc_t *c, uint64_t id, xq_errbuf_t *eb) {
  if (g_net.data && g_net.id == id) return 0;
  free(g_net.data);
  memset(&g_net, 0, sizeof g_net);
  char path[1024];
  xqc_net_path(path, sizeof path, c->dir, id);
  int rc = xq_read_file(path, NN_FILE_MAX_SIZE, &g_net.data, &g_net.size, eb);
  if (rc < 0) return rc;
  g_net.id = id;
  g_net.crc = xq_crc32(0, g_net.data, g_net.size);
  return 0;
}

static void net_cache_free(void) {
  free(g_net.data);
  memset(&g_net, 0, sizeof g_net);
}

static void on_net_request(xqc_t *c, xqc_peer_t *p, uint64_t rq, const Xqz__NetRequest *r) {
  xq_errbuf_t eb;
  if (net_file(c, r->net_id, &eb) < 0) {
    char msg[300];
    snprintf(msg, sizeof msg, "net %016llx not found", (unsigned long long)r->net_id);
    xqc_reply_error(c, p->rid, p->rid_len, rq, ERR_NOT_FOUND, msg);
    return;
  }
  if (r->offset > g_net.size) {
    xqc_peer_fault(c, p, "net request offset past the end");
    xqc_reply_error(c, p->rid, p->rid_len, rq, ERR_BAD_FIELD, "offset past the end of the net");
    return;
  }
  size_t max = r->max_bytes ? r->max_bytes : XQ_WIRE_NET_CHUNK;
  if (max > XQ_WIRE_NET_CHUNK) max = XQ_WIRE_NET_CHUNK;
  size_t n = g_net.size - (size_t)r->offset;
  if (n > max) n = max;
  Xqz__Envelope env;
  Xqz__NetChunk ch;
  xq_wire_init(&env);
  xqz__net_chunk__init(&ch);
  ch.net_id = r->net_id;
  ch.offset = r->offset;
  ch.total = g_net.size;
  ch.file_crc32 = g_net.crc;
  ch.data.data = g_net.data + r->offset;
  ch.data.len = n;
  env.request_id = rq;
  env.body_case = XQZ__ENVELOPE__BODY_NET_CHUNK;
  env.net_chunk = &ch;
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

static void on_batch_request(xqc_t *c, xqc_peer_t *p, uint64_t rq, const Xqz__BatchRequest *r) {
  if (!xqc_identity_batch_ok(c, p, rq, r)) return;
  if ((int64_t)r->trainer_step > c->trainer_step) c->trainer_step = (int64_t)r->trainer_step;
  xqc_status_loss_report(c, r);
  uint32_t n = r->size ? r->size : (uint32_t)c->cfg.batch_size;
  if (n > 8192) n = 8192;
  char why[160];
  if (c->replay.count < (uint64_t)c->cfg.min_positions) {
    snprintf(why, sizeof why, "window holds %llu of %lld positions needed to start",
             (unsigned long long)c->replay.count, (long long)c->cfg.min_positions);
    send_wait(c, p, rq, 2000, why);
    xqc_status_batch_answered(c, p, XQC_BATCH_FILLING);
    return;
  }
  if ((double)(c->samples_served + n) > c->cfg.reuse * (double)c->positions) {
    snprintf(why, sizeof why, "pacing: %llu samples served for %llu positions (reuse %g)",
             (unsigned long long)c->samples_served, (unsigned long long)c->positions,
             c->cfg.reuse);
    send_wait(c, p, rq, 1000, why);
    xqc_status_batch_answered(c, p, XQC_BATCH_PACED);
    return;
  }
  xqc_batch_t b;
  const xqc_sample_opts_t so = {(float)c->cfg.value_target_q, (float)c->cfg.colour_swap};
  if (xqc_replay_sample(&c->replay, &c->rng, (int)n, &so, &b) < 0) {
    xqc_reply_error(c, p->rid, p->rid_len, rq, ERR_INTERNAL, "out of memory");
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
  xqc_status_batch_answered(c, p, XQC_BATCH_SERVED);
  xqc_batch_free(&b);
}

static void send_ack(xqc_t *c, xqc_peer_t *p, uint64_t rq, uint64_t seq, bool ok,
                     const char *reason) {
  Xqz__Envelope env;
  Xqz__Ack a;
  xq_wire_init(&env);
  xqz__ack__init(&a);
  /* Empty worker id: this Ack answers an ArenaResult or a CandidateNet, never a game, so
   * a worker must not mistake it for the ack of a spooled game with the same seq. */
  (void)p;
  a.worker_id = "";
  a.seq = seq;
  a.accepted = ok;
  a.reason = (char *)reason;
  env.request_id = rq;
  env.body_case = XQZ__ENVELOPE__BODY_ACK;
  env.ack = &a;
  xqc_reply(c, p->rid, p->rid_len, &env);
}

static void open_match(xqc_t *c, uint64_t cand, uint64_t parent, int64_t step) {
  xq_errbuf_t eb;
  uint64_t mid = c->next_match_id++;
  if (xqc_gate_open(&c->gate, &c->cfg, mid, cand, c->best, parent, step, &eb) < 0) {
    XQ_LOGE(COMP, "cannot open gating match reason=\"%s\"", eb.msg);
    return;
  }
  XQ_LOGI(COMP, "gating match opened match=%llu candidate=%016llx best=%016llx mode=%s pairs=%d",
          (unsigned long long)mid, (unsigned long long)cand, (unsigned long long)c->best,
          c->cfg.gating, c->gate.npairs);
}

static void publish_announce(xqc_t *c) {
  xq_errbuf_t eb;
  if (net_file(c, c->best, &eb) < 0) {
    XQ_LOGE(COMP, "promoted net file unreadable reason=\"%s\"", eb.msg);
    return;
  }
  Xqz__Envelope env;
  Xqz__NetAnnounce a;
  xq_wire_init(&env);
  xqz__net_announce__init(&a);
  a.net_id = c->best;
  a.parent_id = c->gate.cand_parent;
  a.size = g_net.size;
  a.file_crc32 = g_net.crc;
  a.elo = c->best_elo;
  env.body_case = XQZ__ENVELOPE__BODY_NET_ANNOUNCE;
  env.net_announce = &a;
  int rc = xq_wire_send(c->pub, NULL, 0, &env, ZMQ_DONTWAIT);
  if (rc < 0) XQ_LOGW(COMP, "announce not published err=\"%s\"", xq_strerror(rc));
}

static void close_match(xqc_t *c, xqc_gate_decision_t d) {
  xqc_gate_t *g = &c->gate;
  double score, elo;
  xqc_gate_score(g, &score, &elo);
  bool promote = d == XQC_GATE_PROMOTE;
  xqc_match_row_t row = {g->match_id, g->cand, g->best, g->w, g->d, g->l, score, elo,
                         promote ? "promoted" : "rejected"};
  xqc_db_add_match(c->db, &row);
  double new_elo = c->best_elo + elo;
  xq_errbuf_t eb;
  char line[600];
  snprintf(line, sizeof line,
           "{\"net\":\"%016llx\",\"parent\":\"%016llx\",\"step\":%lld,\"match\":%llu,"
           "\"w\":%lld,\"d\":%lld,\"l\":%lld,\"score\":%.4f,\"match_elo\":%.1f,"
           "\"elo\":%.1f,\"promoted\":%s,\"mode\":\"%s\",\"time\":%lld,"
           "\"games\":%llu,\"positions\":%llu}",
           (unsigned long long)g->cand, (unsigned long long)g->best, (long long)g->cand_step,
           (unsigned long long)g->match_id, (long long)g->w, (long long)g->d, (long long)g->l,
           score, elo, promote ? new_elo : c->best_elo, promote ? "true" : "false",
           c->cfg.gating, (long long)time(NULL), (unsigned long long)c->games,
           (unsigned long long)c->positions);
  if (xqc_campaign_log_line(c->dir, line, &eb) < 0)
    XQ_LOGE(COMP, "promotions.log not written reason=\"%s\"", eb.msg);
  snprintf(c->last_gating, sizeof c->last_gating, "net %016llx: %lld-%lld-%lld score %.2f %s",
           (unsigned long long)g->cand, (long long)g->w, (long long)g->d, (long long)g->l,
           score, promote ? "promoted" : "rejected");
  if (promote) {
    xqc_db_set_net_state(c->db, g->best, "retired", c->best_elo);
    xqc_db_set_net_state(c->db, g->cand, "best", new_elo);
    xqc_db_add_promotion(c->db, g->cand, g->best, g->cand_step, g->match_id, score, new_elo);
    c->best = g->cand;
    c->best_elo = new_elo;
    c->promotions++;
    publish_announce(c);
  } else {
    xqc_db_set_net_state(c->db, g->cand, "rejected", c->best_elo + elo);
  }
  XQ_LOGI(COMP, "gating decided %s", c->last_gating);
  xqc_gate_close(g);
  if (c->queued_cand) {
    uint64_t q = c->queued_cand;
    c->queued_cand = 0;
    open_match(c, q, c->best, c->queued_step);
  }
}

static void on_arena_result(xqc_t *c, xqc_peer_t *p, uint64_t rq, const Xqz__ArenaResult *r) {
  if (!c->gate.open || r->match_id != c->gate.match_id) {
    /* A late result of a closed match: harmless, acknowledged and ignored. */
    send_ack(c, p, rq, r->pair_index, false, "match closed");
    return;
  }
  if (xqc_gate_result(&c->gate, (int)r->pair_index, r->result_a_red, r->result_a_black) < 0) {
    xqc_peer_fault(c, p, "bad arena result");
    send_ack(c, p, rq, r->pair_index, false, "bad pair index or result");
    return;
  }
  send_ack(c, p, rq, r->pair_index, true, "");
  xqc_gate_decision_t d = xqc_gate_decide(&c->gate, &c->cfg);
  if (d != XQC_GATE_OPEN) close_match(c, d);
}

static void on_candidate(xqc_t *c, xqc_peer_t *p, uint64_t rq, const Xqz__CandidateNet *cn) {
  xq_errbuf_t eb;
  nn_model_t *m = NULL;
  nn_file_meta_t meta;
  int rc = nn_file_decode(&m, &meta, cn->net.data, cn->net.len, &eb);
  nn_model_free(&m);
  if (rc < 0) {
    xqc_peer_fault(c, p, "candidate net does not decode");
    send_ack(c, p, rq, cn->step, false, eb.msg);
    return;
  }
  char why[400];
  if (!xqc_identity_candidate_ok(c, p, &meta, why, sizeof why)) {
    send_ack(c, p, rq, cn->step, false, why);
    return;
  }
  if ((int64_t)cn->step > c->trainer_step) c->trainer_step = (int64_t)cn->step;
  char path[1024];
  xqc_net_path(path, sizeof path, c->dir, meta.net_id);
  FILE *exists = fopen(path, "rb");
  if (exists) {
    fclose(exists);
    send_ack(c, p, rq, cn->step, false, "net id already known");
    return;
  }
  const void *parts[1] = {cn->net.data};
  size_t sizes[1] = {cn->net.len};
  if (xq_atomic_write(path, parts, sizes, 1, &eb) < 0) {
    XQ_LOGE(COMP, "cannot store candidate reason=\"%s\"", eb.msg);
    xqc_reply_error(c, p->rid, p->rid_len, rq, ERR_INTERNAL, "cannot store the net");
    return;
  }
  xqc_db_add_net(c->db, meta.net_id, c->best, (int64_t)cn->step, "candidate");
  XQ_LOGI(COMP, "candidate received net=%016llx step=%llu bytes=%zu",
          (unsigned long long)meta.net_id, (unsigned long long)cn->step, cn->net.len);
  send_ack(c, p, rq, cn->step, true, "");
  if (c->gate.open) {
    c->queued_cand = meta.net_id;
    c->queued_step = (int64_t)cn->step;
    return;
  }
  open_match(c, meta.net_id, c->best, (int64_t)cn->step);
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
    xqc_reply_error(c, p->rid, p->rid_len, rq, ERR_INTERNAL, "status not available");
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
    xqc_reply_error(c, p->rid, p->rid_len, rq, ERR_INTERNAL, "promotions not available");
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

/* The worker id a message speaks for (Hello, GameRecord), or NULL. */
static const char *named_worker(const Xqz__Envelope *env) {
  switch (env->body_case) {
  case XQZ__ENVELOPE__BODY_HELLO: return env->hello->worker_id;
  case XQZ__ENVELOPE__BODY_GAME: return env->game->worker_id;
  default: return NULL;
  }
}

static void dispatch(xqc_t *c, int pi, Xqz__Envelope *env) {
  xqc_peer_t *p = &c->peers[pi];
  uint64_t rq = env->request_id;
  if (p->hello) {
    xqc_worker_t *w = xqc_workers_find(&c->workers, p->worker_id);
    if (w) xqc_worker_touch(w, xqc_now_ms());
  }
  /* A banned peer's games get a refusing Ack (ingest.c) so it stops resending them;
   * anything else it asks gets an Error. */
  if (env->body_case != XQZ__ENVELOPE__BODY_GAME &&
      (xqc_peer_banned(c, p) || xqc_bans_match(&c->bans, named_worker(env), NULL))) {
    xqc_reply_error(c, p->rid, p->rid_len, rq, ERR_BANNED, "banned");
    return;
  }
  switch (env->body_case) {
  case XQZ__ENVELOPE__BODY_HELLO: on_hello(c, p, rq, env->hello); break;
  case XQZ__ENVELOPE__BODY_HEARTBEAT: on_heartbeat(c, p, rq, env->heartbeat); break;
  case XQZ__ENVELOPE__BODY_JOB_REQUEST: on_job_request(c, p, rq); break;
  case XQZ__ENVELOPE__BODY_GAME: xqc_ingest_game(c, p, rq, env->game); break;
  case XQZ__ENVELOPE__BODY_ARENA_RESULT: on_arena_result(c, p, rq, env->arena_result); break;
  case XQZ__ENVELOPE__BODY_NET_REQUEST: on_net_request(c, p, rq, env->net_request); break;
  case XQZ__ENVELOPE__BODY_BATCH_REQUEST: on_batch_request(c, p, rq, env->batch_request); break;
  case XQZ__ENVELOPE__BODY_CANDIDATE: on_candidate(c, p, rq, env->candidate); break;
  case XQZ__ENVELOPE__BODY_STATUS_REQUEST: on_status(c, p, rq); break;
  case XQZ__ENVELOPE__BODY_PROMOTIONS_REQUEST:
    on_promotions(c, p, rq, env->promotions_request);
    break;
  case XQZ__ENVELOPE__BODY_ADMIN_REQUEST: xqc_admin_request(c, p, rq, env->admin_request); break;
  default:
    xqc_peer_fault(c, p, "unexpected message type");
    xqc_reply_error(c, p->rid, p->rid_len, rq, ERR_UNEXPECTED, "unexpected message type");
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
    const char *key = head.user_id;
    if (rc == XQ_EIO) continue; /* EAGAIN or a vanished frame: look at ZMQ_EVENTS again */
    int pi = rid_len ? peer_get(c, rid, rid_len) : -1;
    if (pi < 0) {
      xq_wire_free(&env);
      continue;
    }
    xqc_peer_t *p = &c->peers[pi];
    if (strcmp(p->key, key)) {
      /* A routing id handed over to a connection with another key is another peer. */
      if (p->key[0]) {
        uint64_t seen = p->last_seen_ms;
        memset(p, 0, sizeof *p);
        memcpy(p->rid, rid, rid_len);
        p->rid_len = rid_len;
        p->last_seen_ms = seen;
      }
      memcpy(p->key, key, sizeof p->key);
    }
    uint64_t now = xqc_now_ms();
    p->last_seen_ms = now;
    char id[XQC_IDENTITY_MAX];
    xqc_peer_identity(p, id, sizeof id);
    p->cut = xqc_cutoff_active(&c->cutoff, id, now);
    const char *named = rc == 0 && !p->key[0] ? named_worker(env) : NULL;
    if (!p->cut && named && named[0] && strcmp(named, p->worker_id)) {
      /* Without CURVE, a cut-off worker on a new connection is known by the worker id its
       * Hello or its games carry. */
      snprintf(id, sizeof id, "worker:%s", named);
      if (xqc_cutoff_active(&c->cutoff, id, now)) {
        xq_wire_free(&env);
        continue;
      }
    }
    if (p->cut) {
      xq_wire_free(&env);
      continue;
    }
    if (rc == XQ_EVERSION) {
      refuse_version(c, p, &head);
      continue;
    }
    if (rc < 0) {
      xqc_peer_fault(c, p, eb.msg[0] ? eb.msg : xq_strerror(rc));
      if (!p->cut)
        xqc_reply_error(c, rid, rid_len, 0, ERR_MALFORMED, eb.msg[0] ? eb.msg : xq_strerror(rc));
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
  XQ_LOGI(COMP, "status games=%llu positions=%llu window=%llu workers=%u best=%016llx "
          "trainer_step=%lld served=%llu rejected=%llu duplicates=%llu gating=\"%s\"",
          (unsigned long long)c->games, (unsigned long long)c->positions,
          (unsigned long long)c->replay.count, count_workers(c), (unsigned long long)c->best,
          (long long)c->trainer_step, (unsigned long long)c->samples_served,
          (unsigned long long)c->rejected_games, (unsigned long long)c->duplicates,
          c->gate.open ? "match open" : c->last_gating);
}

static void on_timer(uv_timer_t *t) {
  xqc_t *c = t->data;
  uint64_t now = xqc_now_ms();
  xqc_ingest_flush(c);
  xqc_status_rate_sample(c, now);
  xqc_status_balance_tick(c, now);
  /* Worker statistics are worth a transaction a second, not one per fsync tick. */
  if (now - c->last_workers_save_ms >= 1000) {
    c->last_workers_save_ms = now;
    xqc_workers_save(&c->workers, c->db);
  }
  if (now - c->last_status_ms >= (uint64_t)c->cfg.status_ms) {
    c->last_status_ms = now;
    status_line(c);
  }
  xqc_cutoff_limits_t lim = cutoff_limits(c);
  xqc_cutoff_expire(&c->cutoff, now, &lim);
  /* Peers silent for ten timeouts are forgotten (a reconnecting worker gets a new routing
   * id); cut-offs are kept by identity (cutoff.h), so forgetting a peer does not lift one.
   * Queued acks hold their own copy of the routing id, so forgetting a peer never loses an
   * ack. */
  int kept = 0;
  for (int i = 0; i < c->npeers; i++) {
    xqc_peer_t *p = &c->peers[i];
    uint64_t silent = now - p->last_seen_ms;
    bool alive = silent <= (uint64_t)c->cfg.worker_timeout_ms;
    if (p->alive && !alive)
      XQ_LOGW(COMP, "peer silent, presumed gone worker=%s", p->worker_id);
    p->alive = alive;
    if (silent > 10u * (uint64_t)c->cfg.worker_timeout_ms) continue;
    if (kept != i) c->peers[kept] = *p;
    kept++;
  }
  c->npeers = kept;
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
  c->router = zmq_socket(c->zctx, ZMQ_ROUTER);
  c->pub = zmq_socket(c->zctx, ZMQ_PUB);
  if (!c->router || !c->pub) return xq_err_set(eb, XQ_EIO, "zmq sockets: %s", zmq_strerror(zmq_errno()));
  int one = 1;
  zmq_setsockopt(c->router, ZMQ_ROUTER_HANDOVER, &one, sizeof one);
  int64_t maxmsg = c->cfg.max_message_bytes;
  if (xq_wire_socket_setup(c->router) < 0 || xq_wire_socket_setup(c->pub) < 0 ||
      zmq_setsockopt(c->router, ZMQ_MAXMSGSIZE, &maxmsg, sizeof maxmsg) != 0)
    return xq_err_set(eb, XQ_EIO, "zmq socket options: %s", zmq_strerror(zmq_errno()));
  /* The ZAP handler must be bound before the CURVE sockets accept anyone. */
  int rc = xqc_auth_bind(&c->auth, c->zctx, eb);
  if (rc == 0) rc = xqc_auth_apply(&c->auth, c->router, eb);
  if (rc == 0) rc = xqc_auth_apply(&c->auth, c->pub, eb);
  if (rc < 0) return rc;
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
  /* A match cut short by a restart starts again from zero games. */
  uint64_t pend;
  int64_t pend_step;
  if (xqc_db_pending_candidate(c->db, &pend, &pend_step) == 0 && pend) {
    XQ_LOGI(COMP, "reopening the gating match of a candidate from before the restart"
            " candidate=%016llx", (unsigned long long)pend);
    open_match(c, pend, c->best, pend_step);
  }
  XQ_LOGI(COMP, "listening router=%s pub=%s best=%016llx curve=%s campaign=%016llx",
          c->cfg.router, c->cfg.pub, (unsigned long long)c->best, c->auth.on ? "on" : "off",
          (unsigned long long)c->campaign_id);
  status_line(c);
  drain(c);
  uv_run(c->loop, UV_RUN_DEFAULT);
  /* Stopping: make everything acknowledged durable, send the last acks, close. */
  xqc_ingest_flush(c);
  xqc_workers_save(&c->workers, c->db);
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
  net_cache_free();
  return 0;
}
