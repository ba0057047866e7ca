/*
 * rng.h: a small seeded random number generator (xoshiro256** seeded by splitmix64).
 * Randomness in xqzero is always seeded and passed in explicitly, so that a run can be
 * reproduced bit for bit; xq_rng_t is a plain value the caller owns, one per thread.
 */
#ifndef XQ_RNG_H
#define XQ_RNG_H

#include <stdint.h>

typedef struct {
  uint64_t s[4];
} xq_rng_t;

/* Seeds the generator; any seed (including 0) gives a valid, distinct stream. */
void xq_rng_seed(xq_rng_t *r, uint64_t seed);
/* Next 64 random bits. */
uint64_t xq_rng_next(xq_rng_t *r);
/* Uniform double in [0, 1). */
double xq_rng_uniform(xq_rng_t *r);
/* Uniform integer in [0, n); n > 0. */
uint64_t xq_rng_below(xq_rng_t *r, uint64_t n);
/* Standard normal deviate (Box-Muller, one value per call). */
double xq_rng_normal(xq_rng_t *r);
/* One step of splitmix64: a good 64-bit mixer, also useful to derive ids and seeds. */
uint64_t xq_splitmix64(uint64_t *state);

#endif
