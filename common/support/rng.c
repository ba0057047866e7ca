/* rng.c: xoshiro256** (Blackman and Vigna) seeded through splitmix64. */
#include "support/rng.h"

#include <assert.h>
#include <math.h>

uint64_t xq_splitmix64(uint64_t *state) {
  uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

void xq_rng_seed(xq_rng_t *r, uint64_t seed) {
  for (int i = 0; i < 4; i++) r->s[i] = xq_splitmix64(&seed);
}

static inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t xq_rng_next(xq_rng_t *r) {
  uint64_t *s = r->s;
  uint64_t result = rotl(s[1] * 5, 7) * 9;
  uint64_t t = s[1] << 17;
  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = rotl(s[3], 45);
  return result;
}

double xq_rng_uniform(xq_rng_t *r) { return (double)(xq_rng_next(r) >> 11) * 0x1.0p-53; }

uint64_t xq_rng_below(xq_rng_t *r, uint64_t n) {
  assert(n > 0);
  /* Rejection sampling keeps the result exactly uniform. */
  uint64_t limit = UINT64_MAX - UINT64_MAX % n;
  uint64_t x;
  do x = xq_rng_next(r);
  while (x >= limit);
  return x % n;
}

double xq_rng_normal(xq_rng_t *r) {
  double u1 = 1.0 - xq_rng_uniform(r); /* (0, 1]: log is finite */
  double u2 = xq_rng_uniform(r);
  return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}
