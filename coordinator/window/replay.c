/*
 * replay.c: ring buffer of compact samples and batch conversion (see replay.h).
 */
#include "replay.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

int xqc_replay_init_rule(xqc_replay_t *r, const xqc_window_rule_t *rule) {
  memset(r, 0, sizeof *r);
  r->ring = calloc((size_t)rule->min, sizeof *r->ring);
  r->src = calloc((size_t)rule->min, sizeof *r->src);
  if (!r->ring || !r->src) {
    xqc_replay_close(r);
    return XQ_ENOMEM;
  }
  r->slots = r->cap = rule->min;
  r->rule = *rule;
  return 0;
}

int xqc_replay_init(xqc_replay_t *r, uint64_t window) {
  const xqc_window_rule_t fixed = {window, 0, 1.0, 1.0};
  return xqc_replay_init_rule(r, &fixed);
}

void xqc_replay_close(xqc_replay_t *r) {
  free(r->ring);
  free(r->src);
  memset(r, 0, sizeof *r);
}

/* Resizes the ring to n >= slots slots, keeping the held samples before head: the part
 * that wraps past the old end moves to the new end. */
static int grow_slots(xqc_replay_t *r, uint64_t n) {
  xq_sample_t *ring = realloc(r->ring, (size_t)n * sizeof *ring);
  if (!ring) return XQ_ENOMEM;
  r->ring = ring;
  uint32_t *src = realloc(r->src, (size_t)n * sizeof *src);
  if (!src) return XQ_ENOMEM; /* the ring is bigger than slots says: harmless */
  r->src = src;
  if (r->stored > r->head) {
    uint64_t wrapped = r->stored - r->head, from = r->slots - wrapped, to = n - wrapped;
    memmove(r->ring + to, r->ring + from, (size_t)wrapped * sizeof *r->ring);
    memmove(r->src + to, r->src + from, (size_t)wrapped * sizeof *r->src);
  }
  r->slots = n;
  return 0;
}

/* W after the pushes so far; the ring doubles (up to the rule's max) when W outgrows it. */
static void follow_rule(xqc_replay_t *r) {
  uint64_t w = xqc_window_size(&r->rule, r->total);
  if (w <= r->cap || r->grow_failed) return;
  if (w > r->slots) {
    uint64_t n = r->slots * 2 > w ? r->slots * 2 : w;
    if (n > r->rule.max) n = r->rule.max;
    if (grow_slots(r, n) < 0) {
      r->grow_failed = true;
      return;
    }
  }
  r->cap = w;
  r->count = r->stored < r->cap ? r->stored : r->cap;
}

/* The window's invariants (Debug and sanitizer builds): the window is the newest count
 * samples held, count = min(stored, cap), and the ring holds at least the window. */
static void replay_check(const xqc_replay_t *r) {
  assert(r->cap <= r->slots && r->head < r->slots && r->stored <= r->slots);
  assert(r->count == (r->stored < r->cap ? r->stored : r->cap));
  assert(r->stored <= r->total);
  (void)r;
}

void xqc_replay_push(xqc_replay_t *r, const xq_sample_t *s, uint32_t src) {
  /* The window grows first, so a full ring makes room before its oldest sample goes. */
  r->total++;
  if (r->rule.max > r->cap) follow_rule(r);
  r->ring[r->head] = *s;
  r->src[r->head] = src;
  r->head = (r->head + 1) % r->slots;
  if (r->stored < r->slots) r->stored++;
  if (r->count < r->cap) r->count++;
  replay_check(r);
}

uint64_t xqc_replay_slot(const xqc_replay_t *r, uint64_t k) {
  return (r->head + r->slots - r->count + k) % r->slots;
}

uint64_t xqc_replay_remove(xqc_replay_t *r, int (*drop)(uint32_t src, void *user), void *user) {
  /* Walk from the newest sample to the oldest, moving each survivor to the next free slot
   * below head; the survivors end up contiguous, newest at head - 1, order kept. */
  uint64_t kept = 0;
  for (uint64_t k = 0; k < r->stored; k++) {
    uint64_t from = (r->head + r->slots - 1 - k) % r->slots;
    if (drop(r->src[from], user)) continue;
    uint64_t to = (r->head + r->slots - 1 - kept) % r->slots;
    if (to != from) {
      r->ring[to] = r->ring[from];
      r->src[to] = r->src[from];
    }
    kept++;
  }
  uint64_t removed = r->stored - kept;
  r->stored = kept;
  r->count = r->stored < r->cap ? r->stored : r->cap;
  replay_check(r);
  return removed;
}

void xqc_batch_free(xqc_batch_t *b) {
  free(b->msgs);
  free(b->ptrs);
  free(b->idx);
  free(b->prob);
  free(b->samples);
  memset(b, 0, sizeof *b);
}

int xqc_replay_sample(xqc_replay_t *r, xq_rng_t *rng, int n, const xqc_sample_opts_t *o,
                      xqc_batch_t *b) {
  memset(b, 0, sizeof *b);
  replay_check(r);
  if (n <= 0 || r->count == 0) return 0;
  size_t un = (size_t)n;
  b->msgs = calloc(un, sizeof *b->msgs);
  b->ptrs = calloc(un, sizeof *b->ptrs);
  b->idx = calloc(un * XQ_MAX_MOVES, sizeof *b->idx);
  b->prob = calloc(un * XQ_MAX_MOVES, sizeof *b->prob);
  b->samples = calloc(un, sizeof *b->samples);
  if (!b->msgs || !b->ptrs || !b->idx || !b->prob || !b->samples) {
    xqc_batch_free(b);
    return XQ_ENOMEM;
  }
  for (int i = 0; i < n; i++) {
    uint64_t k = xq_rng_below(rng, r->count);
    /* Slot k of the window counted from the oldest sample. */
    xq_sample_t *s = &b->samples[i];
    *s = r->ring[xqc_replay_slot(r, k)];
    assert(s->npi >= 0 && s->npi <= XQ_MAX_MOVES); /* validated at ingest */
    if (xq_rng_next(rng) & 1) xq_sample_mirror(s);
    if (o->colour_swap > 0.0f && xq_rng_uniform(rng) < o->colour_swap) xq_sample_colour_swap(s);
    s->z = (1.0f - o->q_weight) * s->z + o->q_weight * s->q;
    xq_sample_to_proto(&b->msgs[i], s, b->idx + (size_t)i * XQ_MAX_MOVES,
                       b->prob + (size_t)i * XQ_MAX_MOVES);
    b->ptrs[i] = &b->msgs[i];
  }
  b->n = n;
  return 0;
}
