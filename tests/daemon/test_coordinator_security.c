/*
 * test_coordinator_security.c: a real xqz-coordinator over loopback, three features.
 *  - CURVE: keys made by the test (xq_curve_keygen). A client whose key is in
 *    curve_allow_dir submits a game (accepted Ack) and fetches the best net (NetChunk);
 *    a client with an unknown key gets no answer to either, and its refusal is logged
 *    once although libzmq retries the handshake many times; a key added to the directory
 *    at run time is accepted without a restart. xqz-worker and xqz-trainer with keys
 *    connect (the worker's key shows in Status.worker_list, the trainer is served). Only
 *    a key in curve_admin_dir may ban, and a ban on a key refuses that key's games.
 *  - Bans (CURVE off: anyone may ban): `xqz ban` on a worker id takes its positions out of
 *    the window and refuses its games with the ban's reason, other requests get Error
 *    "banned"; the ban survives a restart (its stored games are skipped when the window
 *    is rebuilt); `xqz unban` accepts its games again.
 *  - Rate limit: a worker sending garbage is cut off at max_peer_errors faults, stays cut
 *    off on a new connection (same worker id), and is let back after cutoff_s.
 */
#define _DEFAULT_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zmq.h>

#include "coord_test_util.h"
#include "wire/curve.h"
#include "wire/messages.h"
#include "wire/wire.h"

enum { E_BANNED = XQ_ERROR_BANNED };

static uint64_t g_seed = 7000;

/* Sends without waiting: a client whose handshake is refused has no connection to queue
 * on between libzmq's retries, where a blocking send would wait for ever. */
static void send_nowait(void *s, const Xqz__Envelope *env) {
  (void)xq_wire_send(s, NULL, 0, env, ZMQ_DONTWAIT);
}

/* Fills env with a worker's Hello (request 1); h must outlive env's use. */
static void hello_envelope(Xqz__Envelope *env, Xqz__Hello *h, const char *worker_id) {
  xq_msg_hello(env, h, XQZ__ROLE__ROLE_WORKER, worker_id, "", 0, 0);
  env->request_id = 1;
}

/* What a refused client tries: Hello, a valid game, the best net, the status. */
static void refused_requests(void *s, const char *worker_id, uint64_t net) {
  Xqz__Envelope env;
  Xqz__Hello h;
  hello_envelope(&env, &h, worker_id);
  send_nowait(s, &env);
  unsigned char *buf;
  size_t len;
  random_game(&buf, &len, g_seed++, GAME_OK);
  Xqz__GameRecord g;
  xq_msg_game(&env, &g, worker_id, 1, buf, len);
  env.request_id = 2;
  send_nowait(s, &env);
  free(buf);
  Xqz__NetRequest nr;
  xq_msg_net_request(&env, &nr, net, 0, 0);
  env.request_id = 3;
  send_nowait(s, &env);
  Xqz__StatusRequest q;
  xq_msg_status_request(&env, &q);
  env.request_id = 4;
  send_nowait(s, &env);
}

static void send_hello(void *s, const char *worker_id) {
  Xqz__Envelope env;
  Xqz__Hello h;
  hello_envelope(&env, &h, worker_id);
  send_env(s, &env);
}

/* Sends a fresh consistent game and returns the Ack (5 s at most). */
static Xqz__Envelope *game_ack(void *s, const char *worker_id, uint64_t seq, uint64_t *positions) {
  unsigned char *buf;
  size_t len;
  random_game(&buf, &len, g_seed++, GAME_OK);
  if (positions) {
    xq_game_record_t rec;
    xq_record_init(&rec);
    xq_errbuf_t eb;
    assert_int_equal(xq_record_decode(&rec, buf, len, &eb), 0);
    xq_sample_t *smp = malloc((size_t)(rec.nplies + 1) * sizeof *smp);
    int n = xq_samples_from_record(&rec, smp, rec.nplies + 1, &eb);
    assert_true(n > 0);
    *positions += (uint64_t)n;
    free(smp);
    xq_record_free(&rec);
  }
  send_game_msg(s, worker_id, seq, buf, len);
  free(buf);
  Xqz__Envelope *r = recv_within(s, 5000);
  if (!r) fail_msg("no Ack for %s seq %llu", worker_id, (unsigned long long)seq);
  assert_int_equal(r->body_case, XQZ__ENVELOPE__BODY_ACK);
  assert_int_equal(r->ack->seq, seq);
  return r;
}

static void game_accepted(void *s, const char *worker_id, uint64_t seq, uint64_t *positions) {
  Xqz__Envelope *r = game_ack(s, worker_id, seq, positions);
  if (!r->ack->accepted) fail_msg("game refused: %s", r->ack->reason);
  xq_wire_free(&r);
}

