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
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

#include "nn/nn_bf16.h"
#include "nn/nn_file.h"
#include "rules/board.h"
#include "support/atomic_file.h"
#include "support/crc32.h"
#include "wire/wire.h"

#define NET_A 0x1111aaaa2222bbbbull
#define NET_B 0x3333cccc4444ddddull

typedef struct {
  void *ctx, *router;
  char router_ep[64];
  unsigned char *net[2]; /* file images of NET_A, NET_B */
  size_t net_len[2];
  Xqz__ArenaPrecision next_prec; /* of the next ArenaJob served */
  uint32_t hello_features;       /* of the last Hello */
  int hellos, job_requests, arena_results;
} fake_t;

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void make_net(const char *dir, uint64_t id, uint64_t seed, unsigned char **buf,
                     size_t *len) {
  char path[512];
  snprintf(path, sizeof path, "%s/net-%llx.xqzn", dir, (unsigned long long)id);
  nn_arch_t arch;
  assert_int_equal(nn_arch_preset("tiny", &arch), 0);
  nn_model_t *m;
  xq_errbuf_t eb = {{0}};
  assert_int_equal(nn_model_new(&m, &arch, &eb), 0);
  nn_model_init(m, seed);
  nn_file_meta_t meta;
  memset(&meta, 0, sizeof meta);
  meta.net_id = id;
  assert_int_equal(nn_file_save(path, m, &meta, &eb), 0);
  nn_model_free(&m);
  assert_int_equal(xq_read_file(path, NN_FILE_MAX_SIZE, buf, len, &eb), 0);
}

static void reply(fake_t *f, const uint8_t *rid, size_t rid_len, Xqz__Envelope *env,
                  uint64_t req) {
  env->request_id = req;
  assert_int_equal(xq_wire_send(f->router, rid, rid_len, env, 0), 0);
}

/* Serves one message (or waits up to 50 ms): every JobRequest gets a short arena pair. */
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
      f->hellos++;
      f->hello_features = in->hello->features;
      Xqz__Welcome w = XQZ__WELCOME__INIT;
      w.worker_id = in->hello->worker_id;
      w.best_net_id = NET_A;
      w.heartbeat_ms = 200;
      env.body_case = XQZ__ENVELOPE__BODY_WELCOME;
      env.welcome = &w;
      reply(f, rid, rid_len, &env, in->request_id);
      break;
    }
    case XQZ__ENVELOPE__BODY_JOB_REQUEST: {
      f->job_requests++;
      Xqz__Job j = XQZ__JOB__INIT;
      Xqz__ArenaJob aj = XQZ__ARENA_JOB__INIT;
      aj.match_id = 42;
      aj.net_a = NET_B;
      aj.net_b = NET_A;
      aj.opening_fen = (char *)XQ_START_FEN;
      aj.pair_index = (uint32_t)f->job_requests;
      aj.sims = 4;
      aj.max_plies = 12;
      aj.precision = f->next_prec;
      j.kind_case = XQZ__JOB__KIND_ARENA;
      j.arena = &aj;
      env.body_case = XQZ__ENVELOPE__BODY_JOB;
      env.job = &j;
      reply(f, rid, rid_len, &env, in->request_id);
      break;
    }
    case XQZ__ENVELOPE__BODY_NET_REQUEST: {
      const Xqz__NetRequest *r = in->net_request;
      int k = r->net_id == NET_A ? 0 : r->net_id == NET_B ? 1 : -1;
      assert_true(k >= 0);
      assert_true(r->offset < f->net_len[k]);
      size_t n = f->net_len[k] - r->offset;
      if (n > r->max_bytes) n = r->max_bytes;
      Xqz__NetChunk c = XQZ__NET_CHUNK__INIT;
      c.net_id = r->net_id;
      c.offset = r->offset;
      c.total = f->net_len[k];
      c.file_crc32 = xq_crc32(0, f->net[k], f->net_len[k]);
      c.data.data = f->net[k] + r->offset;
      c.data.len = n;
      env.body_case = XQZ__ENVELOPE__BODY_NET_CHUNK;
      env.net_chunk = &c;
      reply(f, rid, rid_len, &env, in->request_id);
      break;
    }
    case XQZ__ENVELOPE__BODY_ARENA_RESULT: f->arena_results++; break;
    default: break;
  }
  xq_wire_free(&in);
}

