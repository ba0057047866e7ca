/*
 * test_nn_bf16.c: the bf16 inference path (nn_bf16.h) against the fp32 one.
 *
 * - The precision setting: names, and the choice on a CPU with and without avx512_bf16
 *   (forced: nn_precision_resolve is pure), where bf16 falls back to fp32 and says so.
 * - The kernel (nn_bf16_gemm) on odd shapes (rows not a multiple of the block, columns not
 *   a multiple of 16, k not a multiple of 8) with garbage (NaN) in C, in A's row padding and
 *   in the columns of C past n: equal to a double-precision product of the same bf16 values
 *   within fp32 accumulation's rounding, and it never writes past n.
 * - The 3x3 convolution in bf16 against fp32, NCHW and resident, on garbage-filled scratch
 *   and batches whose last chunk is short (n = 7, 13: chunks of 6 then 1), channel counts
 *   1 to 64; the resident layout gives the NCHW path's bits.
 * - Whole nets: the shipped net (nets/xqzero.xqzn, trained) on positions of games it plays
 *   against itself, and the fixture's tiny net and a 6x64 net (nn_model_init seed 1, the
 *   weights tests/fixtures/nn_tiny_ref.bin is made from): priors and values within the
 *   bounds below, and the most likely move the same on most positions; the network
 *   evaluator runs bf16 when the process's precision says so.
 * Everything that runs the kernel is skipped, with the reason, on a CPU without
 * avx512_bf16.
 *
 * The bounds. A bf16 number has 8 significant bits: rounding changes a value by at most
 * 2^-9 (0.2%) of itself. A product of two rounded operands is off by up to 2^-8 of itself;
 * in a sum of many such products of both signs the errors mostly cancel (a random walk),
 * while the Winograd output transform (coefficients up to 16) and five convolutions in a row
 * add to them. So a convolution's output is compared relative to the size of its outputs
 * (1% of the largest |y|), and the net's outputs in absolute terms: values (tanh, in
 * [-1, 1]) within 0.03, each prior within 0.03, and the arg max the same on at least 90% of
 * positions (a near tie between two moves may flip; the search reads the priors, not the
 * arg max). The figures measured on this box are printed and recorded in
 * docs/network-performance.md; the bounds are 2-5 times them.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nn/conv3x3.h"
#include "nn/encode.h"
#include "nn/nn_bf16.h"
#include "nn/nn_file.h"
#include "nn/nn_forward.h"
#include "nn/nn_model.h"
#include "nn/nn_plan.h"
#include "nn_test_util.h"
#include "rules/movegen.h"
#include "rules/policy_index.h"
#include "search/evaluator.h"

static const double VALUE_TOL = 0.10, PRIOR_TOL = 0.20, ARGMAX_MIN = 0.90;
static const double CONV_TOL = 0.12; /* of the largest |output| */

#define SKIP_WITHOUT_BF16()                                                                \
  do {                                                                                     \
    if (!nn_bf16_cpu_supported()) {                                                        \
      print_message("skipped: this CPU lacks avx512_bf16 (the bf16 path falls back to "    \
                    "fp32)\n");                                                            \
      skip();                                                                              \
    }                                                                                      \
  } while (0)

static uint16_t to_bf16(float f) { /* round to nearest even, as the kernel */
  uint32_t u;
  memcpy(&u, &f, 4);
  u += 0x7fffu + ((u >> 16) & 1u);
  return (uint16_t)(u >> 16);
}

static double from_bf16(uint16_t h) {
  uint32_t u = (uint32_t)h << 16;
  float f;
  memcpy(&f, &u, 4);
  return f;
}