static void game_banned(void *s, const char *worker_id, uint64_t seq) {
  Xqz__Envelope *r = game_ack(s, worker_id, seq, NULL);
  assert_false(r->ack->accepted);
  assert_string_equal(r->ack->reason, "banned by the operator");
  xq_wire_free(&r);
}

static uint64_t window_positions(void *s) {
  Xqz__Envelope *r = status(s);
  uint64_t n = r->status->window_positions;
  xq_wire_free(&r);
  return n;
}

static Xqz__Envelope *admin(void *s, Xqz__AdminRequest__Action action, const char *target) {
  Xqz__Envelope env;
  Xqz__AdminRequest a;
  xq_msg_admin_request(&env, &a, action, target);
  a.reason = "test";
  env.request_id = 77;
  Xqz__Envelope *r = rpc(s, &env);
  assert_int_equal(r->body_case, XQZ__ENVELOPE__BODY_ADMIN_RESULT);
  return r;
}

static void net_chunk(void *s, uint64_t net) {
  send_net_request(s, net, 0);
  Xqz__Envelope *r = recv_within(s, 5000);
  assert_non_null(r);
  assert_int_equal(r->body_case, XQZ__ENVELOPE__BODY_NET_CHUNK);
  assert_true(r->net_chunk->total > 0 && r->net_chunk->data.len > 0);
  xq_wire_free(&r);
}

/* Starts a daemon from the build tree (argv[0] relative to XQZ_BINARY_DIR), output to
 * g_dir/NAME.log. */
static pid_t spawn(const char *name, char *const argv[]) {
  char bin[400], logp[400];
  snprintf(bin, sizeof bin, "%s/%s", XQZ_BINARY_DIR, argv[0]);
  snprintf(logp, sizeof logp, "%s/%s.log", g_dir, name);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL); /* a failed test leaves no daemon behind */
    if (!freopen(logp, "w", stderr) || !freopen("/dev/null", "w", stdout)) _exit(127);
    setenv("OPENBLAS_NUM_THREADS", "1", 1);
    execv(bin, argv);
    _exit(127);
  }
  return pid;
}

static void stop_daemon(pid_t pid) {
  kill(pid, SIGKILL);
  waitpid(pid, NULL, 0);
}

/* xqz-worker and xqz-trainer with CURVE keys: the worker's Hello arrives with its key
 * (Status.worker_list[].key) and the trainer is served samples. */
static void daemons_with_curve(void *s, const char *worker_pub) {
  char coord[64], spub[400], wsec[400], tsec[400], cache[400], spool[400], tdir[400];
  snprintf(coord, sizeof coord, "tcp://127.0.0.1:%d", g_router_port);
  snprintf(spub, sizeof spub, "%s/keys/coord.pub", g_dir);
  snprintf(wsec, sizeof wsec, "%s/keys/w1.secret", g_dir);
  snprintf(tsec, sizeof tsec, "%s/keys/op.secret", g_dir);
  snprintf(cache, sizeof cache, "%s/wcache", g_dir);
  snprintf(spool, sizeof spool, "%s/wspool", g_dir);
  snprintf(tdir, sizeof tdir, "%s/trainer", g_dir);
  char *wargv[] = {"worker/xqz-worker", "--coordinator", coord, "--server-key", spub, "--key",
                   wsec, "--id", "curve-worker", "--cache", cache, "--spool", spool,
                   "--games-per-thread", "1", NULL};
  char *targv[] = {"trainer/xqz-trainer", "--coordinator", coord, "--server-key", spub,
                   "--key", tsec, "--dir", tdir, "--size", "tiny", "--batch", "16", NULL};
  pid_t w = spawn("worker", wargv), t = spawn("trainer", targv);
  bool worker_seen = false, served = false;
  for (int i = 0; i < 150 && !(worker_seen && served); i++) {
    usleep(100000);
    Xqz__Envelope *r = status(s);
    for (size_t k = 0; k < r->status->n_worker_list; k++) {
      const Xqz__WorkerStatus *ws = r->status->worker_list[k];
      if (!strcmp(ws->worker_id, "curve-worker") && !strcmp(ws->key, worker_pub))
        worker_seen = true;
    }
    served = r->status->samples_served > 0;
    xq_wire_free(&r);
  }
  stop_daemon(w);
  stop_daemon(t);
  assert_true(worker_seen);
  assert_true(served);
}

