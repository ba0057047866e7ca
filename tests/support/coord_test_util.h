/*
 * coord_test_util.h: helpers of the tests that drive a real xqz-coordinator over loopback
 * (test_coordinator_ingest, test_coordinator_hostile...): a temp campaign with free loopback
 * ports, starting the binary (g_extra...g_extra5: settings that differ per test), DEALER
 * clients, Hello, random game records (consistent or with one flaw), GameRecord and Status
 * round trips, arena jobs and results, CURVE keys (g_dir/keys) and CURVE clients, the
 * version refusal, raw sends, waits for a reply or for silence, counting lines of the log.
 * g_coordinator picks the binary. Include it once per test program, after cmocka.h.
 */
#ifndef XQZ_COORD_TEST_UTIL_H
#define XQZ_COORD_TEST_UTIL_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zmq.h>

#include "nn/nn_file.h"
#include "nn/nn_model.h"
#include "rules/fen.h"
#include "rules/movegen.h"
#include "rules/policy_index.h"
#include "rules/rules.h"
#include "records/game_record.h"
#include "support/crc32.h"
#include "support/rng.h"
#include "wire/curve.h"
#include "records/targets.h"
#include "wire/sample.h"
#include "wire/messages.h"
#include "wire/peer.h"
#include "wire/wire.h"

static char g_dir[256];
static pid_t g_pid = -1; /* the coordinator, killed by the teardown if a check fails */
static int g_router_port, g_pub_port;

static inline int free_port(void) {
  int s = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a;
  memset(&a, 0, sizeof a);
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  assert_int_equal(bind(s, (struct sockaddr *)&a, sizeof a), 0);
  socklen_t len = sizeof a;
  getsockname(s, (struct sockaddr *)&a, &len);
  close(s);
  return ntohs(a.sin_port);
}

static const char *g_extra = "--gating=sprt"; /* settings that differ per test */
static const char *g_extra2 = "--seed=1";
static const char *g_extra3 = "--seed=1";
static const char *g_extra4 = "--seed=1";
static const char *g_extra5 = "--seed=1";
/* The binary start_coordinator runs (a test may pick the fault-injection build). */
static const char *g_coordinator = XQZ_BINARY_DIR "/coordinator/xqz-coordinator";

static inline pid_t start_coordinator(void) {
  char router[64], pub[64], camp[300], logp[300];
  snprintf(router, sizeof router, "--router=tcp://127.0.0.1:%d", g_router_port);
  snprintf(pub, sizeof pub, "--pub=tcp://127.0.0.1:%d", g_pub_port);
  snprintf(camp, sizeof camp, "%s/camp", g_dir);
  snprintf(logp, sizeof logp, "%s/coordinator.log", g_dir);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL); /* a failed test leaves no daemon behind */
    if (!freopen(logp, "a", stderr) || !freopen("/dev/null", "w", stdout)) _exit(127);
    /* net_size tiny: the candidates these tests upload (tiny_net) are plain 2x16 nets,
     * whatever the default architecture of net 1 is. */
    execl(g_coordinator, "xqz-coordinator", "--campaign", camp,
          router, pub, "--http=", "--net_size=tiny", "--fsync_ms=50", "--min_positions=10", "--window=1000",
          "--reuse=2", "--status_ms=60000", g_extra, g_extra2, g_extra3, g_extra4, g_extra5,
          (char *)NULL);
    _exit(127);
  }
  g_pid = pid;
  return pid;
}

/* SIGTERM to the coordinator, which must exit cleanly (status 0). */
static inline void coord_stop(pid_t pid) {
  kill(pid, SIGTERM);
  int st;
  waitpid(pid, &st, 0);
  g_pid = -1;
  assert_true(WIFEXITED(st));
  assert_int_equal(WEXITSTATUS(st), 0);
}

static inline int teardown(void **state) {
  (void)state;
  if (g_pid > 0) {
    kill(g_pid, SIGKILL);
    waitpid(g_pid, NULL, 0);
    g_pid = -1;
  }
  return 0;
}

/* Sends env and waits for one reply (5 s). */
static inline Xqz__Envelope *rpc(void *s, Xqz__Envelope *env) {
  assert_int_equal(xq_wire_send(s, NULL, 0, env, 0), 0);
  Xqz__Envelope *r = NULL;
  xq_errbuf_t eb;
  int rc = xq_wire_recv(s, NULL, NULL, &r, 0, &eb);
  if (rc != 0) fail_msg("no reply: %d", rc);
  return r;
}

