/*
 * hmap.h: the one open-addressing hash table of xqzero, keyed by nonzero 64-bit keys.
 *
 * A table is a set (no values) or a map (one 64-bit value per entry: an index into the
 * caller's array, usually). Linear probing from a Fibonacci-hashed home slot, at most half
 * full: it doubles before an insert would pass that. Deletion shifts the following entries
 * back, so probe chains stay whole without tombstones.
 *
 * Keys made from strings (a worker id's hash) may collide: xq_hmap_add keeps several
 * entries under one key, and the caller walks them with xq_hmap_find, comparing its own
 * strings. xq_hmap_put keeps one entry per key (sets of keys that are the content).
 *
 * Slots are positions in the table: valid until the next insert or delete.
 * Ownership: the caller owns the struct (xq_hmap_init, xq_hmap_free); a zeroed struct is an
 * empty set.
 */
#ifndef XQ_HMAP_H
#define XQ_HMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define XQ_HMAP_NONE SIZE_MAX /* no slot: xq_hmap_find's start and its "no more" */

typedef struct {
  uint64_t *keys; /* (cap) 0 = empty */
  uint64_t *vals; /* (cap) values of a map; NULL for a set */
  size_t cap, n;  /* cap is 0 or a power of two */
  unsigned shift; /* 64 - log2(cap): the home slot is the top bits of key * golden */
  bool values;
} xq_hmap_t;

/* An empty table (allocates nothing yet); values: a map, else a set. */
void xq_hmap_init(xq_hmap_t *m, bool values);
/* Frees the slots; the table is empty and usable again (same kind). NULL-safe. */
void xq_hmap_free(xq_hmap_t *m);
/* The slot of the next entry under key after slot `after` (XQ_HMAP_NONE: the first), or
 * XQ_HMAP_NONE when there is none. Walks every entry of a key added several times. */
size_t xq_hmap_find(const xq_hmap_t *m, uint64_t key, size_t after);
/* true when some entry has this key. */
bool xq_hmap_has(const xq_hmap_t *m, uint64_t key);
/* The value at a slot xq_hmap_find returned (a map only). */
uint64_t xq_hmap_value(const xq_hmap_t *m, size_t slot);
/* Adds key (with val, ignored for a set) unless an entry has it: 1 added, 0 already
 * there (its value unchanged), XQ_ENOMEM. */
int xq_hmap_put(xq_hmap_t *m, uint64_t key, uint64_t val);
/* Adds an entry even when others have the key (string hashes that collide): 0 or
 * XQ_ENOMEM. */
int xq_hmap_add(xq_hmap_t *m, uint64_t key, uint64_t val);
/* Removes the entry at slot (from xq_hmap_find). */
void xq_hmap_del_at(xq_hmap_t *m, size_t slot);
/* Removes the first entry with key: true when there was one. */
bool xq_hmap_del(xq_hmap_t *m, uint64_t key);
/* Removes every entry, keeping the slots. */
void xq_hmap_clear(xq_hmap_t *m);
/* A nonzero 64-bit key of a string (FNV-1a; 1 for a hash of 0). */
uint64_t xq_hmap_str_key(const char *s);

#endif
