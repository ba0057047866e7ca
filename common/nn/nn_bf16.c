/*
 * nn_bf16.c: the bf16 Winograd GEMMs, the weights' conversion, and the precision setting
 * (contract in nn_bf16.h).
 *
 * The kernel: C (m, n) = A (m, k) . B with vdpbf16ps, which adds to each of 16 fp32 lanes
 * the two products of a pair of bf16 from A and the pair of B in that lane. So B is laid out
 * as (k / 2, round16(n), 2): each 64-byte row holds 16 columns' pairs (rows 2kk and
 * 2kk + 1 interleaved), and A's pair (2kk, 2kk + 1) of a row, adjacent in A's row-major
 * layout, is one 32-bit broadcast. A block of rows x nv vectors of C stays in zmm registers
 * for the whole k loop (6 x 4, 8 x 3, 12 x 2 or 12 x 1 accumulators: enough independent
 * chains to cover the instruction's latency, at most 24 of the 32 registers); per pair of
 * k it loads nv vectors of B, broadcasts one pair of A per row, and does rows x nv
 * vdpbf16ps. No packing: A is the Winograd transform's own layout, converted in place, and
 * B is converted once per net. The last vector of a row is stored under a mask, so n need
 * not be a multiple of 16 (round8 channel counts such as 8 or 24).
 *
 * OpenBLAS's cblas_sbgemm would be the obvious alternative, but Debian 12's libopenblas
 * 0.3.21 is built without BUILD_BFLOAT16: the header declares cblas_sbgemm and the library
 * does not export it (`nm -D`), so it cannot be the path a lab's stock worker takes.
 */
#include "nn/nn_bf16.h"

#include <assert.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "support/clock.h"

#if defined(__x86_64__) && defined(__GNUC__)
#define NN_BF16_KERNEL 1
#include <immintrin.h>
/* Every function that uses the instructions, and every always_inline helper they call. */
#define BF16_TARGET __attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16")))
#else
#define NN_BF16_KERNEL 0
#endif

enum {
  BF_PTS = 35, /* Winograd points per tile: conv3x3.c's F(5, 3) x F(3, 3), 7 x 5 */
  BF_LANES = 16,
};

static int round8(int c) { return (c + 7) / 8 * 8; }
static int round16(int c) { return (c + 15) / 16 * 16; }

/* ---- the precision setting ---- */

int nn_precision_parse(const char *s, nn_precision_t *out) {
  if (!s) return XQ_EINVAL;
  if (!strcasecmp(s, "auto")) *out = NN_PRECISION_AUTO;
  else if (!strcasecmp(s, "fp32")) *out = NN_PRECISION_FP32;
  else if (!strcasecmp(s, "bf16")) *out = NN_PRECISION_BF16;
  else return XQ_EINVAL;
  return 0;
}

const char *nn_precision_name(nn_precision_t p) {
  switch (p) {
  case NN_PRECISION_FP32: return "fp32";
  case NN_PRECISION_BF16: return "bf16";
  default: return "auto";
  }
}

bool nn_bf16_cpu_supported(void) {
#if NN_BF16_KERNEL
  const char *off = getenv("XQZ_CPU_BF16"); /* "0": as if the CPU lacked it (nn_bf16.h) */
  if (off && !strcmp(off, "0")) return false;
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bf16");
#else
  return false;
#endif
}

nn_precision_t nn_precision_resolve(nn_precision_t req, bool cpu_has_bf16, const char **why) {
  const char *w;
  nn_precision_t got;
  if (req == NN_PRECISION_FP32) {
    got = NN_PRECISION_FP32, w = "fp32 asked for";
  } else if (req == NN_PRECISION_BF16) {
    got = cpu_has_bf16 ? NN_PRECISION_BF16 : NN_PRECISION_FP32;
    w = cpu_has_bf16 ? "bf16 asked for" : "bf16 asked for, but the CPU lacks avx512_bf16: fp32";
  } else {
    got = cpu_has_bf16 ? NN_PRECISION_BF16 : NN_PRECISION_FP32;
    w = cpu_has_bf16 ? "auto: the CPU has avx512_bf16" : "auto: the CPU lacks avx512_bf16";
  }
  if (why) *why = w;
  return got;
}

