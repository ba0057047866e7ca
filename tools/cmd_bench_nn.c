/*
 * cmd_bench_nn.c: `xqz bench nn`: how close the network code runs to this machine's
 * limit. Measures the machine's own single-call cblas_sgemm peak, then the 3x3 conv
 * kernels (Winograd and the im2col reference) layer by layer, the small nets' GEMM shapes
 * (nn_gemm_small against OpenBLAS alone, bench_nn_gemm.c), and whole-net inference and
 * training rates, each with achieved GFLOP/s (direct-convolution FLOPs, so Winograd can
 * exceed 100% of the sgemm peak) and its share of the peak. Those tables run fp32; the
 * precision table that follows times the search's call in fp32 and in bf16 (nn_bf16.h)
 * alternately, each against its own peak (the sgemm peak, and vdpbf16ps's).
 * Benchmarks print figures; they are not tests. --json prints one JSON object.
 */
#include <cblas.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_int8_peak.h"
#include "bench_nn_gemm.h"
#include "bench_nn_net.h"
#include "cli_options.h"
#include "commands.h"
#include "nn/conv3x3.h"
#include "nn/conv3x3_im2col.h"
#include "nn/nn_bf16.h"
#include "support/clock.h"

typedef struct {
  int threads;
  bool quick, json, no_net, precision_only;
  const char *precision; /* --precision: auto, fp32, bf16 or both (NULL: XQZ_PRECISION or both) */
  int rounds;            /* --rounds: interleaved rounds of the precision table */
  double min_time;  /* seconds per measurement */
  nn_arch_t nets[BENCH_NN_MAX_NETS]; /* the whole-net figures' nets (--nets) */
  int nnets;
  const char *nets_arg; /* --nets as given */
} bench_opts_t;

float *bench_nn_alloc_rand(size_t count, unsigned *seed) {
  float *p = malloc(sizeof(float) * (count ? count : 1));
  if (!p) {
    fprintf(stderr, "xqz bench nn: out of memory (%zu floats)\n", count);
    exit(1);
  }
  for (size_t i = 0; i < count; i++) {
    *seed = *seed * 1103515245u + 12345u;
    p[i] = (float)((*seed >> 8) & 0xFFFF) / 32768.0f - 1.0f;
  }
  return p;
}

/*
 * Seconds per call of fn(ctx): one warm-up call, then three timed rounds each lasting
 * at least min_time; the fastest round wins (noise on a shared machine only slows).
 */
typedef void (*bench_fn)(void *ctx);
double bench_nn_time(bench_fn fn, void *ctx, double min_time) {
  fn(ctx);
  double best = 1e30;
  for (int round = 0; round < 3; round++) {
    int calls = 0;
    double t0 = xq_clock_s(), t;
    do {
      fn(ctx);
      calls++;
      t = xq_clock_s() - t0;
    } while (t < min_time);
    if (t / calls < best) best = t / calls;
  }
  return best;
}

/* ---- sgemm peak ---- */

typedef struct {
  int m, n, k;
  float *a, *b, *c;
} sgemm_ctx_t;

static void run_sgemm(void *p) {
  sgemm_ctx_t *s = p;
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, s->m, s->n, s->k, 1.0f, s->a, s->k,
              s->b, s->n, 0.0f, s->c, s->n);
}

static double sgemm_peak(const bench_opts_t *o) {
  unsigned seed = 1;
  sgemm_ctx_t s = {1024, 1024, 1024, NULL, NULL, NULL};
  s.a = bench_nn_alloc_rand((size_t)s.m * s.k, &seed);
  s.b = bench_nn_alloc_rand((size_t)s.k * s.n, &seed);
  s.c = bench_nn_alloc_rand((size_t)s.m * s.n, &seed);
  double t = bench_nn_time(run_sgemm, &s, o->min_time);
  free(s.a), free(s.b), free(s.c);
  return 2.0 * s.m * s.n * s.k / t * 1e-9;
}

/* ---- conv layers ---- */

typedef struct {
  int n, cin, cout;
  float *x, *y, *w, *wp, *bias, *res, *dw, *scratch, *scratch_ref;
} conv_ctx_t;

