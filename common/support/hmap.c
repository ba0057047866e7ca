/* hmap.c: the open-addressing hash table (see hmap.h). */
#include "hmap.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "support/error.h"

#define GOLDEN 0x9E3779B97F4A7C15ull /* 2^64 / phi: Fibonacci hashing */
#define MIN_CAP 16

static size_t home(const xq_hmap_t *m, uint64_t key) {
  return (size_t)((key * GOLDEN) >> m->shift);
}

void xq_hmap_init(xq_hmap_t *m, bool values) {
  memset(m, 0, sizeof *m);
  m->values = values;
}

void xq_hmap_free(xq_hmap_t *m) {
  if (!m) return;
  free(m->keys);
  free(m->vals);
  xq_hmap_init(m, m->values);
}

size_t xq_hmap_find(const xq_hmap_t *m, uint64_t key, size_t after) {
  assert(key != 0);
  if (!m->cap) return XQ_HMAP_NONE;
  size_t mask = m->cap - 1;
  size_t i = after == XQ_HMAP_NONE ? home(m, key) : ((after + 1) & mask);
  for (; m->keys[i]; i = (i + 1) & mask)
    if (m->keys[i] == key) return i;
  return XQ_HMAP_NONE;
}

bool xq_hmap_has(const xq_hmap_t *m, uint64_t key) {
  return xq_hmap_find(m, key, XQ_HMAP_NONE) != XQ_HMAP_NONE;
}

uint64_t xq_hmap_value(const xq_hmap_t *m, size_t slot) {
  assert(m->vals && slot < m->cap && m->keys[slot]);
  return m->vals[slot];
}

/* Places an entry in the first empty slot of its chain (the table has room). */
static void place(xq_hmap_t *m, uint64_t key, uint64_t val) {
  size_t mask = m->cap - 1, i = home(m, key);
  while (m->keys[i]) i = (i + 1) & mask;
  m->keys[i] = key;
  if (m->vals) m->vals[i] = val;
  m->n++;
}

/* Makes room for one more entry at a load of at most 1/2. */
static int reserve_one(xq_hmap_t *m) {
  if ((m->n + 1) * 2 <= m->cap) return 0;
  size_t ncap = m->cap ? m->cap * 2 : MIN_CAP;
  uint64_t *nk = calloc(ncap, sizeof *nk);
  uint64_t *nv = m->values ? calloc(ncap, sizeof *nv) : NULL;
  if (!nk || (m->values && !nv)) {
    free(nk);
    free(nv);
    return XQ_ENOMEM;
  }
  xq_hmap_t old = *m;
  m->keys = nk;
  m->vals = nv;
  m->cap = ncap;
  m->n = 0;
  m->shift = 64;
  for (size_t c = ncap; c > 1; c >>= 1) m->shift--;
  for (size_t i = 0; i < old.cap; i++)
    if (old.keys[i]) place(m, old.keys[i], old.vals ? old.vals[i] : 0);
  free(old.keys);
  free(old.vals);
  return 0;
}

int xq_hmap_put(xq_hmap_t *m, uint64_t key, uint64_t val) {
  if (xq_hmap_has(m, key)) return 0;
  int rc = xq_hmap_add(m, key, val);
  return rc < 0 ? rc : 1;
}

int xq_hmap_add(xq_hmap_t *m, uint64_t key, uint64_t val) {
  assert(key != 0);
  if (reserve_one(m) < 0) return XQ_ENOMEM;
  place(m, key, val);
  return 0;
}

void xq_hmap_del_at(xq_hmap_t *m, size_t slot) {
  assert(slot < m->cap && m->keys[slot]);
  size_t mask = m->cap - 1, i = slot;
  for (size_t j = (i + 1) & mask; m->keys[j]; j = (j + 1) & mask) {
    size_t h = home(m, m->keys[j]);
    /* The entry at j may move back to i when its home is not in the cyclic range (i, j]. */
    if ((j > i && (h <= i || h > j)) || (j < i && h <= i && h > j)) {
      m->keys[i] = m->keys[j];
      if (m->vals) m->vals[i] = m->vals[j];
      i = j;
    }
  }
  m->keys[i] = 0;
  m->n--;
}

bool xq_hmap_del(xq_hmap_t *m, uint64_t key) {
  size_t s = xq_hmap_find(m, key, XQ_HMAP_NONE);
  if (s == XQ_HMAP_NONE) return false;
  xq_hmap_del_at(m, s);
  return true;
}

void xq_hmap_clear(xq_hmap_t *m) {
  if (m->cap) memset(m->keys, 0, m->cap * sizeof *m->keys);
  m->n = 0;
}

uint64_t xq_hmap_str_key(const char *s) {
  uint64_t h = 1469598103934665603ull;
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    h ^= *p;
    h *= 1099511628211ull;
  }
  return h ? h : 1;
}