/* -1: not yet read from XQZ_PRECISION; else an nn_precision_t (fp32 or bf16). */
static atomic_int current = -1;

void nn_precision_set(nn_precision_t resolved) {
  assert(resolved == NN_PRECISION_FP32 || resolved == NN_PRECISION_BF16);
  if (resolved == NN_PRECISION_BF16 && !nn_bf16_cpu_supported()) resolved = NN_PRECISION_FP32;
  atomic_store_explicit(&current, (int)resolved, memory_order_relaxed);
}

nn_precision_t nn_precision_current(void) {
  int c = atomic_load_explicit(&current, memory_order_relaxed);
  if (c >= 0) return (nn_precision_t)c;
  nn_precision_t req = NN_PRECISION_FP32; /* unset: fp32 outside the worker (nn_bf16.h) */
  const char *env = getenv("XQZ_PRECISION");
  if (env && nn_precision_parse(env, &req)) req = NN_PRECISION_FP32;
  nn_precision_t got = nn_precision_resolve(req, nn_bf16_cpu_supported(), NULL);
  atomic_store_explicit(&current, (int)got, memory_order_relaxed);
  return got;
}

nn_precision_t nn_precision_choose(const char *asked, nn_precision_t dflt, const char **why) {
  nn_precision_t req = dflt;
  const char *env = getenv("XQZ_PRECISION");
  if (asked) {
    if (nn_precision_parse(asked, &req)) req = dflt; /* the option row checked it */
  } else if (env && !nn_precision_parse(env, &req)) {
    /* XQZ_PRECISION names it */
  } else {
    req = dflt;
  }
  nn_precision_t got = nn_precision_resolve(req, nn_bf16_cpu_supported(), why);
  nn_precision_set(got);
  return got;
}

int nn_precision_check(const char *flag, const char *v, xq_errbuf_t *eb) {
  nn_precision_t p;
  if (nn_precision_parse(v, &p) == 0) return 0;
  return xq_err_set(eb, XQ_ERANGE, "--%s must be auto, fp32 or bf16, not '%s'", flag, v);
}

/* ---- weights ---- */

/* fp32 -> bf16, round to nearest even; a NaN stays a (quiet) NaN. */
static uint16_t bf16_round(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40u);
  u += 0x7fffu + ((u >> 16) & 1u);
  return (uint16_t)(u >> 16);
}

size_t nn_bf16_prepared_elems(int cin, int cout) {
  return (size_t)BF_PTS * (size_t)(round8(cin) / 2) * (size_t)round16(round8(cout)) * 2;
}

void nn_bf16_prepare(uint16_t *wp16, const float *wp, int cin, int cout) {
  assert(wp16 && wp && cin > 0 && cout > 0);
  const int k2 = round8(cin) / 2, coutp = round8(cout), nq = round16(coutp);
  const size_t per = (size_t)k2 * nq * 2;
  memset(wp16, 0, BF_PTS * per * sizeof *wp16);
  for (int p = 0; p < BF_PTS; p++) {
    const float *U = wp + (size_t)p * cin * coutp; /* (cin, coutp) */
    uint16_t *D = wp16 + p * per;                  /* (k2, nq, 2) */
    for (int ci = 0; ci < cin; ci++)
      for (int co = 0; co < coutp; co++)
        D[((size_t)(ci / 2) * nq + co) * 2 + (ci & 1)] = bf16_round(U[(size_t)ci * coutp + co]);
  }
}

void nn_bf16_refresh(nn_model_t *m) {
  struct nn_bf16_tower *t = m->bf16;
  assert(t && m->fold.valid);
  for (int l = 0; l < t->nconvs; l++)
    nn_bf16_prepare(t->wp[l], m->fold.tower_wp[l], m->p.tower[l].cin, m->p.tower[l].cout);
}

