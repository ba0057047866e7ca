/*
 * status.c: the Status and Promotions messages (see status.h), and the watched
 * quantities behind them: the ingest rate ring and the trainer's loss reports.
 *
 * A message is assembled from temporary pieces (a list of allocations freed together),
 * packed, and unpacked again: the caller gets one protobuf-c tree that
 * xqz__status__free_unpacked frees whole, however the message was put together.
 */
#include "status.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "population/events.h"
#include "population_round.h"
#include "search/elo.h"
#include "support/log.h"
#include "support/version.h"
#include "wire/wire.h"

#define COMP "status"

/* Temporary storage of one build: every piece is freed by tmp_free. */
typedef struct {
  void **p;
  int n, cap;
  bool failed;
} tmp_t;

static void *tmp_alloc(tmp_t *t, size_t size) {
  if (t->failed) return NULL;
  if (t->n == t->cap) {
    int ncap = t->cap ? t->cap * 2 : 64;
    void **np = realloc(t->p, (size_t)ncap * sizeof *np);
    if (!np) {
      t->failed = true;
      return NULL;
    }
    t->p = np;
    t->cap = ncap;
  }
  void *m = calloc(1, size ? size : 1);
  if (!m) {
    t->failed = true;
    return NULL;
  }
  t->p[t->n++] = m;
  return m;
}

static char *tmp_str(tmp_t *t, const char *s) {
  size_t n = strlen(s);
  char *d = tmp_alloc(t, n + 1);
  if (d) memcpy(d, s, n + 1);
  return d;
}

static void tmp_free(tmp_t *t) {
  for (int i = 0; i < t->n; i++) free(t->p[i]);
  free(t->p);
  memset(t, 0, sizeof *t);
}

/* An Elo as shown: rounded to 0.01 and never -0, so chained sums show 0, not 5.68e-14
 * (issue 49 item 8). Infinite and NaN values pass as they are (JSON null). */
static double tidy_elo(double elo) {
  if (!isfinite(elo)) return elo;
  return round(elo * 100.0) / 100.0 + 0.0; /* + 0.0 turns -0 into 0 */
}

/* One MatchStatus for Status.open_match, Status.recent_matches and Promotions. The Elo
 * interval comes from the W/D/L (trinomial); `elo` is the one the gate decided with. A
 * match without a decisive game has no interval (the draws alone say nothing of its width,
 * and "0 +- 0" claimed certainty): both ends are left open, shown as null in JSON. */
static Xqz__MatchStatus *match_status(tmp_t *t, const xqc_match_info_t *r) {
  Xqz__MatchStatus *m = tmp_alloc(t, sizeof *m);
  if (!m) return NULL;
  xqz__match_status__init(m);
  xq_elo_est_t est;
  xq_elo_trinomial(r->wins, r->draws, r->losses, &est);
  m->match_id = r->match_id;
  m->net_a = r->net_a;
  m->net_b = r->net_b;
  m->step = r->step;
  m->wins = r->wins;
  m->draws = r->draws;
  m->losses = r->losses;
  m->score = r->score;
  m->elo = tidy_elo(r->elo);
  bool decisive = r->wins + r->losses > 0;
  m->elo_lo = decisive ? tidy_elo(est.elo_lo) : -INFINITY;
  m->elo_hi = decisive ? tidy_elo(est.elo_hi) : INFINITY;
  m->decision = tmp_str(t, r->decision);
  m->time = r->time;
  m->best_elo = tidy_elo(r->best_elo);
  return m->decision ? m : NULL;
}

/* The decided matches with id > after (newest > 0: only the newest ones). */
static int match_list(tmp_t *t, xqc_t *c, uint64_t after, int newest, int max_rows,
                      Xqz__MatchStatus ***out, size_t *n) {
  xqc_match_info_t *rows = NULL;
  int nr = 0;
  *out = NULL;
  *n = 0;
  int rc = xqc_db_matches(c->db, after, newest, max_rows, &rows, &nr);
  if (rc < 0) return rc;
  Xqz__MatchStatus **v = tmp_alloc(t, (size_t)nr * sizeof *v);
  for (int i = 0; v && i < nr; i++) v[i] = match_status(t, &rows[i]);
  free(rows);
  if (t->failed) return XQ_ENOMEM;
  *out = v;
  *n = (size_t)nr;
  return 0;
}