/* One reply within ms, or NULL when none came. */
static inline Xqz__Envelope *recv_within(void *s, int ms) {
  zmq_pollitem_t it = {s, 0, ZMQ_POLLIN, 0};
  if (zmq_poll(&it, 1, ms) <= 0) return NULL;
  Xqz__Envelope *r = NULL;
  xq_errbuf_t eb;
  if (xq_wire_recv(s, NULL, NULL, &r, ZMQ_DONTWAIT, &eb) != 0) fail_msg("bad reply: %s", eb.msg);
  return r;
}

static inline void send_env(void *s, const Xqz__Envelope *env) {
  assert_int_equal(xq_wire_send(s, NULL, 0, env, 0), 0);
}

static inline void expect_error(void *s, unsigned code) {
  Xqz__Envelope *r = recv_within(s, 5000);
  if (!r) fail_msg("no Error reply (code %u expected)", code);
  assert_int_equal(r->body_case, XQZ__ENVELOPE__BODY_ERROR);
  assert_int_equal(r->error->code, code);
  assert_true(strlen(r->error->message) > 0);
  xq_wire_free(&r);
}

static inline void expect_nothing(void *s, int ms) {
  Xqz__Envelope *r = recv_within(s, ms);
  if (r) fail_msg("unexpected reply, body %d", (int)r->body_case);
}

static inline void send_status_request(void *s) {
  Xqz__Envelope env;
  Xqz__StatusRequest q;
  xq_msg_status_request(&env, &q);
  send_env(s, &env);
}

static inline void send_game_msg(void *s, const char *wid, uint64_t seq, const void *rec, size_t len) {
  Xqz__Envelope env;
  Xqz__GameRecord g;
  xq_msg_game(&env, &g, wid, seq, rec, len);
  env.request_id = seq;
  send_env(s, &env);
}

static inline void send_net_request(void *s, uint64_t id, uint64_t offset) {
  Xqz__Envelope env;
  Xqz__NetRequest nr;
  xq_msg_net_request(&env, &nr, id, offset, 0);
  send_env(s, &env);
}

/* Lines of the coordinator log containing `what`. */
static inline int log_count(const char *what) {
  char path[400], line[2048];
  snprintf(path, sizeof path, "%s/coordinator.log", g_dir);
  FILE *f = fopen(path, "r");
  assert_non_null(f);
  int n = 0;
  while (fgets(line, sizeof line, f))
    if (strstr(line, what)) n++;
  fclose(f);
  return n;
}

/* A DEALER to the coordinator under test, opened as the daemons open theirs (wire/peer.h),
 * with CURVE when c is not NULL; no linger, and a reply is waited for at most 8 s. */
static inline void *peer_dealer(void *ctx, const xq_curve_t *c) {
  char addr[64];
  snprintf(addr, sizeof addr, "tcp://127.0.0.1:%d", g_router_port);
  const xq_peer_opts_t o = {.set_linger = true, .linger = 0};
  void *s = NULL;
  xq_errbuf_t eb = {{0}};
  if (xq_peer_open(&s, ctx, addr, c, &o, &eb) < 0) fail_msg("%s", eb.msg);
  int t = 8000;
  assert_int_equal(zmq_setsockopt(s, ZMQ_RCVTIMEO, &t, sizeof t), 0);
  return s;
}

static inline void *connect_dealer(void *ctx) { return peer_dealer(ctx, NULL); }

static inline uint64_t hello_as(void *s, const char *worker_id) {
  Xqz__Envelope env;
  Xqz__Hello h;
  xq_msg_hello(&env, &h, XQZ__ROLE__ROLE_WORKER, worker_id, "localhost", 1, 0);
  h.precision = (char *)"bf16"; /* its self-play arithmetic, for the views */
  env.request_id = 1;
  Xqz__Envelope *r = rpc(s, &env);
  assert_int_equal(r->body_case, XQZ__ENVELOPE__BODY_WELCOME);
  assert_int_equal(r->request_id, 1);
  uint64_t id = r->welcome->best_net_id;
  assert_true(id != 0);
  assert_non_null(r->welcome->settings);
  xq_wire_free(&r);
  return id;
}

