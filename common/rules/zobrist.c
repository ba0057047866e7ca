/*
 * zobrist.c: Zobrist keys for positions. The table is generated from a fixed seed the
 * first time it is needed, so every host computes identical keys (the coordinator and
 * the workers must agree when they compare positions).
 */
#include <pthread.h>

#include "rules/board.h"
#include "rules/tables.h"

uint64_t xq_zob_piece_[16][XQ_SQUARES];
uint64_t xq_zob_side_;
static pthread_once_t zob_once = PTHREAD_ONCE_INIT;

static uint64_t splitmix64(uint64_t *s) {
  uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

static void zob_fill(void) {
  uint64_t s = 0x78717a65726f2121ull; /* "xqzero!!" */
  for (int pc = 0; pc < 16; pc++)
    for (int sq = 0; sq < XQ_SQUARES; sq++) xq_zob_piece_[pc][sq] = splitmix64(&s);
  xq_zob_side_ = splitmix64(&s);
}

/* The table is filled at load time too, so hot paths need no pthread_once check. */
__attribute__((constructor(101))) static void zob_init(void) { pthread_once(&zob_once, zob_fill); }

uint64_t xq_zobrist_side(void) { return xq_zob_side_; }

uint64_t xq_pos_compute_key(const xq_pos_t *pos) {
  uint64_t k = pos->side == XQ_BLACK ? xq_zob_side_ : 0;
  for (int sq = 0; sq < XQ_SQUARES; sq++)
    if (pos->board[sq]) k ^= xq_zob_piece_[pos->board[sq]][sq];
  return k;
}