static Xqz__MatchStatus *open_match(tmp_t *t, const xqc_t *c) {
  const xqc_gate_t *g = &c->gate;
  if (!g->open) return NULL;
  xqc_match_info_t r;
  memset(&r, 0, sizeof r);
  r.match_id = g->match_id;
  r.net_a = g->cand;
  r.net_b = g->best;
  r.step = g->cand_step;
  r.wins = g->w;
  r.draws = g->d;
  r.losses = g->l;
  xqc_gate_score(g, &r.score, &r.elo);
  snprintf(r.decision, sizeof r.decision, "open");
  r.best_elo = c->best_elo;
  return match_status(t, &r);
}

static Xqz__AnchorPoint *anchor_point(tmp_t *t, const xqc_anchor_row_t *r) {
  Xqz__AnchorPoint *a = tmp_alloc(t, sizeof *a);
  if (!a) return NULL;
  xqz__anchor_point__init(a);
  a->net_id = r->net;
  a->anchor = tmp_str(t, r->anchor);
  a->wins = r->wins;
  a->draws = r->draws;
  a->losses = r->losses;
  a->score = r->score;
  a->time = r->time;
  a->promotion = r->promotion;
  a->step = r->step;
  a->games = r->wins + r->draws + r->losses;
  return a;
}

/* Every decided anchor match (the newest XQC_ANCHOR_HISTORY), oldest first. */
static int anchor_list(tmp_t *t, xqc_t *c, Xqz__AnchorPoint ***out, size_t *n) {
  *out = NULL;
  *n = 0;
  xqc_anchor_row_t *rows = NULL;
  int nr = 0;
  int rc = xqc_anchor_db_history(c->db, XQC_ANCHOR_HISTORY, &rows, &nr);
  if (rc < 0) return rc;
  Xqz__AnchorPoint **v = tmp_alloc(t, (size_t)(nr ? nr : 1) * sizeof *v);
  for (int i = 0; v && i < nr; i++) v[i] = anchor_point(t, &rows[i]);
  free(rows);
  if (v) {
    *out = v;
    *n = (size_t)nr;
  }
  return 0;
}

/* The open anchor match so far (NULL when none). */
static Xqz__AnchorPoint *open_anchor(tmp_t *t, const xqc_t *c) {
  const xqc_anchor_t *a = &c->anchor;
  if (!a->gate.open) return NULL;
  int64_t games = a->gate.w + a->gate.d + a->gate.l;
  xqc_anchor_row_t r = {a->gate.match_id, a->gate.cand, "", a->promotion, a->step, a->gate.w,
                        a->gate.d, a->gate.l, 0, games ? (a->gate.w + 0.5 * a->gate.d) / games : 0};
  snprintf(r.anchor, sizeof r.anchor, "%s", a->spec);
  Xqz__AnchorPoint *p = anchor_point(t, &r);
  if (p) p->games = 2 * (int64_t)a->gate.npairs;
  return p;
}

static Xqz__LossPoint *loss_point(tmp_t *t, const xqc_loss_row_t *l) {
  Xqz__LossPoint *p = tmp_alloc(t, sizeof *p);
  if (!p) return NULL;
  xqz__loss_point__init(p);
  p->step = l->step;
  p->time = l->time;
  p->loss = (float)l->loss;
  p->policy = (float)l->policy;
  p->value = (float)l->value;
  return p;
}

static Xqz__WorkerStatus *worker_status(tmp_t *t, const xqc_t *c, const xqc_worker_t *w,
                                        uint64_t now) {
  Xqz__WorkerStatus *s = tmp_alloc(t, sizeof *s);
  uint64_t *reasons = tmp_alloc(t, XQC_REASONS * sizeof *reasons);
  if (!s || !reasons) return NULL;
  xqz__worker_status__init(s);
  s->worker_id = tmp_str(t, w->id);
  s->host = tmp_str(t, w->host);
  s->software_version = tmp_str(t, w->version);
  s->precision = tmp_str(t, w->precision);
  s->key = tmp_str(t, w->key);
  s->threads = w->threads;
  s->role = (Xqz__Role)w->role;
  s->net_id = w->net_id;
  s->games = w->games;
  s->positions = w->positions;
  s->rejected = w->rejected;
  s->faults = w->faults;
  s->last_seen_ms_ago = xqc_worker_ago_ms(w, now);
  s->alive = xqc_worker_alive(w, now, (uint64_t)c->cfg.worker_timeout_ms);
  s->paused = s->alive && w->paused;
  s->pause_reason = tmp_str(t, s->paused ? w->pause_reason : "");
  s->banned = w->banned;
  s->red_wins = w->red_wins;
  s->black_wins = w->black_wins;
  s->draws = w->draws;
  memcpy(reasons, w->by_reason, XQC_REASONS * sizeof *reasons);
  s->by_reason = reasons;
  s->n_by_reason = XQC_REASONS;
  s->avg_plies = w->games ? (double)w->plies / (double)w->games : 0.0;
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  int64_t wall = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
  s->games_day = xqc_worker_games_day(w, wall);
  s->last_game_time = w->last_game_unix_ms / 1000;
  s->state = tmp_str(t, xqc_worker_state(w, now, (uint64_t)c->cfg.worker_timeout_ms, wall));
  return s->state ? s : NULL;
}

