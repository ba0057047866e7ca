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
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

#include "nn/nn_file.h"
#include "records/game_record.h"
#include "support/atomic_file.h"
#include "support/crc32.h"
#include "wire/wire.h"

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
  void *ctx, *router, *pub;
  char router_ep[64], pub_ep[64], dir[64];
  unsigned char *net;
  size_t net_len;
  job_t jobs[MAX_JOBS]; /* answered in order; the last one repeats */
  int njobs, job_requests, games_rx;
  pid_t pid;
} fake_t;

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void reply(fake_t *f, const uint8_t *rid, size_t rid_len, Xqz__Envelope *env, uint64_t rq) {
  env->request_id = rq;
  assert_int_equal(xq_wire_send(f->router, rid, rid_len, env, 0), 0);
}

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
  Xqz__Envelope env;
  xq_wire_init(&env);
  Xqz__Job job = XQZ__JOB__INIT;
  Xqz__SelfplayJob sj = XQZ__SELFPLAY_JOB__INIT;
  Xqz__ArenaJob aj = XQZ__ARENA_JOB__INIT;
  Xqz__SelfplaySettings s = settings(j);
  if (j->kind == J_ARENA) {
    aj.match_id = 7;
    aj.net_a = j->net_a;
    aj.net_b = NET_A;
    aj.opening_fen = (char *)XQ_START_FEN;
    aj.sims = j->sims;
    aj.max_plies = 20;
    job.kind_case = XQZ__JOB__KIND_ARENA;
    job.arena = &aj;
  } else {
    sj.net_id = NET_A;
    sj.settings = &s;
    sj.games = j->games;
    job.kind_case = XQZ__JOB__KIND_SELFPLAY;
    job.selfplay = &sj;
  }
  env.body_case = XQZ__ENVELOPE__BODY_JOB;
  env.job = &job;
  reply(f, rid, rid_len, &env, rq);
}

static void on_net_request(fake_t *f, const Xqz__NetRequest *r, const uint8_t *rid,
                           size_t rid_len, uint64_t rq) {
  Xqz__Envelope env;
  xq_wire_init(&env);
  if (r->net_id == NET_GONE || (r->net_id != NET_A && r->net_id != NET_BAD && r->net_id != NET_HUGE)) {
    Xqz__Error e = XQZ__ERROR__INIT;
    e.code = XQ_ERROR_NOT_FOUND;
    e.message = "net not found";
    env.body_case = XQZ__ENVELOPE__BODY_ERROR;
    env.error = &e;
    reply(f, rid, rid_len, &env, rq);
    return;
  }
  /* NET_BAD and NET_HUGE are NET_A's bytes under another id: the header names NET_A. */
  size_t off = r->offset < f->net_len ? (size_t)r->offset : f->net_len;
  size_t n = f->net_len - off;
  if (n > CHUNK) n = CHUNK;
  Xqz__NetChunk c = XQZ__NET_CHUNK__INIT;
  c.net_id = r->net_id;
  c.offset = off;
  c.total = r->net_id == NET_HUGE ? 0x7fffffffull : f->net_len;
  c.file_crc32 = xq_crc32(0, f->net, f->net_len) ^ (r->net_id == NET_BAD ? 1u : 0u);
  c.data.data = f->net + off;
  c.data.len = n;
  env.body_case = XQZ__ENVELOPE__BODY_NET_CHUNK;
  env.net_chunk = &c;
  reply(f, rid, rid_len, &env, rq);
}

/* Serves one message (or waits up to 50 ms). */
static void serve(fake_t *f) {
  zmq_pollitem_t it = {f->router, 0, ZMQ_POLLIN, 0};
  if (zmq_poll(&it, 1, 50) <= 0) return;
  uint8_t rid[256];
  size_t rid_len = 0;
  Xqz__Envelope *in = NULL;
  xq_errbuf_t eb = {{0}};
  if (xq_wire_recv(f->router, rid, &rid_len, &in, ZMQ_DONTWAIT, &eb)) return;
  Xqz__Envelope env;
  xq_wire_init(&env);
  switch (in->body_case) {
    case XQZ__ENVELOPE__BODY_HELLO: {
      Xqz__SelfplaySettings s = settings(NULL);
      Xqz__Welcome w = XQZ__WELCOME__INIT;
      w.worker_id = in->hello->worker_id;
      w.best_net_id = NET_A;
      w.settings = &s;
      w.heartbeat_ms = 500;
      env.body_case = XQZ__ENVELOPE__BODY_WELCOME;
      env.welcome = &w;
      reply(f, rid, rid_len, &env, in->request_id);
      break;
    }
    case XQZ__ENVELOPE__BODY_JOB_REQUEST: on_job_request(f, rid, rid_len, in->request_id); break;
    case XQZ__ENVELOPE__BODY_NET_REQUEST:
      on_net_request(f, in->net_request, rid, rid_len, in->request_id);
      break;
    case XQZ__ENVELOPE__BODY_GAME: {
      f->games_rx++;
      Xqz__Ack a = XQZ__ACK__INIT;
      a.worker_id = in->game->worker_id;
      a.seq = in->game->seq;
      a.accepted = 1;
      a.reason = "";
      env.body_case = XQZ__ENVELOPE__BODY_ACK;
      env.ack = &a;
      reply(f, rid, rid_len, &env, in->request_id);
      break;
    }
    default: break;
  }
  xq_wire_free(&in);
}

