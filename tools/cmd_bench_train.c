/*
 * cmd_bench_train.c: `xqz bench train`: the trainer's step rate at several thread counts,
 * on the trainer's own path: a Batch message of real positions (random legal games,
 * sparse targets over their legal moves) decoded, encoded and trained on by nn_train_pool
 * exactly as xqz-trainer does per batch (trainer/batch_shard.c). Prints samples/s per net
 * and thread count, the speed-up over the first thread count of the same run, and the
 * share of the sgemm peak (one core's peak times the threads). --vs-whole-policy also
 * times each step with the whole policy FC (the trainer computes it at the legal moves
 * only, nn_loss_cfg_t's legal_policy) and prints the trainer's speed-up over it.
 */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_nn_net.h"
#include "cli_options.h"
#include "commands.h"
#include "nn/nn_train_pool.h"
#include "rules/movegen.h"
#include "rules/policy_index.h"
#include "rules/rules.h"
#include "support/clock.h"
#include "support/rng.h"
#include "trainer/batch_shard.h"
#include "wire/sample.h"

#define MAX_LIST 32

typedef struct {
  char sizes[128];
  int threads[MAX_LIST];
  int nthreads;
  int batch;
  double seconds;
  bool json;
  bool vs_whole; /* --vs-whole-policy */
  const char *threads_arg; /* --threads as given: N,N,... */
} train_opts_t;

#define O(f) XQ_OPT_FIELD(train_opts_t, f)
static const xq_opt_t rows[] = {
    {"sizes", XQ_OPTION_STRING, O(sizes), "tiny,default,large", 0, 0, .arg = "LIST",
     .help = "the nets timed"},
    {"threads", XQ_OPTION_TEXT, O(threads_arg), NULL, 0, 0, .arg = "1,2,...",
     .help = "the thread counts timed", .shown = "1..every core of this box"},
    {"batch", XQ_OPTION_INT, O(batch), "256", 1, 8192, .help = "positions per step"},
    {"seconds", XQ_OPTION_DOUBLE, O(seconds), "3", 0.001, 1e6, .arg = "S",
     .help = "seconds per net and thread count"},
    {"json", XQ_OPTION_FLAG, O(json), NULL, 0, 0, .help = "print the figures as JSON"},
    {"vs-whole-policy", XQ_OPTION_FLAG, O(vs_whole), NULL, 0, 0,
     .help = "also time each step with the whole policy FC (before, the trainer computed it"
     " at the legal moves only) and print the ratio"},
};
static const xq_opts_t TABLE = {rows, (int)(sizeof rows / sizeof rows[0]), XQ_OPTS_IN_RANGE};

/* Samples of random legal games: every position, targets over up to 8 legal moves. */
static int make_samples(xq_sample_t *out, int n, uint64_t seed) {
  xq_rng_t r;
  xq_rng_seed(&r, seed);
  xq_pos_t *pos = malloc(sizeof *pos);
  if (!pos) return -1;
  int have = 0;
  while (have < n) {
    xq_pos_startpos(pos);
    for (int ply = 0; ply < 150 && have < n; ply++) {
      xq_move_t mv[XQ_MAX_MOVES];
      int nm = xq_gen_legal(pos, mv);
      if (nm == 0 || xq_adjudicate(pos, 0).result != XQ_RESULT_NONE) break;
      xq_sample_t *s = &out[have++];
      memset(s, 0, sizeof *s);
      memcpy(s->board, pos->board, XQ_SQUARES);
      s->side = pos->side;
      s->rule60 = pos->rule60;
      s->npi = nm < 8 ? nm : 8;
      for (int k = 0; k < s->npi; k++) {
        s->pi_index[k] = (uint16_t)xq_policy_index_for(mv[k], pos->side);
        s->pi_prob[k] = 1.0f / (float)s->npi;
      }
      s->z = (float)((int)xq_rng_below(&r, 3) - 1);
      xq_pos_make(pos, mv[xq_rng_below(&r, (uint64_t)nm)]);
    }
  }
  free(pos);
  return 0;
}

