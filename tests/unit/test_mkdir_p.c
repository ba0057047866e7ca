/*
 * test_mkdir_p.c: state directories are created with their missing parents (a fresh
 * checkout has no campaigns/), an existing one is fine, and a path through a file is an
 * error that names it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "support/mkdir_p.h"

static int is_dir(const char *p) {
  struct stat st;
  return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static void test_mkdir_p(void **state) {
  (void)state;
  char root[] = "/tmp/xqz-mkdir-XXXXXX";
  assert_non_null(mkdtemp(root));
  char p[512], cmd[600];
  snprintf(p, sizeof p, "%s/campaigns//lab1/", root);
  assert_int_equal(xq_mkdir_p(p, NULL), 0);
  snprintf(p, sizeof p, "%s/campaigns/lab1", root);
  assert_true(is_dir(p));
  assert_int_equal(xq_mkdir_p(p, NULL), 0); /* again: already there */

  snprintf(p, sizeof p, "%s/file", root);
  FILE *f = fopen(p, "w");
  fclose(f);
  xq_errbuf_t eb = {{0}};
  snprintf(p, sizeof p, "%s/file/sub", root);
  assert_int_equal(xq_mkdir_p(p, &eb), XQ_EIO);
  assert_non_null(strstr(eb.msg, "file"));
  snprintf(p, sizeof p, "%s/file", root);
  assert_int_equal(xq_mkdir_p(p, &eb), XQ_EIO);
  assert_non_null(strstr(eb.msg, "not a directory"));
  assert_int_equal(xq_mkdir_p("", &eb), XQ_EIO);

  snprintf(cmd, sizeof cmd, "rm -rf %s", root);
  assert_int_equal(system(cmd), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_mkdir_p)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