static void test_curve(void **state) {
  (void)state;
  fresh_dir();
  make_dir("keys");
  make_dir("allow");
  make_dir("admin");
  make_key("coord", NULL, NULL);
  make_key("w1", "allow", NULL);
  make_key("op", "allow", "admin");
  make_key("stranger", NULL, NULL);
  make_key("late", NULL, NULL);
  curve_settings("curve_admin_dir", "admin");
  pid_t pid = start_coordinator();
  void *ctx = zmq_ctx_new();

  /* An allowed key: Hello, a game accepted, the best net served. */
  void *w = curve_dealer(ctx, "w1");
  uint64_t best = hello_as(w, "w1");
  game_accepted(w, "w1", 1, NULL);
  net_chunk(w, best);

  /* An unknown key: the handshake is refused, so nothing it sends gets an answer. */
  void *x = curve_dealer(ctx, "stranger");
  refused_requests(x, "stranger", best);
  expect_nothing(x, 1000);
  refused_requests(x, "stranger", best); /* again, after libzmq's retries */
  expect_nothing(x, 500);
  zmq_close(x);
  /* Refused on every reconnect, logged once (per key per minute). */
  assert_int_equal(log_count("connection refused: key not in curve_allow_dir"), 1);
  char spub[41], lpub[41], path[400];
  xq_errbuf_t eb;
  snprintf(path, sizeof path, "%s/keys/stranger.pub", g_dir);
  assert_int_equal(xq_curve_read_key(path, spub, &eb), 0);
  assert_int_equal(log_count(spub), 1);

  /* A plain-TCP client is refused too (no CURVE handshake). */
  void *p = connect_dealer(ctx);
  refused_requests(p, "plain", best);
  expect_nothing(p, 500);
  zmq_close(p);

  /* The late key is refused, then allowed once its .pub is in the directory. */
  void *l = curve_dealer(ctx, "late");
  refused_requests(l, "late", best);
  expect_nothing(l, 800);
  zmq_close(l);
  char cmd[1200];
  snprintf(cmd, sizeof cmd, "cp %s/keys/late.pub %s/allow/", g_dir, g_dir);
  assert_int_equal(system(cmd), 0);
  l = curve_dealer(ctx, "late");
  assert_int_equal(hello_as(l, "late"), best);
  game_accepted(l, "late", 1, NULL);

  /* Bans need a key in curve_admin_dir; a ban on a key refuses that key's games. */
  snprintf(path, sizeof path, "%s/keys/late.pub", g_dir);
  assert_int_equal(xq_curve_read_key(path, lpub, &eb), 0);
  Xqz__Envelope *r = admin(w, XQZ__ADMIN_REQUEST__ACTION__ACTION_BAN, lpub);
  assert_false(r->admin_result->ok);
  xq_wire_free(&r);
  game_accepted(l, "late", 2, NULL);
  void *op = curve_dealer(ctx, "op");
  char wpub[41];
  snprintf(path, sizeof path, "%s/keys/w1.pub", g_dir);
  assert_int_equal(xq_curve_read_key(path, wpub, &eb), 0);
  daemons_with_curve(op, wpub);
  r = admin(op, XQZ__ADMIN_REQUEST__ACTION__ACTION_BAN, lpub);
  assert_true(r->admin_result->ok);
  xq_wire_free(&r);
  game_banned(l, "late", 3);
  game_accepted(w, "w1", 2, NULL);
  r = status(op);
  assert_int_equal(r->status->banned_games, 1);
  xq_wire_free(&r);

  zmq_close(op);
  zmq_close(l);
  zmq_close(w);
  coord_stop(pid);
  zmq_ctx_term(ctx);
  if (!getenv("XQZ_KEEP")) remove_dir();
}

