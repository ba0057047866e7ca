/*
 * test_coordinator_hostile.c: a real xqz-coordinator (--max_peer_errors=5) serves one
 * honest worker while a hostile client ("hostile-worker", on several DEALER connections,
 * each its own peer) sends, interleaved with the honest games: random bytes, a truncated
 * envelope, protocol version 99, an envelope without a body, a multi-frame message, a
 * message above XQ_WIRE_MAX_MESSAGE, game records that are garbage, play an illegal move,
 * put visits on an illegal move or claim a wrong result, a forged duplicate of an honest
 * game, absurd batch sizes, net requests for an unknown net and past the end, and broken
 * candidate nets. Every honest game is acked; every hostile message gets the answer noted
 * next to it (or none); the peer is cut off at its fifth error (each connection says Hello
 * with its own worker id, the identity faults count against); the coordinator stays up,
 * exits 0 on SIGTERM, and its counts, before and after a restart (window rebuilt from the
 * segments), are exactly those of the honest games. XQZ_KEEP=1 keeps the temp campaign and
 * its coordinator.log (which names every bad message and the cut-off) for a look.
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
#include <sys/wait.h>
#include <unistd.h>
#include <zmq.h>

#include "coord_test_util.h"
#include "records/game_record.h"
#include "records/targets.h"
#include "wire/messages.h"
#include "wire/sample.h"
#include "wire/wire.h"

#define HONEST "honest-worker"
#define HOSTILE "hostile-worker"

enum { E_MALFORMED = 1, E_NOT_FOUND = 3, E_BAD_FIELD = 4 };

static uint64_t g_seed = 1000;      /* next random game */
static uint64_t g_honest_seq;       /* last seq the honest worker used */
static uint64_t g_honest_games, g_honest_positions;
static unsigned char *g_first_game; /* the honest worker's seq 1, for the forgery */
static size_t g_first_len;

/* Positions (training samples) the coordinator should get from one consistent game. */
static uint64_t game_positions(const unsigned char *buf, size_t len) {
  xq_game_record_t rec;
  xq_record_init(&rec);
  xq_errbuf_t eb;
  assert_int_equal(xq_record_decode(&rec, buf, len, &eb), 0);
  xq_sample_t *s = malloc((size_t)(rec.nplies + 1) * sizeof *s);
  assert_non_null(s);
  int n = xq_samples_from_record(&rec, s, rec.nplies + 1, &eb);
  assert_true(n > 0);
  free(s);
  xq_record_free(&rec);
  return (uint64_t)n;
}

/* The honest worker sends its next game; it must be acked accepted. */
static void honest_game(void *w) {
  unsigned char *buf;
  size_t len;
  random_game(&buf, &len, g_seed++, GAME_OK);
  uint64_t seq = ++g_honest_seq;
  Xqz__Envelope *r = send_game_as(w, HONEST, seq, buf, len);
  assert_true(r->ack->accepted);
  assert_string_equal(r->ack->worker_id, HONEST);
  xq_wire_free(&r);
  g_honest_games++;
  g_honest_positions += game_positions(buf, len);
  if (seq == 1) {
    g_first_game = buf;
    g_first_len = len;
  } else {
    free(buf);
  }
}

/* A hostile connection: its own routing id (the coordinator's, one per connection: a
 * chosen one is refused) and its own worker id in its Hello (answered: not an error).
 * Faults are counted per identity (the worker id here), so each connection starts with
 * none. */
static void *hostile_connect(void *ctx, int n) {
  void *s = zmq_socket(ctx, ZMQ_DEALER);
  int t = 8000, linger = 0;
  char addr[64], wid[48];
  snprintf(wid, sizeof wid, "%s-%d", HOSTILE, n);
  zmq_setsockopt(s, ZMQ_RCVTIMEO, &t, sizeof t);
  zmq_setsockopt(s, ZMQ_LINGER, &linger, sizeof linger);
  snprintf(addr, sizeof addr, "tcp://127.0.0.1:%d", g_router_port);
  assert_int_equal(zmq_connect(s, addr), 0);
  hello_as(s, wid);
  return s;
}