/* Every limit in force, by setting name (the settings table says which are limits). */
static void limits(tmp_t *t, const xqc_t *c, Xqz__Status *s) {
  const char *name;
  double value;
  size_t n = 0;
  while (xqc_config_limit(&c->cfg, (int)n, &name, &value) == 0) n++;
  Xqz__Setting **v = tmp_alloc(t, n * sizeof *v);
  Xqz__Setting *set = tmp_alloc(t, n * sizeof *set);
  if (!v || !set) return;
  for (size_t i = 0; i < n; i++) {
    xqz__setting__init(&set[i]);
    xqc_config_limit(&c->cfg, (int)i, &name, &value);
    set[i].name = (char *)name;
    set[i].value = value;
    v[i] = &set[i];
  }
  s->limits = v;
  s->n_limits = n;
}

/* The campaign's name: the last component of its directory. */
static char *base_name(tmp_t *t, const char *dir) {
  size_t n = strlen(dir);
  while (n > 1 && dir[n - 1] == '/') n--;
  size_t b = n;
  while (b > 0 && dir[b - 1] != '/') b--;
  char *d = tmp_alloc(t, n - b + 1);
  if (d) memcpy(d, dir + b, n - b);
  return d;
}

/* MemberSettings from a settings array (members.h order). */
static Xqz__MemberSettings *member_settings(tmp_t *t, const double *v) {
  Xqz__MemberSettings *m = tmp_alloc(t, sizeof *m);
  if (!m) return NULL;
  xqz__member_settings__init(m);
  m->lr_scale = v[XQC_MS_LR_SCALE];
  m->l2 = v[XQC_MS_L2];
  m->value_weight = v[XQC_MS_VALUE_WEIGHT];
  m->batch = (uint32_t)v[XQC_MS_BATCH];
  return m;
}

/* Slot i of the members table as users see it (1-based; parent 0: none). */
static Xqz__MemberStatus *member_status(tmp_t *t, const xqc_t *c, int i, uint64_t now) {
  const xqc_member_t *m = &c->members.slot[i];
  Xqz__MemberStatus *s = tmp_alloc(t, sizeof *s);
  if (!s) return NULL;
  xqz__member_status__init(s);
  s->slot = (uint32_t)i + 1;
  s->host = tmp_str(t, m->host);
  /* Held, and heard from within the timeout (the table frees a silent slot only when
   * another trainer asks for one). */
  s->alive = m->held && (now < m->last_seen_ms ||
                         now - m->last_seen_ms <= (uint64_t)c->cfg.worker_timeout_ms);
  s->step = m->last_step > 0 ? (uint64_t)m->last_step : 0;
  s->settings = member_settings(t, m->settings);
  s->rated = m->rated;
  s->elo = m->rated ? tidy_elo(m->elo) : 0;
  s->elo_lo = m->rated ? tidy_elo(m->elo_lo) : 0;
  s->elo_hi = m->rated ? tidy_elo(m->elo_hi) : 0;
  s->generation = m->generation > 0 ? (uint32_t)m->generation : 0;
  s->parent = m->parent >= 0 ? (uint32_t)m->parent + 1 : 0;
  s->net_id = m->last_net;
  s->control = i == c->members.control;
  return s->host && s->settings ? s : NULL;
}

