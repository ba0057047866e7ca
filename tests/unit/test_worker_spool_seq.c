/*
 * test_worker_spool_seq.c: a worker's game seqs come from a counter kept in its spool
 * (seq.next), not from the clock (issue 47 item 13). An earlier run whose clock was an hour
 * ahead left its reservation; the next run, with the clock back, goes on above it, and seqs
 * keep growing across reopenings.
 */
#define _DEFAULT_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "spool.h"

static uint64_t add_one(xq_spool_t *sp) {
  uint64_t seq = 0;
  xq_errbuf_t eb;
  const char rec[] = "a game";
  if (xq_spool_add(sp, "w1", rec, sizeof rec, &seq, &eb) < 0) fail_msg("add: %s", eb.msg);
  return seq;
}

static void test_seq_survives_clock_step(void **state) {
  (void)state;
  char dir[] = "/tmp/xqz-spoolseq-XXXXXX";
  assert_non_null(mkdtemp(dir));
  /* What a run an hour ahead reserved. */
  uint64_t ahead = ((uint64_t)time(NULL) + 3600) * 1000000u;
  char path[200];
  snprintf(path, sizeof path, "%s/seq.next", dir);
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fprintf(f, "%" PRIu64 "\n", ahead);
  fclose(f);
  xq_spool_t *sp = NULL;
  xq_errbuf_t eb;
  assert_int_equal(xq_spool_open(&sp, dir, 100, &eb), 0);
  uint64_t s1 = add_one(sp);
  assert_true(s1 >= ahead);
  assert_int_equal(xq_spool_ack(sp, "w1", s1), 1); /* acked: nothing left in the spool */
  xq_spool_free(&sp);
  assert_int_equal(xq_spool_open(&sp, dir, 100, &eb), 0);
  uint64_t s2 = add_one(sp);
  assert_true(s2 > s1);
  xq_spool_free(&sp);
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  assert_int_equal(system(cmd), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_seq_survives_clock_step),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
