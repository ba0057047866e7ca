/*
 * test_coordinator_authority.c: a real xqz-coordinator against peers that do more than
 * their role allows, one test per attack of issue 19, each sent as a hostile client would
 * and each checking the harm it did before the fix:
 *  - With CURVE (keys made by the test: the trainer's key in curve_trainer_dir, the
 *    workers' only in curve_allow_dir; --gating=none): a worker's CandidateNet is refused
 *    (Error 8) and opens no match; a worker's ArenaResults +1/+1 for pairs never issued to
 *    it are faults and promote nothing, while the pair's holder promotes; a worker's
 *    BatchRequest is refused; the trainer's step 2^62 and NaN loss are refused and never
 *    stored; an honest result for a pair re-issued and scored meanwhile is dropped
 *    without a fault; a worker id belongs to the first key that claimed it, also after a
 *    restart, so another key's games under it with future seqs do not take the owner's
 *    games; of two clients sharing a key, the one sending garbage is cut off, not the other.
 *  - Without CURVE (loopback; the impostor connects from 127.0.0.2, the honest worker from
 *    127.0.0.1, as two hosts would): games under a live honest worker's id from another
 *    address do not take the honest games' seqs; a Hello under the honest id followed
 *    by garbage cuts off the impostor's connection, not the honest worker; one game
 *    replayed under new seqs (and another worker id) enters the window once; a worker id
 *    with a newline forges no log line, and a host name with one is stored cleaned.
 * (Admin requests from a non-loopback address without CURVE are refused by the decision
 * tested in test_coordinator_roles.c: every test connection here is loopback.)
 * XQZ_KEEP=1 keeps the temp campaign and its coordinator.log.
 */
#define _DEFAULT_SOURCE
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
#include <zmq.h>

#include "coord_test_util.h"
#include "wire/wire.h"

static uint64_t g_seed = 9000;

/* A DEALER to the coordinator (127.0.0.1) from the local source address `from`: a peer at
 * another address than the honest worker's, as a forger on another host would be. */
static void *dealer_from(void *ctx, const char *from) {
  void *s = zmq_socket(ctx, ZMQ_DEALER);
  int t = 8000, linger = 0;
  zmq_setsockopt(s, ZMQ_RCVTIMEO, &t, sizeof t);
  zmq_setsockopt(s, ZMQ_LINGER, &linger, sizeof linger);
  char addr[96];
  snprintf(addr, sizeof addr, "tcp://%s:0;127.0.0.1:%d", from, g_router_port);
  assert_int_equal(zmq_connect(s, addr), 0);
  return s;
}

/* A BatchRequest of 16 samples with a report of step and loss. */
static Xqz__Envelope *batch(void *s, uint64_t step, float loss) {
  Xqz__Envelope env;
  Xqz__BatchRequest br;
  xq_msg_batch_request(&env, &br, 16, step);
  br.loss_steps = 1;
  br.loss = loss;
  br.loss_policy = 1.0f;
  br.loss_value = 0.5f;
  env.request_id = 41;
  return rpc(s, &env);
}

static void expect_error_reply(Xqz__Envelope *r, unsigned code) {
  assert_int_equal(r->body_case, XQZ__ENVELOPE__BODY_ERROR);
  assert_int_equal(r->error->code, code);
  assert_true(strlen(r->error->message) > 0);
  xq_wire_free(&r);
}

/* A fresh consistent game as a record (malloc'd). */
static void a_game(unsigned char **buf, size_t *len) { random_game(buf, len, g_seed++, GAME_OK); }

static Xqz__Envelope *game_reply(void *s, const char *wid, uint64_t seq, const void *buf,
                                 size_t len) {
  send_game_msg(s, wid, seq, buf, len);
  Xqz__Envelope *r = recv_within(s, 5000);
  if (!r) fail_msg("no reply to game %s/%llu", wid, (unsigned long long)seq);
  return r;
}