static Xqz__PbtEvent *pbt_event(tmp_t *t, const xqc_pop_event_t *e) {
  Xqz__PbtEvent *v = tmp_alloc(t, sizeof *v);
  if (!v) return NULL;
  xqz__pbt_event__init(v);
  v->round = e->round;
  v->member = (uint32_t)e->member + 1;
  v->donor = (uint32_t)e->donor + 1;
  v->generation = e->generation > 0 ? (uint32_t)e->generation : 0;
  v->before = member_settings(t, e->before);
  v->after = member_settings(t, e->after);
  v->member_elo = tidy_elo(e->member_elo);
  v->donor_elo = tidy_elo(e->donor_elo);
  v->time = e->time;
  v->donor_net = e->donor_net;
  return v->before && v->after ? v : NULL;
}

/* Status.population (NULL without a population): the members and the newest events. */
static int population(tmp_t *t, xqc_t *c, uint64_t now, Xqz__Population **out) {
  *out = NULL;
  if (c->cfg.population <= 0) return 0;
  Xqz__Population *p = tmp_alloc(t, sizeof *p);
  if (!p) return XQ_ENOMEM;
  xqz__population__init(p);
  p->size = (uint32_t)c->cfg.population;
  p->share = c->cfg.pbt_share;
  p->rounds = c->members.round;
  p->interval_steps = (uint64_t)c->cfg.pbt_interval_steps;
  xqc_round_progress(c, &p->round_games, &p->round_games_max);
  int k = c->members.k;
  p->members = tmp_alloc(t, (size_t)(k ? k : 1) * sizeof *p->members);
  for (int i = 0; p->members && i < k; i++) p->members[i] = member_status(t, c, i, now);
  p->n_members = p->members ? (size_t)k : 0;
  xqc_pop_event_t *ev = NULL;
  int ne = 0;
  int rc = xqc_pop_event_history(c->db, XQC_EVENTS_HISTORY, &ev, &ne);
  p->events = tmp_alloc(t, (size_t)(ne ? ne : 1) * sizeof *p->events);
  for (int i = 0; p->events && i < ne; i++) p->events[i] = pbt_event(t, &ev[i]);
  p->n_events = p->events ? (size_t)ne : 0;
  free(ev);
  *out = p;
  return t->failed ? XQ_ENOMEM : rc;
}

/* Packs msg (with its descriptor's functions) and unpacks a copy the caller owns. */
static void *repack(const ProtobufCMessage *msg) {
  size_t len = protobuf_c_message_get_packed_size(msg);
  uint8_t *buf = malloc(len ? len : 1);
  if (!buf) return NULL;
  protobuf_c_message_pack(msg, buf);
  ProtobufCMessage *copy = protobuf_c_message_unpack(msg->descriptor, NULL, len, buf);
  free(buf);
  return copy;
}

static xqc_balance_in_t balance_in(const xqc_t *c) {
  xqc_balance_in_t in = {c->positions, c->window.samples_served, c->window.replay.count,
                         c->window.replay.cap,
                         (uint64_t)c->cfg.min_positions, c->cfg.reuse,
                         (uint64_t)c->cfg.balance_window_s * 1000u,
                         (uint64_t)c->cfg.balance_warn_s * 1000u,
                         (uint64_t)c->cfg.worker_timeout_ms};
  return in;
}

static Xqz__Balance *balance(tmp_t *t, const xqc_t *c, uint64_t now) {
  Xqz__Balance *b = tmp_alloc(t, sizeof *b);
  if (!b) return NULL;
  xqz__balance__init(b);
  xqc_balance_in_t in = balance_in(c);
  xqc_balance_view_t v;
  xqc_balance_view(&c->stats.balance, &in, now, &v);
  b->span_s = v.span_s;
  b->positions_per_s = v.positions_per_s;
  b->samples_per_s = v.samples_per_s;
  b->reuse = v.reuse;
  b->reuse_target = c->cfg.reuse;
  b->turnover_s = v.turnover_s;
  xqc_self_balance_cfg_t sc = xqc_status_self_balance_cfg(c);
  b->job_sims = (uint32_t)xqc_self_balance_sims(&c->stats.self_balance, &sc);
  b->trainer_busy = v.trainer_busy;
  b->paced_requests = v.paced;
  b->state = (char *)xqc_balance_state_name(v.state);
  b->advice = (char *)xqc_balance_advice(v.state);
  b->state_s = v.state_s;
  return b;
}

void xqc_status_batch_answered(xqc_t *c, const xqc_peer_t *p, xqc_batch_answer_t answer) {
  xqc_balance_request(&c->stats.balance, p->rid, p->rid_len, answer, xqc_now_ms());
}

