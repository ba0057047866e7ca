/*
 * test_worker_spool.c: the worker's spool (worker/spool.c) directly: its flow control (a
 * coordinator that stops acknowledging, as on a full disk, is sent at most max_in_flight
 * games per resend interval, the same ones again, not the whole spool; acks make room) and
 * its lock (a second open of the same directory is refused, naming this process).
 */
#define _DEFAULT_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "spool.h"

#define GAMES 1000
#define RESEND 30000

typedef struct {
  uint64_t seqs[GAMES];
  int n;
} sent_t;

static void on_send(void *ctx, const char *worker_id, uint64_t seq, const void *rec,
                    size_t len) {
  (void)worker_id;
  (void)rec;
  (void)len;
  sent_t *s = ctx;
  assert_true(s->n < GAMES);
  s->seqs[s->n++] = seq;
}

/* Calls xq_spool_due as the worker's loop does, `rounds` times at `now`. */
static void rounds(xq_spool_t *sp, int64_t now, int n, sent_t *s) {
  for (int i = 0; i < n; i++) xq_spool_due(sp, now, RESEND, 64, 256, on_send, s);
}

static void test_flow_control_and_lock(void **state) {
  (void)state;
  char dir[] = "/tmp/xqz-spool-XXXXXX";
  assert_non_null(mkdtemp(dir));
  xq_spool_t *sp = NULL;
  assert_int_equal(xq_spool_open(&sp, dir, GAMES, NULL), 0);
  uint64_t seq[GAMES];
  for (int i = 0; i < GAMES; i++)
    assert_int_equal(xq_spool_add(sp, "w1", "game", 4, &seq[i], NULL), 0);

  /* Nobody acknowledges: 256 go out, however often the loop asks. */
  sent_t s = {0};
  rounds(sp, 1000, 50, &s);
  assert_int_equal(s.n, 256);
  for (int i = 0; i < 256; i++) assert_int_equal(s.seqs[i], seq[i]);
  /* Ten acks make room for ten more. */
  for (int i = 0; i < 10; i++) assert_int_equal(xq_spool_ack(sp, "w1", seq[i]), 1);
  sent_t s2 = {0};
  rounds(sp, 2000, 50, &s2);
  assert_int_equal(s2.n, 10);
  assert_int_equal(s2.seqs[0], seq[256]);
  /* A resend interval after the first ones, those are due again; the ten sent later still
   * count as in flight, so 246 go out, the oldest first. */
  sent_t s3 = {0};
  rounds(sp, 1000 + RESEND, 50, &s3);
  assert_int_equal(s3.n, 246);
  assert_int_equal(s3.seqs[0], seq[10]);
  assert_int_equal(s3.seqs[245], seq[255]);

  /* One spool, one worker. */
  xq_spool_t *other = NULL;
  xq_errbuf_t eb = {{0}};
  assert_int_equal(xq_spool_open(&other, dir, GAMES, &eb), XQ_EBUSY);
  assert_null(other);
  char want[64];
  snprintf(want, sizeof want, "(pid=%ld host=", (long)getpid());
  assert_non_null(strstr(eb.msg, want));
  assert_non_null(strstr(eb.msg, "program=xqz-worker"));
  xq_spool_free(&sp);
  assert_int_equal(xq_spool_open(&other, dir, GAMES, NULL), 0); /* released with the spool */
  assert_int_equal(xq_spool_count(other), GAMES - 10);
  xq_spool_free(&other);
  char cmd[200];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  assert_int_equal(system(cmd), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_flow_control_and_lock)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