static void game_ok(void *s, const char *wid, uint64_t seq) {
  unsigned char *buf;
  size_t len;
  a_game(&buf, &len);
  Xqz__Envelope *r = game_reply(s, wid, seq, buf, len);
  free(buf);
  assert_int_equal(r->body_case, XQZ__ENVELOPE__BODY_ACK);
  if (!r->ack->accepted) fail_msg("game %s/%llu refused: %s", wid, (unsigned long long)seq,
                                  r->ack->reason);
  xq_wire_free(&r);
}

static Xqz__Envelope *hello_reply(void *s, const char *wid, const char *host) {
  Xqz__Envelope env;
  Xqz__Hello h;
  xq_msg_hello(&env, &h, XQZ__ROLE__ROLE_WORKER, wid, host, 0, 0);
  env.request_id = 1;
  return rpc(s, &env);
}

static uint64_t games_stored(void *s) {
  Xqz__Envelope *r = status(s);
  uint64_t n = r->status->games;
  xq_wire_free(&r);
  return n;
}

/* Lines of the coordinator log whose text starts with `what` (a forged line would). */
static int lines_starting(const char *what) {
  char path[400], line[4096];
  snprintf(path, sizeof path, "%s/coordinator.log", g_dir);
  FILE *f = fopen(path, "r");
  assert_non_null(f);
  int n = 0;
  while (fgets(line, sizeof line, f))
    if (!strncmp(line, what, strlen(what))) n++;
  fclose(f);
  return n;
}

/* Starts a CURVE coordinator (keys coord, trainer, w1, w2, lab; --gating=none,
 * threshold_games games a match, max_peer_errors=5, worker_timeout_ms=500). */
static pid_t start_curve(int threshold_games) {
  fresh_dir();
  make_dir("keys");
  make_dir("allow");
  make_dir("trainers");
  make_key("coord", NULL, NULL);
  make_key("trainer", "allow", "trainers");
  make_key("w1", "allow", NULL);
  make_key("w2", "allow", NULL);
  make_key("lab", "allow", NULL);
  curve_settings("curve_trainer_dir", "trainers");
  g_extra4 = "--gating=none";
  g_extra5 = "--worker_timeout_ms=500";
  /* The settings beyond the five slots go in the campaign's ini. */
  char camp[400], ini[500];
  snprintf(camp, sizeof camp, "%s/camp", g_dir);
  assert_int_equal(mkdir(camp, 0755), 0);
  snprintf(ini, sizeof ini, "%s/campaign.ini", camp);
  FILE *f = fopen(ini, "w");
  assert_non_null(f);
  fprintf(f, "threshold_games = %d\nmax_peer_errors = 5\n", threshold_games);
  fclose(f);
  return start_coordinator();
}

static pid_t start_plain(void) {
  fresh_dir();
  g_extra = "--max_peer_errors=5";
  g_extra2 = g_extra3 = g_extra4 = g_extra5 = "--seed=1";
  return start_coordinator();
}

static void finish(pid_t pid, void *ctx) {
  coord_stop(pid);
  zmq_ctx_term(ctx);
  if (!getenv("XQZ_KEEP")) remove_dir();
}

/* The trainer's candidate (step 500): accepted, a match opens; returns the match id. */
static uint64_t open_match(void *tr, void *obs, uint64_t best, uint64_t *cand) {
  unsigned char *net;
  size_t net_len;
  nn_file_meta_t meta;
  tiny_net(&net, &net_len, &meta, best, 500);
  Xqz__Envelope *r = upload_candidate(tr, net, net_len, 500);
  assert_int_equal(r->body_case, XQZ__ENVELOPE__BODY_ACK);
  assert_true(r->ack->accepted);
  xq_wire_free(&r);
  free(net);
  r = status(obs);
  assert_non_null(r->status->open_match);
  uint64_t match = r->status->open_match->match_id;
  xq_wire_free(&r);
  if (cand) *cand = meta.net_id;
  return match;
}