/* Lines of the worker's log containing what. */
static int log_count(fake_t *f, const char *what) {
  char path[128], line[2048];
  snprintf(path, sizeof path, "%s/worker.log", f->dir);
  FILE *fp = fopen(path, "r");
  if (!fp) return 0;
  int n = 0;
  while (fgets(line, sizeof line, fp))
    if (strstr(line, what)) n++;
  fclose(fp);
  return n;
}

static fake_t *fake_start(void) {
  fake_t *f = calloc(1, sizeof *f);
  assert_non_null(f);
  snprintf(f->dir, sizeof f->dir, "/tmp/xqz-hostile-XXXXXX");
  assert_non_null(mkdtemp(f->dir));
  nn_arch_t arch;
  assert_int_equal(nn_arch_preset("tiny", &arch), 0);
  nn_model_t *m;
  assert_int_equal(nn_model_new(&m, &arch, NULL), 0);
  nn_model_init(m, 1);
  nn_file_meta_t meta;
  memset(&meta, 0, sizeof meta);
  meta.net_id = NET_A;
  assert_int_equal(nn_file_encode(&f->net, &f->net_len, m, &meta, NULL), 0);
  nn_model_free(&m);
  f->ctx = zmq_ctx_new();
  f->router = zmq_socket(f->ctx, ZMQ_ROUTER);
  f->pub = zmq_socket(f->ctx, ZMQ_PUB);
  int linger = 0;
  zmq_setsockopt(f->router, ZMQ_LINGER, &linger, sizeof linger);
  zmq_setsockopt(f->pub, ZMQ_LINGER, &linger, sizeof linger);
  assert_int_equal(xq_wire_socket_setup(f->router), 0);
  assert_int_equal(xq_wire_socket_setup(f->pub), 0);
  assert_int_equal(zmq_bind(f->router, "tcp://127.0.0.1:*"), 0);
  assert_int_equal(zmq_bind(f->pub, "tcp://127.0.0.1:*"), 0);
  size_t n = sizeof f->router_ep;
  zmq_getsockopt(f->router, ZMQ_LAST_ENDPOINT, f->router_ep, &n);
  n = sizeof f->pub_ep;
  zmq_getsockopt(f->pub, ZMQ_LAST_ENDPOINT, f->pub_ep, &n);
  return f;
}

static void worker_start(fake_t *f) {
  char cache[128], spool[128], bin[600], logp[128];
  snprintf(cache, sizeof cache, "%s/cache", f->dir);
  snprintf(spool, sizeof spool, "%s/spool", f->dir);
  snprintf(logp, sizeof logp, "%s/worker.log", f->dir);
  snprintf(bin, sizeof bin, "%s/worker/xqz-worker", XQZ_BINARY_DIR);
  f->pid = fork();
  assert_true(f->pid >= 0);
  if (f->pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL); /* a failed test leaves no daemon behind */
    if (!freopen(logp, "w", stderr)) _exit(127);
    execl(bin, bin, "--coordinator", f->router_ep, "--pub", f->pub_ep, "--threads", "1",
          "--games-per-thread", "2", "--cache", cache, "--spool", spool, "--id", "hostile",
          "--timeout", "3000", "--progress", "60", (char *)NULL);
    _exit(127);
  }
}

/* SIGTERM, then the seconds until the worker exited (status 0 checked). */
static double worker_stop(fake_t *f) {
  assert_int_equal(kill(f->pid, SIGTERM), 0);
  double t0 = now_s();
  int status = 0;
  pid_t w;
  while ((w = waitpid(f->pid, &status, WNOHANG)) == 0 && now_s() - t0 < 40) serve(f);
  if (w == 0) {
    kill(f->pid, SIGKILL);
    waitpid(f->pid, &status, 0);
    fail_msg("the worker ignored SIGTERM for 40 s");
  }
  assert_true(WIFEXITED(status));
  assert_int_equal(WEXITSTATUS(status), 0);
  return now_s() - t0;
}

static void fake_free(fake_t *f) {
  zmq_close(f->router);
  zmq_close(f->pub);
  zmq_ctx_term(f->ctx);
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
  double t0 = now_s();
  while (now_s() - t0 < 60 && f->games_rx == 0) {
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
  double t0 = now_s();
  while (now_s() - t0 < 45 && f->games_rx == 0) serve(f);
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
  double t0 = now_s();
  while (now_s() - t0 < 20 && f->job_requests == 0) serve(f);
  assert_int_equal(f->job_requests, 1);
  while (now_s() - t0 < 4) serve(f); /* fetched, and deep in the first moves */
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