/* Runs the xqz tool with args (a shell line); returns its exit status, output in out. */
static int xqz(const char *args, char *out, size_t cap) {
  char cmd[1200];
  snprintf(cmd, sizeof cmd, "%s/tools/xqz %s --coordinator tcp://127.0.0.1:%d 2>&1",
           XQZ_BINARY_DIR, args, g_router_port);
  FILE *f = popen(cmd, "r");
  assert_non_null(f);
  size_t n = fread(out, 1, cap - 1, f);
  out[n] = '\0';
  int st = pclose(f);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void test_ban(void **state) {
  (void)state;
  fresh_dir();
  g_extra = "--seed=2";
  g_extra2 = "--seed=2";
  g_extra3 = "--seed=2";
  pid_t pid = start_coordinator();
  void *ctx = zmq_ctx_new();
  void *good = connect_dealer(ctx), *bad = connect_dealer(ctx);
  hello_as(good, "good");
  hello_as(bad, "bad");
  uint64_t good_pos = 0, bad_pos = 0;
  for (uint64_t i = 1; i <= 3; i++) {
    game_accepted(good, "good", i, &good_pos);
    game_accepted(bad, "bad", i, &bad_pos);
  }
  assert_int_equal(window_positions(good), good_pos + bad_pos);

  char out[2000];
  assert_int_equal(xqz("ban bad --reason 'illegal games'", out, sizeof out), 0);
  assert_non_null(strstr(out, "banned bad"));
  assert_int_equal(window_positions(good), good_pos);
  assert_int_equal(log_count("reason=\"illegal games\""), 1);
  /* Its games are refused with the reason; anything else it asks gets Error "banned". */
  game_banned(bad, "bad", 4);
  send_status_request(bad);
  expect_error(bad, E_BANNED);
  game_accepted(good, "good", 4, &good_pos);
  /* A bad target is refused by the coordinator. */
  assert_int_equal(xqz("ban 'two words'", out, sizeof out), 1);
  Xqz__Envelope *r = status(good);
  assert_int_equal(r->status->banned_games, 1);
  assert_true(r->status->n_limits >= 4);
  int seen = 0;
  for (size_t i = 0; i < r->status->n_limits; i++)
    if (!strcmp(r->status->limits[i]->name, "max_message_bytes")) {
      assert_true(r->status->limits[i]->value > (double)XQ_WIRE_MAX_MESSAGE);
      seen = 1;
    }
  assert_true(seen);
  xq_wire_free(&r);

  /* Restart: the ban is still there and the banned games are not in the window. */
  zmq_close(good);
  zmq_close(bad);
  coord_stop(pid);
  pid = start_coordinator();
  good = connect_dealer(ctx);
  bad = connect_dealer(ctx);
  hello_as(good, "good");
  assert_int_equal(window_positions(good), good_pos);
  game_banned(bad, "bad", 5);
  send_hello(bad, "bad"); /* a banned worker's Hello on a new connection: Error too */
  expect_error(bad, E_BANNED);

  /* Unban: accepted again; a second unban says it is not banned. */
  assert_int_equal(xqz("unban bad", out, sizeof out), 0);
  assert_non_null(strstr(out, "unbanned bad"));
  game_accepted(bad, "bad", 6, NULL);
  assert_int_equal(xqz("unban bad", out, sizeof out), 1);
  assert_non_null(strstr(out, "not banned"));

  zmq_close(good);
  zmq_close(bad);
  coord_stop(pid);
  zmq_ctx_term(ctx);
  if (!getenv("XQZ_KEEP")) remove_dir();
}

static void test_rate_limit(void **state) {
  (void)state;
  fresh_dir();
  g_extra = "--max_peer_errors=3";
  g_extra2 = "--cutoff_s=2";
  g_extra3 = "--fault_window_s=30";
  pid_t pid = start_coordinator();
  void *ctx = zmq_ctx_new();
  void *honest = connect_dealer(ctx);
  hello_as(honest, "honest");
  void *h = connect_dealer(ctx);
  hello_as(h, "noisy");
  static const char junk[] = "this is not an envelope";
  for (int i = 0; i < 2; i++) {
    assert_int_equal(zmq_send(h, junk, sizeof junk, 0), (int)sizeof junk);
    expect_error(h, 1);
  }
  assert_int_equal(zmq_send(h, junk, sizeof junk, 0), (int)sizeof junk); /* third: cut */
  expect_nothing(h, 300);
  assert_int_equal(log_count("peer cut off"), 1);
  send_status_request(h);
  expect_nothing(h, 300);
  zmq_close(h);
  /* A new connection speaking for the same worker id is still cut off: its Hello and its
   * games get nothing. */
  h = connect_dealer(ctx);
  send_hello(h, "noisy");
  expect_nothing(h, 300);
  unsigned char *buf;
  size_t len;
  random_game(&buf, &len, g_seed++, GAME_OK);
  send_game_msg(h, "noisy", 1, buf, len);
  free(buf);
  expect_nothing(h, 300);
  game_accepted(honest, "honest", 1, NULL);
  /* After cutoff_s it is let back in. */
  sleep(1);
  Xqz__Envelope *r = NULL;
  for (int tries = 0; tries < 40 && !r; tries++) {
    send_hello(h, "noisy");
    r = recv_within(h, 100);
  }
  assert_non_null(r);
  assert_int_equal(r->body_case, XQZ__ENVELOPE__BODY_WELCOME);
  xq_wire_free(&r);
  assert_int_equal(log_count("peer let back in"), 1);
  zmq_close(h);
  zmq_close(honest);
  coord_stop(pid);
  zmq_ctx_term(ctx);
  if (!getenv("XQZ_KEEP")) remove_dir();
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test_teardown(test_curve, teardown),
                                     cmocka_unit_test_teardown(test_ban, teardown),
                                     cmocka_unit_test_teardown(test_rate_limit, teardown)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
