/*
 * bench_nn_net.h: the whole-network half of `xqz bench nn` (cmd_bench_nn.c): inference
 * positions/s and training samples/s of the default and large nets.
 */
#ifndef XQZ_BENCH_NN_NET_H
#define XQZ_BENCH_NN_NET_H

#include <stdbool.h>

/* Seconds per call of fn(ctx), fastest of three rounds of at least min_time each. */
double bench_nn_time(void (*fn)(void *ctx), void *ctx, double min_time);

/* Prints the net figures (a table, or ",\"infer\":{...},\"train\":{...}" in JSON).
 * The OpenBLAS thread count is the caller's (openblas_set_num_threads). Returns 0, or 1
 * when a net could not be built. */
int bench_nn_nets(bool quick, bool json, double min_time, double peak_gflops);

#endif
