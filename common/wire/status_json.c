/*
 * status_json.c: JSON text of Status and of a match list (see status_json.h).
 *
 * Shapes: every Status field under its proto name. Net ids (best_net_id, net_id, net_a,
 * net_b) are 16-digit hex strings; other integers are JSON numbers; a double that is not
 * finite (an Elo bound of a match won or lost 100%) is null; role is "worker",
 * "trainer", "cli" or "unknown"; by_reason is an object keyed by end reason name
 * ("checkmate", ...: xq_reason_name); limits is an object {name: value}; an absent
 * open_match, open_anchor, last_loss, balance or progress is null (and so is balance.trainer_busy before it is
 * measured); population is null without one (its members' settings by name, slots
 * 1-based, parent 0 for none).
 */
#include "wire/status_json.h"

#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rules/rules.h"

/* A growing string; after an allocation failure every append is a no-op and the
 * result is NULL. */
typedef struct {
  char *s;
  size_t n, cap;
  bool failed;
} jbuf_t;

static void jb_reserve(jbuf_t *b, size_t more) {
  if (b->failed || b->n + more + 1 <= b->cap) return;
  size_t ncap = b->cap ? b->cap : 1024;
  while (ncap < b->n + more + 1) ncap *= 2;
  char *ns = realloc(b->s, ncap);
  if (!ns) {
    b->failed = true;
    return;
  }
  b->s = ns;
  b->cap = ncap;
}

static void jb_put(jbuf_t *b, const char *s, size_t n) {
  jb_reserve(b, n);
  if (b->failed) return;
  memcpy(b->s + b->n, s, n);
  b->n += n;
  b->s[b->n] = '\0';
}

static void jb_lit(jbuf_t *b, const char *s) { jb_put(b, s, strlen(s)); }

static void jb_printf(jbuf_t *b, const char *fmt, ...) {
  char tmp[128];
  va_list ap;
  va_start(ap, fmt);
  int k = vsnprintf(tmp, sizeof tmp, fmt, ap);
  va_end(ap);
  if (k < 0 || (size_t)k >= sizeof tmp) {
    b->failed = true; /* never happens for the numbers written here */
    return;
  }
  jb_put(b, tmp, (size_t)k);
}

/* A JSON string: quotes, backslashes and control characters escaped; bytes >= 0x80
 * pass through (the texts are UTF-8 or ASCII from our own programs, but a peer's host
 * name is not trusted: invalid UTF-8 bytes are replaced by U+FFFD). */
static void jb_str(jbuf_t *b, const char *s) {
  jb_lit(b, "\"");
  const unsigned char *p = (const unsigned char *)(s ? s : "");
  while (*p) {
    unsigned char ch = *p;
    if (ch == '"' || ch == '\\') {
      char e[2] = {'\\', (char)ch};
      jb_put(b, e, 2);
      p++;
    } else if (ch < 0x20 || ch == 0x7f) {
      switch (ch) {
      case '\n': jb_lit(b, "\\n"); break;
      case '\r': jb_lit(b, "\\r"); break;
      case '\t': jb_lit(b, "\\t"); break;
      default: jb_printf(b, "\\u%04x", ch); break;
      }
      p++;
    } else if (ch < 0x80) {
      jb_put(b, (const char *)p, 1);
      p++;
    } else {
      /* Length of a valid UTF-8 sequence starting here, 0 when invalid. */
      int len = ch >= 0xc2 && ch <= 0xdf ? 2 : ch >= 0xe0 && ch <= 0xef ? 3
              : ch >= 0xf0 && ch <= 0xf4 ? 4 : 0;
      for (int i = 1; i < len; i++)
        if ((p[i] & 0xc0) != 0x80) len = 0;
      if (len == 3 && ((ch == 0xe0 && p[1] < 0xa0) || (ch == 0xed && p[1] >= 0xa0))) len = 0;
      if (len == 4 && ((ch == 0xf0 && p[1] < 0x90) || (ch == 0xf4 && p[1] >= 0x90))) len = 0;
      if (len) {
        jb_put(b, (const char *)p, (size_t)len);
        p += len;
      } else {
        jb_lit(b, "\\ufffd");
        p++;
      }
    }
  }
  jb_lit(b, "\"");
}

static void jb_key(jbuf_t *b, bool *first, const char *k) {
  if (!*first) jb_lit(b, ",");
  *first = false;
  jb_str(b, k);
  jb_lit(b, ":");
}

