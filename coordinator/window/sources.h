/*
 * sources.h: who sent the samples in the replay window. Each game's samples carry a
 * compact uint32 tag, an index into this table of worker ids; each entry also holds the
 * CURVE key that owns that worker id (the first to claim it, peers.h; empty when CURVE is
 * off), so a ban on a worker id or on a key can find its samples (bans.h). Entries are never removed: a
 * tag stays valid for the life of the process. A hash index keeps lookups O(1) even when
 * a hostile peer invents many worker ids.
 *
 * Ownership: the caller owns the struct (zero it, or xqc_sources_close it); the index is
 * a map, made so by the first xqc_sources_get.
 */
#ifndef XQC_SOURCES_H
#define XQC_SOURCES_H

#include <stdint.h>

#include "support/hmap.h"
#include "wire/curve.h"

#define XQC_SOURCE_NONE UINT32_MAX

typedef struct {
  char worker_id[128];
  char key[XQ_Z85_KEY_LEN + 1];
} xqc_source_t;

typedef struct {
  xqc_source_t *v; /* (n) */
  uint32_t n, cap;
  xq_hmap_t index; /* worker id's hash -> its tag (several when hashes collide) */
} xqc_sources_t;

/* The tag of worker_id, added when new. A non-empty key is recorded when the entry has
 * none yet (the first key owns the id) and sets *key_changed (may be NULL) so the caller
 * can persist it; a later, different key is not recorded. XQC_SOURCE_NONE when out of
 * memory or worker_id is too long. */
uint32_t xqc_sources_get(xqc_sources_t *s, const char *worker_id, const char *key,
                         int *key_changed);
/* The entry of a tag (NULL for XQC_SOURCE_NONE or an unknown tag). */
const xqc_source_t *xqc_sources_at(const xqc_sources_t *s, uint32_t tag);
/* The key recorded for worker_id ("" when none or unknown). */
const char *xqc_sources_key_of(const xqc_sources_t *s, const char *worker_id);
void xqc_sources_close(xqc_sources_t *s);

#endif
