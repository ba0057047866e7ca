/*
 * eval_cache.h: an evaluator that remembers what another evaluator said about positions it
 * has seen, so a search (the engine's `Hash` option) asks the net once per position.
 *
 * The cache is keyed by everything the network's input planes read: the Zobrist key of the
 * board and side to move, the no-capture counter and whether the position repeats one of
 * its history (nn/encode.c). A hit therefore returns exactly what the net would say. It
 * is direct-mapped (a new entry replaces the old one in its slot) and holds the priors of
 * the legal moves only, so one entry is under 800 bytes.
 *
 * Like every evaluator it belongs to one search thread. Name prefix: xq_eval_cache_.
 */
#ifndef XQ_EVAL_CACHE_H
#define XQ_EVAL_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "search/evaluator.h"
#include "support/error.h"

/* Wraps inner (ownership passes to the cache, also on failure) in a cache of at most
 * bytes bytes (at least one entry). XQ_ENOMEM if the memory cannot be had. */
int xq_eval_cache_new(xq_evaluator_t **out, xq_evaluator_t *inner, size_t bytes,
                      xq_errbuf_t *eb);

typedef struct {
  int64_t lookups, hits;
  int64_t used, capacity; /* entries filled and entries in all */
} xq_eval_cache_stats_t;

/* Counters of a cache made by xq_eval_cache_new. */
void xq_eval_cache_stats(const xq_evaluator_t *ev, xq_eval_cache_stats_t *st);

/* Bytes one entry takes (for sizing: entries = bytes / this). */
size_t xq_eval_cache_entry_size(void);

#endif
