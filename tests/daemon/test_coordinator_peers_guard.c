/*
 * test_coordinator_peers_guard.c: a real xqz-coordinator against peers that play with the
 * ROUTER's routing ids and replies (issue 47, Peers 1-3, 5; coordinator/peers/guard.h):
 *  - claiming the ids libzmq would generate next (0x00 + the counter rand() starts at when
 *    nothing seeds it) and then connecting without an id must not abort the coordinator;
 *  - a routing id the client chose (not libzmq's form) is refused;
 *  - a peer at 127.0.0.2 that takes an honest worker's routing id, while it is connected
 *    or after it left, is never served as that worker;
 *  - a peer that asks for net chunks and never reads them grows the coordinator's memory
 *    by a few MiB, not by every reply (it had been +796 MiB);
 *  - the open-file limit is raised to its hard limit at start.
 * Loopback only: 127.0.0.2 stands in for another host. XQZ_COORDINATOR=path tests another
 * build of the coordinator.
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
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zmq.h>

#include "coord_test_util.h"

/* The routing id libzmq 4.3.4's ROUTER generates for its k-th anonymous peer in a process
 * that never seeded rand(): 0x00 then the big-endian counter (router.cpp,
 * random.cpp generate_random). */
static void predicted_rid(uint8_t rid[5], uint32_t k) {
  srand(1); /* what an unseeded process starts with */
  uint32_t low = (uint32_t)rand();
  uint32_t high = (uint32_t)rand();
  uint32_t v = ((high << 31) | low) + k;
  rid[0] = 0;
  rid[1] = (uint8_t)(v >> 24);
  rid[2] = (uint8_t)(v >> 16);
  rid[3] = (uint8_t)(v >> 8);
  rid[4] = (uint8_t)v;
}

/* A DEALER connecting from `from` (127.0.0.1 or 127.0.0.2) with routing id rid (NULL:
 * none, the ROUTER's own). */
static void *dealer_from(void *ctx, const char *from, const void *rid, size_t rid_len) {
  void *s = zmq_socket(ctx, ZMQ_DEALER);
  int t = 8000, linger = 0;
  zmq_setsockopt(s, ZMQ_RCVTIMEO, &t, sizeof t);
  zmq_setsockopt(s, ZMQ_LINGER, &linger, sizeof linger);
  if (rid) assert_int_equal(zmq_setsockopt(s, ZMQ_ROUTING_ID, rid, rid_len), 0);
  char addr[96];
  snprintf(addr, sizeof addr, "tcp://%s:0;127.0.0.1:%d", from, g_router_port);
  assert_int_equal(zmq_connect(s, addr), 0);
  return s;
}

/* true while the coordinator runs (it did not abort). */
static bool coordinator_alive(pid_t pid) {
  int st;
  pid_t r = waitpid(pid, &st, WNOHANG);
  if (r == pid) {
    g_pid = -1;
    if (WIFSIGNALED(st)) fprintf(stderr, "coordinator died on signal %d\n", WTERMSIG(st));
    return false;
  }
  return true;
}

/* Sends a game of seed under worker id wid, seq; the reply (or NULL within 3 s). */
static Xqz__Envelope *game_reply(void *s, const char *wid, uint64_t seq, uint64_t seed) {
  unsigned char *buf;
  size_t len;
  random_game(&buf, &len, seed, GAME_OK);
  send_game_msg(s, wid, seq, buf, len);
  free(buf);
  return recv_within(s, 3000);
}

/* true when r is an Ack that accepted the game. */
static bool accepted(const Xqz__Envelope *r) {
  return r && r->body_case == XQZ__ENVELOPE__BODY_ACK && r->ack->accepted;
}

static void test_predicted_ids_do_not_abort(void **state) {
  (void)state;
  fresh_dir();
  pid_t pid = start_coordinator();
  void *ctx = zmq_ctx_new();
  /* Claim the next four ids libzmq would give; each gets an answer, so each is known to the
   * ROUTER before the anonymous peer connects. */
  void *claim[4];
  for (uint32_t k = 0; k < 4; k++) {
    uint8_t rid[5];
    predicted_rid(rid, k);
    claim[k] = dealer_from(ctx, "127.0.0.1", rid, sizeof rid);
    send_status_request(claim[k]);
    Xqz__Envelope *r = recv_within(claim[k], 5000);
    assert_non_null(r);
    xq_wire_free(&r);
  }
  void *anon = dealer_from(ctx, "127.0.0.1", NULL, 0);
  send_status_request(anon);
  Xqz__Envelope *r = recv_within(anon, 5000);
  bool alive = coordinator_alive(pid);
  if (!alive) fail_msg("the coordinator aborted when an anonymous peer took a claimed id");
  assert_non_null(r);
  assert_int_equal(r->body_case, XQZ__ENVELOPE__BODY_STATUS);
  xq_wire_free(&r);
  for (int k = 0; k < 4; k++) zmq_close(claim[k]);
  zmq_close(anon);
  zmq_ctx_term(ctx);
  coord_stop(pid);
  remove_dir();
}