int nn_bf16_attach(nn_model_t *m, xq_errbuf_t *eb) {
  assert(m && m->fold.valid);
  if (!nn_bf16_cpu_supported())
    return xq_err_set(eb, XQ_EINVAL, "bf16 inference needs avx512_bf16, which this CPU lacks");
  nn_bf16_detach(m);
  struct nn_bf16_tower *t = calloc(1, sizeof *t);
  size_t total = 0;
  for (int l = 0; l < m->nconvs; l++)
    total += nn_bf16_prepared_elems(m->p.tower[l].cin, m->p.tower[l].cout);
  uint16_t *mem = t ? malloc(total * sizeof *mem) : NULL;
  if (!mem) {
    free(t);
    return xq_err_set(eb, XQ_ENOMEM, "bf16 weights (%zu bytes)", total * sizeof *mem);
  }
  t->nconvs = m->nconvs;
  t->mem = mem;
  for (int l = 0; l < m->nconvs; l++) {
    t->wp[l] = mem;
    mem += nn_bf16_prepared_elems(m->p.tower[l].cin, m->p.tower[l].cout);
  }
  m->bf16 = t;
  nn_bf16_refresh(m);
  return 0;
}

void nn_bf16_detach(nn_model_t *m) {
  if (!m || !m->bf16) return;
  free(m->bf16->mem);
  free(m->bf16);
  m->bf16 = NULL;
}

/* ---- the kernel ---- */

#if NN_BF16_KERNEL

/* rows x nv vectors of C at c; a at the block's first row, b at its first column's pairs
 * (row stride ldb bf16); `last` masks the columns stored of the last vector. */
BF16_TARGET static inline __attribute__((always_inline)) void
bk_block(int rows, int nv, int k2, const uint16_t *a, int lda, const uint16_t *b, int ldb,
         float *c, int ldc, __mmask16 last) {
  __m512 s[12][4];
  for (int r = 0; r < rows; r++)
    for (int v = 0; v < nv; v++) s[r][v] = _mm512_setzero_ps();
  for (int kk = 0; kk < k2; kk++) {
    __m512i bv[4];
    for (int v = 0; v < nv; v++)
      bv[v] = _mm512_loadu_si512((const void *)(b + (size_t)kk * ldb + v * 2 * BF_LANES));
    for (int r = 0; r < rows; r++) {
      int32_t pair;
      memcpy(&pair, a + (size_t)r * lda + 2 * kk, sizeof pair);
      const __m512i av = _mm512_set1_epi32(pair);
      for (int v = 0; v < nv; v++)
        s[r][v] = _mm512_dpbf16_ps(s[r][v], (__m512bh)av, (__m512bh)bv[v]);
    }
  }
  for (int r = 0; r < rows; r++)
    for (int v = 0; v < nv; v++) {
      float *dst = c + (size_t)r * ldc + v * BF_LANES;
      if (v == nv - 1) _mm512_mask_storeu_ps(dst, last, s[r][v]);
      else _mm512_storeu_ps(dst, s[r][v]);
    }
}

/* Every row of one panel of nv vectors: blocks of mr rows, then one of 6 (the Winograd
 * GEMMs have a multiple of 6 rows), then single rows. */
BF16_TARGET static inline __attribute__((always_inline)) void
bk_panel(int mr, int nv, int m, int k2, const uint16_t *a, int lda, const uint16_t *b, int ldb,
         float *c, int ldc, __mmask16 last) {
  int i = 0;
  for (; i + mr <= m; i += mr)
    bk_block(mr, nv, k2, a + (size_t)i * lda, lda, b, ldb, c + (size_t)i * ldc, ldc, last);
  if (mr > 6 && i + 6 <= m) {
    bk_block(6, nv, k2, a + (size_t)i * lda, lda, b, ldb, c + (size_t)i * ldc, ldc, last);
    i += 6;
  }
  for (; i < m; i++)
    bk_block(1, nv, k2, a + (size_t)i * lda, lda, b, ldb, c + (size_t)i * ldc, ldc, last);
}