static void send_raw(void *s, const void *buf, size_t len, int flags) {
  assert_int_equal(zmq_send(s, buf, len, flags), (int)len);
}

/* Packs env with protobuf-c directly (no size or version check), malloc'd. */
static uint8_t *pack_raw(const Xqz__Envelope *env, size_t *len) {
  *len = xqz__envelope__get_packed_size(env);
  uint8_t *buf = malloc(*len ? *len : 1);
  assert_non_null(buf);
  assert_int_equal(xqz__envelope__pack(env, buf), *len);
  return buf;
}



/* Ack accepted=false with a reason; worker id as sent (games) or empty (candidates). */
static void expect_refused(void *s, const char *worker_id, uint64_t seq) {
  Xqz__Envelope *r = recv_within(s, 5000);
  if (!r) fail_msg("no Ack reply for seq %llu", (unsigned long long)seq);
  assert_int_equal(r->body_case, XQZ__ENVELOPE__BODY_ACK);
  assert_false(r->ack->accepted);
  assert_string_equal(r->ack->worker_id, worker_id);
  assert_int_equal(r->ack->seq, seq);
  assert_true(strlen(r->ack->reason) > 0);
  xq_wire_free(&r);
}




static void send_flawed_game(void *s, uint64_t seq, int flaw) {
  unsigned char *buf;
  size_t len;
  random_game(&buf, &len, g_seed++, flaw);
  send_game_msg(s, HOSTILE, seq, buf, len);
  free(buf);
}

static void send_candidate(void *s, const void *net, size_t len, uint64_t step) {
  Xqz__Envelope env;
  Xqz__CandidateNet cn;
  xq_msg_candidate(&env, &cn, net, len, step);
  send_env(s, &env);
}


/* Sends a BatchRequest of `size`: answered with a Batch of at most `cap` samples, or a Wait
 * (pacing: reuse x positions), never an error. */
static void batch_request(void *s, uint32_t size, size_t cap) {
  Xqz__Envelope env;
  Xqz__BatchRequest br;
  xq_msg_batch_request(&env, &br, size, 0);
  send_env(s, &env);
  Xqz__Envelope *r = recv_within(s, 5000);
  assert_non_null(r);
  if (r->body_case == XQZ__ENVELOPE__BODY_BATCH) {
    assert_true(r->batch->n_samples > 0 && r->batch->n_samples <= cap);
  } else {
    assert_int_equal(r->body_case, XQZ__ENVELOPE__BODY_WAIT);
  }
  xq_wire_free(&r);
}

/* Status from the honest worker: only the honest games count. */
static void check_counts(void *w) {
  Xqz__Envelope *r = status(w);
  assert_int_equal(r->status->games, g_honest_games);
  assert_int_equal(r->status->positions, g_honest_positions);
  assert_int_equal(r->status->window_positions, g_honest_positions);
  xq_wire_free(&r);
}