static void test_chosen_rid_refused(void **state) {
  (void)state;
  fresh_dir();
  pid_t pid = start_coordinator();
  void *ctx = zmq_ctx_new();
  void *s = dealer_from(ctx, "127.0.0.1", "hostile-1", 9);
  send_status_request(s);
  expect_error(s, XQ_ERROR_NOT_ALLOWED);
  assert_int_equal(log_count("do not set ZMQ_ROUTING_ID"), 1);
  /* Counted, logged once a minute. */
  send_status_request(s);
  expect_error(s, XQ_ERROR_NOT_ALLOWED);
  assert_int_equal(log_count("do not set ZMQ_ROUTING_ID"), 1);
  zmq_close(s);
  zmq_ctx_term(ctx);
  coord_stop(pid);
  remove_dir();
}

static void test_takeover_while_connected(void **state) {
  (void)state;
  fresh_dir();
  pid_t pid = start_coordinator();
  void *ctx = zmq_ctx_new();
  void *w = dealer_from(ctx, "127.0.0.1", NULL, 0); /* this process's first generated id */
  hello_as(w, "honest");
  Xqz__Envelope *r = game_reply(w, "honest", 1, 7001);
  assert_true(accepted(r));
  xq_wire_free(&r);
  /* Another host takes the routing id the honest worker was given. */
  uint8_t rid[5];
  predicted_rid(rid, 0);
  void *a = dealer_from(ctx, "127.0.0.2", rid, sizeof rid);
  for (uint64_t seq = 2; seq <= 3; seq++) {
    r = game_reply(a, "honest", seq, 7000 + seq);
    if (accepted(r)) fail_msg("a game from 127.0.0.2 was accepted as the honest worker's");
    xq_wire_free(&r);
  }
  /* The honest worker is still served, on its own connection. */
  r = game_reply(w, "honest", 4, 7004);
  if (!accepted(r)) fail_msg("the honest worker was not served after the attempt");
  assert_true(coordinator_alive(pid));
  xq_wire_free(&r);
  zmq_close(a);
  zmq_close(w);
  zmq_ctx_term(ctx);
  coord_stop(pid);
  remove_dir();
}

static void test_takeover_after_leaving(void **state) {
  (void)state;
  fresh_dir();
  pid_t pid = start_coordinator();
  void *ctx = zmq_ctx_new();
  /* An id of libzmq's form that a peer chose; the coordinator cannot tell it from its own. */
  const uint8_t rid[5] = {0, 0xde, 0xad, 0xbe, 0xef};
  void *w = dealer_from(ctx, "127.0.0.1", rid, sizeof rid);
  hello_as(w, "honest");
  Xqz__Envelope *r = game_reply(w, "honest", 1, 8001);
  assert_true(accepted(r));
  xq_wire_free(&r);
  zmq_close(w);
  usleep(300000); /* the ROUTER lets the id go */
  void *a = dealer_from(ctx, "127.0.0.2", rid, sizeof rid);
  r = game_reply(a, "honest", 2, 8002);
  if (accepted(r)) fail_msg("a game from 127.0.0.2 under the honest worker's routing id was"
                            " accepted");
  assert_non_null(r);
  assert_int_equal(r->body_case, XQZ__ENVELOPE__BODY_ERROR);
  assert_int_equal(r->error->code, XQ_ERROR_NOT_ALLOWED);
  xq_wire_free(&r);
  assert_true(log_count("belongs to another connection") >= 1);
  zmq_close(a);
  zmq_ctx_term(ctx);
  coord_stop(pid);
  remove_dir();
}

/* The coordinator's resident memory (VmRSS) in KiB. */
static long rss_kib(pid_t pid) {
  char path[64], line[256];
  snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
  FILE *f = fopen(path, "r");
  assert_non_null(f);
  long kib = -1;
  while (fgets(line, sizeof line, f))
    if (sscanf(line, "VmRSS: %ld kB", &kib) == 1) break;
  fclose(f);
  assert_true(kib > 0);
  return kib;
}

