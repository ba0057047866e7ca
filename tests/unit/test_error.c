/*
 * test_error.c: the reason buffer (support/error.h): a reason that fits is written whole,
 * one that does not is cut and ends in "...", and a NULL buffer only returns the code.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "support/error.h"

static void test_fits_whole(void **state) {
  (void)state;
  xq_errbuf_t eb = {{0}};
  assert_int_equal(xq_err_set(&eb, XQ_ERANGE, "sims: %d outside [%d, %d]", 0, 1, 100000),
                   XQ_ERANGE);
  assert_string_equal(eb.msg, "sims: 0 outside [1, 100000]");
  /* Exactly full: 255 characters and the terminator, nothing marked. */
  char full[sizeof eb.msg];
  memset(full, 'x', sizeof full - 1);
  full[sizeof full - 1] = 0;
  xq_err_set(&eb, XQ_EINVAL, "%s", full);
  assert_string_equal(eb.msg, full);
}

static void test_cut_is_marked(void **state) {
  (void)state;
  xq_errbuf_t eb = {{0}};
  char longer[sizeof eb.msg + 40];
  memset(longer, 'y', sizeof longer - 1);
  longer[sizeof longer - 1] = 0;
  xq_err_set(&eb, XQ_EINVAL, "%s", longer);
  size_t n = strlen(eb.msg);
  assert_int_equal(n, sizeof eb.msg - 1);
  assert_string_equal(eb.msg + n - 3, "...");
  assert_int_equal(eb.msg[n - 4], 'y');
}

static void test_null_buffer(void **state) {
  (void)state;
  assert_int_equal(xq_err_set(NULL, XQ_EIO, "%s", "ignored"), XQ_EIO);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_fits_whole),
      cmocka_unit_test(test_cut_is_marked),
      cmocka_unit_test(test_null_buffer),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