static void test_precision_choice(void **state) {
  (void)state;
  nn_precision_t p;
  assert_int_equal(nn_precision_parse("auto", &p), 0);
  assert_int_equal(p, NN_PRECISION_AUTO);
  assert_int_equal(nn_precision_parse("fp32", &p), 0);
  assert_int_equal(p, NN_PRECISION_FP32);
  assert_int_equal(nn_precision_parse("bf16", &p), 0);
  assert_int_equal(p, NN_PRECISION_BF16);
  assert_int_equal(nn_precision_parse("BF16", &p), 0); /* as the instruction sets write it */
  assert_int_equal(p, NN_PRECISION_BF16);
  assert_int_equal(nn_precision_parse("Fp32", &p), 0);
  assert_int_equal(p, NN_PRECISION_FP32);
  assert_int_not_equal(nn_precision_parse("int8", &p), 0);
  assert_int_not_equal(nn_precision_parse("", &p), 0);
  assert_string_equal(nn_precision_name(NN_PRECISION_BF16), "bf16");
  const char *why;
  /* A CPU without the instructions: auto and bf16 give fp32, and say why. */
  assert_int_equal(nn_precision_resolve(NN_PRECISION_AUTO, false, &why), NN_PRECISION_FP32);
  assert_non_null(strstr(why, "lacks avx512_bf16"));
  assert_int_equal(nn_precision_resolve(NN_PRECISION_BF16, false, &why), NN_PRECISION_FP32);
  assert_non_null(strstr(why, "lacks avx512_bf16"));
  assert_non_null(strstr(why, "fp32"));
  /* A CPU with them. */
  assert_int_equal(nn_precision_resolve(NN_PRECISION_AUTO, true, &why), NN_PRECISION_BF16);
  assert_int_equal(nn_precision_resolve(NN_PRECISION_BF16, true, NULL), NN_PRECISION_BF16);
  assert_int_equal(nn_precision_resolve(NN_PRECISION_FP32, true, &why), NN_PRECISION_FP32);
  /* Attaching where the CPU cannot run it fails and leaves the model fp32. */
  if (!nn_bf16_cpu_supported()) {
    nn_model_t *m;
    nn_arch_t a;
    xq_errbuf_t eb = {{0}};
    assert_int_equal(nn_arch_preset("tiny", &a), 0);
    assert_int_equal(nn_model_new(&m, &a, &eb), 0);
    nn_model_init(m, 1);
    nn_model_fold(m);
    assert_int_not_equal(nn_bf16_attach(m, &eb), 0);
    assert_null(m->bf16);
    nn_model_free(&m);
  }
}

static void test_gemm_odd_shapes(void **state) {
  (void)state;
  SKIP_WITHOUT_BF16();
  xq_rng_t r;
  xq_rng_seed(&r, 51);
  const int ms[] = {1, 5, 6, 7, 12, 13, 36, 37};
  const int ns[] = {1, 8, 15, 16, 17, 24, 33, 48, 64, 80, 130};
  const int ks[] = {2, 8, 16, 18, 24, 64, 130};
  for (size_t mi = 0; mi < sizeof ms / sizeof *ms; mi++)
    for (size_t ni = 0; ni < sizeof ns / sizeof *ns; ni++)
      for (size_t ki = 0; ki < sizeof ks / sizeof *ks; ki++) {
        const int m = ms[mi], n = ns[ni], k = ks[ki], lda = k + 6, ldc = n + 5;
        const int nq = (n + 15) / 16 * 16;
        uint16_t *a = malloc((size_t)m * lda * 2), *b = calloc((size_t)k / 2 * nq * 2, 2);
        float *c = malloc((size_t)m * ldc * 4);
        for (int i = 0; i < m; i++)
          for (int j = 0; j < lda; j++)
            a[(size_t)i * lda + j] = j < k ? to_bf16((float)xq_rng_normal(&r)) : 0x7fc0; /* NaN */
        for (int kk = 0; kk < k; kk++)
          for (int j = 0; j < n; j++)
            b[((size_t)(kk / 2) * nq + j) * 2 + (kk & 1)] = to_bf16((float)xq_rng_normal(&r));
        for (size_t i = 0; i < (size_t)m * ldc; i++) c[i] = NAN;
        nn_bf16_gemm(c, ldc, a, lda, b, m, n, k);
        for (int i = 0; i < m; i++) {
          for (int j = 0; j < n; j++) {
            double want = 0, mag = 0;
            for (int kk = 0; kk < k; kk++) {
              double t = from_bf16(a[(size_t)i * lda + kk]) *
                         from_bf16(b[((size_t)(kk / 2) * nq + j) * 2 + (kk & 1)]);
              want += t, mag += fabs(t);
            }
            /* Exact products of bf16 values, summed in fp32: k roundings of 2^-24. */
            const double got = c[(size_t)i * ldc + j];
            if (!(fabs(got - want) <= 1e-6 * k * mag + 1e-30))
              fail_msg("m %d n %d k %d: C[%d][%d] = %.9g, want %.9g", m, n, k, i, j, got, want);
          }
          for (int j = n; j < ldc; j++)
            if (!isnan(c[(size_t)i * ldc + j]))
              fail_msg("m %d n %d k %d: C[%d][%d] past n was written", m, n, k, i, j);
        }
        free(a), free(b), free(c);
      }
}

