/*
 * test_worker_arena_outbox.c: an arena result survives its coordinator (worker/arena_outbox.h),
 * the xqz-worker binary against a fake coordinator in this process that serves only short
 * arena pairs (pair index = the job's number).
 *  - The first pair's result gets no answer (the coordinator dies with it: the fake rebinds
 *    its port, a restart); after the worker's new Hello and the Welcome, it comes again.
 *  - The second pair's result is answered with Error HELLO_FIRST, as a restarted coordinator
 *    answers a result that reached it ahead of the worker's Hello; the worker says Hello
 *    and, after the Welcome, sends it again.
 *  - A result the fake acknowledged is never sent again, whatever Welcomes follow.
 *  - A pair given out but not started (its net still being fetched) when the coordinator
 *    restarts is kept and played: the Welcome does not bring a new job that replaces it.
 *  - Each Hello after a restart lists the pairs the worker holds (XQ_FEATURE_HOLDING): the
 *    unanswered result's pair, the pair waiting for its nets.
 * Before the outbox, the worker sent a result once: the first was lost, the second dropped.
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

#include "wire/messages.h"
#include "wire/wire.h"

#include "fake_coord.h"

#define NET_A 0x1111aaaa2222bbbbull
#define NET_B 0x3333cccc4444ddddull
#define PAIRS 64

typedef struct {
  fake_coord_t c;
  unsigned char *net[2]; /* file images of NET_A, NET_B */
  size_t net_len[2];
  int hellos, job_requests;
  int results[PAIRS]; /* ArenaResults received, by pair index */
  bool hold_nets;     /* NetRequests go unanswered */
  bool lose_first;    /* pair 1's first result goes unanswered, pair 2's gets HELLO_FIRST */
  uint32_t features;  /* of the last Hello */
  int nholding;       /* its holding list: pair indexes of match 42 */
  uint32_t holding[16];
} fake_t;

static void answer_result(fake_t *f, const uint8_t *rid, size_t rid_len, const Xqz__Envelope *in) {
  uint32_t pair = in->arena_result->pair_index;
  assert_true(pair < PAIRS);
  assert_int_equal(in->arena_result->match_id, 42);
  int n = ++f->results[pair];
  Xqz__Envelope env;
  if (f->lose_first && pair == 1 && n == 1) return; /* lost with the coordinator that dies */
  if (f->lose_first && pair == 2 && n == 1) {
    Xqz__Error e;
    xq_msg_error(&env, &e, XQ_ERROR_HELLO_FIRST, "say Hello, then send it again");
    fake_coord_reply(&f->c, rid, rid_len, &env, in->request_id);
    return;
  }
  Xqz__Ack a;
  xq_msg_ack(&env, &a, "", pair, true, "");
  fake_coord_reply(&f->c, rid, rid_len, &env, in->request_id);
}

/* Serves one message (or waits up to 50 ms): every JobRequest gets the next short pair. */
static void serve(fake_t *f) {
  uint8_t rid[256];
  size_t rid_len;
  Xqz__Envelope *in = fake_coord_recv(&f->c, rid, &rid_len);
  if (!in) return;
  switch (in->body_case) {
    case XQZ__ENVELOPE__BODY_HELLO:
      f->hellos++;
      f->features = in->hello->features;
      f->nholding = 0;
      for (size_t i = 0; i < in->hello->n_holding && i < 16; i++) {
        assert_int_equal(in->hello->holding[i]->match_id, 42);
        f->holding[f->nholding++] = in->hello->holding[i]->pair_index;
      }
      fake_coord_welcome(&f->c, rid, rid_len, in, NET_A, NULL, 200);
      break;
    case XQZ__ENVELOPE__BODY_HEARTBEAT: {
      Xqz__Envelope env;
      Xqz__Heartbeat h;
      xq_msg_heartbeat(&env, &h, in->heartbeat->worker_id, NET_A, 0);
      fake_coord_reply(&f->c, rid, rid_len, &env, in->request_id);
      break;
    }
    case XQZ__ENVELOPE__BODY_JOB_REQUEST:
      f->job_requests++;
      fake_coord_arena(&f->c, rid, rid_len, in->request_id, NET_B, NET_A,
                       (uint32_t)(f->job_requests < PAIRS ? f->job_requests : PAIRS - 1),
                       XQZ__ARENA_PRECISION__ARENA_PRECISION_WORKER);
      break;
    case XQZ__ENVELOPE__BODY_NET_REQUEST: {
      if (f->hold_nets) break;
      const Xqz__NetRequest *r = in->net_request;
      int k = r->net_id == NET_A ? 0 : r->net_id == NET_B ? 1 : -1;
      assert_true(k >= 0);
      fake_coord_chunk(&f->c, rid, rid_len, in, f->net[k], f->net_len[k], SIZE_MAX);
      break;
    }
    case XQZ__ENVELOPE__BODY_ARENA_RESULT: answer_result(f, rid, rid_len, in); break;
    default: break;
  }
  xq_wire_free(&in);
}

