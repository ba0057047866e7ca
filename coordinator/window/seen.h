/*
 * seen.h: the games already stored, by (worker id, seq), so a game sent again (a worker
 * resends what was not acknowledged) is acknowledged without being stored twice. A pair is
 * known by a 64-bit key (FNV-1a of the worker id mixed with seq by splitmix64); the set is
 * rebuilt from the segment files at start and only grows.
 *
 * Ownership: the caller owns the struct; a zeroed one is empty; xqc_seen_close frees it.
 */
#ifndef XQC_SEEN_H
#define XQC_SEEN_H

#include <stdbool.h>
#include <stdint.h>

#include "support/hmap.h"

typedef struct {
  xq_hmap_t keys; /* a set of xqc_seen_key values */
} xqc_seen_t;

/* The key of (worker_id, seq): never 0. */
uint64_t xqc_seen_key(const char *worker_id, uint64_t seq);
bool xqc_seen_has(const xqc_seen_t *s, uint64_t key);
/* 1 when added, 0 when already there, XQ_ENOMEM. */
int xqc_seen_add(xqc_seen_t *s, uint64_t key);
void xqc_seen_close(xqc_seen_t *s);

#endif