/* A Hello as worker_id with these feature bits (Hello.features) and the n pairs it holds
 * (Hello.holding, may be NULL), answered by a Welcome. */
static inline void hello_holding(void *s, const char *worker_id, uint32_t features,
                                 Xqz__ArenaPairRef **holding, size_t n) {
  Xqz__Envelope env;
  Xqz__Hello h;
  xq_msg_hello(&env, &h, XQZ__ROLE__ROLE_WORKER, worker_id, "localhost", 1, 0);
  h.features = features;
  h.n_holding = n;
  h.holding = holding;
  env.request_id = 1;
  Xqz__Envelope *r = rpc(s, &env);
  assert_int_equal(r->body_case, XQZ__ENVELOPE__BODY_WELCOME);
  xq_wire_free(&r);
}

/* A Hello as worker_id with these feature bits, holding nothing. */
static inline void hello_features(void *s, const char *worker_id, uint32_t features) {
  hello_holding(s, worker_id, features, NULL, 0);
}

/* Asks for jobs (at most 4) until one is an arena pair of an open match; returns that Job
 * envelope (the caller frees it), or NULL when none came. */
static inline Xqz__Envelope *arena_job(void *s) {
  for (int i = 0; i < 4; i++) {
    Xqz__Envelope env;
    Xqz__JobRequest jr;
    xq_msg_job_request(&env, &jr, NULL);
    env.request_id = 50 + (uint64_t)i;
    Xqz__Envelope *r = rpc(s, &env);
    assert_int_equal(r->body_case, XQZ__ENVELOPE__BODY_JOB);
    if (r->job->kind_case == XQZ__JOB__KIND_ARENA) return r;
    xq_wire_free(&r);
  }
  return NULL;
}

/* Sends an ArenaResult of match/pair (A's results as Red and as Black), returns the Ack. */
static inline Xqz__Envelope *arena_result(void *s, const char *worker_id, uint64_t match,
                                          uint32_t pair, int a_red, int a_black) {
  Xqz__Envelope env;
  Xqz__ArenaResult ar;
  xq_msg_arena_result(&env, &ar, worker_id, match, pair, a_red, a_black);
  env.request_id = 60;
  Xqz__Envelope *r = rpc(s, &env);
  assert_int_equal(r->body_case, XQZ__ENVELOPE__BODY_ACK);
  return r;
}

/* Whether the coordinator accepted that arena result. */
static inline bool result_taken(void *s, const char *wid, uint64_t match, uint32_t pair,
                                int red, int black) {
  Xqz__Envelope *r = arena_result(s, wid, match, pair, red, black);
  bool ok = r->ack->accepted;
  xq_wire_free(&r);
  return ok;
}

/* Flaws random_game can put into a game (0: none, a consistent game). */
enum { GAME_OK = 0, GAME_BAD_RESULT = 1, GAME_ILLEGAL_MOVE = 2, GAME_PI_ILLEGAL = 3 };

/* A move of the side to move that is not legal in pos, with its policy index. */
static inline xq_move_t illegal_move(const xq_pos_t *pos, const xq_move_t *legal, int n,
                                     int *index) {
  for (int from = 0; from < 90; from++)
    for (int to = 0; to < 90; to++) {
      if (from == to) continue;
      xq_move_t m = xq_mv_make(from, to);
      int idx = xq_policy_index_for(m, pos->side);
      if (idx < 0 || idx >= XQ_POLICY_SIZE) continue;
      int found = 0;
      for (int k = 0; k < n; k++) found |= legal[k] == m;
      if (!found) {
        *index = idx;
        return m;
      }
    }
  *index = 0;
  fail_msg("no illegal move found");
  return 0;
}

/* A CandidateNet of net (len bytes) at step, as request 40; the coordinator's reply. */
static inline Xqz__Envelope *upload_candidate(void *s, const void *net, size_t len,
                                              uint64_t step) {
  Xqz__Envelope env;
  Xqz__CandidateNet cn;
  xq_msg_candidate(&env, &cn, net, len, step);
  env.request_id = 40;
  return rpc(s, &env);
}

static inline uint64_t hello(void *s) { return hello_as(s, "test-worker"); }

/* A random legal game of up to 40 plies ending on the length cap (or by the rules);
 * `flaw` (GAME_*) makes it inconsistent: a result the rules do not give, an illegal move
 * at ply 4, or visits on an illegal move at ply 4. */
