/* sources.c: the table of game sources behind the replay window's tags (see sources.h). */
#include "sources.h"

#include <stdlib.h>
#include <string.h>

static uint32_t hash(const char *s) {
  uint32_t h = 2166136261u;
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) h = (h ^ *p) * 16777619u;
  return h;
}

/* Slot of worker_id in the index: the slot holding it, or the empty slot where it goes. */
static uint32_t find_slot(const xqc_sources_t *s, const char *worker_id) {
  uint32_t i = hash(worker_id) & (s->nslots - 1);
  while (s->slots[i] != XQC_SOURCE_NONE && strcmp(s->v[s->slots[i]].worker_id, worker_id))
    i = (i + 1) & (s->nslots - 1);
  return i;
}

static int grow(xqc_sources_t *s) {
  if (s->n == s->cap) {
    uint32_t ncap = s->cap ? s->cap * 2 : 64;
    xqc_source_t *nv = realloc(s->v, (size_t)ncap * sizeof *nv);
    if (!nv) return -1;
    s->v = nv;
    s->cap = ncap;
  }
  if ((s->n + 1) * 2 > s->nslots) {
    uint32_t nn = s->nslots ? s->nslots * 2 : 128;
    uint32_t *ns = malloc((size_t)nn * sizeof *ns);
    if (!ns) return -1;
    memset(ns, 0xff, (size_t)nn * sizeof *ns);
    free(s->slots);
    s->slots = ns;
    s->nslots = nn;
    for (uint32_t k = 0; k < s->n; k++) s->slots[find_slot(s, s->v[k].worker_id)] = k;
  }
  return 0;
}

uint32_t xqc_sources_get(xqc_sources_t *s, const char *worker_id, const char *key,
                         int *key_changed) {
  if (key_changed) *key_changed = 0;
  if (strlen(worker_id) >= sizeof s->v[0].worker_id) return XQC_SOURCE_NONE;
  uint32_t tag = XQC_SOURCE_NONE;
  if (s->nslots) tag = s->slots[find_slot(s, worker_id)];
  if (tag == XQC_SOURCE_NONE) {
    if (s->n == XQC_SOURCE_NONE - 1 || grow(s) < 0) return XQC_SOURCE_NONE;
    tag = s->n++;
    memset(&s->v[tag], 0, sizeof s->v[tag]);
    strcpy(s->v[tag].worker_id, worker_id);
    s->slots[find_slot(s, worker_id)] = tag;
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
  if (!s->nslots) return "";
  uint32_t tag = s->slots[find_slot(s, worker_id)];
  return tag == XQC_SOURCE_NONE ? "" : s->v[tag].key;
}

void xqc_sources_close(xqc_sources_t *s) {
  free(s->v);
  free(s->slots);
  memset(s, 0, sizeof *s);
}
