/*
 * bench_int8_peak.c: the AVX512-VNNI int8 peak (bench_int8_peak.h). Like nn_bf16.c's
 * bf16 peak: 24 independent accumulators, so that the loop is bound by the instruction's
 * throughput, not its latency; compiled with a target attribute, run only where the CPU
 * says it has the instructions.
 */
#include "bench_int8_peak.h"

#include "support/clock.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define VNNI_TARGET __attribute__((target("avx512f,avx512bw,avx512vnni")))

bool bench_int8_vnni_supported(void) {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512vnni");
}

VNNI_TARGET static double vnni_peak(double seconds) {
  __m512i s[24];
  for (int i = 0; i < 24; i++) s[i] = _mm512_setzero_si512();
  const __m512i a = _mm512_set1_epi8(1), b = _mm512_set1_epi8(0); /* adds 0: no overflow */
  long iters = 0;
  const double t0 = xq_clock_s();
  double t;
  do {
    for (int rep = 0; rep < 4096; rep++)
      for (int i = 0; i < 24; i++) s[i] = _mm512_dpbusd_epi32(s[i], a, b);
    iters += 4096;
    t = xq_clock_s() - t0;
  } while (t < seconds);
  __m512i sum = s[0];
  for (int i = 1; i < 24; i++) sum = _mm512_add_epi32(sum, s[i]);
  volatile int sink = _mm512_reduce_add_epi32(sum);
  (void)sink;
  return (double)iters * 24 * 64 * 2 / t * 1e-9; /* 64 products a vector, 2 ops each */
}

double bench_int8_peak_gops(double seconds) {
  return bench_int8_vnni_supported() ? vnni_peak(seconds) : 0;
}

#else

bool bench_int8_vnni_supported(void) { return false; }
double bench_int8_peak_gops(double seconds) {
  (void)seconds;
  return 0;
}

#endif