xqc_self_balance_cfg_t xqc_status_self_balance_cfg(const xqc_t *c) {
  xqc_self_balance_cfg_t sc = {c->cfg.self_balance != 0, c->cfg.sims, c->cfg.sims_max,
                               (uint64_t)c->cfg.balance_warn_s * 1000u};
  return sc;
}

static int pairs_done(const xqc_gate_t *g);
static void progress_log(xqc_t *c, uint64_t now);

void xqc_status_balance_tick(xqc_t *c, uint64_t now_ms) {
  xqc_progress_t *pr = &c->stats.balance.progress;
  xqc_progress_pairs(pr, 0, c->gate.open ? c->gate.match_id : 0, pairs_done(&c->gate), now_ms);
  xqc_progress_pairs(pr, 1, c->anchor.gate.open ? c->anchor.gate.match_id : 0,
                     pairs_done(&c->anchor.gate), now_ms);
  if (c->cfg.status_ms > 0 && now_ms - pr->last_log_ms >= (uint64_t)c->cfg.status_ms) {
    if (pr->last_log_ms) progress_log(c, now_ms);
    pr->last_log_ms = now_ms;
  }
  xqc_balance_in_t in = balance_in(c);
  xqc_balance_tick(&c->stats.balance, &in, now_ms);
  xqc_self_balance_cfg_t sc = xqc_status_self_balance_cfg(c);
  int moved = xqc_self_balance_tick(&c->stats.self_balance, &sc, c->stats.balance.state,
                                    c->stats.balance.state_since_ms, now_ms);
  if (moved)
    XQ_LOGI(COMP, "self_balance: job simulations %s sims=%lld state=%s floor=%lld cap=%lld",
            moved > 0 ? "raised (the trainer cannot keep up)" : "lowered (the trainer waits)",
            (long long)xqc_self_balance_sims(&c->stats.self_balance, &sc),
            xqc_balance_state_name(c->stats.balance.state), (long long)sc.floor, (long long)sc.cap);
  if (c->window.replay.grow_failed && !c->window.replay.grow_reported) {
    c->window.replay.grow_reported = true;
    XQ_LOGW(COMP, "the replay window cannot grow (out of memory) and stays at its size; lower"
            " window_max to what this machine holds window=%llu window_max=%lld",
            (unsigned long long)c->window.replay.cap, (long long)c->cfg.window_max);
  }
}

/* Pairs of a match scored so far. */
static int pairs_done(const xqc_gate_t *g) {
  int n = 0;
  for (int i = 0; g->open && g->state && i < g->npairs; i++) n += g->state[i] == 2;
  return n;
}

/* Status.progress: when the next candidate, the end of the open matches, the next anchor
 * match and the end of a bounded run are due, from the rates measured lately. */
static Xqz__Progress *progress(tmp_t *t, const xqc_t *c, uint64_t now) {
  Xqz__Progress *p = tmp_alloc(t, sizeof *p);
  if (!p) return NULL;
  xqz__progress__init(p);
  const xqc_progress_t *pr = &c->stats.balance.progress;
  uint64_t step = (uint64_t)c->trainer_step;
  p->steps_per_s = xqc_progress_step_rate(pr, now);
  p->candidate_every = pr->candidate_every;
  p->next_candidate_step = xqc_progress_next_multiple(step, pr->candidate_every);
  p->next_candidate_s = p->next_candidate_step
                            ? xqc_progress_eta((double)(p->next_candidate_step - step),
                                               p->steps_per_s)
                            : NAN;
  p->max_steps = pr->candidate_every ? pr->max_steps : 0;
  p->bounded = p->max_steps > 0;
  p->end_s = p->bounded ? xqc_progress_eta((double)p->max_steps - (double)step, p->steps_per_s)
                        : NAN;
  p->pairs_per_s = xqc_progress_pair_rate(pr, now);
  const xqc_gate_t *g = &c->gate;
  p->match_end_s = p->anchor_end_s = NAN;
  if (g->open) {
    p->match_games = g->w + g->d + g->l;
    p->match_games_max = 2 * (int64_t)g->npairs;
    p->match_end_s = xqc_progress_eta((double)(g->npairs - pairs_done(g)), p->pairs_per_s);
  }
  const xqc_gate_t *ag = &c->anchor.gate;
  if (ag->open) {
    p->anchor_games = ag->w + ag->d + ag->l;
    p->anchor_games_max = 2 * (int64_t)ag->npairs;
    /* Gating pairs go out first: the anchor match ends after the gating match. */
    int left = ag->npairs - pairs_done(ag) + (g->open ? g->npairs - pairs_done(g) : 0);
    p->anchor_end_s = xqc_progress_eta((double)left, p->pairs_per_s);
  } else if (c->cfg.anchor_games > 0 && c->cfg.anchor_every > 0) {
    /* Net 1 is promotion 1, then every anchor_every-th (anchors.c): the next promotion
     * numbered 1 + k * anchor_every after the current one. */
    int64_t every = c->cfg.anchor_every, cur = c->promotions;
    int64_t next = cur < 1 ? 1 : 1 + ((cur - 1) / every + 1) * every;
    p->next_anchor_promotion = next;
    p->promotions_to_anchor = next - cur;
  }
  return p;
}

