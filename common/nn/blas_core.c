/* blas_core.c: OpenBLAS's kernel choice, and the program setup that corrects it on a CPU it
 * does not know (blas_core.h). Nothing in the library calls nn_blas_core_setup: only the
 * programs' main, as their first statement. */
#include "nn/blas_core.h"

#include <cblas.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

/* OpenBLAS's x86 cores without AVX2 kernels: what it falls back to on a CPU it does not
 * know, and what it rightly picks on an older one. Its AVX2 cores (Haswell, Excavator, Zen,
 * SkylakeX, Cooperlake, SapphireRapids) and any name not listed here are kept. */
static const char *const PRE_AVX2[] = {
    "Unknown", "Katmai",      "Coppermine", "Northwood", "Prescott",  "Banias",
    "Atom",    "Core2",       "Penryn",     "Dunnington", "Nehalem",  "Sandybridge",
    "Athlon",  "Opteron",     "Opteron_SSE3", "Barcelona", "Nano",    "Bobcat",
    "Bulldozer", "Piledriver", "Steamroller", NULL};

const char *nn_blas_better_core(const char *chosen, bool avx2_fma, bool avx512) {
  if (!chosen || !avx2_fma) return NULL;
  for (int i = 0; PRE_AVX2[i]; i++)
    if (!strcasecmp(chosen, PRE_AVX2[i])) return avx512 ? "SkylakeX" : "Haswell";
  return NULL;
}

const char *nn_blas_core(void) {
  const char *name = openblas_get_corename();
  return name ? name : "unknown";
}

const char *nn_blas_core_replaced(void) {
  const char *was = getenv("XQZ_OPENBLAS_FALLBACK");
  return was && *was ? was : NULL;
}

const char *nn_blas_core_wanted(bool *avx512_out) {
  if (avx512_out) *avx512_out = false;
#if defined(__x86_64__) && defined(__GNUC__)
  if (getenv("OPENBLAS_CORETYPE")) return NULL; /* the user's, or set by a restart */
  __builtin_cpu_init();
  bool avx2_fma = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  bool avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
                __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl");
  if (avx512_out) *avx512_out = avx512;
  return nn_blas_better_core(nn_blas_core(), avx2_fma, avx512);
#else
  return NULL;
#endif
}

void nn_blas_core_setup(char **argv) {
  bool avx512;
  const char *better = nn_blas_core_wanted(&avx512);
  if (!better) return;
  const char *chosen = nn_blas_core();
  if (setenv("OPENBLAS_CORETYPE", better, 1) == 0 &&
      setenv("XQZ_OPENBLAS_FALLBACK", chosen, 1) == 0) {
    /* The program's real path, not /proc/self/exe: the kernel names the process (comm,
     * what ps and pgrep show) after the file executed, and scripts look for its name. */
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n > 0) {
      self[n] = '\0';
      fflush(NULL);
      execv(self, argv); /* returns only on failure */
    }
  }
  int err = errno;
  fprintf(stderr,
          "%s: warning: OpenBLAS runs its %s kernels on a CPU with %s, at a fraction of their "
          "speed, and restarting with better ones failed (%s); set OPENBLAS_CORETYPE=%s in "
          "the environment\n",
          argv && argv[0] ? argv[0] : "xqz", chosen, avx512 ? "AVX-512" : "AVX2",
          strerror(err), better);
  unsetenv("OPENBLAS_CORETYPE");
  unsetenv("XQZ_OPENBLAS_FALLBACK");
}
