/*
 * bench_nn_net.c: whole-network rates for `xqz bench nn` (see bench_nn_net.h):
 * inference positions/s (nn_infer, BN folded) at several batch sizes and training
 * samples/s (nn_train_step: forward with batch-statistics BN, loss, backward, SGD) at
 * batch 256, for the nets named (by default the default 6x64 and large 10x128 nets).
 *
 * The share of time inside sgemm comes from nn_blas.h's counting, switched on only
 * while a net is being timed: every GEMM of the network goes through nn_sgemm. Each rate is
 * timed again with nn_gemm_small (nn_gemm_small.h) switched off, and "narrow" is the
 * kernel's speed-up of the whole net (the policy FC at inference batch sizes goes through
 * it whatever the net's width). "resident" is the inference plan's speed-up over the
 * same nn_infer on a training plan, whose tower goes NCHW between convs (conv3x3.h's
 * resident layout; 1.00x for towers that pool, which always go NCHW). Training runs on
 * a batch with 40 legal moves a sample, as the trainer does (nn_loss_cfg_t's
 * legal_policy: the policy FC at the legal moves only); "legal" is its speed-up over the
 * same step with the whole FC.
 *
 * bench_nn_precision times the search's call (nn_infer_legal) in each precision asked for,
 * fp32 and bf16 alternating round by round in the same process, so a shared machine's drift
 * falls on both alike; each rate also as a share of its own precision's peak.
 */
#include "bench_nn_net.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nn/nn_bf16.h"
#include "nn/nn_blas.h"
#include "nn/nn_forward.h"
#include "nn/nn_loss.h"
#include "nn/nn_model.h"
#include "nn/nn_optim.h"
#include "nn/nn_plan.h"
#include "support/clock.h"

/* ---- inference ---- */

typedef struct {
  nn_model_t *m;
  nn_plan_t *plan;  /* training plan */
  nn_plan_t *iplan; /* inference plan */
  float *planes; /* (max_n, 18, 90) */
  float *policy; /* (max_n, 2086) */
  float *value;  /* (max_n) */
  int n;
  /* training */
  nn_sgd_t opt;
  nn_batch_t batch;
  nn_loss_cfg_t cfg;
} net_ctx_t;

static void run_infer(void *p) {
  net_ctx_t *c = p;
  nn_infer(c->policy, c->value, c->iplan, c->m, c->planes, NULL, c->n);
}

/* The same on the training plan: the NCHW tower, as before the resident layout. */
static void run_infer_nchw(void *p) {
  net_ctx_t *c = p;
  nn_infer(c->policy, c->value, c->plan, c->m, c->planes, NULL, c->n);
}

static void run_train(void *p) {
  net_ctx_t *c = p;
  nn_loss_t loss;
  nn_train_step(c->m, c->plan, &c->opt, &c->batch, &c->cfg, &loss);
}

/*
 * Times fn and the share of that time inside sgemm (per call), and the time with
 * nn_gemm_small switched off, as *speedup = that time / the first.
 */
static double time_split(void (*fn)(void *), void *ctx, double min_time, double *gemm_share,
                         double *speedup) {
  double t = bench_nn_time(fn, ctx, min_time);
  nn_sgemm_small(false);
  *speedup = bench_nn_time(fn, ctx, min_time) / t;
  nn_sgemm_small(true);
  /* A separate counted run: fewer calls, just to split the time. */
  int calls = (int)(min_time / t) + 1;
  nn_sgemm_stats_reset();
  nn_sgemm_count(true);
  double t0 = xq_clock_s();
  for (int i = 0; i < calls; i++) fn(ctx);
  double total = xq_clock_s() - t0;
  nn_sgemm_count(false);
  *gemm_share = total > 0 ? nn_sgemm_stats().seconds / total : 0;
  return t;
}

/* One ratio column: "x" when measured (> 0), "-" when not. */
static void print_ratio(double r, int width) {
  if (r > 0) printf(" %*.2fx", width - 1, r);
  else printf(" %*s", width, "-");
}

static void print_row(const char *label, const char *mode, int batch, double rate, double gf,
                      double of_peak, double share, double speedup, double resident,
                      double legal) {
  printf("%-8s %-6s %5d %12.1f %9.1f %5.0f%% %5.0f%% %6.2fx", label, mode, batch, rate, gf,
         100 * of_peak, 100 * share, speedup);
  print_ratio(resident, 9);
  print_ratio(legal, 7);
  printf("\n");
  fflush(stdout);
}