typedef struct {
  nn_model_t *m;
  nn_sgd_t opt;
  nn_train_pool_t *pool;
  xq_batch_shard_t dec;
  nn_loss_cfg_t cfg;
  int count;
} step_ctx_t;

static void run_step(void *p) {
  step_ctx_t *c = p;
  nn_loss_t loss;
  nn_train_pool_step(c->pool, &c->opt, c->count, xq_batch_shard_fill, &c->dec, &c->cfg, &loss);
}

/* samples/s of one net at one thread count, with the policy FC at the legal moves (as
 * the trainer) or whole; < 0 on failure. */
static double time_net(const nn_arch_t *arch, int threads, const Xqz__Batch *batch,
                       const train_opts_t *o, bool legal_policy) {
  xq_errbuf_t eb = {{0}};
  step_ctx_t c;
  memset(&c, 0, sizeof c);
  double rate = -1;
  if (nn_model_new(&c.m, arch, &eb) || nn_sgd_init(&c.opt, c.m, &eb) ||
      nn_train_pool_new(&c.pool, c.m, threads, o->batch, XQ_BATCH_SHARD_MAX_PI, &eb) ||
      xq_batch_shard_init(&c.dec, threads, &eb)) {
    fprintf(stderr, "xqz bench train: %s\n", eb.msg);
    goto out;
  }
  nn_model_init(c.m, 1);
  c.opt.momentum = 0.9f;
  c.opt.schedule.n = 1;
  c.opt.schedule.e[0].lr = 1e-4f;
  c.cfg = (nn_loss_cfg_t){1.0f, 1.0f, 1e-4f, 1.0f, 0.15f, legal_policy};
  c.dec.batch = batch;
  c.count = o->batch;
  rate = o->batch / bench_nn_time(run_step, &c, o->seconds / 3);
out:
  xq_batch_shard_close(&c.dec);
  nn_train_pool_free(&c.pool);
  nn_sgd_close(&c.opt);
  nn_model_free(&c.m);
  return rate;
}

static double sgemm_peak_gflops(void) {
  const int n = 512;
  float *a = calloc((size_t)n * n, sizeof(float)), *b = calloc((size_t)n * n, sizeof(float)),
        *cc = calloc((size_t)n * n, sizeof(float));
  if (!a || !b || !cc) return 0;
  for (size_t i = 0; i < (size_t)n * n; i++) a[i] = b[i] = (float)(i % 7) * 0.1f;
  double best = 1e30;
  for (int r = 0; r < 5; r++) {
    double t0 = xq_clock_s();
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a, n, b, n, 0.0f, cc,
                n);
    double t = xq_clock_s() - t0;
    if (t < best) best = t;
  }
  free(a), free(b), free(cc);
  return 2.0 * n * n * n / best * 1e-9;
}

static void usage(FILE *f) {
  fprintf(f, "usage: xqz bench train [options]\n"
             "  the trainer's samples/s (decode, encode, forward, backward, SGD) per net and\n"
             "  thread count; speed-up over the first thread count; share of the sgemm peak\n");
  xq_opts_help(&TABLE, f, 24);
}

static int parse(train_opts_t *o, int argc, char **argv) {
  memset(o, 0, sizeof *o);
  xq_opts_defaults(&TABLE, o);
  int st = xqz_options_parse("bench train", &TABLE, o, argc, argv, NULL, NULL, usage);
  if (st >= 0) return st == 0 ? 1 : -1;
  for (const char *p = o->threads_arg; p && *p && o->nthreads < MAX_LIST;) {
    char *end;
    long t = strtol(p, &end, 10);
    if (end == p || t < 1 || t > NN_TRAIN_MAX_THREADS) {
      fprintf(stderr, "xqz bench train: --threads wants 1..%d, comma-separated\n",
              NN_TRAIN_MAX_THREADS);
      return -1;
    }
    o->threads[o->nthreads++] = (int)t;
    p = *end == ',' ? end + 1 : end;
    if (*end && *end != ',') return fprintf(stderr, "xqz bench train: bad --threads\n"), -1;
  }
  if (o->nthreads == 0) {
    int n = nn_train_default_threads();
    for (int t = 1; t <= n && o->nthreads < MAX_LIST; t++) o->threads[o->nthreads++] = t;
  }
  return 0;
}

