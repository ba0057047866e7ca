/*
 * blas_core.h: which of OpenBLAS's kernels the network runs on.
 *
 * Debian's OpenBLAS is built for every x86 core and picks one when it is loaded, from the
 * CPU's model number. A CPU it does not know (Debian 12's 0.3.21 on a Sapphire Rapids
 * Xeon in a VM, for one) gets its oldest kernels, Prescott's SSE3, which run the tiny
 * net's inference at a third of the AVX-512 kernels' rate (docs/results.md, "OpenBLAS on
 * a CPU it does not know"). The choice is made before main and cannot be changed after,
 * only forced by OPENBLAS_CORETYPE at load time.
 *
 * So the correction is a program's decision, made in the open: each program (xqz,
 * xqz-worker, xqz-trainer) calls nn_blas_core_setup(argv) as the first statement of main,
 * before any thread, descriptor, lock or log line exists. When OpenBLAS chose a core without
 * AVX2 on a CPU that has AVX2 and FMA, and nobody set OPENBLAS_CORETYPE, it restarts the
 * program (execv: the same executable, argv and pid) with OPENBLAS_CORETYPE set to the core
 * that matches the CPU (SkylakeX with AVX-512, Haswell with AVX2) and XQZ_OPENBLAS_FALLBACK
 * naming the core OpenBLAS had chosen, for the start-up log. An OPENBLAS_CORETYPE of the
 * user's own (a launcher's, a systemd unit's Environment=) is always kept, and then nothing
 * restarts. Library code never calls it: a library that replaced its host process would be
 * a surprise; tests and tools that embed libxqz keep OpenBLAS's choice unless they call it
 * (docs/network-performance.md, "Kernels OpenBLAS does not choose well").
 */
#ifndef NN_BLAS_CORE_H
#define NN_BLAS_CORE_H

#include <stdbool.h>

/* The core to force in place of OpenBLAS's choice `chosen` on a CPU with AVX2 and FMA
 * (avx2_fma) and with AVX-512 F, DQ, BW and VL (avx512), or NULL to keep its choice: a
 * core of its with AVX2 kernels, an unknown name, or a CPU without AVX2. Pure. */
const char *nn_blas_better_core(const char *chosen, bool avx2_fma, bool avx512);
/* The core nn_blas_core_setup would force now, or NULL: none when OPENBLAS_CORETYPE is set,
 * off x86-64, or when OpenBLAS's choice stands. *avx512 (may be NULL) says whether the CPU
 * has AVX-512. Changes nothing. */
const char *nn_blas_core_wanted(bool *avx512);
/* Program setup: the first statement of a program's main, never called from library code.
 * Returns when OpenBLAS's choice stands (nn_blas_core_wanted is NULL); otherwise restarts
 * this program (its path from /proc/self/exe, the same argv, pid and name) with
 * OPENBLAS_CORETYPE set, and returns only if that fails, after a warning on stderr naming
 * what to set by hand. */
void nn_blas_core_setup(char **argv);
/* The OpenBLAS core in use ("SkylakeX"). */
const char *nn_blas_core(void);
/* The core OpenBLAS had chosen when nn_blas_core_setup forced another, else NULL. */
const char *nn_blas_core_replaced(void);

#endif
