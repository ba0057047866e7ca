/*
 * test_worker_arena_precision.c: the coordinator's arena_precision as the xqz-worker binary
 * sees it (issue 51 item 3), against a fake coordinator in this process (ROUTER on a free
 * loopback port) that serves two tiny nets and only ArenaJobs with a chosen precision.
 *  - A worker started with --precision bf16 plays an ArenaJob pinned to fp32 in fp32 and
 *    says so in its log, while its self-play precision stays bf16 (its progress line); an
 *    unpinned pair then runs in its own bf16. On a CPU without avx512_bf16 the worker runs
 *    fp32 throughout and the pinned pair is still played and logged in fp32.
 *  - A worker whose CPU lacks avx512_bf16 (forced with XQZ_CPU_BF16=0 on any CPU) says so in
 *    its Hello (no XQ_FEATURE_BF16, XQ_FEATURE_ARENA_PRECISION set), refuses a pair pinned to
 *    bf16 with a log line, never answers it with a result played in fp32, and asks for
 *    another job; a pair pinned to fp32 it then plays.
 * The log lines checked are the operator's evidence (docs/operations.md, "Arena precision").
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "nn/nn_bf16.h"
#include "wire/messages.h"
#include "wire/wire.h"

#include "fake_coord.h"

#define NET_A 0x1111aaaa2222bbbbull
#define NET_B 0x3333cccc4444ddddull

typedef struct {
  fake_coord_t c;
  unsigned char *net[2]; /* file images of NET_A, NET_B */
  size_t net_len[2];
  Xqz__ArenaPrecision next_prec; /* of the next ArenaJob served */
  uint32_t hello_features;       /* of the last Hello */
  int hellos, job_requests, arena_results;
} fake_t;

/* Serves one message (or waits up to 50 ms): every JobRequest gets a short arena pair. */
static void serve(fake_t *f) {
  uint8_t rid[256];
  size_t rid_len;
  Xqz__Envelope *in = fake_coord_recv(&f->c, rid, &rid_len);
  if (!in) return;
  switch (in->body_case) {
    case XQZ__ENVELOPE__BODY_HELLO:
      f->hellos++;
      f->hello_features = in->hello->features;
      fake_coord_welcome(&f->c, rid, rid_len, in, NET_A, NULL, 200);
      break;
    case XQZ__ENVELOPE__BODY_JOB_REQUEST:
      f->job_requests++;
      fake_coord_arena(&f->c, rid, rid_len, in->request_id, NET_B, NET_A,
                       (uint32_t)f->job_requests, f->next_prec);
      break;
    case XQZ__ENVELOPE__BODY_NET_REQUEST: {
      const Xqz__NetRequest *r = in->net_request;
      int k = r->net_id == NET_A ? 0 : r->net_id == NET_B ? 1 : -1;
      assert_true(k >= 0);
      fake_coord_chunk(&f->c, rid, rid_len, in, f->net[k], f->net_len[k], SIZE_MAX);
      break;
    }
    case XQZ__ENVELOPE__BODY_ARENA_RESULT: f->arena_results++; break;
    default: break;
  }
  xq_wire_free(&in);
}

static void serve_cb(void *f) { serve(f); }

/* Lines of the worker's log holding every one of the strings (NULL-terminated). */
static int log_has(const char *logp, const char *a, const char *b) {
  return fake_log_count(logp, a, b);
}

/* Serves until the log has a line with a and b, or timeout_s passes; 1 when it has. */
static int serve_until_log(fake_t *f, const char *logp, const char *a, const char *b,
                           double timeout_s) {
  double t0 = fake_now_s();
  while (fake_now_s() - t0 < timeout_s) {
    if (log_has(logp, a, b)) return 1;
    serve(f);
  }
  return log_has(logp, a, b) > 0;
}

/* A fake on a free port, two nets, and a worker with --precision prec (and cpu_bf16_off:
 * XQZ_CPU_BF16=0) logging into dir/worker.log. */
static pid_t start(fake_t *f, const char *dir, const char *prec, int cpu_bf16_off, char *logp,
                   size_t logn) {
  fake_net(NET_A, 1, &f->net[0], &f->net_len[0]);
  fake_net(NET_B, 2, &f->net[1], &f->net_len[1]);
  fake_coord_open(&f->c, false);
  snprintf(logp, logn, "%s/worker.log", dir);
  const char *args[] = {"--timeout", "1500", "--progress", "1", "--precision", prec, NULL};
  return fake_worker_start(&f->c, dir, "precw", logp, cpu_bf16_off ? "XQZ_CPU_BF16=0" : NULL,
                           args);
}

