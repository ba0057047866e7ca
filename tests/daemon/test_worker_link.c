/*
 * test_worker_link.c: the xqz-worker binary against a fake coordinator in this process
 * (ROUTER + PUB on free loopback ports). The fake welcomes the worker, serves a tiny net
 * in small NetChunks and a cheap SelfplayJob, decodes every GameRecord with the game-record
 * reader and acknowledges it. Checked: games arrive valid and acked; games left unacked
 * are resent after the fake restarts (closed and bound again on the same port); a
 * NetAnnounce makes the worker fetch the new net and report it in its Heartbeat; an
 * ArenaJob is played and answered with an ArenaResult; SIGTERM
 * ends the worker with exit status 0 and its unacked games in the spool directory, and a
 * new worker process on that spool resends them. A coordinator of another protocol
 * version makes the worker stop with exit status 1 and a message naming both versions.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <dirent.h>
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

#define NET_A 0x1111aaaa2222bbbbull
#define NET_B 0x3333cccc4444ddddull
#define CHUNK 4096 /* small chunks so a fetch takes many requests */
#define MAX_SEQ 512

typedef struct {
  void *ctx, *router, *pub;
  char router_ep[64], pub_ep[64];
  unsigned char *net[2]; /* file images of NET_A, NET_B */
  size_t net_len[2];
  uint64_t job_net;
  int ack;                 /* acknowledge games */
  uint64_t seq[MAX_SEQ];   /* distinct seqs seen */
  int seen[MAX_SEQ];       /* times each was received */
  int acked[MAX_SEQ];
  int nseq, games_rx, hellos, chunks;
  uint64_t hb_net;
  int arena_next;          /* answer the next JobRequest with an ArenaJob */
  const char *arena_fen;   /* its opening (NULL: the start position) */
  uint32_t arena_plies;    /* its length cap (0: 40) */
  float arena_material;    /* its adjudicate_material */
  const char *arena_anchor; /* non-NULL: B is this built-in player (anchor_b), net_b 0 */
  uint32_t hello_features; /* of the last Hello */
  int job_requests;
  int arena_results;
  Xqz__ArenaResult arena;  /* the last one */
} fake_t;

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

