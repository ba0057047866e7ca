/*
 * copies.h: the games in the replay window by content, so one game sent again under new
 * seqs is refused instead of entering the window every time. A game is known by a 64-bit
 * hash of its sender's key (empty without CURVE), start position, moves and result; the
 * set forgets the oldest games once the positions it covers pass the window's size, so it
 * stays as large as the window and no larger.
 *
 * Ownership: the caller owns the struct; xqc_copies_init allocates, xqc_copies_close frees.
 */
#ifndef XQC_COPIES_H
#define XQC_COPIES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "records/game_record.h"
#include "support/hmap.h"

typedef struct {
  uint64_t hash;
  uint32_t positions;
} xqc_copy_t;

typedef struct {
  xqc_copy_t *fifo;   /* (cap) ring of the games covered, oldest at head */
  size_t head, n, cap;
  uint64_t positions; /* positions of the games in the ring */
  uint64_t window;    /* forget the oldest games past this many positions */
  xq_hmap_t set;      /* the ring's hashes */
} xqc_copies_t;

int xqc_copies_init(xqc_copies_t *s, uint64_t window);
void xqc_copies_close(xqc_copies_t *s);
/* The content hash of a decoded record sent under `key` (never 0). */
uint64_t xqc_copies_hash(const char *key, const xq_game_record_t *rec);
/* true when a game with this hash is covered. */
bool xqc_copies_has(const xqc_copies_t *s, uint64_t hash);
/* Covers a new game of `positions` positions (hash not yet covered); forgets the oldest
 * games beyond the window. 0 or XQ_ENOMEM. */
int xqc_copies_add(xqc_copies_t *s, uint64_t hash, uint32_t positions);

#endif
