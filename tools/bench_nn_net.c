/*
 * bench_nn_net.c: whole-network rates for `xqz bench nn` (see bench_nn_net.h).
 * Placeholder until the model's forward/backward API lands.
 */
#include "bench_nn_net.h"

#include <stdio.h>

int bench_nn_nets(int threads, bool quick, bool json, double min_time, double peak_gflops) {
  (void)threads, (void)quick, (void)min_time, (void)peak_gflops;
  if (!json) printf("(whole-net rates: model forward/backward not available yet)\n");
  return 0;
}