static inline void random_game(unsigned char **buf, size_t *len, uint64_t seed, int flaw) {
  xq_game_record_t r;
  xq_record_init(&r);
  xq_record_reset(&r, XQ_START_FEN, 42);
  xq_pos_t *pos = malloc(sizeof *pos);
  assert_int_equal(xq_fen_parse(pos, XQ_START_FEN, NULL), 0);
  xq_rng_t rng;
  xq_rng_seed(&rng, seed);
  xq_outcome_t o = {0};
  for (int i = 0; i < 40; i++) {
    o = xq_adjudicate(pos, 0);
    if (o.result != XQ_RESULT_NONE) break;
    xq_move_t mv[XQ_MAX_MOVES];
    int n = xq_gen_legal(pos, mv);
    assert_true(n > 0);
    xq_move_t m = mv[xq_rng_below(&rng, (uint64_t)n)];
    xq_visit_t v[2] = {{(uint16_t)xq_policy_index_for(m, pos->side), 10},
                       {(uint16_t)xq_policy_index_for(mv[0], pos->side), 3}};
    int nv = mv[0] == m ? 1 : 2;
    if (i == 4 && flaw == GAME_ILLEGAL_MOVE) {
      int idx = 0; /* set by illegal_move, which fails the test when it finds none */
      m = illegal_move(pos, mv, n, &idx);
      v[0].index = (uint16_t)idx;
      assert_int_equal(xq_record_add(&r, m, true, 0.0f, v, 1), 0);
      o.result = XQ_RESULT_NONE;
      break;
    }
    if (i == 4 && flaw == GAME_PI_ILLEGAL) {
      int idx = 0;
      (void)illegal_move(pos, mv, n, &idx);
      v[1].index = (uint16_t)idx;
      nv = 2;
    }
    assert_int_equal(xq_record_add(&r, m, true, 0.0f, v, nv), 0);
    xq_pos_make(pos, m);
    o = xq_adjudicate(pos, 0);
  }
  if (o.result != XQ_RESULT_NONE) {
    r.result = o.result;
    r.reason = o.reason;
  } else {
    r.result = XQ_RESULT_DRAW;
    r.reason = XQ_REASON_LENGTH_CAP;
  }
  if (flaw == GAME_BAD_RESULT) { /* the rules do not give this */
    r.result = XQ_RESULT_RED_WIN;
    r.reason = XQ_REASON_CHECKMATE;
  }
  assert_int_equal(xq_record_encode(&r, buf, len), 0);
  xq_record_free(&r);
  free(pos);
}

static inline Xqz__Envelope *send_game_as(void *s, const char *worker_id, uint64_t seq,
                                          unsigned char *buf, size_t len) {
  Xqz__Envelope env;
  Xqz__GameRecord g;
  xq_msg_game(&env, &g, worker_id, seq, buf, len);
  env.request_id = 100 + seq;
  Xqz__Envelope *r = rpc(s, &env);
  assert_int_equal(r->body_case, XQZ__ENVELOPE__BODY_ACK);
  assert_int_equal(r->ack->seq, seq);
  return r;
}

static inline Xqz__Envelope *send_game(void *s, uint64_t seq, unsigned char *buf,
                                       size_t len) {
  return send_game_as(s, "test-worker", seq, buf, len);
}

static inline Xqz__Envelope *status(void *s) {
  Xqz__Envelope env;
  Xqz__StatusRequest q;
  xq_msg_status_request(&env, &q);
  Xqz__Envelope *r = rpc(s, &env);
  assert_int_equal(r->body_case, XQZ__ENVELOPE__BODY_STATUS);
  return r;
}

/* The coordinator's refusal of protocol version `v`: an Error in an envelope of version v
 * (so that peer can read it) echoing the request id, naming both versions. */
