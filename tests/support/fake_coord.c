/* fake_coord.c: the worker tests' fake coordinator and its helpers (fake_coord.h). */
#define _GNU_SOURCE /* putenv */
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

#include "fake_coord.h"
#include "nn/encode.h"
#include "nn/nn_file.h"
#include "nn/nn_model.h"
#include "records/targets.h"
#include "rules/board.h"
#include "rules/movegen.h"
#include "rules/rules.h"
#include "support/crc32.h"
#include "wire/messages.h"
#include "wire/sample.h"
#include "wire/wire.h"

double fake_now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

void fake_sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

/* A socket of type on f's context with the wire's options and no linger, bound to ep
 * (retried for up to 5 s: a port just closed may take a moment to free); its endpoint in
 * out. */
static void *bind_socket(fake_coord_t *f, int type, const char *ep, char *out, size_t n) {
  void *s = zmq_socket(f->ctx, type);
  assert_non_null(s);
  assert_int_equal(xq_wire_socket_setup(s), 0);
  int linger = 0;
  zmq_setsockopt(s, ZMQ_LINGER, &linger, sizeof linger);
  int rc = -1;
  for (int i = 0; i < 50 && rc; i++) {
    rc = zmq_bind(s, ep);
    if (rc) fake_sleep_ms(100);
  }
  assert_int_equal(rc, 0);
  zmq_getsockopt(s, ZMQ_LAST_ENDPOINT, out, &n);
  return s;
}

void fake_coord_open(fake_coord_t *f, bool with_pub) {
  memset(f, 0, sizeof *f);
  f->ctx = zmq_ctx_new();
  assert_non_null(f->ctx);
  f->router = bind_socket(f, ZMQ_ROUTER, "tcp://127.0.0.1:*", f->router_ep, sizeof f->router_ep);
  if (with_pub)
    f->pub = bind_socket(f, ZMQ_PUB, "tcp://127.0.0.1:*", f->pub_ep, sizeof f->pub_ep);
}

void fake_coord_rebind(fake_coord_t *f) {
  char ep[sizeof f->router_ep];
  snprintf(ep, sizeof ep, "%s", f->router_ep);
  zmq_close(f->router);
  fake_sleep_ms(500);
  f->router = bind_socket(f, ZMQ_ROUTER, ep, f->router_ep, sizeof f->router_ep);
}

void fake_coord_close(fake_coord_t *f) {
  zmq_close(f->router);
  if (f->pub) zmq_close(f->pub);
  zmq_ctx_term(f->ctx);
  memset(f, 0, sizeof *f);
}

Xqz__Envelope *fake_coord_recv(fake_coord_t *f, uint8_t *rid, size_t *rid_len) {
  zmq_pollitem_t it = {f->router, 0, ZMQ_POLLIN, 0};
  if (zmq_poll(&it, 1, 50) <= 0) return NULL;
  Xqz__Envelope *in = NULL;
  xq_errbuf_t eb = {{0}};
  *rid_len = 0;
  if (xq_wire_recv(f->router, rid, rid_len, &in, ZMQ_DONTWAIT, &eb)) return NULL;
  return in;
}

void fake_coord_reply(fake_coord_t *f, const uint8_t *rid, size_t rid_len, Xqz__Envelope *env,
                      uint64_t rq) {
  env->request_id = rq;
  assert_int_equal(xq_wire_send(f->router, rid, rid_len, env, 0), 0);
}

void fake_coord_welcome(fake_coord_t *f, const uint8_t *rid, size_t rid_len,
                        const Xqz__Envelope *in, uint64_t best, Xqz__SelfplaySettings *s,
                        uint32_t heartbeat_ms) {
  Xqz__Envelope env;
  Xqz__Welcome w;
  xq_msg_welcome(&env, &w, in->hello->worker_id, best, s, heartbeat_ms, 0);
  fake_coord_reply(f, rid, rid_len, &env, in->request_id);
}