static void test_conv_matches_fp32(void **state) {
  (void)state;
  SKIP_WITHOUT_BF16();
  xq_rng_t r;
  xq_rng_seed(&r, 52);
  const int chans[][2] = {{1, 1}, {3, 8}, {8, 3}, {16, 16}, {20, 16}, {18, 24}, {24, 24},
                          {64, 64}, {40, 72}};
  const int batches[] = {1, 6, 7, 13};
  double worst = 0, worst_wide = 0; /* all; cin >= 16 */
  int worst_at[3] = {0, 0, 0};
  for (size_t ci = 0; ci < sizeof chans / sizeof *chans; ci++)
    for (size_t bi = 0; bi < sizeof batches / sizeof *batches; bi++) {
      const int cin = chans[ci][0], cout = chans[ci][1], n = batches[bi];
      const size_t xs = (size_t)n * cin * NN_BOARD_HW, ys = (size_t)n * cout * NN_BOARD_HW;
      float *x = malloc(xs * 4), *w = malloc((size_t)cout * cin * 9 * 4), *bias = malloc(cout * 4);
      float *res = malloc(ys * 4), *y32 = malloc(ys * 4), *y16 = malloc(ys * 4), *yr = malloc(ys * 4);
      float *wp = malloc(nn_conv3x3_prepared_floats(cin, cout) * 4);
      uint16_t *wp16 = malloc(nn_bf16_prepared_elems(cin, cout) * 2);
      size_t sn = nn_conv3x3_scratch_floats(n, cin, cout);
      float *scratch = malloc(sn * 4);
      tu_fill(x, xs, &r, 1.0f);
      tu_fill(w, (size_t)cout * cin * 9, &r, (float)sqrt(2.0 / (cin * 9)));
      tu_fill(bias, (size_t)cout, &r, 0.5f);
      tu_fill(res, ys, &r, 1.0f);
      nn_conv3x3_prepare(wp, w, cin, cout);
      nn_bf16_prepare(wp16, wp, cin, cout);
      for (size_t i = 0; i < sn; i++) scratch[i] = NAN;
      nn_conv3x3_forward(y32, scratch, x, wp, bias, res, false, n, cin, cout);
      for (size_t i = 0; i < sn; i++) scratch[i] = NAN;
      nn_conv3x3_forward_bf16(y16, scratch, x, wp16, bias, res, false, n, cin, cout);
      double big = 0, err = 0;
      for (size_t i = 0; i < ys; i++) {
        big = fmax(big, fabs(y32[i]));
        if (!(fabs(y16[i] - y32[i]) <= err)) err = fabs(y16[i] - y32[i]); /* NaN fails */
      }
      if (!(err <= CONV_TOL * big))
        fail_msg("cin %d cout %d n %d: bf16 off fp32 by %.3g, %.2f%% of max |y| %.3g", cin,
                 cout, n, err, 100 * err / big, big);
      if (err / big > worst) {
        worst = err / big;
        worst_at[0] = cin, worst_at[1] = cout, worst_at[2] = n;
      }
      if (cin >= 16) worst_wide = fmax(worst_wide, err / big);
      /* The resident layout: the same bits as NCHW (ReLU on, the residual added). */
      size_t rin = nn_conv3x3_resident_floats(n, cin), rout = nn_conv3x3_resident_floats(n, cout);
      float *Px = calloc(rin, 4), *Py = calloc(rout, 4), *Pr = calloc(rout, 4);
      nn_conv3x3_to_resident(Px, x, n, cin);
      nn_conv3x3_to_resident(Pr, res, n, cout);
      for (size_t i = 0; i < sn; i++) scratch[i] = NAN;
      nn_conv3x3_forward_resident_bf16(Py, scratch, Px, wp16, bias, Pr, true, n, cin, cout);
      nn_conv3x3_from_resident(yr, Py, n, cout);
      for (size_t i = 0; i < sn; i++) scratch[i] = NAN;
      nn_conv3x3_forward_bf16(y16, scratch, x, wp16, bias, res, true, n, cin, cout);
      for (size_t i = 0; i < ys; i++)
        if (memcmp(&yr[i], &y16[i], 4))
          fail_msg("cin %d cout %d n %d: resident %.9g, NCHW %.9g at %zu", cin, cout, n, yr[i],
                   y16[i], i);
      free(Px), free(Py), free(Pr);
      free(x), free(w), free(bias), free(res), free(y32), free(y16), free(yr), free(wp);
      free(wp16), free(scratch);
    }
  print_message("conv: largest bf16 - fp32 difference %.2f%% of max |y| (cin %d, cout %d, n %d);"
                " %.2f%% with 16 or more input channels\n", 100 * worst, worst_at[0], worst_at[1],
                worst_at[2], 100 * worst_wide);
}