/* "12m05s", "unknown" for NaN: the progress log line. */
static void eta_text(char *buf, size_t n, double s) {
  if (!isfinite(s)) snprintf(buf, n, "unknown");
  else if (s < 3600) snprintf(buf, n, "%dm%02ds", (int)s / 60, (int)s % 60);
  else snprintf(buf, n, "%dh%02dm", (int)(s / 3600), (int)s / 60 % 60);
}

/* The progress line of the log, beside the status line (same period). */
static void progress_log(xqc_t *c, uint64_t now) {
  tmp_t t;
  memset(&t, 0, sizeof t);
  Xqz__Progress *p = progress(&t, c, now);
  if (p) {
    char cand[32], match[32], anchor[32], end[32];
    eta_text(cand, sizeof cand, p->next_candidate_s);
    eta_text(match, sizeof match, p->match_end_s);
    eta_text(anchor, sizeof anchor, p->anchor_end_s);
    eta_text(end, sizeof end, p->end_s);
    XQ_LOGI(COMP, "progress steps_per_s=%.2f next_candidate_step=%llu next_candidate_in=%s"
            " match_games=%lld/%lld match_end_in=%s anchor_end_in=%s next_anchor_promotion=%lld"
            " run_end_in=%s", isfinite(p->steps_per_s) ? p->steps_per_s : 0.0,
            (unsigned long long)p->next_candidate_step, cand, (long long)p->match_games,
            (long long)p->match_games_max, match, anchor, (long long)p->next_anchor_promotion,
            p->bounded ? end : "unbounded");
  }
  tmp_free(&t);
}