static void stop(fake_t *f, pid_t pid, const char *dir) {
  fake_worker_stop(pid, serve_cb, f);
  fake_coord_close(&f->c);
  free(f->net[0]);
  free(f->net[1]);
  char cmd[700];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  assert_int_equal(system(cmd), 0);
}

/* A pair pinned to fp32 on a bf16 worker runs in fp32; self-play's precision is kept. */
static void test_fp32_pin_on_bf16_worker(void **state) {
  (void)state;
  bool bf16 = nn_bf16_cpu_supported();
  if (!bf16)
    print_message("this CPU lacks avx512_bf16: the worker runs fp32 throughout; only the"
                  " pinned pair's line is checked\n");
  char dir[] = "/tmp/xqz-test-arenaprec-XXXXXX", logp[600];
  assert_non_null(mkdtemp(dir));
  fake_t *f = calloc(1, sizeof *f);
  assert_non_null(f);
  f->next_prec = XQZ__ARENA_PRECISION__ARENA_PRECISION_FP32;
  pid_t pid = start(f, dir, "bf16", 0, logp, sizeof logp);
  assert_true(serve_until_log(f, logp, "arena games in fp32 (pinned by the coordinator)",
                              bf16 ? "self-play stays bf16" : NULL, 60));
  double t0 = fake_now_s();
  while (fake_now_s() - t0 < 60 && f->arena_results < 1) serve(f);
  assert_true(f->arena_results >= 1);
  assert_true(f->hello_features & XQ_FEATURE_ARENA_PRECISION);
  if (bf16) {
    assert_true(f->hello_features & XQ_FEATURE_BF16);
    /* The process's precision is untouched by the pin (the progress line's). */
    assert_true(serve_until_log(f, logp, "progress ", "precision=bf16", 30));
    /* Unpinned: the worker's own. */
    f->next_prec = XQZ__ARENA_PRECISION__ARENA_PRECISION_WORKER;
    assert_true(serve_until_log(f, logp, "arena games in bf16 (not pinned", NULL, 60));
  }
  assert_int_equal(log_has(logp, "arena games in", "pinned by the coordinator"), 1);
  stop(f, pid, dir);
  free(f);
}

/* A worker whose CPU lacks bf16 refuses a bf16-pinned pair and asks for another job. */
static void test_bf16_pin_on_worker_without_bf16(void **state) {
  (void)state;
  char dir[] = "/tmp/xqz-test-arenaprec-XXXXXX", logp[600];
  assert_non_null(mkdtemp(dir));
  fake_t *f = calloc(1, sizeof *f);
  assert_non_null(f);
  f->next_prec = XQZ__ARENA_PRECISION__ARENA_PRECISION_BF16;
  pid_t pid = start(f, dir, "bf16", 1, logp, sizeof logp);
  assert_true(serve_until_log(f, logp, "precision=fp32", "lacks avx512_bf16", 30));
  assert_true(serve_until_log(f, logp, "giving the job up", "pinned to bf16", 30));
  /* It asks again (after its retry delay) and is refused again: never a result. */
  double t0 = fake_now_s();
  while (fake_now_s() - t0 < 10 && f->job_requests < 2) serve(f);
  assert_true(f->job_requests >= 2);
  assert_int_equal(f->arena_results, 0);
  assert_true(f->hellos >= 1);
  assert_true(f->hello_features & XQ_FEATURE_ARENA_PRECISION);
  assert_false(f->hello_features & XQ_FEATURE_BF16);
  assert_int_equal(log_has(logp, "arena games in", NULL), 0);
  /* An fp32 pair it plays. */
  f->next_prec = XQZ__ARENA_PRECISION__ARENA_PRECISION_FP32;
  t0 = fake_now_s();
  while (fake_now_s() - t0 < 60 && f->arena_results < 1) serve(f);
  assert_true(f->arena_results >= 1);
  assert_true(log_has(logp, "arena games in fp32 (pinned by the coordinator)", NULL) > 0);
  stop(f, pid, dir);
  free(f);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_fp32_pin_on_bf16_worker),
    cmocka_unit_test(test_bf16_pin_on_worker_without_bf16),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