static void test_slow_reader_bounded(void **state) {
  (void)state;
  fresh_dir();
  g_extra = "--max_peer_errors=1000"; /* refused, not cut: every request is looked at */
  pid_t pid = start_coordinator();
  g_extra = "--gating=sprt";
  void *ctx = zmq_ctx_new();
  void *w = connect_dealer(ctx);
  uint64_t best = hello_as(w, "reader");
  /* The size of one chunk: the reply to offset 0. */
  send_net_request(w, best, 0);
  Xqz__Envelope *r = recv_within(w, 5000);
  assert_non_null(r);
  assert_int_equal(r->body_case, XQZ__ENVELOPE__BODY_NET_CHUNK);
  size_t chunk = r->net_chunk->data.len;
  xq_wire_free(&r);
  /* Enough requests for 600 MiB of replies over two connections that read nothing: a
   * receive queue of one message and a small socket buffer, so they stop reading soon. */
  int per_conn = (int)((300u << 20) / chunk) + 1;
  long before = rss_kib(pid);
  void *slow[2];
  for (int k = 0; k < 2; k++) {
    slow[k] = zmq_socket(ctx, ZMQ_DEALER);
    int one = 1, buf = 4096, linger = 0, sndhwm = 0;
    zmq_setsockopt(slow[k], ZMQ_RCVHWM, &one, sizeof one);
    zmq_setsockopt(slow[k], ZMQ_RCVBUF, &buf, sizeof buf);
    zmq_setsockopt(slow[k], ZMQ_SNDHWM, &sndhwm, sizeof sndhwm);
    zmq_setsockopt(slow[k], ZMQ_LINGER, &linger, sizeof linger);
    char addr[64];
    snprintf(addr, sizeof addr, "tcp://127.0.0.1:%d", g_router_port);
    assert_int_equal(zmq_connect(slow[k], addr), 0);
  }
  for (int i = 0; i < per_conn; i++)
    for (int k = 0; k < 2; k++) send_net_request(slow[k], best, 0);
  /* The coordinator has taken them all when it answers a status request behind them. */
  for (int i = 0; i < 100; i++) {
    usleep(100000);
    send_status_request(w);
    r = recv_within(w, 20000);
    assert_non_null(r);
    xq_wire_free(&r);
    if (log_count("replies unread") >= 2) break;
  }
  usleep(500000);
  long grew_mib = (rss_kib(pid) - before) / 1024;
  fprintf(stderr, "2 slow readers x %d net requests of %zu-byte chunks: coordinator RSS +%ld"
          " MiB, refusals logged %d\n", per_conn, chunk, grew_mib, log_count("replies unread"));
  assert_true(coordinator_alive(pid));
  /* Bounded: 4 MiB unread per connection, plus the peers' socket buffers and the
   * sanitizer's quarantine of freed replies; without the bound, 600 MiB. */
  assert_true(grew_mib < 150);
  assert_true(log_count("replies unread") >= 2);
  for (int k = 0; k < 2; k++) zmq_close(slow[k]);
  zmq_close(w);
  zmq_ctx_term(ctx);
  coord_stop(pid);
  remove_dir();
}

/* The soft "Max open files" of process pid. */
static long open_files_limit(pid_t pid) {
  char path[64], line[256];
  snprintf(path, sizeof path, "/proc/%d/limits", (int)pid);
  FILE *f = fopen(path, "r");
  assert_non_null(f);
  long soft = -1;
  while (fgets(line, sizeof line, f))
    if (sscanf(line, "Max open files %ld", &soft) == 1) break;
  fclose(f);
  return soft;
}

static void test_connection_flood(void **state) {
  (void)state;
  enum { FLOOD = 1100 };
  struct rlimit rl, shell;
  assert_int_equal(getrlimit(RLIMIT_NOFILE, &rl), 0);
  if (rl.rlim_max < 4 * FLOOD) skip(); /* no room to raise here */
  fresh_dir();
  /* Started from a shell's 1024; this process keeps room for its own connections. */
  shell = rl;
  shell.rlim_cur = 1024;
  assert_int_equal(setrlimit(RLIMIT_NOFILE, &shell), 0);
  pid_t pid = start_coordinator();
  assert_int_equal(setrlimit(RLIMIT_NOFILE, &rl), 0);
  void *ctx = zmq_ctx_new();
  void *w = connect_dealer(ctx);
  hello_as(w, "flooded");
  assert_int_equal(open_files_limit(pid), (long)rl.rlim_max);
  assert_int_equal(log_count("open-file limit"), 1);
  /* 1,100 idle connections that never speak. */
  static int fds[FLOOD];
  struct sockaddr_in a;
  memset(&a, 0, sizeof a);
  a.sin_family = AF_INET;
  a.sin_port = htons((uint16_t)g_router_port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  for (int i = 0; i < FLOOD; i++) {
    fds[i] = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(fds[i] >= 0);
    assert_int_equal(connect(fds[i], (struct sockaddr *)&a, sizeof a), 0);
  }
  /* A new peer still gets in, and games are still stored. */
  void *late = connect_dealer(ctx);
  send_status_request(late);
  Xqz__Envelope *r = recv_within(late, 5000);
  if (!r) fail_msg("a new peer was locked out by %d idle connections", FLOOD);
  xq_wire_free(&r);
  r = game_reply(w, "flooded", 1, 9001);
  if (!accepted(r)) fail_msg("a game was not stored during the flood");
  xq_wire_free(&r);
  for (int i = 0; i < FLOOD; i++) close(fds[i]);
  zmq_close(late);
  zmq_close(w);
  zmq_ctx_term(ctx);
  coord_stop(pid);
  remove_dir();
}

int main(void) {
  /* XQZ_COORDINATOR=path runs another build (say, one from before the fix). */
  if (getenv("XQZ_COORDINATOR")) g_coordinator = getenv("XQZ_COORDINATOR");
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_teardown(test_predicted_ids_do_not_abort, teardown),
      cmocka_unit_test_teardown(test_chosen_rid_refused, teardown),
      cmocka_unit_test_teardown(test_takeover_while_connected, teardown),
      cmocka_unit_test_teardown(test_takeover_after_leaving, teardown),
      cmocka_unit_test_teardown(test_slow_reader_bounded, teardown),
      cmocka_unit_test_teardown(test_connection_flood, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
