/*
 * cmd_bench_selfplay.c: `xqz bench selfplay [--net FILE] [--sims S] [--seconds T]
 * [--parallel G,G,...] [--vs-openblas | --vs-dense | --vs-fp32] [--rounds R]`: one search thread of batched
 * self-play for a fixed time at each batch size G; prints simulations/s, plies/s, the
 * share of time in the network (encoding and inference) vs tree + rules, and the
 * evaluator's mean batch. Without --net it writes a fresh default 6x64 net (random weights:
 * speed does not depend on them) to a temp file. --vs-openblas plays each G twice, first with every GEMM in OpenBLAS, then with the
 * narrow-matrix kernel (nn_gemm_small.h) as always, and prints the ratio of plies/s.
 * --vs-dense does the same with the whole policy FC and its masked softmax first
 * (xq_evaluator_whole_policy), then the legal moves' logits alone as always. --vs-fp32
 * plays each G first in fp32, then in bf16 (nn_bf16.h; fp32 again, said, on a CPU without
 * avx512_bf16). --rounds R repeats the passes R times, alternating, so that a machine's
 * drift falls on both; the ratio is of the best round of each. The precision column names
 * the arithmetic each line ran in (the process's, XQZ_PRECISION, without --vs-fp32).
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_options.h"
#include "commands.h"
#include "nn/nn_bf16.h"
#include "nn/nn_blas.h"
#include "nn/nn_file.h"
#include "nn/nn_model.h"
#include "search/evaluator.h"
#include "search/selfplay.h"

static int bsp_make_net(char *path, size_t n) {
  snprintf(path, n, "/tmp/xqz-bench-selfplay-%ld.xqzn", (long)getpid());
  nn_arch_t arch;
  nn_model_t *m = NULL;
  xq_errbuf_t eb = {{0}};
  if (nn_arch_preset("default", &arch) || nn_model_new(&m, &arch, &eb)) return 1;
  nn_model_init(m, 1);
  nn_file_meta_t meta;
  memset(&meta, 0, sizeof meta);
  meta.net_id = 1;
  int rc = nn_file_save(path, m, &meta, &eb);
  nn_model_free(&m);
  if (rc) fprintf(stderr, "bench selfplay: %s\n", eb.msg);
  return rc ? 1 : 0;
}

/* The command line. */
typedef struct {
  const char *net;
  int sims;
  double seconds;
  char plist[128]; /* --parallel: batch sizes G,G,... */
  bool vs_openblas, vs_dense, vs_fp32;
  int rounds;
} bsp_opts_t;

#define O(f) XQ_OPT_FIELD(bsp_opts_t, f)
static const xq_opt_t rows[] = {
    {"net", XQ_OPTION_TEXT, O(net), NULL, 0, 0, .arg = "FILE",
     .help = "the net that plays", .shown = "a fresh default 6x64 net"},
    {"sims", XQ_OPTION_INT, O(sims), "200", 1, 1000000, .arg = "S",
     .help = "simulations of a full search (a fast one: a fifth)"},
    {"seconds", XQ_OPTION_DOUBLE, O(seconds), "10", 0.001, 1e6, .arg = "T",
     .help = "seconds per batch size"},
    {"parallel", XQ_OPTION_STRING, O(plist), "1,8,32,64", 0, 0, .arg = "G,G,...",
     .help = "the batch sizes: games at once in the one thread"},
    {"vs-openblas", XQ_OPTION_FLAG, O(vs_openblas), NULL, 0, 0,
     .help = "each G first with every GEMM in OpenBLAS, then as always; the ratio of plies/s"},
    {"vs-dense", XQ_OPTION_FLAG, O(vs_dense), NULL, 0, 0,
     .help = "each G first with the whole policy FC, then the legal moves' logits alone"},
    {"vs-fp32", XQ_OPTION_FLAG, O(vs_fp32), NULL, 0, 0,
     .help = "each G first in fp32, then in bf16 (where the CPU has avx512_bf16)"},
    {"rounds", XQ_OPTION_INT, O(rounds), "1", 1, 100, .arg = "R",
     .help = "the passes of each G, R times alternating; ratios of the best round of each"},
};
static const xq_opts_t TABLE = {rows, (int)(sizeof rows / sizeof rows[0]), XQ_OPTS_IN_RANGE};

static void bsp_usage(FILE *f) {
  fprintf(f, "usage: xqz bench selfplay [options]\n");
  xq_opts_help(&TABLE, f, 20);
}

