/*
 * test_worker_hostile.c: the xqz-worker binary against a fake coordinator in this process
 * that sends what a broken or hostile coordinator may send (issue 47, items 8, 14-16):
 * - jobs out of range (dirichlet_alpha +Inf, sims 2^31-1 in a self-play and in an arena
 *   job) are refused with a log line, and the worker asks again;
 * - arena pairs whose net cannot be fetched (an Error for it, a damaged file, a NetChunk
 *   announcing 2^31-1 bytes) are given up, and the worker goes on to self-play;
 * - SIGTERM in the middle of a search of 100000 simulations per move ends the worker
 *   (status 0) within seconds.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rules/board.h"
#include "support/crc32.h"
#include "wire/messages.h"
#include "wire/wire.h"

#include "fake_coord.h"

#define NET_A 0x1111aaaa2222bbbbull    /* a good net */
#define NET_GONE 0x2222000000000001ull /* answered with an Error */
#define NET_BAD 0x2222000000000002ull  /* served with a CRC that does not match */
#define NET_HUGE 0x2222000000000003ull /* announced as 2^31-1 bytes */
#define CHUNK 65536
#define MAX_JOBS 8

typedef enum { J_SELFPLAY, J_ARENA } job_kind_t;

typedef struct {
  job_kind_t kind;
  uint32_t sims, max_plies, games;
  float alpha;
  uint64_t net_a;
} job_t;

typedef struct {
  fake_coord_t c;
  char dir[64];
  unsigned char *net;
  size_t net_len;
  job_t jobs[MAX_JOBS]; /* answered in order; the last one repeats */
  int njobs, job_requests, games_rx;
  pid_t pid;
} fake_t;

static Xqz__SelfplaySettings settings(const job_t *j) {
  Xqz__SelfplaySettings s = XQZ__SELFPLAY_SETTINGS__INIT;
  s.sims = j ? j->sims : 8;
  s.fast_sims = 4;
  s.full_frac = 0.5f;
  s.max_plies = j && j->max_plies ? j->max_plies : 40;
  s.noise_frac = 0.25f;
  s.dirichlet_alpha = j ? j->alpha : 0.3f;
  s.resign_threshold = -1;
  return s;
}

static void on_job_request(fake_t *f, const uint8_t *rid, size_t rid_len, uint64_t rq) {
  const job_t *j = &f->jobs[f->job_requests < f->njobs ? f->job_requests : f->njobs - 1];
  f->job_requests++;
  Xqz__SelfplaySettings s = settings(j);
  if (j->kind != J_ARENA) {
    fake_coord_selfplay(&f->c, rid, rid_len, rq, NET_A, &s, j->games);
    return;
  }
  Xqz__Envelope env;
  Xqz__Job job;
  Xqz__ArenaJob aj = XQZ__ARENA_JOB__INIT;
  aj.match_id = 7;
  aj.net_a = j->net_a;
  aj.net_b = NET_A;
  aj.opening_fen = (char *)XQ_START_FEN;
  aj.sims = j->sims;
  aj.max_plies = 20;
  xq_msg_job_arena(&env, &job, &aj);
  fake_coord_reply(&f->c, rid, rid_len, &env, rq);
}

static void on_net_request(fake_t *f, const Xqz__NetRequest *r, const uint8_t *rid,
                           size_t rid_len, uint64_t rq) {
  Xqz__Envelope env;
  if (r->net_id == NET_GONE || (r->net_id != NET_A && r->net_id != NET_BAD && r->net_id != NET_HUGE)) {
    Xqz__Error e;
    xq_msg_error(&env, &e, XQ_ERROR_NOT_FOUND, "net not found");
    fake_coord_reply(&f->c, rid, rid_len, &env, rq);
    return;
  }
  /* NET_BAD and NET_HUGE are NET_A's bytes under another id: the header names NET_A. */
  size_t off = r->offset < f->net_len ? (size_t)r->offset : f->net_len;
  size_t n = f->net_len - off;
  if (n > CHUNK) n = CHUNK;
  Xqz__NetChunk c;
  xq_msg_net_chunk(&env, &c, r->net_id, off, r->net_id == NET_HUGE ? 0x7fffffffull : f->net_len,
                   xq_crc32(0, f->net, f->net_len) ^ (r->net_id == NET_BAD ? 1u : 0u),
                   f->net + off, n);
  fake_coord_reply(&f->c, rid, rid_len, &env, rq);
}

/* Serves one message (or waits up to 50 ms). */
static void serve(fake_t *f) {
  uint8_t rid[256];
  size_t rid_len;
  Xqz__Envelope *in = fake_coord_recv(&f->c, rid, &rid_len);
  if (!in) return;
  switch (in->body_case) {
    case XQZ__ENVELOPE__BODY_HELLO: {
      Xqz__SelfplaySettings s = settings(NULL);
      fake_coord_welcome(&f->c, rid, rid_len, in, NET_A, &s, 500);
      break;
    }
    case XQZ__ENVELOPE__BODY_JOB_REQUEST: on_job_request(f, rid, rid_len, in->request_id); break;
    case XQZ__ENVELOPE__BODY_NET_REQUEST:
      on_net_request(f, in->net_request, rid, rid_len, in->request_id);
      break;
    case XQZ__ENVELOPE__BODY_GAME:
      f->games_rx++;
      fake_coord_ack(&f->c, rid, rid_len, in);
      break;
    default: break;
  }
  xq_wire_free(&in);
}

static void serve_cb(void *f) { serve(f); }

