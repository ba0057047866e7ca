/*
 * bench_nn_gemm.h: the narrow-GEMM table of `xqz bench nn` (cmd_bench_nn.c): the shapes the
 * small nets' layers multiply, timed with nn_gemm_small and with OpenBLAS in the same run.
 */
#ifndef XQZ_BENCH_NN_GEMM_H
#define XQZ_BENCH_NN_GEMM_H

#include <stdbool.h>

/* Prints the table (or ",\"gemm\":{...}" in JSON). */
void bench_nn_gemms(bool json, double min_time, double peak_gflops);

#endif