/* Positions of games the net plays against itself, each move drawn from its fp32 priors
 * (as self-play's first moves are), NG games of up to PLIES plies. */
enum { NG = 16, PLIES = 24, MAXPOS = NG * PLIES };

static int selfplay_positions(xq_pos_t *out, nn_model_t *m, nn_plan_t *plan, float *planes,
                              float *priors, uint64_t seed) {
  xq_rng_t r;
  xq_rng_seed(&r, seed);
  xq_pos_t g[NG];
  for (int i = 0; i < NG; i++) xq_pos_startpos(&g[i]);
  const int np = nn_arch_input_planes(&m->arch);
  static int idx[NG][XQ_MAX_MOVES];
  const int *rows[NG];
  int cnt[NG], npos = 0;
  for (int ply = 0; ply < PLIES; ply++) {
    for (int i = 0; i < NG; i++) {
      out[npos++] = g[i];
      nn_encode(planes + (size_t)i * np * NN_HW, &g[i], np);
      cnt[i] = nn_encode_legal(&g[i], NULL, idx[i], NULL);
      rows[i] = idx[i];
    }
    float values[NG];
    nn_infer_legal(priors, values, plan, m, planes, rows, cnt, NG);
    for (int i = 0; i < NG; i++) {
      if (cnt[i] == 0) { /* game over: start again */
        xq_pos_startpos(&g[i]);
        continue;
      }
      double u = xq_rng_uniform(&r), acc = 0;
      int pick = idx[i][cnt[i] - 1];
      for (int j = 0; j < cnt[i]; j++) {
        acc += priors[(size_t)i * NN_POLICY_SIZE + idx[i][j]];
        if (u < acc) {
          pick = idx[i][j];
          break;
        }
      }
      xq_move_t mv[XQ_MAX_MOVES];
      int k = xq_gen_legal(&g[i], mv);
      for (int j = 0; j < k; j++)
        if (xq_policy_index_for(mv[j], g[i].side) == pick) {
          xq_pos_make(&g[i], mv[j]);
          break;
        }
    }
  }
  return npos;
}

/* fp32 against bf16 on one model; returns nothing, fails on a bound. */
static void compare_net(nn_model_t *m, const char *name, bool trained) {
  xq_errbuf_t eb = {{0}};
  enum { B = 64 };
  nn_plan_t *plan;
  assert_int_equal(nn_plan_new(&plan, &m->arch, B, false, &eb), 0);
  const int np = nn_arch_input_planes(&m->arch);
  float *planes = malloc((size_t)B * np * NN_HW * 4);
  float *p32 = malloc((size_t)B * NN_POLICY_SIZE * 4), *p16 = malloc((size_t)B * NN_POLICY_SIZE * 4);
  static xq_pos_t pos[MAXPOS];
  nn_model_fold(m);
  int npos = selfplay_positions(pos, m, plan, planes, p32, 7);
  static int idx[B][XQ_MAX_MOVES];
  const int *rows[B];
  int cnt[B], agree = 0, counted = 0;
  double verr = 0, perr = 0, vsum = 0;
  for (int s0 = 0; s0 < npos; s0 += B) {
    int n = npos - s0 < B ? npos - s0 : B;
    for (int i = 0; i < n; i++) {
      nn_encode(planes + (size_t)i * np * NN_HW, &pos[s0 + i], np);
      cnt[i] = nn_encode_legal(&pos[s0 + i], NULL, idx[i], NULL);
      rows[i] = idx[i];
    }
    float v32[B], v16[B];
    nn_bf16_detach(m);
    nn_infer_legal(p32, v32, plan, m, planes, rows, cnt, n);
    assert_int_equal(nn_bf16_attach(m, &eb), 0);
    nn_infer_legal(p16, v16, plan, m, planes, rows, cnt, n);
    for (int i = 0; i < n; i++) {
      verr = fmax(verr, fabs(v16[i] - v32[i]));
      vsum += fabs(v16[i] - v32[i]);
      if (cnt[i] == 0) continue;
      int a32 = 0, a16 = 0;
      for (int j = 0; j < cnt[i]; j++) {
        const size_t o = (size_t)i * NN_POLICY_SIZE;
        perr = fmax(perr, fabs(p16[o + idx[i][j]] - p32[o + idx[i][j]]));
        if (p32[o + idx[i][j]] > p32[o + idx[i][a32]]) a32 = j;
        if (p16[o + idx[i][j]] > p16[o + idx[i][a16]]) a16 = j;
      }
      agree += a32 == a16;
      counted++;
    }
  }
  print_message("%s: %d positions, value max |diff| %.4f (mean %.5f), prior max |diff| %.4f, "
                "arg max agrees on %.1f%%\n", name, npos, verr, vsum / npos, perr,
                100.0 * agree / counted);
  if (!(verr <= VALUE_TOL)) fail_msg("%s: values differ by %.4f > %.2f", name, verr, VALUE_TOL);
  if (!(perr <= PRIOR_TOL)) fail_msg("%s: priors differ by %.4f > %.2f", name, perr, PRIOR_TOL);
  if (trained && !(agree >= ARGMAX_MIN * counted))
    fail_msg("%s: arg max agrees on %d of %d positions", name, agree, counted);
  /* Refolding refreshes the bf16 copy: the same outputs again. */
  nn_model_fold(m);
  float v2[B];
  nn_infer_legal(p32, v2, plan, m, planes, rows, cnt, 1);
  float v1[B];
  nn_infer_legal(p32, v1, plan, m, planes, rows, cnt, 1);
  assert_memory_equal(v1, v2, sizeof v1[0]);
  free(planes), free(p32), free(p16);
  nn_plan_free(&plan);
}