static void kv_str(jbuf_t *b, bool *first, const char *k, const char *v) {
  jb_key(b, first, k);
  jb_str(b, v);
}

static void kv_u64(jbuf_t *b, bool *first, const char *k, uint64_t v) {
  jb_key(b, first, k);
  jb_printf(b, "%llu", (unsigned long long)v);
}

static void kv_i64(jbuf_t *b, bool *first, const char *k, int64_t v) {
  jb_key(b, first, k);
  jb_printf(b, "%lld", (long long)v);
}

static void kv_id(jbuf_t *b, bool *first, const char *k, uint64_t v) {
  jb_key(b, first, k);
  jb_printf(b, "\"%016llx\"", (unsigned long long)v);
}

static void kv_bool(jbuf_t *b, bool *first, const char *k, bool v) {
  jb_key(b, first, k);
  jb_lit(b, v ? "true" : "false");
}

static void kv_dbl(jbuf_t *b, bool *first, const char *k, double v) {
  jb_key(b, first, k);
  if (isfinite(v)) jb_printf(b, "%.10g", v);
  else jb_lit(b, "null");
}

/* A float field: 7 significant digits, so 3.2f prints as 3.2, not 3.200000048. */
static void kv_flt(jbuf_t *b, bool *first, const char *k, float v) {
  jb_key(b, first, k);
  if (isfinite(v)) jb_printf(b, "%.7g", (double)v);
  else jb_lit(b, "null");
}

static const char *role_name(Xqz__Role r) {
  switch (r) {
  case XQZ__ROLE__ROLE_WORKER: return "worker";
  case XQZ__ROLE__ROLE_TRAINER: return "trainer";
  case XQZ__ROLE__ROLE_CLI: return "cli";
  default: return "unknown";
  }
}

static void match_obj(jbuf_t *b, const Xqz__MatchStatus *m) {
  if (!m) {
    jb_lit(b, "null");
    return;
  }
  bool f = true;
  jb_lit(b, "{");
  kv_u64(b, &f, "match_id", m->match_id);
  kv_id(b, &f, "net_a", m->net_a);
  kv_id(b, &f, "net_b", m->net_b);
  kv_i64(b, &f, "step", m->step);
  kv_i64(b, &f, "wins", m->wins);
  kv_i64(b, &f, "draws", m->draws);
  kv_i64(b, &f, "losses", m->losses);
  kv_dbl(b, &f, "score", m->score);
  kv_dbl(b, &f, "elo", m->elo);
  kv_dbl(b, &f, "elo_lo", m->elo_lo);
  kv_dbl(b, &f, "elo_hi", m->elo_hi);
  kv_str(b, &f, "decision", m->decision);
  kv_i64(b, &f, "time", m->time);
  kv_dbl(b, &f, "best_elo", m->best_elo);
  jb_lit(b, "}");
}

static void match_array(jbuf_t *b, Xqz__MatchStatus *const *m, size_t n) {
  jb_lit(b, "[");
  for (size_t i = 0; i < n; i++) {
    if (i) jb_lit(b, ",");
    match_obj(b, m[i]);
  }
  jb_lit(b, "]");
}

static void anchor_obj(jbuf_t *b, const Xqz__AnchorPoint *a) {
  if (!a) {
    jb_lit(b, "null");
    return;
  }
  bool f = true;
  jb_lit(b, "{");
  kv_id(b, &f, "net_id", a->net_id);
  kv_str(b, &f, "anchor", a->anchor);
  kv_i64(b, &f, "wins", a->wins);
  kv_i64(b, &f, "draws", a->draws);
  kv_i64(b, &f, "losses", a->losses);
  kv_dbl(b, &f, "score", a->score);
  kv_i64(b, &f, "time", a->time);
  kv_i64(b, &f, "promotion", a->promotion);
  kv_i64(b, &f, "step", a->step);
  kv_i64(b, &f, "games", a->games);
  jb_lit(b, "}");
}

static void loss_obj(jbuf_t *b, const Xqz__LossPoint *l) {
  if (!l) {
    jb_lit(b, "null");
    return;
  }
  bool f = true;
  jb_lit(b, "{");
  kv_u64(b, &f, "step", l->step);
  kv_i64(b, &f, "time", l->time);
  kv_flt(b, &f, "loss", l->loss);
  kv_flt(b, &f, "policy", l->policy);
  kv_flt(b, &f, "value", l->value);
  jb_lit(b, "}");
}