int xqz_bench_train(int argc, char **argv) {
  train_opts_t o;
  memset(&o, 0, sizeof o); /* a row without a default leaves its field alone */
  int rc = parse(&o, argc, argv);
  if (rc) return rc > 0 ? 0 : 2;
  openblas_set_num_threads(1);
  xq_sample_t *samples = malloc((size_t)o.batch * sizeof *samples);
  Xqz__Sample *msgs = malloc((size_t)o.batch * sizeof *msgs);
  Xqz__Sample **ptrs = malloc((size_t)o.batch * sizeof *ptrs);
  uint32_t *idx = malloc((size_t)o.batch * 8 * sizeof *idx);
  float *prob = malloc((size_t)o.batch * 8 * sizeof *prob);
  if (!samples || !msgs || !ptrs || !idx || !prob || make_samples(samples, o.batch, 7)) {
    fprintf(stderr, "xqz bench train: out of memory\n");
    return 1;
  }
  for (int i = 0; i < o.batch; i++) {
    xq_sample_to_proto(&msgs[i], &samples[i], idx + i * 8, prob + i * 8);
    ptrs[i] = &msgs[i];
  }
  Xqz__Batch batch = XQZ__BATCH__INIT;
  batch.n_samples = (size_t)o.batch;
  batch.samples = ptrs;
  double peak = sgemm_peak_gflops();
  if (!o.json) {
    printf("trainer step rate, batch %d (real positions; decode + encode + forward + backward"
           " + SGD)\none core's sgemm peak: %.1f GFLOP/s\n", o.batch, peak);
    printf("%-8s %7s %12s %8s %9s %6s", "net", "threads", "samples/s", "speedup", "GFLOP/s",
           "%peak");
    if (o.vs_whole) printf(" %12s %7s", "whole FC/s", "legal");
    printf("\n");
  } else {
    printf("{\"batch\":%d,\"sgemm_peak_gflops\":%.2f,\"rows\":[", o.batch, peak);
  }
  char sizes[128];
  snprintf(sizes, sizeof sizes, "%s", o.sizes);
  bool first = true;
  int status = 0;
  for (char *save = NULL, *name = strtok_r(sizes, ",", &save); name;
       name = strtok_r(NULL, ",", &save)) {
    nn_arch_t arch;
    if (nn_arch_preset(name, &arch)) {
      fprintf(stderr, "xqz bench train: unknown size '%s' (" NN_ARCH_SPELLING ")\n", name);
      status = 2;
      break;
    }
    double flops = 3 * nn_arch_flops(&arch), base = 0;
    for (int k = 0; k < o.nthreads; k++) {
      double rate = time_net(&arch, o.threads[k], &batch, &o, true);
      double whole = o.vs_whole ? time_net(&arch, o.threads[k], &batch, &o, false) : 0;
      if (rate < 0 || (o.vs_whole && whole < 0)) {
        status = 1;
        break;
      }
      if (k == 0) base = rate;
      double gf = rate * flops * 1e-9, share = 100 * gf / (peak * o.threads[k]);
      if (o.json) {
        char label[32];
        nn_arch_name(&arch, label, sizeof label);
        printf("%s{\"net\":\"%s\",\"threads\":%d,\"samples_per_s\":%.1f,\"speedup\":%.3f,"
               "\"peak_share\":%.3f", first ? "" : ",", label,
               o.threads[k], rate, rate / base, share / 100);
        if (o.vs_whole) printf(",\"whole_policy_samples_per_s\":%.1f", whole);
        printf("}");
        first = false;
      } else {
        printf("%-8s %7d %12.1f %7.2fx %9.1f %5.0f%%", name, o.threads[k], rate, rate / base,
               gf, share);
        if (o.vs_whole) printf(" %12.1f %6.2fx", whole, rate / whole);
        printf("\n");
        fflush(stdout);
      }
    }
  }
  if (o.json) printf("]}\n");
  free(samples), free(msgs), free(ptrs), free(idx), free(prob);
  return status;
}
