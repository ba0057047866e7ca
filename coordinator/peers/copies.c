/* copies.c: the window's games by content hash (see copies.h). */
#include "copies.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "support/error.h"
#include "support/rng.h"

int xqc_copies_init(xqc_copies_t *s, uint64_t window) {
  memset(s, 0, sizeof *s);
  s->window = window;
  return 0;
}

void xqc_copies_close(xqc_copies_t *s) {
  free(s->fifo);
  free(s->slots);
  memset(s, 0, sizeof *s);
}

static uint64_t fnv(uint64_t h, const void *p, size_t n) {
  const unsigned char *b = p;
  for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 1099511628211ull;
  return h;
}

uint64_t xqc_copies_hash(const char *key, const xq_game_record_t *rec) {
  uint64_t h = 1469598103934665603ull;
  h = fnv(h, key, strlen(key) + 1);
  h = fnv(h, rec->start_fen, strlen(rec->start_fen) + 1);
  for (int i = 0; i < rec->nplies; i++) {
    uint32_t m = (uint32_t)rec->plies[i].move;
    h = fnv(h, &m, sizeof m);
  }
  int32_t end[2] = {(int32_t)rec->result, (int32_t)rec->reason};
  h = fnv(h, end, sizeof end);
  uint64_t k = xq_splitmix64(&h);
  return k ? k : 1;
}

static size_t slot_of(const xqc_copies_t *s, uint64_t hash) {
  size_t i = hash & (s->nslots - 1);
  while (s->slots[i] && s->slots[i] != hash) i = (i + 1) & (s->nslots - 1);
  return i;
}

bool xqc_copies_has(const xqc_copies_t *s, uint64_t hash) {
  return s->nslots && s->slots[slot_of(s, hash)] == hash;
}

/* Removes hash from the set (backward-shift deletion keeps every probe chain whole). */
static void set_remove(xqc_copies_t *s, uint64_t hash) {
  size_t i = slot_of(s, hash);
  if (s->slots[i] != hash) return;
  size_t mask = s->nslots - 1;
  for (size_t j = (i + 1) & mask; s->slots[j]; j = (j + 1) & mask) {
    size_t home = s->slots[j] & mask;
    /* The entry at j may move to i when its home is not in the cyclic range (i, j]. */
    if ((j > i && (home <= i || home > j)) || (j < i && home <= i && home > j)) {
      s->slots[i] = s->slots[j];
      i = j;
    }
  }
  s->slots[i] = 0;
}

static int grow(xqc_copies_t *s) {
  if (s->n == s->cap) {
    size_t ncap = s->cap ? s->cap * 2 : 256;
    xqc_copy_t *nf = malloc(ncap * sizeof *nf);
    if (!nf) return XQ_ENOMEM;
    for (size_t k = 0; k < s->n; k++) nf[k] = s->fifo[(s->head + k) % s->cap];
    free(s->fifo);
    s->fifo = nf;
    s->cap = ncap;
    s->head = 0;
  }
  if ((s->n + 1) * 2 > s->nslots) {
    size_t nn = s->nslots ? s->nslots * 2 : 512;
    uint64_t *ns = calloc(nn, sizeof *ns);
    if (!ns) return XQ_ENOMEM;
    free(s->slots);
    s->slots = ns;
    s->nslots = nn;
    for (size_t k = 0; k < s->n; k++) {
      uint64_t h = s->fifo[(s->head + k) % s->cap].hash;
      s->slots[slot_of(s, h)] = h;
    }
  }
  return 0;
}

int xqc_copies_add(xqc_copies_t *s, uint64_t hash, uint32_t positions) {
  assert(hash != 0 && !xqc_copies_has(s, hash));
  if (grow(s) < 0) return XQ_ENOMEM;
  s->fifo[(s->head + s->n) % s->cap] = (xqc_copy_t){hash, positions};
  s->n++;
  s->slots[slot_of(s, hash)] = hash;
  s->positions += positions;
  /* Forget the oldest games past the window, keeping the newest even if it alone is more. */
  while (s->n > 1 && s->positions - s->fifo[s->head].positions >= s->window) {
    const xqc_copy_t *old = &s->fifo[s->head];
    set_remove(s, old->hash);
    s->positions -= old->positions;
    s->head = (s->head + 1) % s->cap;
    s->n--;
  }
  return 0;
}