static uint64_t best_net(void *s) {
  Xqz__Envelope *r = status(s);
  uint64_t b = r->status->best_net_id;
  xq_wire_free(&r);
  return b;
}

/* 7: a worker's CandidateNet (a random net, step 10^12) is refused and opens no match. */
static void test_worker_candidate(void **state) {
  (void)state;
  pid_t pid = start_curve(2);
  void *ctx = zmq_ctx_new();
  void *w1 = curve_dealer(ctx, "w1");
  uint64_t best = hello_as(w1, "w1-a");
  unsigned char *net;
  size_t net_len;
  nn_file_meta_t meta;
  tiny_net(&net, &net_len, &meta, best, 1000000000000ull);
  Xqz__Envelope *r = upload_candidate(w1, net, net_len, 1000000000000ull);
  free(net);
  bool refused = r->body_case == XQZ__ENVELOPE__BODY_ERROR;
  xq_wire_free(&r);
  r = status(w1);
  assert_null(r->status->open_match);
  assert_true(r->status->trainer_step < 1000000000000ll);
  xq_wire_free(&r);
  assert_true(refused);
  zmq_close(w1);
  finish(pid, ctx);
}

/* 7: ArenaResults +1/+1 for pairs never issued to the sender promote nothing; the
 * holder's result promotes. */
static void test_forged_arena_results(void **state) {
  (void)state;
  pid_t pid = start_curve(2);
  void *ctx = zmq_ctx_new();
  void *w1 = curve_dealer(ctx, "w1"), *tr = curve_dealer(ctx, "trainer");
  uint64_t best = hello_as(w1, "w1-a"), cand;
  uint64_t match = open_match(tr, w1, best, &cand);
  for (uint32_t pair = 0; pair < 3; pair++) {
    Xqz__Envelope *r = arena_result(w1, "w1-a", match, pair, 1, 1);
    assert_false(r->ack->accepted);
    xq_wire_free(&r);
  }
  assert_int_equal(best_net(w1), best);
  assert_int_equal(log_count("arena result for a pair not issued to this peer"), 3);
  Xqz__Envelope *r = arena_job(w1);
  assert_non_null(r);
  uint32_t pair = r->job->arena->pair_index;
  xq_wire_free(&r);
  r = arena_result(w1, "w1-a", match, pair, 1, 0);
  assert_true(r->ack->accepted);
  xq_wire_free(&r);
  assert_int_equal(best_net(w1), cand);
  zmq_close(w1);
  zmq_close(tr);
  finish(pid, ctx);
}

/* 8: a worker is served no batches; the trainer is. */
static void test_worker_batches(void **state) {
  (void)state;
  pid_t pid = start_curve(2);
  void *ctx = zmq_ctx_new();
  void *w1 = curve_dealer(ctx, "w1"), *tr = curve_dealer(ctx, "trainer");
  hello_as(w1, "w1-a");
  for (uint64_t seq = 1; seq <= 3; seq++) game_ok(w1, "w1-a", seq);
  Xqz__Envelope *r = batch(w1, 10, 1.0f);
  assert_int_not_equal(r->body_case, XQZ__ENVELOPE__BODY_BATCH);
  expect_error_reply(r, XQ_ERROR_NOT_ALLOWED);
  r = status(w1);
  assert_int_equal(r->status->samples_served, 0);
  assert_int_equal(r->status->trainer_step, 0);
  xq_wire_free(&r);
  r = batch(tr, 10, 1.0f);
  assert_int_equal(r->body_case, XQZ__ENVELOPE__BODY_BATCH);
  xq_wire_free(&r);
  zmq_close(w1);
  zmq_close(tr);
  finish(pid, ctx);
}

