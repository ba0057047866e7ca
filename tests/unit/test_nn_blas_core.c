/*
 * test_nn_blas_core.c: nn_blas_better_core, the choice blas_core.h makes over OpenBLAS's.
 * OpenBLAS's fallback cores without AVX2 (Prescott, what Debian 12's OpenBLAS picks on a
 * CPU it does not know; Nehalem, Sandybridge, Core2 and the rest) are replaced on a CPU
 * with AVX2 and FMA, by SkylakeX with AVX-512 and by Haswell without; its AVX2 cores,
 * names it might add later, and every choice on a CPU without AVX2 are kept.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "nn/blas_core.h"

static void test_fallbacks_replaced(void **state) {
  (void)state;
  const char *fallbacks[] = {"Prescott", "PRESCOTT", "Core2", "Nehalem", "Sandybridge",
                             "Atom", "Unknown", "Barcelona", "Bulldozer"};
  for (size_t i = 0; i < sizeof fallbacks / sizeof fallbacks[0]; i++) {
    assert_string_equal(nn_blas_better_core(fallbacks[i], true, true), "SkylakeX");
    assert_string_equal(nn_blas_better_core(fallbacks[i], true, false), "Haswell");
  }
}

static void test_avx2_cores_kept(void **state) {
  (void)state;
  const char *own[] = {"Haswell", "Zen", "SkylakeX", "Cooperlake", "SapphireRapids",
                       "Excavator", "Zen5", ""};
  for (size_t i = 0; i < sizeof own / sizeof own[0]; i++) {
    assert_null(nn_blas_better_core(own[i], true, true));
    assert_null(nn_blas_better_core(own[i], true, false));
  }
  assert_null(nn_blas_better_core(NULL, true, true));
}

static void test_cpu_without_avx2_kept(void **state) {
  (void)state;
  assert_null(nn_blas_better_core("Prescott", false, false));
  assert_null(nn_blas_better_core("Sandybridge", false, false));
  /* AVX-512 reported without AVX2 and FMA is no CPU that exists: nothing is forced. */
  assert_null(nn_blas_better_core("Prescott", false, true));
}

static void test_core_named(void **state) {
  (void)state;
  const char *core = nn_blas_core();
  assert_non_null(core);
  assert_true(strlen(core) > 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_fallbacks_replaced),
      cmocka_unit_test(test_avx2_cores_kept),
      cmocka_unit_test(test_cpu_without_avx2_kept),
      cmocka_unit_test(test_core_named),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