static void make_net(const char *dir, uint64_t id, uint64_t seed, unsigned char **buf, size_t *len) {
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

static void bind_router(fake_t *f, const char *ep) {
  f->router = zmq_socket(f->ctx, ZMQ_ROUTER);
  assert_non_null(f->router);
  assert_int_equal(xq_wire_socket_setup(f->router), 0);
  int linger = 0;
  zmq_setsockopt(f->router, ZMQ_LINGER, &linger, sizeof linger);
  int rc = -1;
  for (int i = 0; i < 50 && rc; i++) { /* the port may take a moment to free */
    rc = zmq_bind(f->router, ep);
    if (rc) sleep_ms(100);
  }
  assert_int_equal(rc, 0);
  size_t n = sizeof f->router_ep;
  zmq_getsockopt(f->router, ZMQ_LAST_ENDPOINT, f->router_ep, &n);
}

static void reply(fake_t *f, const uint8_t *rid, size_t rid_len, Xqz__Envelope *env, uint64_t req) {
  env->request_id = req;
  assert_int_equal(xq_wire_send(f->router, rid, rid_len, env, 0), 0);
}

static Xqz__SelfplaySettings settings(void) {
  Xqz__SelfplaySettings s = XQZ__SELFPLAY_SETTINGS__INIT;
  s.sims = 8;
  s.fast_sims = 4;
  s.full_frac = 0.5f;
  s.max_plies = 60;
  s.noise_frac = 0.25f;
  s.dirichlet_alpha = 0.3f;
  s.temp_plies = 10;
  s.resign_threshold = -1;
  s.mate_probe = 1;
  s.search = 2; /* Gumbel with the interior rule: its records go through the same path */
  s.gumbel_actions = 8;
  return s;
}

static void on_game(fake_t *f, const Xqz__GameRecord *g, const uint8_t *rid, size_t rid_len,
                    uint64_t req) {
  xq_game_record_t r;
  xq_record_init(&r);
  xq_errbuf_t eb = {{0}};
  int rc = xq_record_decode(&r, g->record.data, g->record.len, &eb);
  if (rc) fprintf(stderr, "bad record: %s\n", eb.msg);
  assert_int_equal(rc, 0);
  assert_true(r.nplies > 0 && r.nplies <= 60);
  assert_true(r.net_id == NET_A || r.net_id == NET_B);
  assert_int_not_equal(r.result, XQ_RESULT_NONE);
  xq_record_free(&r);
  assert_string_equal(g->worker_id, "testw");
  int k = 0;
  while (k < f->nseq && f->seq[k] != g->seq) k++;
  if (k == f->nseq) {
    assert_true(f->nseq < MAX_SEQ);
    f->seq[f->nseq++] = g->seq;
  }
  f->seen[k]++;
  f->games_rx++;
  if (!f->ack) return;
  f->acked[k] = 1;
  Xqz__Envelope env;
  xq_wire_init(&env);
  Xqz__Ack a = XQZ__ACK__INIT;
  a.worker_id = g->worker_id;
  a.seq = g->seq;
  a.accepted = 1;
  a.reason = "";
  env.body_case = XQZ__ENVELOPE__BODY_ACK;
  env.ack = &a;
  reply(f, rid, rid_len, &env, req);
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
  Xqz__SelfplaySettings s = settings();
  switch (in->body_case) {
    case XQZ__ENVELOPE__BODY_HELLO: {
      assert_int_equal(in->hello->role, XQZ__ROLE__ROLE_WORKER);
      f->hellos++;
      f->hello_features = in->hello->features;
      Xqz__Welcome w = XQZ__WELCOME__INIT;
      w.worker_id = in->hello->worker_id;
      w.best_net_id = f->job_net;
      w.settings = &s;
      w.heartbeat_ms = 200;
      env.body_case = XQZ__ENVELOPE__BODY_WELCOME;
      env.welcome = &w;
      reply(f, rid, rid_len, &env, in->request_id);
      break;
    }
    case XQZ__ENVELOPE__BODY_JOB_REQUEST: {
      Xqz__Job j = XQZ__JOB__INIT;
      f->job_requests++;
      if (f->arena_next) {
        f->arena_next = 0;
        Xqz__ArenaJob aj = XQZ__ARENA_JOB__INIT;
        aj.match_id = 42;
        aj.net_a = NET_B;
        aj.net_b = NET_A;
        aj.opening_fen = (char *)(f->arena_fen ? f->arena_fen : XQ_START_FEN);
        aj.pair_index = 3;
        aj.sims = 4;
        aj.max_plies = f->arena_plies ? f->arena_plies : 40;
        aj.adjudicate_material = f->arena_material;
        if (f->arena_anchor) {
          aj.net_b = 0;
          aj.anchor_b = (char *)f->arena_anchor;
        }
        j.kind_case = XQZ__JOB__KIND_ARENA;
        j.arena = &aj;
        env.body_case = XQZ__ENVELOPE__BODY_JOB;
        env.job = &j;
        reply(f, rid, rid_len, &env, in->request_id);
        break;
      }
      Xqz__SelfplayJob sj = XQZ__SELFPLAY_JOB__INIT;
      sj.net_id = f->job_net;
      sj.settings = &s;
      sj.games = 2;
      j.kind_case = XQZ__JOB__KIND_SELFPLAY;
      j.selfplay = &sj;
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
      if (n > CHUNK) n = CHUNK;
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
      f->chunks++;
      break;
    }
    case XQZ__ENVELOPE__BODY_GAME: on_game(f, in->game, rid, rid_len, in->request_id); break;
    case XQZ__ENVELOPE__BODY_ARENA_RESULT:
      f->arena = *in->arena_result;
      f->arena.worker_id = NULL;
      f->arena_results++;
      break;
    case XQZ__ENVELOPE__BODY_HEARTBEAT: f->hb_net = in->heartbeat->net_id; break;
    default: break;
  }
  xq_wire_free(&in);
}

typedef int (*cond_fn)(fake_t *f, void *arg);

static int serve_until(fake_t *f, cond_fn c, void *arg, double timeout_s) {
  double t0 = now_s();
  while (now_s() - t0 < timeout_s) {
    if (c(f, arg)) return 1;
    serve(f);
  }
  return c(f, arg);
}

static int acked_at_least(fake_t *f, void *arg) {
  int n = 0;
  for (int i = 0; i < f->nseq; i++) n += f->acked[i];
  return n >= *(int *)arg;
}
static int distinct_at_least(fake_t *f, void *arg) { return f->nseq >= *(int *)arg; }
static int all_acked(fake_t *f, void *arg) {
  (void)arg;
  for (int i = 0; i < f->nseq; i++)
    if (!f->acked[i]) return 0;
  return 1;
}
static int arena_done(fake_t *f, void *arg) {
  (void)arg;
  return f->arena_results > 0;
}
static int hb_is(fake_t *f, void *arg) { return f->hb_net == *(uint64_t *)arg; }

static int count_spool(const char *dir) {
  DIR *d = opendir(dir);
  if (!d) return -1;
  int n = 0;
  struct dirent *de;
  while ((de = readdir(d))) {
    size_t l = strlen(de->d_name);
    n += l > 4 && !strcmp(de->d_name + l - 4, ".xqs");
  }
  closedir(d);
  return n;
}

static void test_worker_against_fake_coordinator(void **state) {
  (void)state;
  char dir[] = "/tmp/xqz-test-worker-XXXXXX";
  assert_non_null(mkdtemp(dir));
  fake_t *f = calloc(1, sizeof *f);
  assert_non_null(f);
  make_net(dir, NET_A, 1, &f->net[0], &f->net_len[0]);
  make_net(dir, NET_B, 2, &f->net[1], &f->net_len[1]);
  f->job_net = NET_A;
  f->ack = 1;
  f->ctx = zmq_ctx_new();
  bind_router(f, "tcp://127.0.0.1:*");
  f->pub = zmq_socket(f->ctx, ZMQ_PUB);
  assert_int_equal(xq_wire_socket_setup(f->pub), 0);
  assert_int_equal(zmq_bind(f->pub, "tcp://127.0.0.1:*"), 0);
  size_t n = sizeof f->pub_ep;
  zmq_getsockopt(f->pub, ZMQ_LAST_ENDPOINT, f->pub_ep, &n);

  char cache[600], spool[600], bin[600];
  snprintf(cache, sizeof cache, "%s/cache", dir);
  snprintf(spool, sizeof spool, "%s/spool", dir);
  snprintf(bin, sizeof bin, "%s/worker/xqz-worker", XQZ_BINARY_DIR);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL); /* a failed test leaves no daemon behind */
    execl(bin, bin, "--coordinator", f->router_ep, "--pub", f->pub_ep, "--threads", "1",
          "--games-per-thread", "2", "--cache", cache, "--spool", spool, "--id", "testw",
          "--timeout", "1500", "--progress", "2", (char *)NULL);
    _exit(127);
  }

  /* Games arrive, decode and are acknowledged; the net was fetched in many chunks. */
  int want = 2;
  assert_true(serve_until(f, acked_at_least, &want, 30));
  assert_true(f->hellos >= 1);
  assert_true(f->chunks >= (int)(f->net_len[0] / CHUNK));

  /* Unacked games are resent after the coordinator restarts on the same port. */
  f->ack = 0;
  int base = f->nseq;
  want = base + 2;
  assert_true(serve_until(f, distinct_at_least, &want, 30));
  char ep[64];
  snprintf(ep, sizeof ep, "%s", f->router_ep);
  zmq_close(f->router);
  sleep_ms(500);
  bind_router(f, ep);
  f->ack = 1;
  int hellos = f->hellos;
  assert_true(serve_until(f, all_acked, NULL, 30));
  assert_true(f->hellos > hellos);
  for (int i = base; i < base + 2; i++) assert_true(f->seen[i] >= 2);

  /* A NetAnnounce makes the worker fetch the new net and play with it. */
  f->job_net = NET_B;
  Xqz__Envelope env;
  xq_wire_init(&env);
  Xqz__NetAnnounce an = XQZ__NET_ANNOUNCE__INIT;
  an.net_id = NET_B;
  an.size = f->net_len[1];
  an.file_crc32 = xq_crc32(0, f->net[1], f->net_len[1]);
  env.body_case = XQZ__ENVELOPE__BODY_NET_ANNOUNCE;
  env.net_announce = &an;
  assert_int_equal(xq_wire_send(f->pub, NULL, 0, &env, 0), 0);
  uint64_t want_net = NET_B;
  assert_true(serve_until(f, hb_is, &want_net, 30));
  char path[700];
  snprintf(path, sizeof path, "%s/%016llx.xqzn", cache, (unsigned long long)NET_B);
  assert_int_equal(access(path, R_OK), 0);

  /* An arena job: both games of the pair with the two nets, the result from A's view. */
  f->arena_next = 1;
  assert_true(serve_until(f, arena_done, NULL, 30));
  assert_int_equal(f->arena.match_id, 42);
  assert_int_equal(f->arena.pair_index, 3);
  assert_true(f->arena.result_a_red >= -1 && f->arena.result_a_red <= 1);
  assert_true(f->arena.result_a_black >= -1 && f->arena.result_a_black <= 1);
  assert_true(f->arena.reason_a_red > XQ_REASON_NONE && f->arena.reason_a_red <= XQ_REASON_RESIGN);
  assert_true(f->arena.reason_a_black > XQ_REASON_NONE && f->arena.reason_a_black <= XQ_REASON_RESIGN);

  /* The job's adjudicate_material scores a capped game: Red is a rook up and the cap is
   * one ply, so Red wins both games, whichever net plays it. */
  f->arena_fen = "5k3/9/9/9/9/9/9/9/9/R2K5 w - - 0 1";
  f->arena_plies = 1;
  f->arena_material = 3.0f;
  f->arena_results = 0;
  f->arena_next = 1;
  assert_true(serve_until(f, arena_done, NULL, 30));
  assert_int_equal(f->arena.result_a_red, 1);
  assert_int_equal(f->arena.result_a_black, -1);
  assert_int_equal(f->arena.reason_a_red, XQ_REASON_LENGTH_CAP);
  assert_int_equal(f->arena.reason_a_black, XQ_REASON_LENGTH_CAP);

  /* An anchor job (its Hello says it plays them): B is the built-in player, net_b 0;
   * the same capped position scores the same, so the pair was played with the anchor. */
  assert_true(f->hello_features & XQ_FEATURE_ANCHOR_JOBS);
  f->arena_anchor = "alphabeta:1";
  f->arena_results = 0;
  f->arena_next = 1;
  assert_true(serve_until(f, arena_done, NULL, 30));
  assert_int_equal(f->arena.result_a_red, 1);
  assert_int_equal(f->arena.result_a_black, -1);
  /* An anchor that is not a built-in player (a command) is never run: no result, and the
   * worker asks for its next job. */
  f->arena_anchor = "uci:/bin/true";
  f->arena_results = 0;
  f->arena_next = 1;
  int asked = f->job_requests;
  int want_asks = asked + 2;
  double t_anchor = now_s();
  while (now_s() - t_anchor < 10 && f->job_requests < want_asks) serve(f);
  assert_true(f->job_requests >= want_asks);
  assert_int_equal(f->arena_results, 0);
  f->arena_anchor = NULL;

  /* SIGTERM: exit 0 with the unacknowledged games left in the spool. */
  f->ack = 0;
  want = f->nseq + 1;
  assert_true(serve_until(f, distinct_at_least, &want, 30));
  int unacked = 0;
  for (int i = 0; i < f->nseq; i++) unacked += !f->acked[i];
  assert_int_equal(kill(pid, SIGTERM), 0);
  int status = 0;
  double t0 = now_s();
  pid_t w = 0;
  while (now_s() - t0 < 40 && (w = waitpid(pid, &status, WNOHANG)) == 0) serve(f);
  assert_int_equal(w, pid);
  assert_true(WIFEXITED(status));
  assert_int_equal(WEXITSTATUS(status), 0);
  int spooled = count_spool(spool);
  fprintf(stderr, "unacked at SIGTERM: %d, in the spool after exit: %d\n", unacked, spooled);
  assert_true(spooled >= unacked);
  assert_true(spooled >= 1);

  /* A new worker process on the same spool resends the spooled games; acks empty it. */
  f->ack = 1;
  pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL); /* a failed test leaves no daemon behind */
    execl(bin, bin, "--coordinator", f->router_ep, "--pub", f->pub_ep, "--threads", "1",
          "--games-per-thread", "2", "--cache", cache, "--spool", spool, "--id", "testw",
          "--timeout", "1500", (char *)NULL);
    _exit(127);
  }
  assert_true(serve_until(f, all_acked, NULL, 30));
  assert_int_equal(kill(pid, SIGTERM), 0);
  t0 = now_s();
  while (now_s() - t0 < 40 && (w = waitpid(pid, &status, WNOHANG)) == 0) serve(f);
  assert_int_equal(w, pid);
  assert_true(WIFEXITED(status));
  assert_int_equal(WEXITSTATUS(status), 0);

  zmq_close(f->router);
  zmq_close(f->pub);
  zmq_ctx_term(f->ctx);
  free(f->net[0]);
  free(f->net[1]);
  free(f);
  char cmd[700];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  assert_int_equal(system(cmd), 0);
}