static void serve_cb(void *f) { serve(f); }

/* Results received for pairs from first on. */
static int results_from(const fake_t *f, int first) {
  int n = 0;
  for (int p = first; p < PAIRS; p++) n += f->results[p];
  return n;
}

/* Serves until pair has been received at least n times, or timeout_s passes. */
static bool serve_until_results(fake_t *f, int pair, int n, double timeout_s) {
  double t0 = fake_now_s();
  while (fake_now_s() - t0 < timeout_s && f->results[pair] < n) serve(f);
  return f->results[pair] >= n;
}

/* A fake on a free port with two nets and a worker logging into dir/worker.log. */
static pid_t start(fake_t *f, char *dir, char *logp, size_t logn) {
  assert_non_null(mkdtemp(dir));
  fake_net(NET_A, 1, &f->net[0], &f->net_len[0]);
  fake_net(NET_B, 2, &f->net[1], &f->net_len[1]);
  fake_coord_open(&f->c, false);
  snprintf(logp, logn, "%s/worker.log", dir);
  const char *args[] = {"--timeout", "3000", NULL};
  return fake_worker_start(&f->c, dir, "outboxw", logp, NULL, args);
}

static void stop(fake_t *f, pid_t pid, const char *dir) {
  fake_worker_stop(pid, serve_cb, f);
  fake_coord_close(&f->c);
  free(f->net[0]);
  free(f->net[1]);
  free(f);
  char cmd[700];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  assert_int_equal(system(cmd), 0);
}

static void test_results_outlive_the_coordinator(void **state) {
  (void)state;
  char dir[] = "/tmp/xqz-test-outbox-XXXXXX", logp[600];
  fake_t *f = calloc(1, sizeof *f);
  assert_non_null(f);
  f->lose_first = true;
  pid_t pid = start(f, dir, logp, sizeof logp);

  /* Pair 1's result is lost with the coordinator; the restarted one gets it again. */
  assert_true(serve_until_results(f, 1, 1, 60));
  int hellos = f->hellos;
  fake_coord_rebind(&f->c);
  assert_true(serve_until_results(f, 1, 2, 60));
  assert_true(f->hellos > hellos);
  assert_true(f->features & XQ_FEATURE_HOLDING);
  bool listed = false; /* the unanswered result's pair, in the Hello after the restart */
  for (int i = 0; i < f->nholding; i++) listed |= f->holding[i] == 1;
  assert_true(listed);

  /* Pair 2's is refused with HELLO_FIRST: a Hello, then the result again. */
  hellos = f->hellos;
  assert_true(serve_until_results(f, 2, 2, 60));
  assert_true(f->hellos > hellos);
  assert_true(fake_log_count(logp, "asks for a Hello first", NULL) >= 1);

  /* Answered results are not sent again, though later pairs come: two more results. */
  double t0 = fake_now_s();
  while (fake_now_s() - t0 < 60 && results_from(f, 3) < 2) serve(f);
  assert_true(results_from(f, 3) >= 2);
  assert_int_equal(f->results[1], 2);
  assert_int_equal(f->results[2], 2);
  for (int p = 3; p < PAIRS - 1; p++) assert_true(f->results[p] <= 1);
  stop(f, pid, dir);
}

static void test_pair_waiting_for_nets_survives_a_restart(void **state) {
  (void)state;
  char dir[] = "/tmp/xqz-test-outbox-XXXXXX", logp[600];
  fake_t *f = calloc(1, sizeof *f);
  assert_non_null(f);
  f->hold_nets = true;
  pid_t pid = start(f, dir, logp, sizeof logp);
  /* Pair 1 is given; its nets do not come. */
  double t0 = fake_now_s();
  while (fake_now_s() - t0 < 30 && f->job_requests < 1) serve(f);
  assert_int_equal(f->job_requests, 1);
  t0 = fake_now_s();
  while (fake_now_s() - t0 < 1) serve(f);
  int hellos = f->hellos;
  fake_coord_rebind(&f->c);
  while (fake_now_s() - t0 < 30 && f->hellos == hellos) serve(f);
  assert_true(f->hellos > hellos);
  assert_int_equal(f->nholding, 1); /* the pair waiting for its nets */
  assert_int_equal(f->holding[0], 1);
  /* After the Welcome the nets come; the first result is pair 1's, with no job between. */
  f->hold_nets = false;
  t0 = fake_now_s();
  while (fake_now_s() - t0 < 60 && results_from(f, 0) < 1) serve(f);
  assert_int_equal(f->results[1], 1);
  assert_int_equal(results_from(f, 0), 1);
  assert_true(f->job_requests <= 2); /* the one after pair 1's result, at most */
  stop(f, pid, dir);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_results_outlive_the_coordinator),
    cmocka_unit_test(test_pair_waiting_for_nets_survives_a_restart),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
