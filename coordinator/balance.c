/*
 * balance.c: the balance of self-play against training (see balance.h): a ring of
 * cumulative counters sampled by the timer, the figures over the span as differences
 * against the oldest sample within it, and the state with its two log lines.
 */
#include "balance.h"

#include <math.h>
#include <string.h>

#include "support/log.h"

#define COMP "balance"
/* A gap between two requests of one trainer longer than this is a trainer that was away
 * (restarting, cut off from the network): counted neither as training nor as waiting. */
#define GAP_MS 60000u

static xqc_balance_trainer_t *trainer_slot(xqc_balance_t *b, const uint8_t *rid,
                                           size_t rid_len) {
  xqc_balance_trainer_t *oldest = &b->trainers[0];
  for (int i = 0; i < XQC_BALANCE_TRAINERS; i++) {
    xqc_balance_trainer_t *t = &b->trainers[i];
    if (t->last_ms && t->rid_len == rid_len && memcmp(t->rid, rid, rid_len) == 0) return t;
    if (t->last_ms < oldest->last_ms) oldest = t;
  }
  memset(oldest, 0, sizeof *oldest); /* a free slot, or the least recent trainer's */
  memcpy(oldest->rid, rid, rid_len);
  oldest->rid_len = rid_len;
  return oldest;
}

void xqc_balance_request(xqc_balance_t *b, const uint8_t *rid, size_t rid_len,
                         xqc_batch_answer_t answer, uint64_t now_ms) {
  if (rid_len > XQC_BALANCE_RID_MAX) rid_len = XQC_BALANCE_RID_MAX;
  xqc_balance_trainer_t *t = trainer_slot(b, rid, rid_len);
  if (t->last_ms && now_ms >= t->last_ms && now_ms - t->last_ms <= GAP_MS) {
    uint64_t dt = now_ms - t->last_ms;
    if (t->last == XQC_BATCH_SERVED) b->busy_ms += dt;
    else b->wait_ms += dt;
  }
  t->last = answer;
  t->last_ms = now_ms ? now_ms : 1;
  b->last_request_ms = t->last_ms;
  if (answer == XQC_BATCH_PACED) b->paced++;
}

static xqc_balance_mark_t mark_now(const xqc_balance_t *b, const xqc_balance_in_t *in,
                                   uint64_t now_ms) {
  xqc_balance_mark_t m = {now_ms, in->positions, in->served, b->busy_ms, b->wait_ms, b->paced};
  return m;
}

static uint64_t delta(uint64_t now, uint64_t then) { return now > then ? now - then : 0; }

void xqc_balance_view(const xqc_balance_t *b, const xqc_balance_in_t *in, uint64_t now_ms,
                      xqc_balance_view_t *v) {
  memset(v, 0, sizeof *v);
  v->trainer_busy = NAN;
  v->state = b->state;
  v->state_s = b->started ? (double)delta(now_ms, b->state_since_ms) / 1000.0 : 0.0;
  if (b->n == 0) return;
  /* The oldest sample at most a span old (the newest when even that is older). */
  int last = (b->head + XQC_BALANCE_SAMPLES - 1) % XQC_BALANCE_SAMPLES;
  int first = (b->head + XQC_BALANCE_SAMPLES - b->n) % XQC_BALANCE_SAMPLES;
  while (first != last && delta(now_ms, b->ring[first].ms) > in->span_ms)
    first = (first + 1) % XQC_BALANCE_SAMPLES;
  const xqc_balance_mark_t *f = &b->ring[first];
  xqc_balance_mark_t cur = mark_now(b, in, now_ms);
  uint64_t dt = delta(cur.ms, f->ms);
  if (dt == 0) return;
  uint64_t dp = delta(cur.positions, f->positions), ds = delta(cur.served, f->served);
  uint64_t busy = delta(cur.busy_ms, f->busy_ms), wait = delta(cur.wait_ms, f->wait_ms);
  v->span_s = (double)dt / 1000.0;
  v->positions_per_s = (double)dp / v->span_s;
  v->samples_per_s = (double)ds / v->span_s;
  v->reuse = dp ? (double)ds / (double)dp : 0.0;
  v->turnover_s = v->positions_per_s > 0 ? (double)in->window_cap / v->positions_per_s : 0.0;
  if (busy + wait) v->trainer_busy = (double)busy / (double)(busy + wait);
  v->paced = delta(cur.paced, f->paced);
}