/* Lines of the worker's log containing what. */
static int log_count(fake_t *f, const char *what) {
  char path[128];
  snprintf(path, sizeof path, "%s/worker.log", f->dir);
  return fake_log_count(path, what, NULL);
}

static fake_t *fake_start(void) {
  fake_t *f = calloc(1, sizeof *f);
  assert_non_null(f);
  snprintf(f->dir, sizeof f->dir, "/tmp/xqz-hostile-XXXXXX");
  assert_non_null(mkdtemp(f->dir));
  fake_net(NET_A, 1, &f->net, &f->net_len);
  fake_coord_open(&f->c, true);
  return f;
}

static void worker_start(fake_t *f) {
  char logp[128];
  snprintf(logp, sizeof logp, "%s/worker.log", f->dir);
  const char *args[] = {"--games-per-thread", "2", "--timeout", "3000", "--progress", "60", NULL};
  f->pid = fake_worker_start(&f->c, f->dir, "hostile", logp, NULL, args);
}

/* SIGTERM, then the seconds until the worker exited (status 0 checked). */
static double worker_stop(fake_t *f) {
  assert_int_equal(kill(f->pid, SIGTERM), 0);
  double t0 = fake_now_s();
  int status = 0;
  if (!fake_worker_wait(f->pid, 40, serve_cb, f, &status)) {
    kill(f->pid, SIGKILL);
    waitpid(f->pid, &status, 0);
    fail_msg("the worker ignored SIGTERM for 40 s");
  }
  assert_true(WIFEXITED(status));
  assert_int_equal(WEXITSTATUS(status), 0);
  return fake_now_s() - t0;
}

static void fake_free(fake_t *f) {
  fake_coord_close(&f->c);
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf %s", f->dir);
  if (system(cmd) != 0) fprintf(stderr, "cleanup failed\n");
  free(f->net);
  free(f);
}

static const job_t GOOD = {J_SELFPLAY, 8, 40, 2, 0.3f, 0};

/* Items 15 and 16: jobs out of range are refused before anything is played. */
static void test_bad_jobs_refused(void **state) {
  (void)state;
  fake_t *f = fake_start();
  f->jobs[0] = (job_t){J_SELFPLAY, 8, 40, 2, INFINITY, 0};
  f->jobs[1] = (job_t){J_SELFPLAY, 0x7fffffffu, 40, 2, 0.3f, 0};
  f->jobs[2] = (job_t){J_ARENA, 0x7fffffffu, 0, 0, 0, NET_A};
  f->jobs[3] = (job_t){J_SELFPLAY, 8, 40, 2, NAN, 0};
  f->jobs[4] = GOOD;
  f->njobs = 5;
  worker_start(f);
  double t0 = fake_now_s();
  while (fake_now_s() - t0 < 60 && f->games_rx == 0) {
    serve(f);
    if (f->games_rx) assert_true(f->job_requests >= 5); /* only the good job plays */
  }
  assert_true(f->games_rx > 0);
  assert_int_equal(log_count(f, "refused a job from the coordinator"), 4);
  assert_int_equal(log_count(f, "dirichlet_alpha = inf is out of range"), 1);
  assert_int_equal(log_count(f, "sims = 2147483647 is out of range"), 2);
  worker_stop(f);
  fake_free(f);
}

/* Item 8 (and 14 inside a worker): arena pairs whose net cannot be fetched are given up. */
static void test_unfetchable_arena_pairs_given_up(void **state) {
  (void)state;
  fake_t *f = fake_start();
  f->jobs[0] = (job_t){J_ARENA, 4, 0, 0, 0, NET_GONE};
  f->jobs[1] = (job_t){J_ARENA, 4, 0, 0, 0, NET_BAD};
  f->jobs[2] = (job_t){J_ARENA, 4, 0, 0, 0, NET_HUGE};
  f->jobs[3] = GOOD;
  f->njobs = 4;
  worker_start(f);
  double t0 = fake_now_s();
  while (fake_now_s() - t0 < 45 && f->games_rx == 0) serve(f);
  if (!f->games_rx) { /* show why */
    char cmd[200];
    snprintf(cmd, sizeof cmd, "tail -5 %s/worker.log >&2", f->dir);
    if (system(cmd) != 0) fprintf(stderr, "no worker log\n");
  }
  assert_true(f->games_rx > 0); /* the old worker retried the first pair's net for ever */
  assert_int_equal(log_count(f, "giving the job up"), 3);
  assert_int_equal(log_count(f, "net size 2147483647 out of range"), 1);
  assert_int_equal(log_count(f, "keeps playing with the last net"), 0);
  worker_stop(f);
  fake_free(f);
}

/* Item 15: SIGTERM during searches of 100000 simulations per move ends the worker soon. */
static void test_sigterm_in_long_search(void **state) {
  (void)state;
  fake_t *f = fake_start();
  f->jobs[0] = (job_t){J_SELFPLAY, 100000, 1000, 1000, 0.3f, 0};
  f->njobs = 1;
  worker_start(f);
  double t0 = fake_now_s();
  while (fake_now_s() - t0 < 20 && f->job_requests == 0) serve(f);
  assert_int_equal(f->job_requests, 1);
  while (fake_now_s() - t0 < 4) serve(f); /* fetched, and deep in the first moves */
  double took = worker_stop(f);
  fprintf(stderr, "worker left %.2f s after SIGTERM\n", took);
  assert_true(took < 8.0);
  assert_int_equal(f->games_rx, 0);
  fake_free(f);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_bad_jobs_refused),
      cmocka_unit_test(test_unfetchable_arena_pairs_given_up),
      cmocka_unit_test(test_sigterm_in_long_search),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