static void worker_obj(jbuf_t *b, const Xqz__WorkerStatus *w) {
  bool f = true;
  jb_lit(b, "{");
  kv_str(b, &f, "worker_id", w->worker_id);
  kv_str(b, &f, "host", w->host);
  kv_u64(b, &f, "threads", w->threads);
  kv_str(b, &f, "role", role_name(w->role));
  kv_id(b, &f, "net_id", w->net_id);
  kv_u64(b, &f, "games", w->games);
  kv_u64(b, &f, "positions", w->positions);
  kv_u64(b, &f, "rejected", w->rejected);
  kv_u64(b, &f, "faults", w->faults);
  kv_u64(b, &f, "last_seen_ms_ago", w->last_seen_ms_ago);
  kv_bool(b, &f, "alive", w->alive);
  kv_bool(b, &f, "paused", w->paused);
  kv_str(b, &f, "pause_reason", w->pause_reason);
  kv_str(b, &f, "state", w->state);
  kv_u64(b, &f, "games_day", w->games_day);
  kv_i64(b, &f, "last_game_time", w->last_game_time);
  kv_bool(b, &f, "banned", w->banned);
  kv_str(b, &f, "software_version", w->software_version);
  kv_str(b, &f, "key", w->key);
  kv_u64(b, &f, "red_wins", w->red_wins);
  kv_u64(b, &f, "black_wins", w->black_wins);
  kv_u64(b, &f, "draws", w->draws);
  jb_key(b, &f, "by_reason");
  jb_lit(b, "{");
  bool rf = true;
  for (size_t i = 0; i < w->n_by_reason; i++) {
    char unknown[32];
    const char *name = xq_reason_name((xq_reason_t)i);
    if (strcmp(name, "unknown") == 0) { /* a newer peer's reason code */
      snprintf(unknown, sizeof unknown, "reason-%zu", i);
      name = unknown;
    }
    kv_u64(b, &rf, name, w->by_reason[i]);
  }
  jb_lit(b, "}");
  kv_dbl(b, &f, "avg_plies", w->avg_plies);
  jb_lit(b, "}");
}

static void balance_obj(jbuf_t *b, const Xqz__Balance *x) {
  if (!x) {
    jb_lit(b, "null");
    return;
  }
  bool f = true;
  jb_lit(b, "{");
  kv_str(b, &f, "state", x->state);
  kv_str(b, &f, "advice", x->advice);
  kv_dbl(b, &f, "state_s", x->state_s);
  kv_dbl(b, &f, "span_s", x->span_s);
  kv_dbl(b, &f, "positions_per_s", x->positions_per_s);
  kv_dbl(b, &f, "samples_per_s", x->samples_per_s);
  kv_dbl(b, &f, "reuse", x->reuse);
  kv_dbl(b, &f, "reuse_target", x->reuse_target);
  kv_dbl(b, &f, "turnover_s", x->turnover_s);
  kv_dbl(b, &f, "trainer_busy", x->trainer_busy);
  kv_u64(b, &f, "paced_requests", x->paced_requests);
  kv_u64(b, &f, "job_sims", x->job_sims);
  jb_lit(b, "}");
}

static void progress_obj(jbuf_t *b, const Xqz__Progress *x) {
  if (!x) {
    jb_lit(b, "null");
    return;
  }
  bool f = true;
  jb_lit(b, "{");
  kv_dbl(b, &f, "steps_per_s", x->steps_per_s);
  kv_u64(b, &f, "candidate_every", x->candidate_every);
  kv_u64(b, &f, "next_candidate_step", x->next_candidate_step);
  kv_dbl(b, &f, "next_candidate_s", x->next_candidate_s);
  kv_bool(b, &f, "bounded", x->bounded);
  kv_u64(b, &f, "max_steps", x->max_steps);
  kv_dbl(b, &f, "end_s", x->end_s);
  kv_dbl(b, &f, "pairs_per_s", x->pairs_per_s);
  kv_i64(b, &f, "match_games", x->match_games);
  kv_i64(b, &f, "match_games_max", x->match_games_max);
  kv_dbl(b, &f, "match_end_s", x->match_end_s);
  kv_i64(b, &f, "anchor_games", x->anchor_games);
  kv_i64(b, &f, "anchor_games_max", x->anchor_games_max);
  kv_dbl(b, &f, "anchor_end_s", x->anchor_end_s);
  kv_i64(b, &f, "next_anchor_promotion", x->next_anchor_promotion);
  kv_i64(b, &f, "promotions_to_anchor", x->promotions_to_anchor);
  jb_lit(b, "}");
}

