/*
 * bench_nn_gemm.c: the narrow-GEMM table of `xqz bench nn` (see bench_nn_gemm.h). Each row
 * is one layer's GEMM shape, timed with nn_gemm_small and with cblas_sgemm; the last column
 * is the kernel's speed-up, and "(not taken)" marks the shapes nn_sgemm leaves to OpenBLAS
 * (nn_gemm_small_fits), which is how the limits NN_GEMM_SMALL_MAX_N and _K were chosen.
 */
#include "bench_nn_gemm.h"

#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench_nn_net.h"
#include "nn/nn_gemm_small.h"

typedef struct {
  const char *layer;
  bool trans_a;
  int m, n, k;
  bool accumulate;
  bool one_b; /* every call multiplies by the same B (a layer's weights), else each its own */
} gemm_shape_t;

/*
 * The Winograd convolutions: per transformed point, forward and backward_data (36 tiles of
 * a 6-image chunk by C x C) and backward_weights (C x C summed over the 36 tiles); the 1x1
 * head convolutions: one image's 90 squares, C channels in, 2 (policy) out, and back; the
 * policy FC at inference (its weights transposed: 180 inputs by 2,086 moves) at several
 * batch sizes, each call with the same weights as successive batches have.
 */
static const gemm_shape_t SHAPES[] = {
    {"winograd forward", false, 36, 16, 16, false, false},
    {"winograd bwd_weights", true, 16, 16, 36, true, false},
    {"winograd forward", false, 36, 32, 32, false, false},
    {"winograd bwd_weights", true, 32, 32, 36, true, false},
    {"winograd forward", false, 36, 64, 64, false, false},
    {"winograd bwd_weights", true, 64, 64, 36, true, false},
    {"winograd forward", false, 36, 128, 128, false, false},
    {"1x1 policy head", false, 2, 90, 16, false, false},
    {"1x1 policy head", false, 2, 90, 64, false, false},
    {"1x1 policy head dx", true, 16, 90, 2, true, false},
    {"1x1 policy head dx", true, 64, 90, 2, true, false},
    {"policy FC, batch 1", false, 1, 2086, 180, false, true},
    {"policy FC, batch 28", false, 28, 2086, 180, false, true},
    {"policy FC, batch 64", false, 64, 2086, 180, false, true},
    {"policy FC, batch 256", false, 256, 2086, 180, false, true},
};

typedef struct {
  const gemm_shape_t *s;
  float *a, *b, *c;
} gemm_ctx_t;

/* 35 calls of each shape, as a Winograd layer makes them. */
enum { CALLS = 35 };

static void run_calls(gemm_ctx_t *g, bool kernel) {
  const gemm_shape_t *s = g->s;
  const size_t asz = (size_t)s->m * s->k, csz = (size_t)s->m * s->n;
  const size_t bsz = s->one_b ? 0 : (size_t)s->k * s->n;
  const int lda = s->trans_a ? s->m : s->k;
  for (int i = 0; i < CALLS; i++) {
    if (kernel)
      nn_gemm_small(s->trans_a, s->m, s->n, s->k, g->a + i * asz, lda, g->b + i * bsz, s->n,
                    s->accumulate, g->c + i * csz, s->n);
    else
      cblas_sgemm(CblasRowMajor, s->trans_a ? CblasTrans : CblasNoTrans, CblasNoTrans, s->m,
                  s->n, s->k, 1.0f, g->a + i * asz, lda, g->b + i * bsz, s->n,
                  s->accumulate ? 1.0f : 0.0f, g->c + i * csz, s->n);
  }
}
static void run_kernel(void *p) { run_calls(p, true); }
static void run_openblas(void *p) { run_calls(p, false); }

void bench_nn_gemms(bool json, double min_time, double peak_gflops) {
  if (json) printf(",\"gemm\":{");
  else {
    printf("\nnarrow GEMMs (%d calls as one layer makes them; nn_gemm_small against OpenBLAS "
           "alone)\n", CALLS);
    printf("%-22s %3s %4s %4s %4s %12s %6s %12s %6s %7s\n", "layer", "op", "m", "n", "k",
           "kernel", "%peak", "openblas", "%peak", "speedup");
  }
  for (size_t i = 0; i < sizeof SHAPES / sizeof SHAPES[0]; i++) {
    const gemm_shape_t *s = &SHAPES[i];
    unsigned seed = 9;
    gemm_ctx_t g = {s, bench_nn_alloc_rand((size_t)CALLS * s->m * s->k, &seed),
                    bench_nn_alloc_rand((size_t)(s->one_b ? 1 : CALLS) * s->k * s->n, &seed),
                    bench_nn_alloc_rand((size_t)CALLS * s->m * s->n, &seed)};
    const bool taken = nn_gemm_small_fits(s->trans_a, false, s->m, s->n, s->k, 1.0f,
                                          s->accumulate ? 1.0f : 0.0f);
    const double t_small = bench_nn_time(run_kernel, &g, min_time);
    const double t_blas = bench_nn_time(run_openblas, &g, min_time);
    const double flops = 2.0 * CALLS * s->m * s->n * s->k;
    const double gs = flops / t_small * 1e-9, gb = flops / t_blas * 1e-9;
    if (json)
      printf("%s\"%s/%s/%dx%dx%d\":{\"kernel_gflops\":%.1f,\"openblas_gflops\":%.1f,"
             "\"taken\":%s}",
             i ? "," : "", s->layer, s->trans_a ? "tn" : "nn", s->m, s->n, s->k, gs, gb,
             taken ? "true" : "false");
    else {
      printf("%-22s %3s %4d %4d %4d %7.1f GF/s %5.0f%% %7.1f GF/s %5.0f%% %6.2fx%s\n",
             s->layer, s->trans_a ? "tn" : "nn", s->m, s->n, s->k, gs, 100 * gs / peak_gflops,
             gb, 100 * gb / peak_gflops, t_blas / t_small, taken ? "" : "  (not taken)");
      fflush(stdout);
    }
    free(g.a), free(g.b), free(g.c);
  }
  if (json) printf("}");
}