/* The state the figures say now (and the low-reuse clock it keeps). */
static xqc_balance_state_t judge(xqc_balance_t *b, const xqc_balance_in_t *in,
                                 const xqc_balance_view_t *v, uint64_t now_ms) {
  bool trainer = b->last_request_ms && delta(now_ms, b->last_request_ms) <= in->trainer_timeout_ms;
  if (in->window_count < in->min_positions || !trainer) {
    b->low = false;
    return in->window_count < in->min_positions ? XQC_BALANCE_FILLING : XQC_BALANCE_NO_TRAINER;
  }
  bool low = v->positions_per_s > 0 && v->reuse < in->reuse_target / 2.0;
  if (low && !b->low) b->low_since_ms = now_ms;
  b->low = low;
  if (low && delta(now_ms, b->low_since_ms) >= in->warn_ms) return XQC_BALANCE_TRAINER_BOUND;
  return v->paced ? XQC_BALANCE_WORKER_BOUND : XQC_BALANCE_BALANCED;
}

void xqc_balance_tick(xqc_balance_t *b, const xqc_balance_in_t *in, uint64_t now_ms) {
  if (!b->started) {
    b->started = true;
    b->state = XQC_BALANCE_FILLING;
    b->state_since_ms = now_ms;
  }
  uint64_t every = in->span_ms / (XQC_BALANCE_SAMPLES - 4);
  int last = (b->head + XQC_BALANCE_SAMPLES - 1) % XQC_BALANCE_SAMPLES;
  if (b->n == 0 || delta(now_ms, b->ring[last].ms) >= (every ? every : 1)) {
    b->ring[b->head] = mark_now(b, in, now_ms);
    b->head = (b->head + 1) % XQC_BALANCE_SAMPLES;
    if (b->n < XQC_BALANCE_SAMPLES) b->n++;
  }
  xqc_balance_view_t v;
  xqc_balance_view(b, in, now_ms, &v);
  xqc_balance_state_t s = judge(b, in, &v, now_ms);
  if (s == b->state) return;
  if (s == XQC_BALANCE_TRAINER_BOUND)
    XQ_LOGW(COMP, "campaign is trainer-bound: the trainer used each position fewer than R/2"
            " times for %.0f s, so positions leave the window barely trained; give the trainer"
            " more cores (xqz-trainer --threads N), or spend the self-play surplus on more"
            " simulations (sims), a bigger net (net_size) or a larger window (window,"
            " window_max) reuse=%.2f target=%g positions_per_s=%.1f samples_per_s=%.1f"
            " span_s=%.0f", (double)delta(now_ms, b->low_since_ms) / 1000.0, v.reuse,
            in->reuse_target, v.positions_per_s, v.samples_per_s, v.span_s);
  else if (b->state == XQC_BALANCE_TRAINER_BOUND)
    XQ_LOGI(COMP, "no longer trainer-bound state=%s reuse=%.2f target=%g positions_per_s=%.1f"
            " samples_per_s=%.1f", xqc_balance_state_name(s), v.reuse, in->reuse_target,
            v.positions_per_s, v.samples_per_s);
  b->state = s;
  b->state_since_ms = now_ms;
}

const char *xqc_balance_state_name(xqc_balance_state_t s) {
  static const char *const names[XQC_BALANCE_NSTATES] = {
      "filling", "no-trainer", "balanced", "trainer-bound", "worker-bound"};
  return (unsigned)s < XQC_BALANCE_NSTATES ? names[s] : "unknown";
}

const char *xqc_balance_advice(xqc_balance_state_t s) {
  switch (s) {
  case XQC_BALANCE_FILLING:
    return "the window holds fewer than min_positions positions: training starts when it does";
  case XQC_BALANCE_NO_TRAINER:
    return "no batch request from a trainer within worker_timeout_ms: start xqz-trainer, or"
           " check that it reaches the coordinator";
  case XQC_BALANCE_TRAINER_BOUND:
    return "the trainer uses each position fewer than R/2 times: give it more cores"
           " (xqz-trainer --threads N), or spend the self-play surplus on more simulations"
           " (sims), a bigger net (net_size) or a larger window (window, window_max)";
  case XQC_BALANCE_WORKER_BOUND:
    return "the pacing makes the trainer wait for self-play: more workers train faster;"
           " a higher reuse trains more on each position, at a risk of overfitting";
  default: return "";
  }
}
