/*
 * bench_nn_net.h: the whole-network half of `xqz bench nn` (cmd_bench_nn.c): inference
 * positions/s and training samples/s of the default and large nets, or of the nets named.
 */
#ifndef XQZ_BENCH_NN_NET_H
#define XQZ_BENCH_NN_NET_H

#include <stdbool.h>

/* Seconds per call of fn(ctx), fastest of three rounds of at least min_time each. */
double bench_nn_time(void (*fn)(void *ctx), void *ctx, double min_time);

/* Prints the figures of the nets named in nets (comma-separated nn_arch_preset names)
 * (a table, or ",\"infer\":{...},\"train\":{...}" in JSON). The OpenBLAS thread count
 * is the caller's (openblas_set_num_threads). Returns 0, 1 when a net could not be built,
 * or 2 when nets names no valid size. */
int bench_nn_nets(const char *nets, bool quick, bool json, double min_time, double peak_gflops);

#endif