BF16_TARGET static void bk_gemm(float *c, int ldc, const uint16_t *a, int lda,
                                const uint16_t *b, int m, int n, int k) {
  const int nq = round16(n), nvec = nq / BF_LANES, k2 = k / 2, ldb = 2 * nq;
  for (int j = 0; j < nvec;) {
    const int nv = nvec - j >= 4 ? 4 : nvec - j;
    const __mmask16 last =
        (j + nv == nvec && n % BF_LANES) ? (__mmask16)((1u << (n % BF_LANES)) - 1) : 0xFFFF;
    const uint16_t *bj = b + (size_t)j * 2 * BF_LANES;
    float *cj = c + (size_t)j * BF_LANES;
    switch (nv) {
    case 4: bk_panel(6, 4, m, k2, a, lda, bj, ldb, cj, ldc, last); break;
    case 3: bk_panel(8, 3, m, k2, a, lda, bj, ldb, cj, ldc, last); break;
    case 2: bk_panel(12, 2, m, k2, a, lda, bj, ldb, cj, ldc, last); break;
    default: bk_panel(12, 1, m, k2, a, lda, bj, ldb, cj, ldc, last); break;
    }
    j += nv;
  }
}

/* In place is safe: 16 floats (64 bytes) are read before their 32 bytes of bf16 are
 * written, and the write never reaches past what has been read. */
BF16_TARGET static void bk_convert(uint16_t *y, const float *x, size_t count) {
  size_t i = 0;
  for (; i + BF_LANES <= count; i += BF_LANES) {
    const __m512 v = _mm512_loadu_ps(x + i);
    const __m256bh h = _mm512_cvtneps_pbh(v);
    _mm256_storeu_si256((__m256i *)(void *)(y + i), (__m256i)h);
  }
  for (; i < count; i++) {
    const float f = x[i];
    y[i] = bf16_round(f);
  }
}

BF16_TARGET static double bk_peak(double seconds) {
  __m512 s[24];
  for (int i = 0; i < 24; i++) s[i] = _mm512_setzero_ps();
  const __m512bh a = (__m512bh)_mm512_set1_epi32(0x3f803f80); /* 1.0, 1.0 */
  const __m512bh b = (__m512bh)_mm512_set1_epi32(0x00010001); /* a denormal: adds 0 */
  long iters = 0;
  const double t0 = xq_clock_s();
  double t;
  do {
    for (int rep = 0; rep < 4096; rep++)
      for (int i = 0; i < 24; i++) s[i] = _mm512_dpbf16_ps(s[i], a, b);
    iters += 4096;
    t = xq_clock_s() - t0;
  } while (t < seconds);
  __m512 sum = s[0];
  for (int i = 1; i < 24; i++) sum = _mm512_add_ps(sum, s[i]);
  volatile float sink = _mm512_reduce_add_ps(sum);
  (void)sink;
  return (double)iters * 24 * BF_LANES * 2 * 2 / t * 1e-9;
}

#endif /* NN_BF16_KERNEL */

void nn_bf16_gemm(float *c, int ldc, const uint16_t *a, int lda, const uint16_t *b, int m,
                  int n, int k) {
  assert(c && a && b && m >= 0 && n >= 1 && k >= 2 && k % 2 == 0 && lda >= k && ldc >= n);
#if NN_BF16_KERNEL
  bk_gemm(c, ldc, a, lda, b, m, n, k);
#else
  (void)c, (void)ldc, (void)a, (void)lda, (void)b, (void)m, (void)n, (void)k;
  assert(!"no bf16 kernel in this build");
#endif
}

void nn_bf16_convert(uint16_t *y, const float *x, size_t count) {
#if NN_BF16_KERNEL
  bk_convert(y, x, count);
#else
  for (size_t i = 0; i < count; i++) y[i] = bf16_round(x[i]);
#endif
}

void nn_bf16_wg_multiply(float *M, float *V, const uint16_t *U16, int T, int cin, int cout) {
  const int cinp = round8(cin), coutp = round8(cout);
  const size_t per = nn_bf16_prepared_elems(cin, cout) / BF_PTS;
  for (int p = 0; p < BF_PTS; p++) {
    float *Vp = V + (size_t)p * T * cinp; /* (T, cinp) fp32 -> (T, cinp) bf16, in place */
    uint16_t *A = (uint16_t *)(void *)Vp;
    nn_bf16_convert(A, Vp, (size_t)T * cinp);
    nn_bf16_gemm(M + (size_t)p * T * coutp, coutp, A, cinp, U16 + p * per, T, coutp, cinp);
  }
}

double nn_bf16_peak_gflops(double seconds) {
#if NN_BF16_KERNEL
  if (nn_bf16_cpu_supported()) return bk_peak(seconds);
#endif
  (void)seconds;
  return 0;
}