static void fill_planes(float *planes, size_t count, uint64_t *s) {
  for (size_t i = 0; i < count; i++) {
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    planes[i] = (*s >> 60) == 0 ? 1.0f : 0.0f; /* sparse 0/1 like piece planes */
  }
}

int bench_nn_parse_nets(nn_arch_t *archs, const char *list) {
  char names[256];
  snprintf(names, sizeof names, "%s", list);
  int n = 0;
  for (char *save = NULL, *tok = strtok_r(names, ",", &save); tok;
       tok = strtok_r(NULL, ",", &save)) {
    if (n == BENCH_NN_MAX_NETS || nn_arch_preset(tok, &archs[n])) {
      fprintf(stderr, "xqz bench nn: --nets: '%s' is not a net size (" NN_ARCH_SPELLING
              "), or more than %d nets\n", tok, BENCH_NN_MAX_NETS);
      return -1;
    }
    n++;
  }
  if (n == 0) fprintf(stderr, "xqz bench nn: --nets names no net\n");
  return n ? n : -1;
}

int bench_nn_nets(const nn_arch_t *archs, int narchs, bool quick, bool json, double min_time,
                  double peak_gflops) {
  static const int infer_batches[] = {1, 8, 32, 64, 256};
  const int train_n = 256, max_n = 256;
  xq_errbuf_t eb = {{0}};
  char infer_json[4096] = "", train_json[1024] = "";
  size_t ij = 0, tj = 0;
  if (!json) {
    printf("\nwhole net (GFLOP/s of direct-convolution FLOPs; %% of sgemm peak; "
           "share of time in sgemm)\n");
    printf("%-8s %-6s %5s %12s %9s %6s %6s %7s %9s %7s\n", "net", "mode", "batch", "rate/s",
           "GFLOP/s", "%peak", "%gemm", "narrow", "resident", "legal");
  }
  for (int a = 0; a < narchs; a++) {
    net_ctx_t c = {0};
    nn_arch_t arch = archs[a];
    char label[32];
    nn_arch_name(&arch, label, sizeof label);
    const double flops = nn_arch_flops(&arch); /* per position, forward */
    if (nn_model_new(&c.m, &arch, &eb) || nn_plan_new(&c.plan, &arch, max_n, true, &eb) ||
        nn_plan_new(&c.iplan, &arch, max_n, false, &eb)) {
      fprintf(stderr, "xqz bench nn: cannot build the %s net: %s\n", label, eb.msg);
      nn_plan_free(&c.plan);
      nn_model_free(&c.m);
      return 1;
    }
    nn_model_init(c.m, 1);
    nn_model_fold(c.m);
    uint64_t seed = 42;
    c.planes = malloc(sizeof(float) * (size_t)max_n * nn_arch_input_planes(&arch) * NN_HW);
    c.policy = malloc(sizeof(float) * (size_t)max_n * NN_POLICY_SIZE);
    c.value = malloc(sizeof(float) * (size_t)max_n);
    int32_t *pi_off = malloc(sizeof(int32_t) * (size_t)(train_n + 1));
    nn_pi_entry_t *pi = malloc(sizeof(nn_pi_entry_t) * (size_t)train_n * 8);
    uint8_t *mask = malloc((size_t)train_n * NN_POLICY_SIZE);
    float *z = malloc(sizeof(float) * (size_t)train_n);
    if (!c.planes || !c.policy || !c.value || !pi_off || !pi || !z || !mask) {
      fprintf(stderr, "xqz bench nn: out of memory\n");
      return 1;
    }
    fill_planes(c.planes, (size_t)max_n * nn_arch_input_planes(&arch) * NN_HW, &seed);

    ij += (size_t)snprintf(infer_json + ij, sizeof infer_json - ij, "%s\"%s\":{",
                           a ? "," : "", label);
    for (size_t b = 0; b < sizeof infer_batches / sizeof infer_batches[0]; b++) {
      c.n = infer_batches[b];
      if (quick && (c.n == 8 || c.n == 64)) continue;
      double share, speedup;
      double t = time_split(run_infer, &c, min_time, &share, &speedup);
      double resident = bench_nn_time(run_infer_nchw, &c, min_time) / t;
      double rate = c.n / t, gf = rate * flops * 1e-9;
      ij += (size_t)snprintf(infer_json + ij, sizeof infer_json - ij, "%s\"%d\":%.1f",
                             b ? "," : "", c.n, rate);
      if (!json)
        print_row(label, "infer", c.n, rate, gf, gf / peak_gflops, share, speedup, resident, 0);
    }
    ij += (size_t)snprintf(infer_json + ij, sizeof infer_json - ij, "}");

    /* Training: random sparse targets among 40 random legal moves a sample, SGD with
     * momentum, a small learning rate. */
    memset(mask, 0, (size_t)train_n * NN_POLICY_SIZE);
    for (int i = 0; i < train_n; i++) {
      uint8_t *mk = mask + (size_t)i * NN_POLICY_SIZE;
      for (int legal = 0; legal < 40;) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        int idx = (int)((seed >> 33) % NN_POLICY_SIZE);
        if (!mk[idx]) mk[idx] = 1, legal++;
      }
      pi_off[i] = i * 8;
      for (int k = 0, idx = 0; k < 8; k++, idx++) {
        while (!mk[idx]) idx++; /* the first 8 legal moves */
        pi[i * 8 + k].index = idx;
        pi[i * 8 + k].prob = 0.125f;
      }
      z[i] = (float)(i % 3) - 1.0f;
    }
    pi_off[train_n] = train_n * 8;
    c.batch = (nn_batch_t){.n = train_n, .planes = c.planes, .mask = mask,
                           .pi_offset = pi_off, .pi = pi, .z = z};
    c.cfg = (nn_loss_cfg_t){.policy_weight = 1, .value_weight = 1, .l2 = 1e-4f,
                            .legal_policy = false};
    if (nn_sgd_init(&c.opt, c.m, &eb)) {
      fprintf(stderr, "xqz bench nn: %s\n", eb.msg);
      return 1;
    }
    c.opt.momentum = 0.9f;
    c.opt.schedule.n = 1;
    c.opt.schedule.e[0].from = 0;
    c.opt.schedule.e[0].lr = 1e-4f;
    double share, speedup, train_time = quick ? min_time : 2 * min_time;
    double t_whole = bench_nn_time(run_train, &c, train_time);
    c.cfg.legal_policy = true;
    double t = time_split(run_train, &c, train_time, &share, &speedup);
    double rate = train_n / t, gf = rate * 3 * flops * 1e-9; /* forward + 2x backward */
    tj += (size_t)snprintf(train_json + tj, sizeof train_json - tj, "%s\"%s\":{\"%d\":%.1f}",
                           a ? "," : "", label, train_n, rate);
    if (!json)
      print_row(label, "train", train_n, rate, gf, gf / peak_gflops, share, speedup, 0,
                t_whole / t);
    nn_sgd_close(&c.opt);
    free(c.planes), free(c.policy), free(c.value), free(pi_off), free(pi), free(z), free(mask);
    nn_plan_free(&c.plan);
    nn_plan_free(&c.iplan);
    nn_model_free(&c.m);
  }
  if (json) printf(",\"infer\":{%s},\"train\":{%s}", infer_json, train_json);
  return 0;
}