/* 8: the trainer's step 2^62 and a NaN loss are refused and never stored. */
static void test_trainer_report(void **state) {
  (void)state;
  pid_t pid = start_curve(2);
  void *ctx = zmq_ctx_new();
  void *w1 = curve_dealer(ctx, "w1"), *tr = curve_dealer(ctx, "trainer");
  hello_as(w1, "w1-a");
  Xqz__Envelope *r = batch(tr, 600, 1.0f);
  xq_wire_free(&r);
  r = batch(tr, 1ull << 62, 1.0f);
  bool step_refused = r->body_case == XQZ__ENVELOPE__BODY_ERROR && r->error->code == 4;
  xq_wire_free(&r);
  r = batch(tr, 700, NAN);
  bool nan_refused = r->body_case == XQZ__ENVELOPE__BODY_ERROR && r->error->code == 4;
  xq_wire_free(&r);
  r = status(w1);
  assert_int_equal(r->status->trainer_step, 600);
  assert_non_null(r->status->last_loss);
  assert_true(isfinite(r->status->last_loss->loss));
  for (size_t i = 0; i < r->status->n_loss_history; i++)
    assert_true(isfinite(r->status->loss_history[i]->loss));
  xq_wire_free(&r);
  assert_true(step_refused);
  assert_true(nan_refused);
  zmq_close(w1);
  zmq_close(tr);
  finish(pid, ctx);
}

/* 7: w1 holds pair P past its deadline; P goes to w2, who reports it first; w1's honest
 * late result is dropped without a fault. */
static void test_late_result(void **state) {
  (void)state;
  pid_t pid = start_curve(4); /* two pairs: the match stays open after one */
  void *ctx = zmq_ctx_new();
  void *w1 = curve_dealer(ctx, "w1"), *w2 = curve_dealer(ctx, "w2");
  void *tr = curve_dealer(ctx, "trainer");
  uint64_t best = hello_as(w1, "w1-a");
  hello_as(w2, "w2-a");
  uint64_t match = open_match(tr, w1, best, NULL);
  Xqz__Envelope *r = arena_job(w1);
  assert_non_null(r);
  uint32_t pair = r->job->arena->pair_index;
  xq_wire_free(&r);
  usleep(1200 * 1000); /* past 2 x worker_timeout_ms */
  bool reissued = false;
  for (int i = 0; i < 3 && !reissued; i++) {
    r = arena_job(w2);
    assert_non_null(r);
    reissued = r->job->arena->pair_index == pair;
    xq_wire_free(&r);
  }
  assert_true(reissued);
  r = arena_result(w2, "w2-a", match, pair, 1, 0);
  assert_true(r->ack->accepted);
  xq_wire_free(&r);
  int faults = log_count("bad message from peer");
  r = arena_result(w1, "w1-a", match, pair, 1, 1);
  assert_false(r->ack->accepted);
  xq_wire_free(&r);
  assert_int_equal(log_count("bad message from peer"), faults);
  r = status(w1);
  assert_non_null(r->status->open_match);
  assert_int_equal(r->status->open_match->wins + r->status->open_match->draws +
                       r->status->open_match->losses, 2);
  xq_wire_free(&r);
  zmq_close(w1);
  zmq_close(w2);
  zmq_close(tr);
  finish(pid, ctx);
}

/* 9: w1-a belongs to w1's key: w2's games under it with w1's future seqs do not take
 * them, and its Hello under it is refused, also after a restart. */
