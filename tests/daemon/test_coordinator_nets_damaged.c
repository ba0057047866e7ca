/*
 * test_coordinator_nets_damaged.c: the coordinator never serves a damaged net and keeps
 * gating and self-play moving when a net file goes bad (issue 47, items 8 and 9).
 * - A byte flipped in the open match's candidate, or the candidate moved to nets/rejected/:
 *   a NetRequest for it gets an Error, the coordinator logs it, quarantines a damaged file
 *   in nets/damaged/ and closes the match (candidate rejected), so jobs go on.
 * - A byte flipped in the best net while running: the coordinator refuses it, quarantines
 *   it and falls back to the previous best, which Welcome names; the fall back survives a
 *   restart, and a best net damaged while stopped falls back at start instead of stopping
 *   the start.
 * - NetRequests alternating between two nets are served from the cache of verified nets.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

#include "coord_test_util.h"

/* Flips one payload byte of nets/<id>.xqzn. */
static void flip_byte(uint64_t id) {
  char path[512];
  snprintf(path, sizeof path, "%s/camp/nets/%016llx.xqzn", g_dir, (unsigned long long)id);
  struct timespec pause = {0, 50000000}; /* a modification time apart from the verified one */
  nanosleep(&pause, NULL);
  FILE *f = fopen(path, "r+b");
  assert_non_null(f);
  assert_int_equal(fseek(f, 300, SEEK_SET), 0);
  int c = fgetc(f);
  assert_true(c != EOF);
  assert_int_equal(fseek(f, 300, SEEK_SET), 0);
  assert_true(fputc(c ^ 0x40, f) != EOF);
  assert_int_equal(fclose(f), 0);
}

static bool net_in(const char *sub, uint64_t id) {
  char path[512];
  snprintf(path, sizeof path, "%s/camp/nets/%s%016llx.xqzn", g_dir, sub, (unsigned long long)id);
  return access(path, F_OK) == 0;
}

/* Bytes the process has read (read(2) and friends: files and sockets), from /proc. */
static long long bytes_read(pid_t pid) {
  char path[64], line[128];
  snprintf(path, sizeof path, "/proc/%d/io", (int)pid);
  FILE *f = fopen(path, "r");
  assert_non_null(f);
  long long v = -1;
  while (fgets(line, sizeof line, f))
    if (sscanf(line, "rchar: %lld", &v) == 1) break;
  fclose(f);
  assert_true(v >= 0);
  return v;
}

static uint64_t candidate_len(void *s, uint64_t best, size_t *len_out);

/* Uploads a tiny candidate (child of best) from s; returns its id. */
static uint64_t candidate(void *s, uint64_t best) {
  size_t len;
  return candidate_len(s, best, &len);
}

/* The same, with the file's size. */
static uint64_t candidate_len(void *s, uint64_t best, size_t *len_out) {
  unsigned char *net;
  size_t len;
  nn_file_meta_t meta;
  tiny_net(&net, &len, &meta, best, 100);
  *len_out = len;
  Xqz__Envelope *r = upload_candidate(s, net, len, 100);
  free(net);
  assert_int_equal(r->body_case, XQZ__ENVELOPE__BODY_ACK);
  assert_true(r->ack->accepted);
  xq_wire_free(&r);
  return meta.net_id;
}

