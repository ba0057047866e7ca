/*
 * nn_bf16.h: the bf16 inference path (issue 51, item 1) and the precision setting that
 * chooses it at run time.
 *
 * What changes in bf16: only the Winograd GEMMs of the residual tower
 * (M_p = V_p . U_p, conv3x3.c), which are most of a net's arithmetic. Their operands are
 * rounded to bfloat16 (8 significant bits, round to nearest even) and multiplied with
 * AVX512-BF16's vdpbf16ps, which does two products per 32-bit lane and accumulates in
 * fp32. The weights U_p are converted once per net (nn_bf16_attach); the transformed
 * activations V_p are converted per call, in place, just before their GEMM. Everything
 * else (the input and output transforms, bias, residual, ReLU, the heads) stays fp32, and
 * so do the activations between layers. docs/network-performance.md, "bf16 inference",
 * has the measurements and the accuracy.
 *
 * The kernel is compiled with a target attribute, so the library builds for any x86-64
 * (XQZ_NATIVE=OFF included) and runs the kernel only where nn_bf16_cpu_supported(). On
 * other compilers or architectures the path does not exist and everything resolves to fp32.
 */
#ifndef NN_BF16_H
#define NN_BF16_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nn/nn_model.h"
#include "support/error.h"

/* The precision setting (`precision = auto|fp32|bf16`). */
typedef enum { NN_PRECISION_AUTO = 0, NN_PRECISION_FP32, NN_PRECISION_BF16 } nn_precision_t;

/* "auto", "fp32" or "bf16", in any case ("BF16" too), into *out; 0, or XQ_EINVAL for
 * anything else. */
int nn_precision_parse(const char *s, nn_precision_t *out);
const char *nn_precision_name(nn_precision_t p);

/* Whether this CPU (and OS) runs the kernel: AVX-512 F, BW, VL and BF16. The environment
 * variable XQZ_CPU_BF16=0 makes it false on any CPU, so that a CPU without the instructions
 * can be tried on one that has them (tests, a lab's mixed hosts). */
bool nn_bf16_cpu_supported(void);

/*
 * The precision that runs for a request on a CPU with or without AVX512-BF16: auto gives
 * bf16 where the CPU has it, fp32 elsewhere; bf16 asked of a CPU without it falls back to
 * fp32. *why (may be NULL) gets a short reason for logs ("auto: the CPU has avx512_bf16",
 * "bf16 asked for, but the CPU lacks avx512_bf16: fp32"). Pure: tests force either CPU.
 */
nn_precision_t nn_precision_resolve(nn_precision_t req, bool cpu_has_bf16, const char **why);

/*
 * The process's precision for network evaluators (search/evaluator.c reads it when it
 * loads a net). Until nn_precision_set is called it is the XQZ_PRECISION environment
 * variable's (auto, fp32 or bf16; unset or invalid: fp32), resolved on this CPU. The worker
 * sets it from its --precision setting before its threads start.
 */
void nn_precision_set(nn_precision_t resolved);
nn_precision_t nn_precision_current(void);

/*
 * For a program that plays (the engine, `xqz play`): the precision asked for (a
 * --precision value, NULL when not given), else XQZ_PRECISION when it holds a valid name,
 * else dflt; resolved on this CPU, set for the process (nn_precision_set) and returned.
 * *why (may be NULL) gets the resolution's reason for the program's log.
 */
nn_precision_t nn_precision_choose(const char *asked, nn_precision_t dflt, const char **why);

/* An option row's check for a precision value: 0, or XQ_ERANGE naming --flag and the
 * accepted values. */
int nn_precision_check(const char *flag, const char *v, xq_errbuf_t *eb);

/* The bf16 copy of a folded tower's prepared 3x3 weights, owned by the model (m->bf16). */
struct nn_bf16_tower {
  int nconvs;
  uint16_t *wp[NN_MAX_CONVS]; /* per conv: (35, round8(cin) / 2, round16(cout), 2) bf16 */
  uint16_t *mem;
};

/* bf16 elements of one conv's converted weights. */
size_t nn_bf16_prepared_elems(int cin, int cout);
/* wp16 <- the fp32 prepared weights wp (nn_conv3x3_prepare's (35, cin, round8(cout))),
 * rounded to nearest even, pairs of input channels interleaved, zero-padded. Portable C. */
void nn_bf16_prepare(uint16_t *wp16, const float *wp, int cin, int cout);

/*
 * Converts m's folded tower (nn_model_fold must have run) to bf16 and keeps it in m->bf16,
 * so that nn_infer and nn_infer_legal run the tower in bf16. nn_model_fold refreshes it,
 * nn_model_free frees it. Returns 0, XQ_EINVAL when the CPU lacks the kernel (m is left
 * fp32), or XQ_ENOMEM.
 */
int nn_bf16_attach(nn_model_t *m, xq_errbuf_t *eb);
/* Re-converts an attached model's weights from its folded ones (nn_model_fold calls it). */
void nn_bf16_refresh(nn_model_t *m);
/* Back to fp32: frees m->bf16 (NULL-safe on either). */
void nn_bf16_detach(nn_model_t *m);

/*
 * The Winograd GEMMs of one chunk in bf16: M (35, T, round8(cout)) fp32 <- V (35, T,
 * round8(cin)) . U16. V is overwritten: each point's block is converted to bf16 in place
 * (its first half). The CPU must have the kernel.
 */
void nn_bf16_wg_multiply(float *M, float *V, const uint16_t *U16, int T, int cin, int cout);

/*
 * C (m, n) fp32 = A (m, k) . B, A bf16 row-major (lda >= k, k even), B as nn_bf16_prepare
 * lays out one point: (k / 2, round16(n), 2). ldc >= n; C is only written. Exposed for the
 * tests (odd shapes, garbage in C).
 */
void nn_bf16_gemm(float *c, int ldc, const uint16_t *a, int lda, const uint16_t *b, int m,
                  int n, int k);
/* x (count) fp32 -> y (count) bf16, round to nearest even (the kernel's conversion); y may
 * be the start of x's memory. */
void nn_bf16_convert(uint16_t *y, const float *x, size_t count);

/* The vdpbf16ps peak of one core in GFLOP/s (2 per multiply-add), measured for about
 * `seconds`; 0 where the CPU lacks the instruction. For the bench's %peak. */
double nn_bf16_peak_gflops(double seconds);

#endif