static void test_worker_id_owned_by_key(void **state) {
  (void)state;
  pid_t pid = start_curve(2);
  void *ctx = zmq_ctx_new();
  void *w1 = curve_dealer(ctx, "w1"), *w2 = curve_dealer(ctx, "w2");
  hello_as(w1, "w1-a");
  game_ok(w1, "w1-a", 1);
  for (uint64_t seq = 2; seq <= 6; seq++) {
    unsigned char *buf;
    size_t len;
    a_game(&buf, &len);
    Xqz__Envelope *r = game_reply(w2, "w1-a", seq, buf, len);
    xq_wire_free(&r);
    free(buf);
  }
  assert_int_equal(games_stored(w1), 1);
  for (uint64_t seq = 2; seq <= 6; seq++) game_ok(w1, "w1-a", seq);
  assert_int_equal(games_stored(w1), 6);
  Xqz__Envelope *r = status(w1);
  assert_int_equal(r->status->duplicates, 0); /* no honest game taken for a duplicate */
  xq_wire_free(&r);
  expect_error_reply(hello_reply(w2, "w1-a", "x"), XQ_ERROR_WORKER_ID);
  zmq_close(w1);
  zmq_close(w2);
  coord_stop(pid);
  pid = start_coordinator();
  w2 = curve_dealer(ctx, "w2");
  expect_error_reply(hello_reply(w2, "w1-a", "x"), XQ_ERROR_WORKER_ID);
  w1 = curve_dealer(ctx, "w1");
  hello_as(w1, "w1-a");
  zmq_close(w1);
  zmq_close(w2);
  finish(pid, ctx);
}

/* 9: two clients share the key "lab": the one sending garbage is cut off, not the other. */
static void test_shared_key(void **state) {
  (void)state;
  pid_t pid = start_curve(2);
  void *ctx = zmq_ctx_new();
  void *la = curve_dealer(ctx, "lab"), *lb = curve_dealer(ctx, "lab");
  hello_as(la, "lab-a");
  hello_as(lb, "lab-b");
  static const char junk[] = "not an envelope";
  for (int i = 0; i < 5; i++) {
    assert_int_equal(zmq_send(lb, junk, sizeof junk, 0), (int)sizeof junk);
    if (i < 4) expect_error(lb, 1);
  }
  expect_nothing(lb, 300);
  assert_int_equal(log_count("peer cut off"), 1);
  game_ok(la, "lab-a", 1);
  send_status_request(lb);
  expect_nothing(lb, 300);
  zmq_close(la);
  zmq_close(lb);
  finish(pid, ctx);
}

/* 9 without CURVE: games under the live honest worker's id with its next seqs, from
 * another connection, do not take the honest games' seqs. */
static void test_impersonation(void **state) {
  (void)state;
  pid_t pid = start_plain();
  void *ctx = zmq_ctx_new();
  void *w = connect_dealer(ctx), *x = dealer_from(ctx, "127.0.0.2");
  hello_as(w, "honest");
  game_ok(w, "honest", 1);
  for (uint64_t seq = 2; seq <= 6; seq++) {
    unsigned char *buf;
    size_t len;
    a_game(&buf, &len);
    Xqz__Envelope *r = game_reply(x, "honest", seq, buf, len);
    xq_wire_free(&r);
    free(buf);
  }
  assert_int_equal(games_stored(w), 1);
  for (uint64_t seq = 2; seq <= 6; seq++) game_ok(w, "honest", seq);
  assert_int_equal(games_stored(w), 6);
  unsigned char *buf;
  size_t len;
  a_game(&buf, &len);
  expect_error_reply(game_reply(x, "honest", 7, buf, len), XQ_ERROR_WORKER_ID);
  free(buf);
  zmq_close(w);
  zmq_close(x);
  finish(pid, ctx);
}

/* 9 without CURVE: a Hello under the honest id and garbage cut off the impostor only. */
static void test_hello_impersonation(void **state) {
  (void)state;
  pid_t pid = start_plain();
  void *ctx = zmq_ctx_new();
  void *w = connect_dealer(ctx), *x = dealer_from(ctx, "127.0.0.2");
  hello_as(w, "honest");
  Xqz__Envelope *r = hello_reply(x, "honest", "x");
  xq_wire_free(&r);
  static const char junk[] = "not an envelope";
  for (int i = 0; i < 5; i++) {
    assert_int_equal(zmq_send(x, junk, sizeof junk, 0), (int)sizeof junk);
    if (i < 4) expect_error(x, 1);
  }
  expect_nothing(x, 300);
  assert_int_equal(log_count("peer cut off"), 1);
  game_ok(w, "honest", 1);
  assert_int_equal(log_count("peer=worker:honest"), 0);
  zmq_close(w);
  zmq_close(x);
  finish(pid, ctx);
}