/* Lines of the worker's log holding every one of the strings (NULL-terminated). */
static int log_has(const char *logp, const char *a, const char *b) {
  FILE *f = fopen(logp, "r");
  if (!f) return 0;
  char line[2048];
  int n = 0;
  while (fgets(line, sizeof line, f)) n += strstr(line, a) && (!b || strstr(line, b));
  fclose(f);
  return n;
}

/* Serves until the log has a line with a and b, or timeout_s passes; 1 when it has. */
static int serve_until_log(fake_t *f, const char *logp, const char *a, const char *b,
                           double timeout_s) {
  double t0 = now_s();
  while (now_s() - t0 < timeout_s) {
    if (log_has(logp, a, b)) return 1;
    serve(f);
  }
  return log_has(logp, a, b) > 0;
}

/* A fake on a free port, two nets, and a worker with --precision prec (and cpu_bf16_off:
 * XQZ_CPU_BF16=0) logging into dir/worker.log. */
static pid_t start(fake_t *f, const char *dir, const char *prec, int cpu_bf16_off, char *logp,
                   size_t logn) {
  make_net(dir, NET_A, 1, &f->net[0], &f->net_len[0]);
  make_net(dir, NET_B, 2, &f->net[1], &f->net_len[1]);
  f->ctx = zmq_ctx_new();
  f->router = zmq_socket(f->ctx, ZMQ_ROUTER);
  assert_non_null(f->router);
  assert_int_equal(xq_wire_socket_setup(f->router), 0);
  int linger = 0;
  zmq_setsockopt(f->router, ZMQ_LINGER, &linger, sizeof linger);
  assert_int_equal(zmq_bind(f->router, "tcp://127.0.0.1:*"), 0);
  size_t n = sizeof f->router_ep;
  zmq_getsockopt(f->router, ZMQ_LAST_ENDPOINT, f->router_ep, &n);
  char cache[600], spool[600], bin[600];
  snprintf(logp, logn, "%s/worker.log", dir);
  snprintf(cache, sizeof cache, "%s/cache", dir);
  snprintf(spool, sizeof spool, "%s/spool", dir);
  snprintf(bin, sizeof bin, "%s/worker/xqz-worker", XQZ_BINARY_DIR);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL); /* a failed test leaves no daemon behind */
    if (!freopen(logp, "w", stderr)) _exit(127);
    if (cpu_bf16_off) setenv("XQZ_CPU_BF16", "0", 1);
    execl(bin, bin, "--coordinator", f->router_ep, "--pub", "tcp://127.0.0.1:1", "--threads",
          "1", "--cache", cache, "--spool", spool, "--id", "precw", "--timeout", "1500",
          "--progress", "1", "--precision", prec, (char *)NULL);
    _exit(127);
  }
  return pid;
}

static void stop(fake_t *f, pid_t pid, const char *dir) {
  kill(pid, SIGTERM);
  int status = 0;
  double t0 = now_s();
  while (waitpid(pid, &status, WNOHANG) == 0) {
    if (now_s() - t0 > 20) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      break;
    }
    serve(f);
  }
  zmq_close(f->router);
  zmq_ctx_term(f->ctx);
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
  double t0 = now_s();
  while (now_s() - t0 < 60 && f->arena_results < 1) serve(f);
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
  double t0 = now_s();
  while (now_s() - t0 < 10 && f->job_requests < 2) serve(f);
  assert_true(f->job_requests >= 2);
  assert_int_equal(f->arena_results, 0);
  assert_true(f->hellos >= 1);
  assert_true(f->hello_features & XQ_FEATURE_ARENA_PRECISION);
  assert_false(f->hello_features & XQ_FEATURE_BF16);
  assert_int_equal(log_has(logp, "arena games in", NULL), 0);
  /* An fp32 pair it plays. */
  f->next_prec = XQZ__ARENA_PRECISION__ARENA_PRECISION_FP32;
  t0 = now_s();
  while (now_s() - t0 < 60 && f->arena_results < 1) serve(f);
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
