/*
 * metrics.c: Status → Prometheus text (see metrics.h). The text is written to a memory
 * stream; families appear in a fixed order, each as HELP, TYPE, then its samples. Values
 * that Prometheus spells specially (NaN, ±Inf) are spelled its way.
 */
#include "metrics.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "balance.h"
#include "rules/rules.h"

static void family(FILE *f, const char *name, const char *type, const char *help) {
  fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* Length of the valid UTF-8 sequence at p (1..4), 0 when it is not one. */
static size_t utf8_len(const unsigned char *p) {
  if (p[0] < 0x80) return 1;
  size_t n = (p[0] & 0xe0) == 0xc0 ? 2 : (p[0] & 0xf0) == 0xe0 ? 3 : (p[0] & 0xf8) == 0xf0 ? 4 : 0;
  if (n == 0 || (n == 2 && p[0] < 0xc2) || (n == 4 && p[0] > 0xf4)) return 0;
  for (size_t i = 1; i < n; i++)
    if ((p[i] & 0xc0) != 0x80) return 0; /* also stops at the NUL terminator */
  if (n == 3 && p[0] == 0xe0 && p[1] < 0xa0) return 0; /* overlong */
  if (n == 3 && p[0] == 0xed && p[1] >= 0xa0) return 0; /* surrogate */
  if (n == 4 && p[0] == 0xf0 && p[1] < 0x90) return 0; /* overlong */
  if (n == 4 && p[0] == 0xf4 && p[1] >= 0x90) return 0; /* above U+10FFFF */
  return n;
}

/* A label value: backslash, quote and newline escaped as the format says; other control
 * bytes and invalid UTF-8 become '?', so a hostile worker id cannot break the output. */
static void label_value(FILE *f, const char *s) {
  const unsigned char *p = (const unsigned char *)(s ? s : "");
  while (*p) {
    size_t n = utf8_len(p);
    if (*p == '\\') fputs("\\\\", f);
    else if (*p == '"') fputs("\\\"", f);
    else if (*p == '\n') fputs("\\n", f);
    else if (n == 0 || *p < 0x20 || *p == 0x7f) fputc('?', f);
    else fwrite(p, 1, n, f);
    p += n ? n : 1;
  }
}

static void value(FILE *f, double v) {
  if (isnan(v)) fputs("NaN", f);
  else if (isinf(v)) fputs(v > 0 ? "+Inf" : "-Inf", f);
  else fprintf(f, "%.17g", v);
}

static void gauge(FILE *f, const char *name, const char *help, double v) {
  family(f, name, "gauge", help);
  fprintf(f, "%s ", name);
  value(f, v);
  fputc('\n', f);
}

static void counter(FILE *f, const char *name, const char *help, uint64_t v) {
  family(f, name, "counter", help);
  fprintf(f, "%s %llu\n", name, (unsigned long long)v);
}

/* One sample per worker of a per-worker family; `field` picks the value. */
typedef double (*worker_field_t)(const Xqz__WorkerStatus *w);

static void per_worker(FILE *f, const Xqz__Status *s, const char *name, const char *type,
                       const char *help, worker_field_t field) {
  family(f, name, type, help);
  for (size_t i = 0; i < s->n_worker_list; i++) {
    const Xqz__WorkerStatus *w = s->worker_list[i];
    fprintf(f, "%s{worker=\"", name);
    label_value(f, w->worker_id);
    fputs("\",host=\"", f);
    label_value(f, w->host);
    fputs("\",version=\"", f);
    label_value(f, w->software_version);
    fputs("\"} ", f);
    value(f, field(w));
    fputc('\n', f);
  }
}

static double w_games(const Xqz__WorkerStatus *w) { return (double)w->games; }
static double w_positions(const Xqz__WorkerStatus *w) { return (double)w->positions; }
static double w_rejected(const Xqz__WorkerStatus *w) { return (double)w->rejected; }
static double w_faults(const Xqz__WorkerStatus *w) { return (double)w->faults; }
static double w_avg_plies(const Xqz__WorkerStatus *w) { return w->avg_plies; }
static double w_last_seen(const Xqz__WorkerStatus *w) { return (double)w->last_seen_ms_ago / 1000.0; }
static double w_alive(const Xqz__WorkerStatus *w) { return w->alive ? 1 : 0; }
static double w_banned(const Xqz__WorkerStatus *w) { return w->banned ? 1 : 0; }
static double w_threads(const Xqz__WorkerStatus *w) { return (double)w->threads; }

static void campaign_metrics(FILE *f, const Xqz__Status *s) {
  family(f, "xqz_info", "gauge",
         "Constant 1, labelled with the campaign (name and id), software and best net.");
  fputs("xqz_info{campaign=\"", f);
  label_value(f, s->campaign);
  fprintf(f, "\",campaign_id=\"%016llx\",version=\"", (unsigned long long)s->campaign_id);
  label_value(f, s->software_version);
  fprintf(f, "\",protocol=\"%u\",gating_mode=\"", s->protocol_version);
  label_value(f, s->gating_mode);
  fputs("\",arena_precision=\"", f);
  label_value(f, s->arena_precision);
  fprintf(f, "\",best_net=\"%016llx\"} 1\n", (unsigned long long)s->best_net_id);
  gauge(f, "xqz_uptime_seconds", "Seconds since the coordinator started.", (double)s->uptime_s);
  counter(f, "xqz_games_total", "Self-play games accepted.", s->games);
  counter(f, "xqz_positions_total", "Positions accepted (all games).", s->positions);
  gauge(f, "xqz_positions_per_second", "Positions ingested per second over the last minute.",
        s->positions_per_s);
  gauge(f, "xqz_window_positions", "Positions in the replay window.", (double)s->window_positions);
  gauge(f, "xqz_window_capacity", "Capacity of the replay window (positions).",
        (double)s->window_capacity);
  counter(f, "xqz_samples_served_total", "Training samples sent to the trainer.", s->samples_served);
  counter(f, "xqz_rejected_games_total", "Game records rejected by the rules replay.",
          s->rejected_games);
  counter(f, "xqz_duplicate_games_total", "Game records received again (already stored).",
          s->duplicates);
  counter(f, "xqz_banned_games_total", "Games refused because their sender is banned.",
          s->banned_games);
  gauge(f, "xqz_storage_blocked", "1 while games cannot be stored (e.g. a full disk): no acks.",
        s->storage_error && s->storage_error[0] ? 1 : 0);
  gauge(f, "xqz_storage_blocked_seconds", "Seconds since games could not be stored (0: they can).",
        (double)s->storage_blocked_s);
  gauge(f, "xqz_storage_unstored_games", "Games received but not stored while blocked.",
        (double)s->storage_unstored_games);
  gauge(f, "xqz_quarantine_files", "Runs of damaged bytes cut out of segments (quarantine/).",
        (double)s->quarantine_files);
  gauge(f, "xqz_quarantine_bytes", "Bytes in the campaign's quarantine/ directory.",
        (double)s->quarantine_bytes);
  gauge(f, "xqz_trainer_step", "Latest training step reported by the trainer.",
        (double)s->trainer_step);
  family(f, "xqz_loss", "gauge", "Latest training loss reported by the trainer, by part.");
  if (s->last_loss) {
    const char *kind[3] = {"total", "policy", "value"};
    double v[3] = {s->last_loss->loss, s->last_loss->policy, s->last_loss->value};
    for (int i = 0; i < 3; i++) {
      fprintf(f, "xqz_loss{kind=\"%s\"} ", kind[i]);
      value(f, v[i]);
      fputc('\n', f);
    }
  }
  gauge(f, "xqz_best_elo", "Elo of the best net, relative to net 1 (chained gating results).",
        s->best_elo);
  counter(f, "xqz_promotions_total", "Candidate nets promoted.", s->promotions);
  gauge(f, "xqz_gating_match_open", "1 while a gating match is being played.",
        s->open_match ? 1 : 0);
  gauge(f, "xqz_workers_alive", "Workers heard from within the worker timeout.", (double)s->workers);
}

static void worker_metrics(FILE *f, const Xqz__Status *s) {
  per_worker(f, s, "xqz_worker_games_total", "counter", "Games accepted from this worker.", w_games);
  per_worker(f, s, "xqz_worker_positions_total", "counter",
             "Positions accepted from this worker.", w_positions);
  per_worker(f, s, "xqz_worker_rejected_total", "counter",
             "Game records of this worker rejected by the rules replay.", w_rejected);
  per_worker(f, s, "xqz_worker_faults_total", "counter",
             "Malformed or unexpected messages from this worker.", w_faults);
  per_worker(f, s, "xqz_worker_avg_plies", "gauge", "Mean length of this worker's games (plies).",
             w_avg_plies);
  per_worker(f, s, "xqz_worker_last_seen_seconds", "gauge",
             "Seconds since this worker was last heard from.", w_last_seen);
  per_worker(f, s, "xqz_worker_alive", "gauge", "1 if heard from within the worker timeout.",
             w_alive);
  per_worker(f, s, "xqz_worker_banned", "gauge", "1 if this worker is banned.", w_banned);
  per_worker(f, s, "xqz_worker_threads", "gauge", "Search threads this worker announced.",
             w_threads);
  /* Game ends summed over workers (by_reason is indexed by xq_reason_t). */
  family(f, "xqz_games_by_reason_total", "counter", "Accepted games by how they ended.");
  for (int r = XQ_REASON_CHECKMATE; r <= XQ_REASON_RESIGN; r++) {
    uint64_t n = 0;
    for (size_t i = 0; i < s->n_worker_list; i++)
      if ((size_t)r < s->worker_list[i]->n_by_reason) n += s->worker_list[i]->by_reason[r];
    fprintf(f, "xqz_games_by_reason_total{reason=\"%s\"} %llu\n", xq_reason_name((xq_reason_t)r),
            (unsigned long long)n);
  }
}

/* The balance of self-play against training (Status.balance); absent: no samples. */
static void balance_metrics(FILE *f, const Xqz__Status *s) {
  const Xqz__Balance *b = s->balance;
  family(f, "xqz_balance_state", "gauge",
         "1 for the campaign's balance state (docs/operations.md), 0 for the others.");
  for (int i = 0; b && i < XQC_BALANCE_NSTATES; i++) {
    const char *name = xqc_balance_state_name((xqc_balance_state_t)i);
    fprintf(f, "xqz_balance_state{state=\"%s\"} %d\n", name, strcmp(b->state, name) == 0);
  }
  if (!b) return;
  gauge(f, "xqz_balance_span_seconds", "Span of the balance figures (balance_window_s).",
        b->span_s);
  gauge(f, "xqz_balance_positions_per_second", "Positions ingested per second over the span.",
        b->positions_per_s);
  gauge(f, "xqz_balance_samples_per_second",
        "Samples served to the trainer per second over the span.", b->samples_per_s);
  gauge(f, "xqz_balance_reuse",
        "Achieved reuse over the span: samples served / positions ingested.", b->reuse);
  gauge(f, "xqz_balance_reuse_target", "Target reuse R (the reuse setting).", b->reuse_target);
  gauge(f, "xqz_window_turnover_seconds",
        "How long a position stays in the window at the span's ingest rate (0: no ingest).",
        b->turnover_s);
  gauge(f, "xqz_trainer_busy_ratio",
        "Share of the trainer's time spent training over the span (NaN: not measured).",
        b->trainer_busy);
  gauge(f, "xqz_balance_paced_requests", "Batch requests the pacing refused over the span.",
        (double)b->paced_requests);
  gauge(f, "xqz_job_sims", "Full-search simulations self-play jobs carry now (self_balance).",
        (double)b->job_sims);
}

/* One sample per member of a per-member family (slots 1-based); `field` picks the value,
 * NaN leaves the member out (not rated yet). */
typedef double (*member_field_t)(const Xqz__MemberStatus *m);

static void per_member(FILE *f, const Xqz__Population *p, const char *name, const char *help,
                       member_field_t field) {
  family(f, name, "gauge", help);
  for (size_t i = 0; i < p->n_members; i++) {
    double v = field(p->members[i]);
    if (isnan(v)) continue;
    fprintf(f, "%s{slot=\"%u\"} ", name, p->members[i]->slot);
    value(f, v);
    fputc('\n', f);
  }
}

static double m_elo(const Xqz__MemberStatus *m) { return m->rated ? m->elo : NAN; }
static double m_step(const Xqz__MemberStatus *m) { return (double)m->step; }
static double m_generation(const Xqz__MemberStatus *m) { return (double)m->generation; }
static double m_alive(const Xqz__MemberStatus *m) { return m->alive ? 1 : 0; }

/* A population's members (Status.population); nothing without one. */
static void population_metrics(FILE *f, const Xqz__Status *s) {
  const Xqz__Population *p = s->population;
  if (!p) return;
  gauge(f, "xqz_population_rounds", "Population rounds decided (exploit and explore done).",
        (double)p->rounds);
  gauge(f, "xqz_population_size", "Members of the population (the population setting).",
        (double)p->size);
  per_member(f, p, "xqz_member_elo",
             "Member's Elo against the best net (at 0) in its last round; absent until rated.",
             m_elo);
  per_member(f, p, "xqz_member_step", "Member trainer's last reported step.", m_step);
  per_member(f, p, "xqz_member_generation",
             "Times the member was replaced by a copy of another member.", m_generation);
  per_member(f, p, "xqz_member_alive", "1 while a live trainer holds the member's slot.",
             m_alive);
  family(f, "xqz_member_setting", "gauge", "Member's training settings, by name.");
  for (size_t i = 0; i < p->n_members; i++) {
    const Xqz__MemberSettings *x = p->members[i]->settings;
    if (!x) continue;
    const char *names[4] = {"lr_scale", "l2", "value_weight", "batch"};
    double v[4] = {x->lr_scale, x->l2, x->value_weight, x->batch};
    for (int k = 0; k < 4; k++) {
      fprintf(f, "xqz_member_setting{slot=\"%u\",setting=\"%s\"} ", p->members[i]->slot,
              names[k]);
      value(f, v[k]);
      fputc('\n', f);
    }
  }
}

static void limit_metrics(FILE *f, const Xqz__Status *s) {
  family(f, "xqz_limit", "gauge", "Every limit in force, by setting name.");
  for (size_t i = 0; i < s->n_limits; i++) {
    fputs("xqz_limit{name=\"", f);
    label_value(f, s->limits[i]->name);
    fputs("\"} ", f);
    value(f, s->limits[i]->value);
    fputc('\n', f);
  }
}

char *xqc_metrics_text(const Xqz__Status *s) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  if (!f) return NULL;
  campaign_metrics(f, s);
  worker_metrics(f, s);
  balance_metrics(f, s);
  population_metrics(f, s);
  limit_metrics(f, s);
  if (fclose(f) != 0) {
    free(buf);
    return NULL;
  }
  return buf;
}
