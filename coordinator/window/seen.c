/* seen.c: the games already stored, by (worker id, seq) (see seen.h). */
#include "seen.h"

#include "support/rng.h"

uint64_t xqc_seen_key(const char *worker_id, uint64_t seq) {
  uint64_t st = xq_hmap_str_key(worker_id) ^ (seq * 0x9E3779B97F4A7C15ull);
  uint64_t k = xq_splitmix64(&st);
  return k ? k : 1;
}

bool xqc_seen_has(const xqc_seen_t *s, uint64_t key) { return xq_hmap_has(&s->keys, key); }

int xqc_seen_add(xqc_seen_t *s, uint64_t key) { return xq_hmap_put(&s->keys, key, 0); }

void xqc_seen_close(xqc_seen_t *s) { xq_hmap_free(&s->keys); }
