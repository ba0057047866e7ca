/* copies.c: the window's games by content hash (see copies.h). */
#include "copies.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "support/error.h"
#include "support/rng.h"

int xqc_copies_init(xqc_copies_t *s, uint64_t window) {
  memset(s, 0, sizeof *s);
  xq_hmap_init(&s->set, false);
  s->window = window;
  return 0;
}

void xqc_copies_close(xqc_copies_t *s) {
  free(s->fifo);
  xq_hmap_free(&s->set);
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

bool xqc_copies_has(const xqc_copies_t *s, uint64_t hash) {
  return xq_hmap_has(&s->set, hash);
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
  return 0;
}

int xqc_copies_add(xqc_copies_t *s, uint64_t hash, uint32_t positions) {
  assert(hash != 0 && !xqc_copies_has(s, hash));
  if (grow(s) < 0 || xq_hmap_put(&s->set, hash, 0) < 0) return XQ_ENOMEM;
  s->fifo[(s->head + s->n) % s->cap] = (xqc_copy_t){hash, positions};
  s->n++;
  s->positions += positions;
  /* Forget the oldest games past the window, keeping the newest even if it alone is more. */
  while (s->n > 1 && s->positions - s->fifo[s->head].positions >= s->window) {
    const xqc_copy_t *old = &s->fifo[s->head];
    xq_hmap_del(&s->set, old->hash);
    s->positions -= old->positions;
    s->head = (s->head + 1) % s->cap;
    s->n--;
  }
  return 0;
}