void fake_coord_selfplay(fake_coord_t *f, const uint8_t *rid, size_t rid_len, uint64_t rq,
                         uint64_t net, Xqz__SelfplaySettings *s, uint32_t games) {
  Xqz__Envelope env;
  Xqz__Job job;
  Xqz__SelfplayJob sp;
  xq_msg_job_selfplay(&env, &job, &sp, net, s, games);
  fake_coord_reply(f, rid, rid_len, &env, rq);
}

void fake_coord_arena(fake_coord_t *f, const uint8_t *rid, size_t rid_len, uint64_t rq,
                      uint64_t net_a, uint64_t net_b, uint32_t pair, Xqz__ArenaPrecision prec) {
  Xqz__Envelope env;
  Xqz__Job j;
  Xqz__ArenaJob aj = XQZ__ARENA_JOB__INIT;
  aj.match_id = 42;
  aj.net_a = net_a;
  aj.net_b = net_b;
  aj.opening_fen = (char *)XQ_START_FEN;
  aj.pair_index = pair;
  aj.sims = 4;
  aj.max_plies = 12;
  aj.precision = prec;
  xq_msg_job_arena(&env, &j, &aj);
  fake_coord_reply(f, rid, rid_len, &env, rq);
}

void fake_coord_ack(fake_coord_t *f, const uint8_t *rid, size_t rid_len,
                    const Xqz__Envelope *in) {
  Xqz__Envelope env;
  Xqz__Ack a;
  xq_msg_ack(&env, &a, in->game->worker_id, in->game->seq, true, NULL);
  fake_coord_reply(f, rid, rid_len, &env, in->request_id);
}

void fake_coord_chunk(fake_coord_t *f, const uint8_t *rid, size_t rid_len,
                      const Xqz__Envelope *in, const unsigned char *net, size_t len,
                      size_t chunk) {
  const Xqz__NetRequest *r = in->net_request;
  assert_true(r->offset < len);
  size_t n = len - (size_t)r->offset;
  if (n > chunk) n = chunk;
  if (n > r->max_bytes) n = r->max_bytes;
  Xqz__Envelope env;
  Xqz__NetChunk ch;
  xq_msg_net_chunk(&env, &ch, r->net_id, r->offset, len, xq_crc32(0, net, len),
                   net + r->offset, n);
  fake_coord_reply(f, rid, rid_len, &env, in->request_id);
}

void fake_net(uint64_t id, uint64_t seed, unsigned char **buf, size_t *len) {
  nn_arch_t arch;
  assert_int_equal(nn_arch_preset("tiny", &arch), 0);
  nn_model_t *m = NULL;
  xq_errbuf_t eb = {{0}};
  assert_int_equal(nn_model_new(&m, &arch, &eb), 0);
  nn_model_init(m, seed);
  nn_file_meta_t meta;
  memset(&meta, 0, sizeof meta);
  meta.net_id = id;
  assert_int_equal(nn_file_encode(buf, len, m, &meta, &eb), 0);
  nn_model_free(&m);
}

pid_t fake_worker_start(const fake_coord_t *f, const char *dir, const char *id,
                        const char *logp, const char *env, const char *const *args) {
  char cache[600], spool[600], bin[600];
  snprintf(cache, sizeof cache, "%s/cache", dir);
  snprintf(spool, sizeof spool, "%s/spool", dir);
  snprintf(bin, sizeof bin, "%s/worker/xqz-worker", XQZ_BINARY_DIR);
  const char *argv[48] = {bin, "--coordinator", f->router_ep, "--pub",
                          f->pub ? f->pub_ep : "tcp://127.0.0.1:1", "--threads", "1",
                          "--cache", cache, "--spool", spool, "--id", id};
  int n = 13;
  for (int i = 0; args && args[i]; i++) {
    assert_true(n < 47);
    argv[n++] = args[i];
  }
  argv[n] = NULL;
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL); /* a failed test leaves no daemon behind */
    if (logp && !freopen(logp, "w", stderr)) _exit(127);
    if (env) putenv((char *)env);
    execv(bin, (char **)argv);
    _exit(127);
  }
  return pid;
}