static void run_fwd(void *p) {
  conv_ctx_t *c = p;
  nn_conv3x3_forward(c->y, c->scratch, c->x, c->wp, c->bias, c->res, true, c->n, c->cin,
                     c->cout);
}
static void run_fwd_ref(void *p) {
  conv_ctx_t *c = p;
  nn_conv3x3_im2col_forward(c->y, c->scratch_ref, c->x, c->w, c->bias, c->res, true, c->n,
                            c->cin, c->cout);
}
static void run_bwd_data(void *p) {
  conv_ctx_t *c = p;
  nn_conv3x3_backward_data(c->x, c->scratch, c->y, c->w, c->n, c->cin, c->cout);
}
static void run_bwd_data_ref(void *p) {
  conv_ctx_t *c = p;
  nn_conv3x3_im2col_backward_data(c->x, c->scratch_ref, c->y, c->w, c->n, c->cin, c->cout);
}
static void run_bwd_w(void *p) {
  conv_ctx_t *c = p;
  nn_conv3x3_backward_weights(c->dw, c->scratch, c->y, c->x, c->n, c->cin, c->cout);
}
static void run_bwd_w_ref(void *p) {
  conv_ctx_t *c = p;
  nn_conv3x3_im2col_backward_weights(c->dw, c->scratch_ref, c->y, c->x, c->n, c->cin,
                                     c->cout);
}

static void bench_convs(const bench_opts_t *o, double peak, bool *first_json) {
  static const int chans[] = {64, 128};
  static const int batches[] = {32, 256};
  static const struct {
    const char *name;
    bench_fn fast, ref;
  } kinds[] = {{"forward", run_fwd, run_fwd_ref},
               {"backward_data", run_bwd_data, run_bwd_data_ref},
               {"backward_weights", run_bwd_w, run_bwd_w_ref}};
  if (!o->json) {
    printf("\n3x3 conv layers (GFLOP/s counted as direct convolution; %% of sgemm peak)\n");
    printf("%-18s %5s %5s %12s %7s %12s %7s %7s\n", "kernel", "C", "batch", "winograd",
           "%peak", "im2col", "%peak", "speedup");
  } else {
    printf("%s\"conv\":{", *first_json ? "" : ",");
    *first_json = false;
  }
  bool first = true;
  for (size_t ci = 0; ci < sizeof chans / sizeof chans[0]; ci++)
    for (size_t bi = 0; bi < sizeof batches / sizeof batches[0]; bi++) {
      const int c = chans[ci], n = batches[bi];
      if (o->quick && n > 32) continue;
      unsigned seed = 7;
      conv_ctx_t ctx = {.n = n, .cin = c, .cout = c};
      const size_t act = (size_t)n * c * NN_BOARD_HW;
      ctx.x = bench_nn_alloc_rand(act, &seed);
      ctx.y = bench_nn_alloc_rand(act, &seed);
      ctx.res = bench_nn_alloc_rand(act, &seed);
      ctx.w = bench_nn_alloc_rand((size_t)c * c * 9, &seed);
      ctx.dw = bench_nn_alloc_rand((size_t)c * c * 9, &seed);
      ctx.bias = bench_nn_alloc_rand((size_t)c, &seed);
      ctx.wp = bench_nn_alloc_rand(nn_conv3x3_prepared_floats(c, c), &seed);
      ctx.scratch = bench_nn_alloc_rand(nn_conv3x3_scratch_floats(n, c, c), &seed);
      ctx.scratch_ref = bench_nn_alloc_rand(nn_conv3x3_im2col_scratch_floats(n, c, c), &seed);
      nn_conv3x3_prepare(ctx.wp, ctx.w, c, c);
      const double flops = 2.0 * n * c * c * 9 * NN_BOARD_HW;
      for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        double tf = bench_nn_time(kinds[k].fast, &ctx, o->min_time);
        double tr = bench_nn_time(kinds[k].ref, &ctx, o->min_time);
        double gf = flops / tf * 1e-9, gr = flops / tr * 1e-9;
        if (o->json) {
          printf("%s\"%s/%dx%d/%d\":{\"winograd_gflops\":%.1f,\"im2col_gflops\":%.1f}",
                 first ? "" : ",", kinds[k].name, c, c, n, gf, gr);
          first = false;
        } else {
          printf("%-18s %5d %5d %8.1f GF/s %6.0f%% %8.1f GF/s %6.0f%% %6.2fx\n",
                 kinds[k].name, c, n, gf, 100 * gf / peak, gr, 100 * gr / peak, tr / tf);
          fflush(stdout);
        }
      }
      free(ctx.x), free(ctx.y), free(ctx.res), free(ctx.w), free(ctx.dw), free(ctx.bias);
      free(ctx.wp), free(ctx.scratch), free(ctx.scratch_ref);
    }
  if (o->json) printf("}");
}