static inline void expect_version_refusal(void *s, uint32_t v, uint64_t request_id) {
  zmq_pollitem_t it = {s, 0, ZMQ_POLLIN, 0};
  assert_int_equal(zmq_poll(&it, 1, 5000), 1);
  uint8_t buf[4096];
  int n = zmq_recv(s, buf, sizeof buf, 0);
  assert_true(n > 0 && n < (int)sizeof buf);
  Xqz__Envelope *r = xqz__envelope__unpack(NULL, (size_t)n, buf);
  assert_non_null(r);
  assert_int_equal(r->version, v);
  assert_int_equal(r->request_id, request_id);
  assert_int_equal(r->body_case, XQZ__ENVELOPE__BODY_ERROR);
  assert_int_equal(r->error->code, XQ_ERROR_PROTOCOL_VERSION);
  char want[160];
  snprintf(want, sizeof want, "it speaks protocol %u, this coordinator speaks %u (upgrade one"
           " of them)", v, XQ_PROTOCOL_VERSION);
  assert_string_equal(r->error->message, want);
  xqz__envelope__free_unpacked(r, NULL);
}

/* A tiny random net as a .xqzn file (malloc'd), child of parent, trained to `step`. */
static inline void tiny_net(unsigned char **net, size_t *len, nn_file_meta_t *meta,
                            uint64_t parent, int64_t step) {
  nn_arch_t arch;
  assert_int_equal(nn_arch_preset("tiny", &arch), 0);
  nn_model_t *m = NULL;
  assert_int_equal(nn_model_new(&m, &arch, NULL), 0);
  nn_model_init(m, 99);
  memset(meta, 0, sizeof *meta);
  meta->arch = arch;
  meta->net_id = nn_file_new_id();
  meta->parent_id = parent;
  meta->step = step;
  assert_int_equal(nn_file_encode(net, len, m, meta, NULL), 0);
  nn_model_free(&m);
}

static inline void path_of(char *out, size_t n, const char *sub) { snprintf(out, n, "%s/%s", g_dir, sub); }

static inline void make_dir(const char *sub) {
  char p[400];
  path_of(p, sizeof p, sub);
  assert_int_equal(mkdir(p, 0755), 0);
}

/* Makes keys/NAME.{pub,secret}; copies NAME.pub into each of the given dirs (NULL ends). */
static inline void make_key(const char *name, const char *copy_to, const char *copy_to2) {
  char keys[400], pub[41];
  xq_errbuf_t eb;
  path_of(keys, sizeof keys, "keys");
  if (xq_curve_keygen(keys, name, false, pub, &eb) < 0) fail_msg("keygen: %s", eb.msg);
  const char *dst[2] = {copy_to, copy_to2};
  for (int i = 0; i < 2; i++) {
    if (!dst[i]) continue;
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "cp %s/%s.pub %s/%s/%s.pub", keys, name, g_dir, dst[i], name);
    assert_int_equal(system(cmd), 0);
  }
}

/* A DEALER using keys/NAME.secret against the coordinator's keys/coord.pub. */
static inline void *curve_dealer(void *ctx, const char *name) {
  char spub[400], sec[400];
  snprintf(spub, sizeof spub, "%s/keys/coord.pub", g_dir);
  snprintf(sec, sizeof sec, "%s/keys/%s.secret", g_dir, name);
  xq_curve_t c;
  xq_errbuf_t eb;
  if (xq_curve_client_load(&c, spub, sec, &eb) < 0) fail_msg("client keys: %s", eb.msg);
  return peer_dealer(ctx, &c);
}

/* Turns CURVE on for start_coordinator in g_extra..g_extra3: keys/coord.secret, allow/ as
 * curve_allow_dir, and the setting named (curve_trainer_dir, curve_admin_dir) as g_dir's
 * folder dir (the caller makes the keys and folders). */
static inline void curve_settings(const char *setting, const char *dir) {
  static char secret[400], allow[400], third[400];
  snprintf(secret, sizeof secret, "--curve_secret_key=%s/keys/coord.secret", g_dir);
  snprintf(allow, sizeof allow, "--curve_allow_dir=%s/allow", g_dir);
  snprintf(third, sizeof third, "--%s=%s/%s", setting, g_dir, dir);
  g_extra = secret;
  g_extra2 = allow;
  g_extra3 = third;
}

static inline void fresh_dir(void) {
  snprintf(g_dir, sizeof g_dir, "/tmp/xqz-coord-XXXXXX");
  assert_non_null(mkdtemp(g_dir));
  g_router_port = free_port();
  g_pub_port = free_port();
  while (g_pub_port == g_router_port) g_pub_port = free_port();
}

static inline void remove_dir(void) {
  char cmd[400];
  snprintf(cmd, sizeof cmd, "rm -rf %s", g_dir);
  if (system(cmd) != 0) fprintf(stderr, "cleanup failed\n");
}

#endif