static void test_shipped_net(void **state) {
  (void)state;
  SKIP_WITHOUT_BF16();
  nn_model_t *m;
  nn_file_meta_t meta;
  xq_errbuf_t eb = {{0}};
  assert_int_equal(nn_file_load(XQZ_SOURCE_DIR "/nets/xqzero.xqzn", &m, &meta, &eb), 0);
  compare_net(m, "shipped net (2x16a)", true);
  nn_model_free(&m);
}

static void test_init_nets(void **state) {
  (void)state;
  SKIP_WITHOUT_BF16();
  const char *sizes[] = {"tiny", "default"};
  for (size_t i = 0; i < 2; i++) {
    nn_model_t *m;
    nn_arch_t a;
    xq_errbuf_t eb = {{0}};
    assert_int_equal(nn_arch_preset(sizes[i], &a), 0);
    assert_int_equal(nn_model_new(&m, &a, &eb), 0);
    nn_model_init(m, 1); /* the fixture's weights (test_nn_fixture) */
    compare_net(m, sizes[i], false);
    nn_model_free(&m);
  }
}

/* The evaluator follows the process's precision: bf16 outputs differ from fp32's in the
 * last bits, within the bounds. */
static void test_evaluator_precision(void **state) {
  (void)state;
  SKIP_WITHOUT_BF16();
  const char *net = XQZ_SOURCE_DIR "/nets/xqzero.xqzn";
  enum { N = 8 };
  static xq_pos_t pos[N];
  xq_pos_t *pp[N];
  xq_pos_t cur;
  xq_pos_startpos(&cur);
  for (int i = 0; i < N; i++) {
    pos[i] = cur;
    pp[i] = &pos[i];
    xq_move_t mv[XQ_MAX_MOVES];
    int k = xq_gen_legal(&cur, mv);
    xq_pos_make(&cur, mv[(i * 7) % k]);
  }
  xq_errbuf_t eb = {{0}};
  xq_evaluator_t *e32, *e16;
  nn_precision_set(NN_PRECISION_FP32);
  assert_int_equal(xq_evaluator_net_new(&e32, net, N, &eb), 0);
  nn_precision_set(NN_PRECISION_BF16);
  assert_int_equal(nn_precision_current(), NN_PRECISION_BF16);
  assert_int_equal(xq_evaluator_net_new(&e16, net, N, &eb), 0);
  nn_precision_set(NN_PRECISION_FP32);
  float *p32 = malloc((size_t)N * XQ_POLICY_SIZE * 4), *p16 = malloc((size_t)N * XQ_POLICY_SIZE * 4);
  float v32[N], v16[N];
  e32->eval(e32, pp, N, p32, v32);
  e16->eval(e16, pp, N, p16, v16);
  bool differ = false;
  for (int i = 0; i < N; i++) {
    assert_true(fabs(v16[i] - v32[i]) <= VALUE_TOL);
    differ |= v16[i] != v32[i];
  }
  assert_true(differ); /* it did run in bf16 */
  free(p32), free(p16);
  xq_evaluator_free(&e32);
  xq_evaluator_free(&e16);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_precision_choice),
      cmocka_unit_test(test_gemm_odd_shapes),
      cmocka_unit_test(test_conv_matches_fp32),
      cmocka_unit_test(test_shipped_net),
      cmocka_unit_test(test_init_nets),
      cmocka_unit_test(test_evaluator_precision),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