int xqz_bench_selfplay(int argc, char **argv) {
  bsp_opts_t o = {0};
  xq_opts_defaults(&TABLE, &o);
  int prc = xqz_options_parse("bench selfplay", &TABLE, &o, argc, argv, NULL, NULL, bsp_usage);
  if (prc >= 0) return prc;
  if (o.vs_openblas + o.vs_dense + o.vs_fp32 > 1)
    return xqz_usage_error("bench selfplay", "give one of --vs-openblas, --vs-dense and"
                           " --vs-fp32, not two");
  xq_errbuf_t eb;
  const char *net = o.net;
  int sims = o.sims;
  double seconds = o.seconds;
  char *plist = o.plist;
  /* The baseline pass: none, every GEMM in OpenBLAS, or the whole policy. */
  enum { VS_NONE, VS_OPENBLAS, VS_DENSE, VS_FP32 } vs = o.vs_openblas ? VS_OPENBLAS
                                                      : o.vs_dense  ? VS_DENSE
                                                      : o.vs_fp32   ? VS_FP32
                                                                    : VS_NONE;
  static const char *const base_name[] = {"", "openblas", "dense", "fp32"};
  static const char *const new_name[] = {"", "narrow", "legal", "bf16"};
  /* The precision of each pass: the process's, or fp32 then bf16 (resolved on this CPU). */
  const nn_precision_t own = nn_precision_current();
  nn_precision_t prec[2] = {own, own};
  if (vs == VS_FP32) {
    const char *why = NULL;
    prec[0] = NN_PRECISION_FP32;
    prec[1] = nn_precision_resolve(NN_PRECISION_BF16, nn_bf16_cpu_supported(), &why);
    if (prec[1] != NN_PRECISION_BF16) printf("note: %s\n", why);
  }
  char tmp[128] = "";
  if (!net) {
    if (bsp_make_net(tmp, sizeof tmp)) return 1;
    net = tmp;
  }
  printf("self-play, 1 thread, %d sims full / %d fast, %.0f s per batch size\n", sims,
         sims / 5 > 0 ? sims / 5 : 1, seconds);
  printf("%8s %10s %9s %9s %10s %10s %9s %9s%s\n", "G", "sims/s", "plies/s", "evals/s",
         "mean batch", "net share", "tree+rules", "precision", vs ? "  pass" : "");
  int rc = 0;
  for (char *s = plist; *s && !rc;) {
    int g = atoi(s);
    xq_selfplay_config_t cfg;
    xq_selfplay_config_default(&cfg);
    cfg.parallel = g > 0 ? g : 1;
    cfg.sims_full = sims;
    cfg.sims_fast = sims / 5 > 0 ? sims / 5 : 1;
    cfg.time_limit_s = seconds;
    /* --vs-*: pass 0 the baseline, pass 1 as always; rounds of both, alternating. */
    double plies_s[2] = {0, 0};
    for (int k = 0; k < 2 * o.rounds && !rc; k++) {
      int pass = vs ? k % 2 : 1;
      if (!vs && k % 2 == 0) continue;
      nn_sgemm_small(!(pass == 0 && vs == VS_OPENBLAS));
      xq_evaluator_whole_policy(pass == 0 && vs == VS_DENSE);
      nn_precision_set(prec[pass]);
      xq_selfplay_stats_t st;
      memset(&eb, 0, sizeof eb);
      rc = xq_selfplay_run(&cfg, net, 1 << 30, NULL, NULL, &st, &eb);
      if (rc) {
        fprintf(stderr, "bench selfplay: %s\n", eb.msg);
        break;
      }
      double t = st.total_s, ps = (double)st.plies / t;
      if (ps > plies_s[pass]) plies_s[pass] = ps;
      printf("%8d %10.0f %9.1f %9.0f %10.1f %9.1f%% %8.1f%% %9s%s%s\n", cfg.parallel,
             (double)st.sims / t, ps, (double)st.evals / t,
             st.batches ? (double)st.evals / (double)st.batches : 0.0, 100.0 * st.net_s / t,
             100.0 * (1.0 - st.net_s / t), nn_precision_name(prec[pass]),
             vs ? "  " : "", pass == 0 ? base_name[vs] : new_name[vs]);
      fflush(stdout);
    }
    if (!rc && vs && plies_s[0] > 0)
      printf("%8s %s: %.2fx the plies/s of %s%s\n", "", new_name[vs], plies_s[1] / plies_s[0],
             base_name[vs], o.rounds > 1 ? " (best round of each)" : "");
    s = strchr(s, ',');
    if (!s) break;
    s++;
  }
  nn_sgemm_small(true);
  xq_evaluator_whole_policy(false);
  nn_precision_set(own);
  if (tmp[0]) unlink(tmp);
  return rc ? 1 : 0;
}