static void settings_obj(jbuf_t *b, const Xqz__MemberSettings *x) {
  if (!x) {
    jb_lit(b, "null");
    return;
  }
  bool f = true;
  jb_lit(b, "{");
  kv_dbl(b, &f, "lr_scale", x->lr_scale);
  kv_dbl(b, &f, "l2", x->l2);
  kv_dbl(b, &f, "value_weight", x->value_weight);
  kv_u64(b, &f, "batch", x->batch);
  jb_lit(b, "}");
}

static void member_obj(jbuf_t *b, const Xqz__MemberStatus *m) {
  bool f = true;
  jb_lit(b, "{");
  kv_u64(b, &f, "slot", m->slot);
  kv_str(b, &f, "host", m->host);
  kv_bool(b, &f, "alive", m->alive);
  kv_bool(b, &f, "control", m->control);
  kv_u64(b, &f, "step", m->step);
  jb_key(b, &f, "settings");
  settings_obj(b, m->settings);
  kv_bool(b, &f, "rated", m->rated);
  kv_dbl(b, &f, "elo", m->elo);
  kv_dbl(b, &f, "elo_lo", m->elo_lo);
  kv_dbl(b, &f, "elo_hi", m->elo_hi);
  kv_u64(b, &f, "generation", m->generation);
  kv_u64(b, &f, "parent", m->parent);
  kv_id(b, &f, "net_id", m->net_id);
  jb_lit(b, "}");
}

static void event_obj(jbuf_t *b, const Xqz__PbtEvent *e) {
  bool f = true;
  jb_lit(b, "{");
  kv_u64(b, &f, "round", e->round);
  kv_u64(b, &f, "member", e->member);
  kv_u64(b, &f, "donor", e->donor);
  kv_u64(b, &f, "generation", e->generation);
  kv_id(b, &f, "donor_net", e->donor_net);
  jb_key(b, &f, "before");
  settings_obj(b, e->before);
  jb_key(b, &f, "after");
  settings_obj(b, e->after);
  kv_dbl(b, &f, "member_elo", e->member_elo);
  kv_dbl(b, &f, "donor_elo", e->donor_elo);
  kv_i64(b, &f, "time", e->time);
  jb_lit(b, "}");
}

static void population_obj(jbuf_t *b, const Xqz__Population *p) {
  if (!p) {
    jb_lit(b, "null");
    return;
  }
  bool f = true;
  jb_lit(b, "{");
  kv_u64(b, &f, "size", p->size);
  kv_dbl(b, &f, "share", p->share);
  kv_u64(b, &f, "rounds", p->rounds);
  kv_u64(b, &f, "interval_steps", p->interval_steps);
  kv_i64(b, &f, "round_games", p->round_games);
  kv_i64(b, &f, "round_games_max", p->round_games_max);
  kv_dbl(b, &f, "best_elo", p->best_elo);
  jb_key(b, &f, "members");
  jb_lit(b, "[");
  for (size_t i = 0; i < p->n_members; i++) {
    if (i) jb_lit(b, ",");
    member_obj(b, p->members[i]);
  }
  jb_lit(b, "]");
  jb_key(b, &f, "events");
  jb_lit(b, "[");
  for (size_t i = 0; i < p->n_events; i++) {
    if (i) jb_lit(b, ",");
    event_obj(b, p->events[i]);
  }
  jb_lit(b, "]");
  jb_lit(b, "}");
}

static char *finish(jbuf_t *b) {
  if (b->failed) {
    free(b->s);
    return NULL;
  }
  return b->s;
}