bool fake_worker_wait(pid_t pid, double timeout_s, void (*serve)(void *), void *arg,
                      int *status) {
  double t0 = fake_now_s();
  for (;;) {
    pid_t w = waitpid(pid, status, WNOHANG);
    if (w == pid) return true;
    assert_int_equal(w, 0);
    if (fake_now_s() - t0 >= timeout_s) return false;
    if (serve) serve(arg);
    else fake_sleep_ms(50);
  }
}

void fake_worker_stop(pid_t pid, void (*serve)(void *), void *arg) {
  kill(pid, SIGTERM);
  int status = 0;
  if (!fake_worker_wait(pid, 20, serve, arg, &status)) {
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
  }
}

int fake_log_count(const char *path, const char *a, const char *b) {
  FILE *fp = fopen(path, "r");
  if (!fp) return 0;
  char line[2048];
  int n = 0;
  while (fgets(line, sizeof line, fp)) n += strstr(line, a) && (!b || strstr(line, b));
  fclose(fp);
  return n;
}

static uint32_t xorshift(uint64_t *rs) {
  *rs ^= *rs << 13;
  *rs ^= *rs >> 7;
  *rs ^= *rs << 17;
  return (uint32_t)(*rs >> 11);
}

xq_sample_t *fake_samples(int n, uint64_t seed) {
  enum { GAME_MAX = 1100 };
  uint64_t rs = seed ? seed : 1;
  xq_sample_t *out = malloc((size_t)n * sizeof *out);
  xq_sample_t *tmp = malloc(GAME_MAX * sizeof *tmp);
  xq_pos_t *pos = malloc(sizeof *pos);
  assert_non_null(out);
  assert_non_null(tmp);
  assert_non_null(pos);
  xq_game_record_t r;
  xq_record_init(&r);
  int have = 0;
  while (have < n) {
    xq_pos_startpos(pos);
    xq_record_reset(&r, XQ_START_FEN, 1);
    for (;;) {
      xq_outcome_t o = xq_adjudicate(pos, 150);
      if (o.result != XQ_RESULT_NONE) {
        r.result = o.result;
        r.reason = o.reason;
        break;
      }
      xq_move_t mv[XQ_MAX_MOVES];
      int idx[XQ_MAX_MOVES];
      int k = nn_encode_legal(pos, NULL, idx, mv);
      int pick = (int)(xorshift(&rs) % (uint32_t)k);
      xq_visit_t vis[3] = {{(uint16_t)idx[pick], 10}, {(uint16_t)idx[(pick + 1) % k], 3}};
      assert_int_equal(xq_record_add(&r, mv[pick], true, 0.0f, vis, k > 1 ? 2 : 1), 0);
      xq_pos_make(pos, mv[pick]);
    }
    xq_errbuf_t eb = {{0}};
    int got = xq_samples_from_record(&r, tmp, GAME_MAX, &eb);
    if (got < 0) fail_msg("record rejected: %s", eb.msg);
    for (int k = 0; k < got && have < n; k++) out[have++] = tmp[k];
  }
  xq_record_free(&r);
  free(pos);
  free(tmp);
  return out;
}

void fake_batch(Xqz__Envelope *env, Xqz__Batch *b, const xq_sample_t *s, int n, int count,
                bool bad) {
  enum { MAX = 65 };
  static Xqz__Sample msgs[MAX];
  static Xqz__Sample *ptrs[MAX];
  static uint32_t idx[MAX][XQ_MAX_MOVES];
  static float prob[MAX][XQ_MAX_MOVES];
  static uint64_t rs = 77;
  assert_true(count >= 0 && count < MAX);
  int k = 0;
  if (bad) { /* first, so the trainer must drop it and still fill its batch */
    xq_sample_to_proto(&msgs[k], &s[0], idx[k], prob[k]);
    msgs[k].z = 5.0f;
    ptrs[k] = &msgs[k];
    k++;
  }
  for (int i = 0; i < count; i++) {
    xq_sample_to_proto(&msgs[k], &s[xorshift(&rs) % (uint32_t)n], idx[k], prob[k]);
    ptrs[k] = &msgs[k];
    k++;
  }
  xq_msg_batch(env, b, ptrs, (size_t)k);
}
