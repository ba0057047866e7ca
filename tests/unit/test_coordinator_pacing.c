/*
 * test_coordinator_pacing.c: when the trainer may have a batch (coordinator/window/
 * pacing.c). The window must hold min_positions samples first (filling, retry in 2 s);
 * then at most `reuse` samples go out per position ingested since the start (paced, retry
 * in 1 s), counted with the batch asked for; the reasons name the numbers.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "window/pacing.h"

static void test_filling_then_paced_then_served(void **state) {
  (void)state;
  const xqc_pacing_rule_t r = {1000, 4.0};
  char why[200];
  uint32_t wait = 7;
  /* 999 samples in the window: still filling, whatever was ingested. */
  assert_int_equal(xqc_pace(&r, 999, 5000, 0, 16, &wait, why, sizeof why), XQC_PACE_FILLING);
  assert_int_equal(wait, 2000);
  assert_non_null(strstr(why, "window holds 999 of 1000 positions"));
  /* Full enough, but 100 positions ingested since the start allow 400 samples: 390 served
   * and 16 more would pass them. */
  assert_int_equal(xqc_pace(&r, 1000, 100, 390, 16, &wait, why, sizeof why), XQC_PACE_PACED);
  assert_int_equal(wait, 1000);
  assert_non_null(strstr(why, "390 samples served for 100 positions since start (reuse 4)"));
  /* Exactly at the bound is allowed. */
  assert_int_equal(xqc_pace(&r, 1000, 100, 384, 16, &wait, why, sizeof why), XQC_PACE_SERVE);
  assert_int_equal(wait, 0);
  /* Nothing ingested since a restart: the rebuilt window is not served unpaced. */
  assert_int_equal(xqc_pace(&r, 5000, 0, 0, 1, &wait, why, sizeof why), XQC_PACE_PACED);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_filling_then_paced_then_served),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
