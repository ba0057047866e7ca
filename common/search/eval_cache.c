/*
 * eval_cache.c: the direct-mapped evaluation cache of eval_cache.h. A batch is split into
 * hits, answered from the table, and misses, sent to the inner evaluator in one call and
 * then stored.
 */
#include "search/eval_cache.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "nn/encode.h"
#include "rules/policy_index.h"

typedef struct {
  uint64_t key;                 /* 0 = empty slot */
  float value;
  uint16_t n;                   /* non-zero priors stored */
  uint16_t index[XQ_MAX_MOVES]; /* policy index of each */
  float prior[XQ_MAX_MOVES];
} cache_entry_t;

typedef struct {
  xq_evaluator_t base;
  xq_evaluator_t *inner;
  cache_entry_t *table; /* (capacity) */
  uint64_t capacity;
  xq_eval_cache_stats_t st;
  xq_pos_t **miss_pos;  /* (max_batch) */
  int *miss_slot;       /* (max_batch) index in the caller's batch */
  uint64_t *keys;       /* (max_batch) the caller's positions' keys */
  float *miss_priors;   /* (max_batch, XQ_POLICY_SIZE) */
  float *miss_values;   /* (max_batch) */
} cache_t;

size_t xq_eval_cache_entry_size(void) { return sizeof(cache_entry_t); }

/* Everything the input planes depend on, mixed into one non-zero 64-bit key. */
static uint64_t cache_key(const xq_pos_t *pos) {
  uint64_t k = pos->key ^ ((uint64_t)pos->side << 63);
  k ^= ((uint64_t)pos->rule60 + 1) * 0x9E3779B97F4A7C15ull;
  if (nn_encode_is_repetition(pos)) k ^= 0xD6E8FEB86659FD93ull;
  k ^= k >> 29;
  return k ? k : 1;
}

static void cache_store(cache_t *c, uint64_t key, const float *priors, float value) {
  cache_entry_t *en = &c->table[key % c->capacity];
  int n = 0;
  for (int i = 0; i < XQ_POLICY_SIZE; i++) {
    if (priors[i] == 0.0f) continue;
    if (n == XQ_MAX_MOVES) return; /* not a legal-move distribution: do not keep it */
    en->index[n] = (uint16_t)i;
    en->prior[n] = priors[i];
    n++;
  }
  if (en->key == 0) c->st.used++;
  en->key = key;
  en->value = value;
  en->n = (uint16_t)n;
}

static void cache_eval(xq_evaluator_t *ev, xq_pos_t *const *pos, int n, float *priors,
                       float *values) {
  cache_t *c = (cache_t *)ev;
  assert(n <= ev->max_batch);
  uint64_t *keys = c->keys;
  int misses = 0;
  for (int i = 0; i < n; i++) {
    keys[i] = cache_key(pos[i]);
    const cache_entry_t *en = &c->table[keys[i] % c->capacity];
    c->st.lookups++;
    if (en->key == keys[i]) {
      c->st.hits++;
      float *row = priors + (size_t)i * XQ_POLICY_SIZE;
      memset(row, 0, XQ_POLICY_SIZE * sizeof *row);
      for (int j = 0; j < en->n; j++) row[en->index[j]] = en->prior[j];
      values[i] = en->value;
      continue;
    }
    c->miss_pos[misses] = pos[i];
    c->miss_slot[misses] = i;
    misses++;
  }
  if (!misses) return;
  c->inner->eval(c->inner, c->miss_pos, misses, c->miss_priors, c->miss_values);
  for (int m = 0; m < misses; m++) {
    int i = c->miss_slot[m];
    const float *src = c->miss_priors + (size_t)m * XQ_POLICY_SIZE;
    memcpy(priors + (size_t)i * XQ_POLICY_SIZE, src, XQ_POLICY_SIZE * sizeof *src);
    values[i] = c->miss_values[m];
    cache_store(c, keys[i], src, values[i]);
  }
}

static void cache_destroy(xq_evaluator_t *ev) {
  cache_t *c = (cache_t *)ev;
  xq_evaluator_free(&c->inner);
  free(c->table);
  free(c->miss_pos);
  free(c->miss_slot);
  free(c->keys);
  free(c->miss_priors);
  free(c->miss_values);
  free(c);
}

int xq_eval_cache_new(xq_evaluator_t **out, xq_evaluator_t *inner, size_t bytes,
                      xq_errbuf_t *eb) {
  *out = NULL;
  assert(inner);
  cache_t *c = calloc(1, sizeof *c);
  if (!c) {
    xq_evaluator_free(&inner);
    return xq_err_set(eb, XQ_ENOMEM, "evaluation cache");
  }
  c->inner = inner;
  int mb = inner->max_batch;
  c->capacity = bytes / sizeof(cache_entry_t);
  if (c->capacity < 1) c->capacity = 1;
  c->table = calloc(c->capacity, sizeof *c->table);
  c->miss_pos = malloc((size_t)mb * sizeof *c->miss_pos);
  c->miss_slot = malloc((size_t)mb * sizeof *c->miss_slot);
  c->keys = malloc((size_t)mb * sizeof *c->keys);
  c->miss_priors = malloc((size_t)mb * XQ_POLICY_SIZE * sizeof(float));
  c->miss_values = malloc((size_t)mb * sizeof(float));
  c->base.eval = cache_eval;
  c->base.destroy = cache_destroy;
  c->base.max_batch = mb;
  c->base.net_id = inner->net_id;
  c->st.capacity = (int64_t)c->capacity;
  if (!c->table || !c->miss_pos || !c->miss_slot || !c->keys || !c->miss_priors || !c->miss_values) {
    size_t mbytes = (size_t)(c->capacity * sizeof *c->table >> 20);
    cache_destroy(&c->base);
    return xq_err_set(eb, XQ_ENOMEM, "cannot allocate an evaluation cache of %zu MB", mbytes);
  }
  *out = &c->base;
  return 0;
}

void xq_eval_cache_stats(const xq_evaluator_t *ev, xq_eval_cache_stats_t *st) {
  assert(ev->destroy == cache_destroy);
  *st = ((const cache_t *)ev)->st;
}