int xqc_status_build(xqc_t *c, Xqz__Status **out) {
  *out = NULL;
  tmp_t t;
  memset(&t, 0, sizeof t);
  uint64_t now = xqc_now_ms();
  uint64_t timeout = (uint64_t)c->cfg.worker_timeout_ms;
  Xqz__Status s;
  xqz__status__init(&s);
  s.best_net_id = c->best;
  s.campaign_id = c->campaign_id;
  s.games = c->games;
  s.positions = c->positions;
  s.window_positions = c->window.replay.count;
  s.workers = xqc_workers_alive(&c->stats.workers, XQZ__ROLE__ROLE_WORKER, now, timeout);
  s.trainer_step = (uint64_t)c->trainer_step;
  s.trainer_version = (char *)c->stats.trainer_version;
  s.promotions = (uint64_t)c->promotions;
  s.last_gating = c->last_gating;
  s.campaign = base_name(&t, c->dir);
  s.software_version = XQ_SOFTWARE_NAME;
  s.protocol_version = XQ_PROTOCOL_VERSION;
  s.best_elo = tidy_elo(c->best_elo);
  s.positions_per_s = xqc_status_rate(c);
  s.window_capacity = c->window.replay.cap;
  s.samples_served = c->window.samples_served;
  s.rejected_games = c->rejected_games;
  s.duplicates = c->duplicates;
  s.uptime_s = (int64_t)((now - c->stats.start_ms) / 1000u);
  s.gating_mode = (char *)xqc_gating_name(c->cfg.gating);
  s.arena_precision = (char *)xqc_arena_precision_name(c->cfg.arena_precision);
  s.banned_games = c->stats.banned_games;
  if (c->seg.blocked_since_ms) {
    s.storage_error = c->seg.error[0] ? c->seg.error : "games cannot be stored";
    s.storage_blocked_s = (int64_t)((now - c->seg.blocked_since_ms) / 1000u);
    s.storage_unstored_games = c->seg.blocked_games;
  }
  s.quarantine_files = c->seg.quarantine_files;
  s.quarantine_bytes = c->seg.quarantine_bytes;
  if (c->stats.last_loss.step || c->stats.last_loss.time)
    s.last_loss = loss_point(&t, &c->stats.last_loss);
  s.open_match = open_match(&t, c);
  s.balance = balance(&t, c, now);

  Xqz__WorkerStatus **wl = tmp_alloc(&t, (size_t)c->stats.workers.n * sizeof *wl);
  for (int i = 0; wl && i < c->stats.workers.n; i++)
    wl[i] = worker_status(&t, c, &c->stats.workers.w[i], now);
  s.worker_list = wl;
  s.n_worker_list = wl ? (size_t)c->stats.workers.n : 0;

  int rc = match_list(&t, c, 0, XQC_RECENT_MATCHES, 0, &s.recent_matches, &s.n_recent_matches);

  xqc_loss_row_t *losses = NULL;
  int nl = 0;
  if (rc == 0) rc = xqc_db_losses(c->db, XQC_LOSS_POINTS, &losses, &nl);
  Xqz__LossPoint **lh = tmp_alloc(&t, (size_t)nl * sizeof *lh);
  for (int i = 0; lh && i < nl; i++) lh[i] = loss_point(&t, &losses[i]);
  free(losses);
  s.loss_history = lh;
  s.n_loss_history = lh ? (size_t)nl : 0;

  xqc_throughput_row_t *tp = NULL;
  int nt = 0;
  if (rc == 0) rc = xqc_db_throughput(c->db, XQC_THROUGHPUT_POINTS, &tp, &nt);
  Xqz__ThroughputPoint **th = tmp_alloc(&t, (size_t)(nt + 1) * sizeof *th);
  xqc_throughput_row_t live = {(int64_t)time(NULL), c->games, c->positions};
  for (int i = 0; th && i <= nt; i++) {
    const xqc_throughput_row_t *x = i < nt ? &tp[i] : &live; /* then the counters now */
    Xqz__ThroughputPoint *q = tmp_alloc(&t, sizeof *q);
    if (!q) break;
    xqz__throughput_point__init(q);
    q->time = x->time;
    q->games = x->games;
    q->positions = x->positions;
    th[i] = q;
  }
  free(tp);
  s.throughput_history = th;
  s.n_throughput_history = th && !t.failed ? (size_t)nt + 1 : 0;

  if (rc == 0) rc = anchor_list(&t, c, &s.anchor_history, &s.n_anchor_history);
  s.open_anchor = open_anchor(&t, c);
  s.progress = progress(&t, c, now);
  if (rc == 0) rc = population(&t, c, now, &s.population);

  limits(&t, c, &s);
  if (rc == 0 && t.failed) rc = XQ_ENOMEM;
  if (rc == 0) {
    *out = repack(&s.base);
    if (!*out) rc = XQ_ENOMEM;
  }
  tmp_free(&t);
  return rc;
}

void xqc_status_free(Xqz__Status **s) {
  if (!s || !*s) return;
  xqz__status__free_unpacked(*s, NULL);
  *s = NULL;
}

int xqc_promotions_build(xqc_t *c, uint64_t after_match_id, Xqz__Promotions **out) {
  *out = NULL;
  tmp_t t;
  memset(&t, 0, sizeof t);
  Xqz__Promotions p;
  xqz__promotions__init(&p);
  int rc = match_list(&t, c, after_match_id, 0, XQC_PROMOTIONS_MAX, &p.matches, &p.n_matches);
  /* The anchors come with the first page: its readers print them beside the matches. */
  if (rc == 0 && after_match_id == 0) rc = anchor_list(&t, c, &p.anchors, &p.n_anchors);
  if (rc == 0 && t.failed) rc = XQ_ENOMEM;
  if (rc == 0) {
    *out = repack(&p.base);
    if (!*out) rc = XQ_ENOMEM;
  }
  tmp_free(&t);
  return rc;
}

void xqc_promotions_free(Xqz__Promotions **p) {
  if (!p || !*p) return;
  xqz__promotions__free_unpacked(*p, NULL);
  *p = NULL;
}