static void test_hostile_client(void **state) {
  (void)state;
  fresh_dir();
  g_extra = "--max_peer_errors=5";
  g_extra2 = "--seed=1";
  pid_t pid = start_coordinator();
  void *ctx = zmq_ctx_new();
  void *w = connect_dealer(ctx);
  uint64_t best = hello_as(w, HONEST);
  honest_game(w);

  /* Each connection below is a new peer (routing id and worker id) with at most 4 errors,
   * below the cut-off, so every answer can be checked; the last one is cut off. */

  /* Connection 1: malformed envelopes. */
  void *h = hostile_connect(ctx, 1);
  /* Random bytes: Error 1 (malformed), counted. */
  unsigned char junk[300];
  xq_rng_t rng;
  xq_rng_seed(&rng, 5);
  for (size_t i = 0; i < sizeof junk; i++) junk[i] = (unsigned char)xq_rng_below(&rng, 256);
  send_raw(h, junk, sizeof junk, 0);
  expect_error(h, E_MALFORMED);
  honest_game(w);
  /* A valid GameRecord envelope cut in half: Error 1, counted. */
  {
    Xqz__Envelope env;
    Xqz__GameRecord g;
    xq_msg_game(&env, &g, HOSTILE, 1, g_first_game, g_first_len);
    size_t len;
    uint8_t *buf = pack_raw(&env, &len);
    send_raw(h, buf, len / 2, 0);
    free(buf);
  }
  expect_error(h, E_MALFORMED);
  /* Version 99 with a StatusRequest body: the version refusal, counted (no Status). */
  {
    Xqz__Envelope env;
    Xqz__StatusRequest q;
    xq_msg_status_request(&env, &q);
    env.version = 99;
    size_t len;
    uint8_t *buf = pack_raw(&env, &len);
    send_raw(h, buf, len, 0);
    free(buf);
  }
  expect_version_refusal(h, 99, 0);
  honest_game(w);
  /* Version 1, a request id, no body: Error 1, counted. */
  {
    Xqz__Envelope env;
    xq_wire_init(&env);
    env.request_id = 7;
    size_t len;
    uint8_t *buf = pack_raw(&env, &len);
    send_raw(h, buf, len, 0);
    free(buf);
  }
  expect_error(h, E_MALFORMED);
  /* Four errors: still served. */
  send_status_request(h);
  Xqz__Envelope *r = recv_within(h, 5000);
  assert_non_null(r);
  assert_int_equal(r->body_case, XQZ__ENVELOPE__BODY_STATUS);
  xq_wire_free(&r);
  zmq_close(h);
  check_counts(w);

  /* Connection 2: a multi-frame message and inconsistent games. */
  h = hostile_connect(ctx, 2);
  /* Two frames, each a valid StatusRequest envelope: one Error 1 (counted), no Status. */
  {
    Xqz__Envelope env;
    Xqz__StatusRequest q;
    xq_msg_status_request(&env, &q);
    size_t len;
    uint8_t *buf = pack_raw(&env, &len);
    send_raw(h, buf, len, ZMQ_SNDMORE);
    send_raw(h, buf, len, 0);
    free(buf);
  }
  expect_error(h, E_MALFORMED);
  expect_nothing(h, 300);
  /* Record bytes that are garbage: Ack accepted=false with the decoder's reason, counted. */
  send_game_msg(h, HOSTILE, 1, junk, sizeof junk);
  expect_refused(h, HOSTILE, 1);
  honest_game(w);
  /* An illegal move at ply 4: Ack accepted=false, counted. */
  send_flawed_game(h, 2, GAME_ILLEGAL_MOVE);
  expect_refused(h, HOSTILE, 2);
  /* Visits on an illegal move at ply 4: Ack accepted=false, counted. */
  send_flawed_game(h, 3, GAME_PI_ILLEGAL);
  expect_refused(h, HOSTILE, 3);
  honest_game(w);
  /* The honest worker's (worker id, seq 1) with another, valid game: acked accepted (a
   * duplicate by its key, so safe to ack) and not stored: the counts below show it. */
  {
    unsigned char *buf;
    size_t len;
    random_game(&buf, &len, g_seed++, GAME_OK);
    send_game_msg(h, HONEST, 1, buf, len);
    free(buf);
    r = recv_within(h, 5000);
    assert_non_null(r);
    assert_int_equal(r->body_case, XQZ__ENVELOPE__BODY_ACK);
    assert_true(r->ack->accepted);
    assert_string_equal(r->ack->worker_id, HONEST);
    assert_int_equal(r->ack->seq, 1);
    xq_wire_free(&r);
  }
  /* BatchRequest size 0 (the default, batch_size=256) and 10^9 (capped at 8192): a Batch or
   * a Wait, not an error. */
  batch_request(h, 0, 256);
  batch_request(h, 1000000000u, 8192);
  /* NetRequest for an unknown net: Error 3 (not found), not counted. */
  send_net_request(h, 0x0123456789abcdefull, 0);
  expect_error(h, E_NOT_FOUND);
  check_counts(w);
  zmq_close(h);

  /* Connection 3: field values out of range, broken candidates, a wrong result. */
  h = hostile_connect(ctx, 3);
  /* NetRequest of the best net at an absurd offset: Error 4 (bad field), counted. */
  send_net_request(h, best, 1ull << 62);
  expect_error(h, E_BAD_FIELD);
  /* CandidateNet of garbage bytes: Ack accepted=false (empty worker id, seq = step),
   * counted. */
  send_candidate(h, junk, sizeof junk, 77);
  expect_refused(h, "", 77);
  honest_game(w);
  /* CandidateNet with a valid .xqzn cut short: Ack accepted=false, counted. */
  {
    unsigned char *net;
    size_t net_len;
    nn_file_meta_t meta;
    tiny_net(&net, &net_len, &meta, best, 78);
    send_candidate(h, net, net_len - net_len / 3, 78);
    free(net);
  }
  expect_refused(h, "", 78);
  /* A result the rules do not give: Ack accepted=false, counted. */
  send_flawed_game(h, 4, GAME_BAD_RESULT);
  expect_refused(h, HOSTILE, 4);
  honest_game(w);
  check_counts(w);
  zmq_close(h);

  /* Connection 4: one message above XQ_WIRE_MAX_MESSAGE (a CandidateNet of 65 MiB). libzmq's
   * ZMQ_MAXMSGSIZE drops the connection while reading the frame header: no reply, no
   * error counted, the coordinator goes on. */
  h = hostile_connect(ctx, 4);
  {
    size_t big = (size_t)XQ_WIRE_MAX_MESSAGE + (1u << 20);
    unsigned char *net = calloc(big, 1);
    assert_non_null(net);
    Xqz__Envelope env;
    Xqz__CandidateNet cn;
    xq_msg_candidate(&env, &cn, net, big, 0);
    size_t len;
    uint8_t *buf = pack_raw(&env, &len);
    free(net);
    assert_true(len > XQ_WIRE_MAX_MESSAGE);
    send_raw(h, buf, len, 0);
    free(buf);
  }
  honest_game(w);
  expect_nothing(h, 1500);
  honest_game(w);
  assert_int_equal(kill(pid, 0), 0);
  assert_int_equal(waitpid(pid, NULL, WNOHANG), 0);
  zmq_close(h);
  check_counts(w);

  /* Connection 5: the cut-off. Errors 1-4 get an Error; the fifth cuts the peer off (no
   * reply); then even valid requests and games from it get nothing and change nothing,
   * while the honest worker is still served. */
  h = hostile_connect(ctx, 5);
  for (int i = 0; i < 4; i++) {
    send_raw(h, junk, sizeof junk - (size_t)i, 0);
    expect_error(h, E_MALFORMED);
  }
  assert_int_equal(log_count("peer cut off"), 0);
  send_raw(h, junk, 10, 0); /* fifth error: cut off, not answered */
  honest_game(w);
  expect_nothing(h, 500);
  send_status_request(h);
  {
    unsigned char *buf;
    size_t len;
    random_game(&buf, &len, g_seed++, GAME_OK);
    send_game_msg(h, HOSTILE, 10, buf, len); /* valid, but from a cut-off peer: ignored */
    free(buf);
  }
  honest_game(w);
  expect_nothing(h, 1000);
  check_counts(w);
  assert_int_equal(log_count("peer cut off"), 1);
  zmq_close(h);

  /* Alive, then a clean stop on SIGTERM. */
  assert_int_equal(kill(pid, 0), 0);
  assert_int_equal(waitpid(pid, NULL, WNOHANG), 0);
  kill(pid, SIGTERM);
  int st;
  waitpid(pid, &st, 0);
  g_pid = -1;
  assert_true(WIFEXITED(st));
  assert_int_equal(WEXITSTATUS(st), 0);
  zmq_close(w);

  /* Restart: the window rebuilt from the segments is exactly the honest games. */
  pid = start_coordinator();
  w = connect_dealer(ctx);
  assert_int_equal(hello_as(w, HONEST), best);
  check_counts(w);
  assert_int_equal(log_count("no longer replays"), 0);
  kill(pid, SIGTERM);
  waitpid(pid, &st, 0);
  g_pid = -1;
  assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  zmq_close(w);
  zmq_ctx_term(ctx);
  free(g_first_game);
  g_first_game = NULL;
  if (!getenv("XQZ_KEEP")) remove_dir();
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test_teardown(test_hostile_client, teardown)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