/* 10: one game replayed under new seqs, and under another worker id, is stored once. */
static void test_replay(void **state) {
  (void)state;
  pid_t pid = start_plain();
  void *ctx = zmq_ctx_new();
  void *w = connect_dealer(ctx), *o = connect_dealer(ctx);
  hello_as(w, "honest");
  hello_as(o, "other");
  unsigned char *buf;
  size_t len;
  a_game(&buf, &len);
  for (uint64_t seq = 1; seq <= 6; seq++) {
    Xqz__Envelope *r = game_reply(seq & 1 ? w : o, seq & 1 ? "honest" : "other", seq, buf, len);
    assert_int_equal(r->body_case, XQZ__ENVELOPE__BODY_ACK);
    if (seq > 1) {
      assert_false(r->ack->accepted);
      assert_string_equal(r->ack->reason, "a copy of a game already in the window");
    }
    xq_wire_free(&r);
  }
  free(buf);
  assert_int_equal(games_stored(w), 1);
  zmq_close(w);
  zmq_close(o);
  coord_stop(pid);
  /* Rebuilt from the segments: still one. */
  pid = start_coordinator();
  w = connect_dealer(ctx);
  assert_int_equal(games_stored(w), 1);
  zmq_close(w);
  finish(pid, ctx);
}

/* 11: a worker id with a newline forges no log line; a host name with one is stored
 * cleaned. */
static void test_newline_worker_id(void **state) {
  (void)state;
  pid_t pid = start_plain();
  void *ctx = zmq_ctx_new();
  void *e = connect_dealer(ctx);
  Xqz__Envelope *r = hello_reply(e, "evil\nstatus games=999999", "h");
  bool refused = r->body_case == XQZ__ENVELOPE__BODY_ERROR;
  xq_wire_free(&r);
  unsigned char *buf;
  size_t len;
  a_game(&buf, &len);
  r = game_reply(e, "evil\nstatus games=999999", 1, buf, len);
  xq_wire_free(&r);
  free(buf);
  assert_int_equal(lines_starting("status games=999999"), 0);
  assert_true(log_count("\\x0astatus games=999999") > 0);
  assert_true(refused);
  r = hello_reply(e, "tidy", "host\nINFO forged\r");
  assert_int_equal(r->body_case, XQZ__ENVELOPE__BODY_WELCOME);
  xq_wire_free(&r);
  assert_int_equal(lines_starting("INFO forged"), 0);
  r = status(e);
  bool seen = false;
  for (size_t k = 0; k < r->status->n_worker_list; k++) {
    const Xqz__WorkerStatus *ws = r->status->worker_list[k];
    if (strcmp(ws->worker_id, "tidy")) continue;
    seen = true;
    assert_null(strpbrk(ws->host, "\r\n"));
  }
  assert_true(seen);
  xq_wire_free(&r);
  assert_int_equal(games_stored(e), 0);
  zmq_close(e);
  finish(pid, ctx);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test_teardown(test_worker_candidate, teardown),
    cmocka_unit_test_teardown(test_forged_arena_results, teardown),
    cmocka_unit_test_teardown(test_worker_batches, teardown),
    cmocka_unit_test_teardown(test_trainer_report, teardown),
    cmocka_unit_test_teardown(test_late_result, teardown),
    cmocka_unit_test_teardown(test_worker_id_owned_by_key, teardown),
    cmocka_unit_test_teardown(test_shared_key, teardown),
    cmocka_unit_test_teardown(test_impersonation, teardown),
    cmocka_unit_test_teardown(test_hello_impersonation, teardown),
    cmocka_unit_test_teardown(test_replay, teardown),
    cmocka_unit_test_teardown(test_newline_worker_id, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