/* A coordinator of another protocol version: the worker stops at once with exit status 1
 * and a log line naming both versions, whether its Hello is answered by an envelope of
 * version 99 (`refusal` 0) or by the coordinator's version-refusal Error (1). */
static void worker_meets_other_version(int refusal) {
  char dir[] = "/tmp/xqz-test-worker-XXXXXX";
  assert_non_null(mkdtemp(dir));
  void *ctx = zmq_ctx_new();
  void *router = zmq_socket(ctx, ZMQ_ROUTER);
  int linger = 0;
  zmq_setsockopt(router, ZMQ_LINGER, &linger, sizeof linger);
  assert_int_equal(zmq_bind(router, "tcp://127.0.0.1:*"), 0);
  char ep[64], logp[600], cache[600], spool[600], bin[600];
  size_t n = sizeof ep;
  zmq_getsockopt(router, ZMQ_LAST_ENDPOINT, ep, &n);
  snprintf(logp, sizeof logp, "%s/worker.log", dir);
  snprintf(cache, sizeof cache, "%s/cache", dir);
  snprintf(spool, sizeof spool, "%s/spool", dir);
  snprintf(bin, sizeof bin, "%s/worker/xqz-worker", XQZ_BINARY_DIR);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL); /* a failed test leaves no daemon behind */
    if (!freopen(logp, "w", stderr)) _exit(127);
    execl(bin, bin, "--coordinator", ep, "--pub", "tcp://127.0.0.1:1", "--threads", "1",
          "--cache", cache, "--spool", spool, "--id", "oldw", "--timeout", "1500",
          (char *)NULL);
    _exit(127);
  }
  uint8_t rid[256];
  size_t rid_len;
  Xqz__Envelope *env = NULL;
  xq_errbuf_t eb;
  int t = 10000;
  zmq_setsockopt(router, ZMQ_RCVTIMEO, &t, sizeof t);
  assert_int_equal(xq_wire_recv(router, rid, &rid_len, &env, 0, &eb), 0);
  assert_int_equal(env->body_case, XQZ__ENVELOPE__BODY_HELLO);
  assert_string_equal(env->hello->software_version, XQ_SOFTWARE_NAME);
  Xqz__Envelope r;
  Xqz__Welcome w = XQZ__WELCOME__INIT;
  Xqz__Error e = XQZ__ERROR__INIT;
  xq_wire_init(&r);
  r.request_id = env->request_id;
  if (refusal) {
    e.code = XQ_ERROR_PROTOCOL_VERSION;
    e.message = "it speaks protocol 1, this coordinator speaks 99 (upgrade one of them)";
    r.body_case = XQZ__ENVELOPE__BODY_ERROR;
    r.error = &e;
  } else {
    r.version = 99;
    w.worker_id = "oldw";
    r.body_case = XQZ__ENVELOPE__BODY_WELCOME;
    r.welcome = &w;
  }
  xq_wire_free(&env);
  assert_int_equal(xq_wire_send(router, rid, rid_len, &r, 0), 0);
  int status = 0;
  double t0 = now_s();
  while (waitpid(pid, &status, WNOHANG) == 0) {
    if (now_s() - t0 > 15) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      fail_msg("the worker kept running against another protocol version");
    }
    sleep_ms(50);
  }
  assert_true(WIFEXITED(status));
  assert_int_equal(WEXITSTATUS(status), 1);
  FILE *f = fopen(logp, "r");
  assert_non_null(f);
  char line[1024];
  int found = 0;
  while (fgets(line, sizeof line, f))
    found |= strstr(line, "another protocol version") && strstr(line, XQ_VERSION_LINE) &&
             strstr(line, refusal ? "speaks 99" : "speaks protocol 99") != NULL;
  fclose(f);
  assert_true(found);
  zmq_close(router);
  zmq_ctx_term(ctx);
  char cmd[700];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  assert_int_equal(system(cmd), 0);
}

static void test_worker_other_version(void **state) {
  (void)state;
  worker_meets_other_version(0);
  worker_meets_other_version(1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_worker_against_fake_coordinator),
      cmocka_unit_test(test_worker_other_version),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
