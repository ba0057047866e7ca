/*
 * bench_nn_net.h: the whole-network half of `xqz bench nn` (cmd_bench_nn.c): inference
 * positions/s and training samples/s of the default and large nets, or of the nets named.
 */
#ifndef XQZ_BENCH_NN_NET_H
#define XQZ_BENCH_NN_NET_H

#include <stdbool.h>
#include <stddef.h>

#include "nn/nn_bf16.h"
#include "nn/nn_model.h"

/* Seconds per call of fn(ctx), fastest of three rounds of at least min_time each. */
double bench_nn_time(void (*fn)(void *ctx), void *ctx, double min_time);
/* count floats in [-1, 1) from a linear congruential seed; exits on out of memory. */
float *bench_nn_alloc_rand(size_t count, unsigned *seed);

#define BENCH_NN_MAX_NETS 16

/* Parses a comma-separated list of nn_arch_preset names (--nets) into archs
 * (BENCH_NN_MAX_NETS). Returns how many, or -1 after saying on stderr what is wrong. */
int bench_nn_parse_nets(nn_arch_t *archs, const char *list);

/* Prints the figures of the narchs nets archs (a table, or ",\"infer\":{...},\"train\":{...}"
 * in JSON). The OpenBLAS thread count is the caller's (openblas_set_num_threads).
 * Returns 0, or 1 when a net could not be built. */
int bench_nn_nets(const nn_arch_t *archs, int narchs, bool quick, bool json, double min_time,
                  double peak_gflops);

/* The precision table: nn_infer_legal's positions/s of each net at batches 1, 32 and 256 in
 * each of precs (fp32, bf16), rounds times, the precisions alternating within a round. The
 * peaks are GFLOP/s (peak_bf16 0: not measured). Returns 0, or 1 when a net could not be
 * built or bf16 was asked of a CPU without it. */
int bench_nn_precision(const nn_arch_t *archs, int narchs, const nn_precision_t *precs,
                       int nprecs, int rounds, double min_time, double peak_fp32,
                       double peak_bf16, bool json);

#endif