char *xq_status_json(const Xqz__Status *s) {
  jbuf_t b = {0};
  bool f = true;
  jb_lit(&b, "{");
  kv_str(&b, &f, "campaign", s->campaign);
  kv_id(&b, &f, "campaign_id", s->campaign_id);
  kv_str(&b, &f, "software_version", s->software_version);
  kv_u64(&b, &f, "protocol_version", s->protocol_version);
  kv_str(&b, &f, "trainer_version", s->trainer_version);
  kv_id(&b, &f, "best_net_id", s->best_net_id);
  kv_dbl(&b, &f, "best_elo", s->best_elo);
  kv_u64(&b, &f, "games", s->games);
  kv_u64(&b, &f, "positions", s->positions);
  kv_dbl(&b, &f, "positions_per_s", s->positions_per_s);
  kv_u64(&b, &f, "window_positions", s->window_positions);
  kv_u64(&b, &f, "window_capacity", s->window_capacity);
  kv_u64(&b, &f, "samples_served", s->samples_served);
  kv_u64(&b, &f, "rejected_games", s->rejected_games);
  kv_u64(&b, &f, "duplicates", s->duplicates);
  kv_u64(&b, &f, "banned_games", s->banned_games);
  kv_str(&b, &f, "storage_error", s->storage_error);
  kv_i64(&b, &f, "storage_blocked_s", s->storage_blocked_s);
  kv_u64(&b, &f, "storage_unstored_games", s->storage_unstored_games);
  kv_u64(&b, &f, "quarantine_files", s->quarantine_files);
  kv_u64(&b, &f, "quarantine_bytes", s->quarantine_bytes);
  kv_u64(&b, &f, "workers", s->workers);
  kv_u64(&b, &f, "trainer_step", s->trainer_step);
  kv_u64(&b, &f, "promotions", s->promotions);
  kv_str(&b, &f, "last_gating", s->last_gating);
  kv_i64(&b, &f, "uptime_s", s->uptime_s);
  kv_str(&b, &f, "gating_mode", s->gating_mode);
  kv_str(&b, &f, "arena_precision", s->arena_precision);
  jb_key(&b, &f, "last_loss");
  loss_obj(&b, s->last_loss);
  jb_key(&b, &f, "open_match");
  match_obj(&b, s->open_match);
  jb_key(&b, &f, "balance");
  balance_obj(&b, s->balance);
  jb_key(&b, &f, "progress");
  progress_obj(&b, s->progress);
  jb_key(&b, &f, "population");
  population_obj(&b, s->population);
  jb_key(&b, &f, "worker_list");
  jb_lit(&b, "[");
  for (size_t i = 0; i < s->n_worker_list; i++) {
    if (i) jb_lit(&b, ",");
    worker_obj(&b, s->worker_list[i]);
  }
  jb_lit(&b, "]");
  jb_key(&b, &f, "recent_matches");
  match_array(&b, s->recent_matches, s->n_recent_matches);
  jb_key(&b, &f, "loss_history");
  jb_lit(&b, "[");
  for (size_t i = 0; i < s->n_loss_history; i++) {
    if (i) jb_lit(&b, ",");
    loss_obj(&b, s->loss_history[i]);
  }
  jb_lit(&b, "]");
  jb_key(&b, &f, "anchor_history");
  jb_lit(&b, "[");
  for (size_t i = 0; i < s->n_anchor_history; i++) {
    if (i) jb_lit(&b, ",");
    anchor_obj(&b, s->anchor_history[i]);
  }
  jb_lit(&b, "]");
  jb_key(&b, &f, "open_anchor");
  anchor_obj(&b, s->open_anchor);
  jb_key(&b, &f, "throughput_history");
  jb_lit(&b, "[");
  for (size_t i = 0; i < s->n_throughput_history; i++) {
    const Xqz__ThroughputPoint *t = s->throughput_history[i];
    bool tf = true;
    jb_lit(&b, i ? ",{" : "{");
    kv_i64(&b, &tf, "time", t->time);
    kv_u64(&b, &tf, "games", t->games);
    kv_u64(&b, &tf, "positions", t->positions);
    jb_lit(&b, "}");
  }
  jb_lit(&b, "]");
  jb_key(&b, &f, "limits");
  jb_lit(&b, "{");
  bool lf = true;
  for (size_t i = 0; i < s->n_limits; i++) kv_dbl(&b, &lf, s->limits[i]->name, s->limits[i]->value);
  jb_lit(&b, "}");
  jb_lit(&b, "}");
  return finish(&b);
}

char *xq_population_json(const Xqz__Population *p) {
  jbuf_t b = {0};
  population_obj(&b, p);
  return finish(&b);
}

char *xq_matches_json(Xqz__MatchStatus *const *matches, size_t n) {
  jbuf_t b = {0};
  match_array(&b, matches, n);
  return finish(&b);
}
