/* sources.c: the table of game sources behind the replay window's tags (see sources.h). */
#include "sources.h"

#include <stdlib.h>
#include <string.h>

/* The tag of worker_id, or XQC_SOURCE_NONE. */
static uint32_t find_tag(const xqc_sources_t *s, const char *worker_id) {
  uint64_t k = xq_hmap_str_key(worker_id);
  for (size_t i = xq_hmap_find(&s->index, k, XQ_HMAP_NONE); i != XQ_HMAP_NONE;
       i = xq_hmap_find(&s->index, k, i)) {
    uint32_t tag = (uint32_t)xq_hmap_value(&s->index, i);
    if (strcmp(s->v[tag].worker_id, worker_id) == 0) return tag;
  }
  return XQC_SOURCE_NONE;
}

static int grow(xqc_sources_t *s) {
  if (s->n == s->cap) {
    uint32_t ncap = s->cap ? s->cap * 2 : 64;
    xqc_source_t *nv = realloc(s->v, (size_t)ncap * sizeof *nv);
    if (!nv) return -1;
    s->v = nv;
    s->cap = ncap;
  }
  return 0;
}

uint32_t xqc_sources_get(xqc_sources_t *s, const char *worker_id, const char *key,
                         int *key_changed) {
  if (key_changed) *key_changed = 0;
  if (strlen(worker_id) >= sizeof s->v[0].worker_id) return XQC_SOURCE_NONE;
  if (!s->index.values) xq_hmap_init(&s->index, true); /* a zeroed struct: empty */
  uint32_t tag = find_tag(s, worker_id);
  if (tag == XQC_SOURCE_NONE) {
    if (s->n == XQC_SOURCE_NONE - 1 || grow(s) < 0 ||
        xq_hmap_add(&s->index, xq_hmap_str_key(worker_id), s->n) < 0)
      return XQC_SOURCE_NONE;
    tag = s->n++;
    memset(&s->v[tag], 0, sizeof s->v[tag]);
    strcpy(s->v[tag].worker_id, worker_id);
  }
  if (key && key[0] && strlen(key) == XQ_Z85_KEY_LEN && !s->v[tag].key[0]) {
    memcpy(s->v[tag].key, key, XQ_Z85_KEY_LEN + 1);
    if (key_changed) *key_changed = 1;
  }
  return tag;
}

const xqc_source_t *xqc_sources_at(const xqc_sources_t *s, uint32_t tag) {
  return tag < s->n ? &s->v[tag] : NULL;
}

const char *xqc_sources_key_of(const xqc_sources_t *s, const char *worker_id) {
  uint32_t tag = find_tag(s, worker_id);
  return tag == XQC_SOURCE_NONE ? "" : s->v[tag].key;
}

void xqc_sources_close(xqc_sources_t *s) {
  free(s->v);
  xq_hmap_free(&s->index);
  memset(s, 0, sizeof *s);
}