#define O(f) XQ_OPT_FIELD(bench_opts_t, f)
static const xq_opt_t rows[] = {
    {"threads", XQ_OPTION_INT, O(threads), "1", 1, 256,
     .help = "OpenBLAS threads (1: one per search thread)"},
    {"quick", XQ_OPTION_FLAG, O(quick), NULL, 0, 0,
     .help = "shorter measurements, fewer batch sizes"},
    {"json", XQ_OPTION_FLAG, O(json), NULL, 0, 0, .help = "print the figures as one JSON object"},
    {"no-net", XQ_OPTION_FLAG, O(no_net), NULL, 0, 0,
     .help = "only the sgemm peak, the conv layers and the narrow GEMMs"},
    {"nets", XQ_OPTION_TEXT, O(nets_arg), "default,large", 0, 0, .arg = "LIST",
     .help = "whole-net figures of these sizes (tiny,tiny-g to see what global pooling costs)"},
    {"precision", XQ_OPTION_TEXT, O(precision), NULL, 0, 0, .arg = "auto|fp32|bf16|both",
     .help = "the precision table's paths (auto: the one a worker would pick)",
     .shown = "XQZ_PRECISION if set, else both where the CPU has avx512_bf16, fp32 elsewhere"},
    {"rounds", XQ_OPTION_INT, O(rounds), "3", 1, 100, .arg = "R",
     .help = "interleaved rounds of the precision table"},
    {"precision-only", XQ_OPTION_FLAG, O(precision_only), NULL, 0, 0,
     .help = "only the peaks and the precision table"},
};
static const xq_opts_t TABLE = {rows, (int)(sizeof rows / sizeof rows[0]), XQ_OPTS_IN_RANGE};

static void usage(FILE *f) {
  fprintf(f, "usage: xqz bench nn [options]\n");
  xq_opts_help(&TABLE, f, 30);
}

int xqz_bench_nn(int argc, char **argv) {
  bench_opts_t o = {.min_time = 0.4};
  xq_opts_defaults(&TABLE, &o);
  int st = xqz_options_parse("bench nn", &TABLE, &o, argc, argv, NULL, NULL, usage);
  if (st >= 0) return st;
  if (o.quick) o.min_time = 0.12;
  if ((o.nnets = bench_nn_parse_nets(o.nets, o.nets_arg)) < 0) return 2;
  openblas_set_num_threads(o.threads);
  bool first_json = true;
  if (o.json) printf("{\"threads\":%d", o.threads), first_json = false;
  else printf("xqz bench nn: %d OpenBLAS thread%s%s\n", o.threads, o.threads > 1 ? "s" : "",
              o.quick ? " (quick)" : "");
  double peak = sgemm_peak(&o);
  if (o.json)
    printf(",\"sgemm_peak_gflops\":%.1f,\"openblas_core\":\"%s\"", peak,
           openblas_get_corename());
  else printf("sgemm peak (1024^3, single call, OpenBLAS core %s): %.1f GFLOP/s\n",
              openblas_get_corename(), peak), fflush(stdout);
  /* The precision table's paths. */
  nn_precision_t precs[2];
  int nprecs;
  const bool cpu_bf16 = nn_bf16_cpu_supported();
  const char *want = o.precision ? o.precision : getenv("XQZ_PRECISION");
  if (!want || !strcmp(want, "both")) {
    precs[0] = NN_PRECISION_FP32, precs[1] = NN_PRECISION_BF16;
    nprecs = cpu_bf16 ? 2 : 1;
  } else {
    nn_precision_t req;
    if (nn_precision_parse(want, &req)) {
      fprintf(stderr, "xqz bench nn: --precision wants auto, fp32, bf16 or both, not '%s'\n",
              want);
      return 2;
    }
    precs[0] = nn_precision_resolve(req, cpu_bf16, NULL);
    nprecs = 1;
  }
  const char *why;
  nn_precision_t picked = nn_precision_resolve(NN_PRECISION_AUTO, cpu_bf16, &why);
  double peak16 = cpu_bf16 ? nn_bf16_peak_gflops(o.quick ? 0.2 : 0.5) : 0;
  double peak8 = bench_int8_peak_gops(o.quick ? 0.2 : 0.5); /* no int8 path: its ceiling */
  if (o.json)
    printf(",\"bf16_peak_gflops\":%.1f,\"int8_peak_gops\":%.1f,\"precision_auto\":\"%s\"",
           peak16, peak8, nn_precision_name(picked));
  else
    printf("bf16 peak (vdpbf16ps, one core): %.1f GFLOP/s; int8 peak (vpdpbusd): %.1f GOP/s%s;"
           " precision auto -> %s (%s); the tables before the precision table run fp32\n",
           peak16, peak8, peak8 > 0 ? "" : " (no avx512_vnni)", nn_precision_name(picked),
           why), fflush(stdout);
  int rc = 0;
  if (!o.precision_only) {
    if (!o.no_net) rc = bench_nn_nets(o.nets, o.nnets, o.quick, o.json, o.min_time, peak);
    bench_convs(&o, peak, &first_json);
    bench_nn_gemms(o.json, o.min_time, peak);
  }
  if (!o.no_net && !rc)
    rc = bench_nn_precision(o.nets, o.nnets, precs, nprecs, o.rounds, o.min_time, peak, peak16,
                            o.json);
  if (o.json) printf("}\n");
  return rc;
}