/* A NetRequest for id: true when a NetChunk came, false on an Error. */
static bool net_served(void *s, uint64_t id) {
  send_net_request(s, id, 0);
  Xqz__Envelope *r = recv_within(s, 5000);
  if (!r) fail_msg("no answer to a NetRequest");
  bool ok = r->body_case == XQZ__ENVELOPE__BODY_NET_CHUNK;
  if (!ok) assert_int_equal(r->body_case, XQZ__ENVELOPE__BODY_ERROR);
  xq_wire_free(&r);
  return ok;
}

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Item 8: a damaged candidate, then a moved one: each closes its match, jobs go on. */
static void test_candidate_damaged_or_moved(void **state) {
  (void)state;
  fresh_dir();
  g_extra = "--gating=sprt";
  start_coordinator();
  void *ctx = zmq_ctx_new();
  void *w = connect_dealer(ctx);
  uint64_t best = hello(w);
  for (int k = 0; k < 2; k++) {
    uint64_t cand = candidate(w, best);
    Xqz__Envelope *j = arena_job(w);
    if (!j) fail_msg("no arena job for the new candidate");
    assert_int_equal(j->job->arena->net_a, cand);
    xq_wire_free(&j);
    if (k == 0) {
      flip_byte(cand);
    } else {
      char from[512], to[512];
      snprintf(from, sizeof from, "%s/camp/nets/%016llx.xqzn", g_dir, (unsigned long long)cand);
      snprintf(to, sizeof to, "%s/camp/nets/rejected", g_dir);
      mkdir(to, 0755);
      snprintf(to, sizeof to, "%s/camp/nets/rejected/%016llx.xqzn", g_dir, (unsigned long long)cand);
      assert_int_equal(rename(from, to), 0);
    }
    assert_false(net_served(w, cand));
    assert_int_equal(log_count("the open match's candidate cannot be served"), k + 1);
    if (k == 0) {
      assert_int_equal(log_count("DAMAGED NET FILE"), 1);
      assert_true(net_in("damaged/", cand));
      assert_false(net_in("", cand));
    }
    /* The match is closed: no more arena pairs of it, self-play jobs of the best net. */
    assert_null(arena_job(w));
    assert_true(net_served(w, best));
  }
  zmq_close(w);
  coord_stop(g_pid);
  zmq_ctx_term(ctx);
  remove_dir();
}

/* Item 9: the best net damaged while running, then while stopped. */
static void test_best_damaged_falls_back(void **state) {
  (void)state;
  fresh_dir();
  g_extra = "--gating=threshold";
  g_extra2 = "--threshold_games=2";
  g_extra3 = "--threshold_score=0.5";
  start_coordinator();
  void *ctx = zmq_ctx_new();
  void *w = connect_dealer(ctx);
  uint64_t first = hello(w);
  /* Two promotions: first -> second -> third, each by one won pair. */
  uint64_t nets[3] = {first, 0, 0};
  for (int k = 1; k < 3; k++) {
    nets[k] = candidate(w, nets[k - 1]);
    Xqz__Envelope *j = arena_job(w);
    if (!j) fail_msg("no arena job");
    assert_true(result_taken(w, "test-worker", j->job->arena->match_id,
                             j->job->arena->pair_index, 1, 1));
    xq_wire_free(&j);
  }
  zmq_close(w);
  w = connect_dealer(ctx);
  assert_int_equal(hello_as(w, "w2"), nets[2]);
  assert_true(net_served(w, nets[2]));

  /* Damaged while running: refused, quarantined, the previous best takes over. */
  flip_byte(nets[2]);
  assert_false(net_served(w, nets[2]));
  assert_int_equal(log_count("BEST NET LOST"), 1);
  assert_true(net_in("damaged/", nets[2]));
  zmq_close(w);
  w = connect_dealer(ctx);
  assert_int_equal(hello_as(w, "w3"), nets[1]);
  assert_true(net_served(w, nets[1]));

  /* A restart keeps the fall back; the previous best damaged while stopped falls back to
   * the first net at start (the start goes on). */
  zmq_close(w);
  coord_stop(g_pid);
  flip_byte(nets[1]);
  start_coordinator();
  w = connect_dealer(ctx);
  assert_int_equal(hello_as(w, "w4"), nets[0]);
  assert_true(net_served(w, nets[0]));
  assert_int_equal(log_count("BEST NET LOST"), 2);
  assert_true(net_in("damaged/", nets[1]));

  /* The net cache: requests alternating between two nets (a candidate's and the best's)
   * are served from memory. */
  size_t len = 0;
  uint64_t cand = candidate_len(w, nets[0], &len);
  assert_true(net_served(w, cand));
  long long read0 = bytes_read(g_pid);
  double t0 = now_ms();
  for (int i = 0; i < 200; i++) assert_true(net_served(w, i & 1 ? nets[0] : cand));
  double per = (now_ms() - t0) / 200;
  long long read = bytes_read(g_pid) - read0;
  fprintf(stderr, "alternating NetRequests: %.3f ms each (round trip, %zu-byte nets), %lld"
          " bytes read by the coordinator\n", per, len, read);
  assert_true(read < (long long)len); /* before the cache: 200 files read, 200 x len */
  zmq_close(w);
  coord_stop(g_pid);
  zmq_ctx_term(ctx);
  remove_dir();
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_teardown(test_candidate_damaged_or_moved, teardown),
      cmocka_unit_test_teardown(test_best_damaged_falls_back, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
