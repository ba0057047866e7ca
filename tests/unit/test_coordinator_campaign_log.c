/*
 * test_coordinator_campaign_log.c: a line of promotions.log is whole or absent. A write
 * cut short by a full disk is cut off again, so the next promotion's line does not run on
 * from a fragment of the last one (a reader would take the two for one line, and the
 * fragment's net for the one announced), and a torn tail left from before is ended
 * before the next line.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "storage/campaign.h"
#include "storage/segments.h"

static bool g_full; /* the disk is full: a write stores half its bytes, then fails */

static ssize_t half_write(int fd, const void *buf, size_t n) {
  return write(fd, buf, g_full ? n / 2 : n);
}

static char *slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  assert_non_null(f);
  static char buf[4096];
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  buf[n] = 0;
  fclose(f);
  return buf;
}

static void test_line_whole_or_absent(void **state) {
  (void)state;
  char dir[] = "/tmp/xqz-camplog-XXXXXX";
  assert_non_null(mkdtemp(dir));
  char path[256];
  snprintf(path, sizeof path, "%s/promotions.log", dir);
  xqc_seg_io_t real = xqc_seg_io;
  xqc_seg_io.write = half_write;

  xq_errbuf_t eb = {{0}};
  assert_int_equal(xqc_campaign_log_line(dir, "promotions.log", "{\"net\":\"aaaa\"}", &eb), 0);
  g_full = true;
  eb = (xq_errbuf_t){{0}};
  assert_int_equal(xqc_campaign_log_line(dir, "promotions.log", "{\"net\":\"bbbb\"}", &eb),
                   XQ_EIO);
  assert_non_null(strstr(eb.msg, "promotions.log"));
  assert_string_equal(slurp(path), "{\"net\":\"aaaa\"}\n"); /* the half line is cut off */
  g_full = false;
  assert_int_equal(xqc_campaign_log_line(dir, "promotions.log", "{\"net\":\"cccc\"}", &eb), 0);
  assert_string_equal(slurp(path), "{\"net\":\"aaaa\"}\n{\"net\":\"cccc\"}\n");

  /* A torn tail from before (a crash in the middle of a line): the next line starts on a
   * line of its own. */
  FILE *f = fopen(path, "ab");
  assert_non_null(f);
  fputs("{\"net\":\"dd", f);
  fclose(f);
  assert_int_equal(xqc_campaign_log_line(dir, "promotions.log", "{\"net\":\"eeee\"}", &eb), 0);
  assert_string_equal(slurp(path),
                      "{\"net\":\"aaaa\"}\n{\"net\":\"cccc\"}\n{\"net\":\"dd\n{\"net\":\"eeee\"}\n");

  xqc_seg_io = real;
  unlink(path);
  rmdir(dir);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_line_whole_or_absent)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