/* ---- precision: fp32 against bf16 (nn_bf16.h), interleaved ---- */

typedef struct {
  nn_model_t *m;
  nn_plan_t *plan;
  float *planes, *policy, *value;
  int **legal;
  int *nlegal;
  int n;
} prec_ctx_t;

/* The search's call: the tower, the value head and the policy at 40 "legal" moves. */
static void run_infer_legal(void *p) {
  prec_ctx_t *c = p;
  nn_infer_legal(c->policy, c->value, c->plan, c->m, c->planes, (const int *const *)c->legal,
                 c->nlegal, c->n);
}

int bench_nn_precision(const nn_arch_t *archs, int narchs, const nn_precision_t *precs,
                       int nprecs, int rounds, double min_time, double peak_fp32,
                       double peak_bf16, bool json) {
  static const int batches[] = {1, 32, 256};
  const int max_n = 256, nleg = 40;
  xq_errbuf_t eb = {{0}};
  if (json) printf(",\"precision\":{");
  else {
    printf("\nwhole net by precision (nn_infer_legal as the search calls it, 40 legal moves; "
           "GFLOP/s of direct-convolution FLOPs;\n%%peak of that precision's peak: fp32 %.1f "
           "(sgemm), bf16 %.1f GFLOP/s (vdpbf16ps); %d interleaved rounds)\n",
           peak_fp32, peak_bf16, rounds);
    printf("%-8s %5s %5s %-5s %12s %9s %6s %8s\n", "net", "batch", "round", "prec", "rate/s",
           "GFLOP/s", "%peak", "vs fp32");
  }
  for (int a = 0; a < narchs; a++) {
    prec_ctx_t c = {0};
    nn_arch_t arch = archs[a];
    char label[32];
    nn_arch_name(&arch, label, sizeof label);
    const double flops = nn_arch_flops(&arch);
    if (nn_model_new(&c.m, &arch, &eb) || nn_plan_new(&c.plan, &arch, max_n, false, &eb)) {
      fprintf(stderr, "xqz bench nn: cannot build the %s net: %s\n", label, eb.msg);
      nn_model_free(&c.m);
      return 1;
    }
    nn_model_init(c.m, 1);
    nn_model_fold(c.m);
    uint64_t seed = 43;
    const size_t np = (size_t)nn_arch_input_planes(&arch) * NN_HW;
    c.planes = malloc(sizeof(float) * max_n * np);
    c.policy = malloc(sizeof(float) * (size_t)max_n * NN_POLICY_SIZE);
    c.value = malloc(sizeof(float) * max_n);
    c.legal = malloc(sizeof(int *) * max_n);
    c.nlegal = malloc(sizeof(int) * max_n);
    if (!c.planes || !c.policy || !c.value || !c.legal || !c.nlegal) {
      fprintf(stderr, "xqz bench nn: out of memory\n");
      return 1;
    }
    fill_planes(c.planes, max_n * np, &seed);
    for (int i = 0; i < max_n; i++) {
      c.legal[i] = malloc(sizeof(int) * nleg);
      if (!c.legal[i]) return 1;
      for (int j = 0; j < nleg; j++) c.legal[i][j] = (i * 37 + j * 51) % NN_POLICY_SIZE;
      c.nlegal[i] = nleg;
    }
    if (json) printf("%s\"%s\":{", a ? "," : "", label);
    for (size_t b = 0; b < sizeof batches / sizeof batches[0]; b++) {
      c.n = batches[b];
      double best[3] = {0, 0, 0}; /* per precision, the best round's rate */
      for (int r = 0; r < rounds; r++)
        for (int q = 0; q < nprecs; q++) {
          const nn_precision_t pr = precs[q];
          if (pr == NN_PRECISION_BF16 && nn_bf16_attach(c.m, &eb)) {
            fprintf(stderr, "xqz bench nn: %s\n", eb.msg);
            return 1;
          }
          if (pr != NN_PRECISION_BF16) nn_bf16_detach(c.m);
          const double t = bench_nn_time(run_infer_legal, &c, min_time);
          const double rate = c.n / t, gf = rate * flops * 1e-9;
          const double peak = pr == NN_PRECISION_BF16 ? peak_bf16 : peak_fp32;
          if (rate > best[pr]) best[pr] = rate;
          if (!json) {
            printf("%-8s %5d %5d %-5s %12.1f %9.1f %5.0f%%", label, c.n, r + 1,
                   nn_precision_name(pr), rate, gf, peak > 0 ? 100 * gf / peak : 0);
            if (pr == NN_PRECISION_BF16 && best[NN_PRECISION_FP32] > 0)
              printf(" %7.2fx", rate / best[NN_PRECISION_FP32]);
            printf("\n");
            fflush(stdout);
          }
        }
      if (!json && best[NN_PRECISION_FP32] > 0 && best[NN_PRECISION_BF16] > 0)
        printf("%-8s %5d  best bf16 %.1f/s, fp32 %.1f/s: %.2fx\n", label, c.n,
               best[NN_PRECISION_BF16], best[NN_PRECISION_FP32],
               best[NN_PRECISION_BF16] / best[NN_PRECISION_FP32]);
      if (json)
        printf("%s\"%d\":{\"fp32\":%.1f,\"bf16\":%.1f}", b ? "," : "", c.n,
               best[NN_PRECISION_FP32], best[NN_PRECISION_BF16]);
    }
    if (json) printf("}");
    nn_bf16_detach(c.m);
    for (int i = 0; i < max_n; i++) free(c.legal[i]);
    free(c.planes), free(c.policy), free(c.value), free(c.legal), free(c.nlegal);
    nn_plan_free(&c.plan);
    nn_model_free(&c.m);
  }
  if (json) printf("}");
  return 0;
}