void xqc_status_rate_sample(xqc_t *c, uint64_t now_ms) {
  if (c->stats.rate.n) {
    int last = (c->stats.rate.head + XQC_RATE_SAMPLES - 1) % XQC_RATE_SAMPLES;
    if (now_ms - c->stats.rate.ms[last] < 1000) return;
  }
  c->stats.rate.ms[c->stats.rate.head] = now_ms;
  c->stats.rate.positions[c->stats.rate.head] = c->positions;
  c->stats.rate.head = (c->stats.rate.head + 1) % XQC_RATE_SAMPLES;
  if (c->stats.rate.n < XQC_RATE_SAMPLES) c->stats.rate.n++;
}

double xqc_status_rate(const xqc_t *c) {
  if (c->stats.rate.n < 2) return 0.0;
  int last = (c->stats.rate.head + XQC_RATE_SAMPLES - 1) % XQC_RATE_SAMPLES;
  /* The oldest sample at most a minute older than the newest. */
  int first = (c->stats.rate.head + XQC_RATE_SAMPLES - c->stats.rate.n) % XQC_RATE_SAMPLES;
  while (first != last && c->stats.rate.ms[last] - c->stats.rate.ms[first] > 60000)
    first = (first + 1) % XQC_RATE_SAMPLES;
  uint64_t dt = c->stats.rate.ms[last] - c->stats.rate.ms[first];
  if (dt == 0) return 0.0;
  return (double)(c->stats.rate.positions[last] - c->stats.rate.positions[first]) * 1000.0 /
         (double)dt;
}

void xqc_status_loss_report(xqc_t *c, const Xqz__BatchRequest *r) {
  xqc_progress_trainer(&c->stats.balance.progress, xqc_now_ms(), r->trainer_step,
                       r->candidate_every, r->max_steps);
  /* The loss curve never goes back in steps: a report below the last stored row (a
   * trainer resumed from an older checkpoint) is not kept. */
  if (r->loss_steps == 0 || r->trainer_step < c->stats.loss_saved_step) return;
  double k = r->loss_steps;
  c->stats.last_loss.step = r->trainer_step;
  c->stats.last_loss.time = (int64_t)time(NULL);
  c->stats.last_loss.loss = r->loss;
  c->stats.last_loss.policy = r->loss_policy;
  c->stats.last_loss.value = r->loss_value;
  /* The stored row is the mean over every step since the previous row. */
  c->stats.loss_acc.loss += k * r->loss;
  c->stats.loss_acc.policy += k * r->loss_policy;
  c->stats.loss_acc.value += k * r->loss_value;
  c->stats.loss_acc_steps += r->loss_steps;
  bool stepped = r->trainer_step >= c->stats.loss_saved_step + XQC_LOSS_EVERY_STEPS;
  if (!stepped || c->stats.last_loss.time < c->stats.loss_saved_time + XQC_LOSS_EVERY_S) return;
  xqc_loss_row_t row = c->stats.last_loss;
  row.loss = c->stats.loss_acc.loss / c->stats.loss_acc_steps;
  row.policy = c->stats.loss_acc.policy / c->stats.loss_acc_steps;
  row.value = c->stats.loss_acc.value / c->stats.loss_acc_steps;
  if (xqc_db_add_loss(c->db, &row) == 0) {
    c->stats.loss_saved_step = row.step;
    c->stats.loss_saved_time = row.time;
    memset(&c->stats.loss_acc, 0, sizeof c->stats.loss_acc);
    c->stats.loss_acc_steps = 0;
  }
}

void xqc_status_throughput_tick(xqc_t *c, bool force) {
  int64_t now = (int64_t)time(NULL);
  if (!force && now < c->stats.throughput_saved_time + XQC_THROUGHPUT_EVERY_S) return;
  xqc_throughput_row_t row = {now, c->games, c->positions};
  xqc_db_add_throughput(c->db, &row); /* a failure is logged; the next row comes in 30 s */
  c->stats.throughput_saved_time = now;
}

void xqc_status_open(xqc_t *c) {
  bool found;
  if (xqc_db_last_loss(c->db, &c->stats.last_loss, &found) == 0 && found) {
    c->stats.loss_saved_step = c->stats.last_loss.step;
    c->stats.loss_saved_time = c->stats.last_loss.time;
  }
  /* The trainer reports its step with each batch request; until it does after a restart,
   * the newest step the campaign stored (a loss point or a candidate) stands for it. */
  int64_t step = 0;
  if (xqc_db_trainer_step(c->db, &step) == 0 && step > c->trainer_step) c->trainer_step = step;
  xqc_workers_load(&c->stats.workers, c->db);
}
