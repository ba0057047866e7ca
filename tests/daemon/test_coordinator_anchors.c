/*
 * test_coordinator_anchors.c: strength against fixed anchors (coordinator/anchors.c),
 * against a real xqz-coordinator with 4 games per anchor (2 pairs) against greedy and
 * alphabeta:1:
 *  - net 1 is measured from the start: an anchor match against greedy is open;
 *  - a worker whose Hello lacks XQ_FEATURE_ANCHOR_JOBS (an older one) is never sent an
 *    anchor pair; one that has it gets pairs naming the anchor (anchor_b) with net_b 0;
 *  - a result counts only from the pair's holder (the gating check, reused): another
 *    worker's result for it is refused as forged;
 *  - a complete match is recorded (Status.anchor_history, anchors.log) and the next
 *    anchor opens; the score is the net's (W + D/2) / games;
 *  - gating comes first: with a gating match open, every arena slot is its pair, and the
 *    anchor match gets one self-play slot in two, so it is not starved;
 *  - an open anchor match resumes after a restart with its scored pair;
 *  - a net promoted while another is measured waits until that one has every anchor;
 *  - an `anchors` setting naming anything but a built-in player is refused at start.
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
#include <unistd.h>
#include <zmq.h>

#include "coord_test_util.h"

/* A DEALER that has said Hello as worker_id with these feature bits. */
static void *worker(void *ctx, const char *worker_id, uint32_t features) {
  void *s = connect_dealer(ctx);
  hello_features(s, worker_id, features);
  return s;
}

static Xqz__Envelope *status_of(void *s) { return status(s); }

/* The open anchor match's anchor ("" when none) and id. */
static void open_anchor(void *s, char *anchor, size_t n, uint64_t *net) {
  Xqz__Envelope *r = status_of(s);
  const Xqz__AnchorPoint *a = r->status->open_anchor;
  snprintf(anchor, n, "%s", a ? a->anchor : "");
  if (a && net) *net = a->net_id;
  xq_wire_free(&r);
}

static void stop(void) {
  kill(g_pid, SIGTERM);
  int st;
  waitpid(g_pid, &st, 0);
  g_pid = -1;
  assert_true(WIFEXITED(st));
  assert_int_equal(WEXITSTATUS(st), 0);
}

static void test_anchor_matches(void **state) {
  (void)state;
  fresh_dir();
  g_extra = "--anchor_games=4";
  g_extra2 = "--anchors=greedy,alphabeta:1";
  g_extra3 = "--gating=none";
  g_extra4 = "--threshold_games=8";
  start_coordinator();
  void *ctx = zmq_ctx_new();
  void *old = worker(ctx, "old-worker", 0);
  void *w1 = worker(ctx, "w1", XQ_FEATURE_ANCHOR_JOBS);
  void *w2 = worker(ctx, "w2", XQ_FEATURE_ANCHOR_JOBS);
  char anchor[64];
  uint64_t net1 = 0;
  open_anchor(w1, anchor, sizeof anchor, &net1);
  assert_string_equal(anchor, "greedy"); /* net 1 measured from the start */

  /* The older worker: self-play only, however often it asks. */
  assert_null(arena_job(old));
  assert_null(arena_job(old));

  /* w1 gets both pairs of the greedy match, naming the anchor, net_b 0. */
  uint64_t match = 0;
  uint32_t pairs[2];
  for (int i = 0; i < 2; i++) {
    Xqz__Envelope *r = arena_job(w1);
    assert_non_null(r);
    const Xqz__ArenaJob *aj = r->job->arena;
    assert_string_equal(aj->anchor_b, "greedy");
    assert_int_equal(aj->net_b, 0);
    assert_int_equal(aj->net_a, net1);
    match = aj->match_id;
    pairs[i] = aj->pair_index;
    xq_wire_free(&r);
  }
  assert_true(pairs[0] != pairs[1]);
  assert_null(arena_job(w2)); /* both pairs out: nothing for w2 */
  /* w2 claims w1's pair: forged, refused, not scored. */
  assert_false(result_taken(w2, "w2", match, pairs[0], 1, 1));
  assert_int_equal(log_count("arena result for a pair not issued to this peer"), 1);
  assert_true(result_taken(w1, "w1", match, pairs[0], 1, 0)); /* win, draw */
  assert_false(result_taken(w1, "w1", match, pairs[0], 1, 0)); /* once only */

  /* Restart with one pair scored: the match resumes, the holder's result still counts. */
  zmq_close(old);
  zmq_close(w1);
  zmq_close(w2);
  stop();
  start_coordinator();
  /* w1's result for its other pair, queued before the restart, reaches the new coordinator
   * ahead of w1's Hello: it is not scored, and not counted against w1 either: the answer
   * asks for a Hello, after which w1 sends it again below. */
  void *queued = connect_dealer(ctx);
  Xqz__Envelope env;
  Xqz__ArenaResult ar;
  xq_msg_arena_result(&env, &ar, "w1", match, pairs[1], -1, 0);
  env.request_id = 61;
  Xqz__Envelope *r = rpc(queued, &env);
  assert_int_equal(r->body_case, XQZ__ENVELOPE__BODY_ERROR);
  assert_int_equal(r->error->code, XQ_ERROR_HELLO_FIRST);
  assert_int_equal(r->request_id, 61);
  xq_wire_free(&r);
  assert_int_equal(log_count("arena result for a pair not issued to this peer"), 1);
  zmq_close(queued);
  w1 = worker(ctx, "w1", XQ_FEATURE_ANCHOR_JOBS);
  w2 = worker(ctx, "w2", XQ_FEATURE_ANCHOR_JOBS);
  open_anchor(w1, anchor, sizeof anchor, NULL);
  assert_string_equal(anchor, "greedy");
  assert_int_equal(log_count("anchor match resumed after the restart"), 1);
  r = status_of(w1);
  assert_int_equal(r->status->open_anchor->wins, 1);
  assert_int_equal(r->status->open_anchor->draws, 1);
  assert_int_equal(r->status->n_anchor_history, 0);
  xq_wire_free(&r);
  assert_true(result_taken(w1, "w1", match, pairs[1], -1, 0)); /* loss, draw */

  /* Decided: 1-2-1 is 50%; the alphabeta:1 match opens. */
  r = status_of(w1);
  assert_int_equal(r->status->n_anchor_history, 1);
  const Xqz__AnchorPoint *a = r->status->anchor_history[0];
  assert_string_equal(a->anchor, "greedy");
  assert_int_equal(a->net_id, net1);
  assert_int_equal(a->wins, 1);
  assert_int_equal(a->draws, 2);
  assert_int_equal(a->losses, 1);
  assert_true(a->score == 0.5);
  assert_int_equal(a->promotion, 1);
  assert_non_null(r->status->open_anchor);
  assert_string_equal(r->status->open_anchor->anchor, "alphabeta:1");
  xq_wire_free(&r);
  char path[400], line[1024];
  snprintf(path, sizeof path, "%s/camp/anchors.log", g_dir);
  FILE *f = fopen(path, "r");
  assert_non_null(f);
  assert_non_null(fgets(line, sizeof line, f));
  fclose(f);
  assert_non_null(strstr(line, "\"anchor\":\"greedy\""));
  assert_non_null(strstr(line, "\"w\":1,\"d\":2,\"l\":1,\"score\":0.5000"));

  /* Gating first: a candidate's match takes the arena jobs while the anchor match waits. */
  void *tr = connect_dealer(ctx);
  unsigned char *net;
  size_t net_len;
  nn_file_meta_t meta;
  tiny_net(&net, &net_len, &meta, net1, 100);
  r = upload_candidate(tr, net, net_len, 100);
  free(net);
  assert_true(r->ack->accepted);
  xq_wire_free(&r);
  /* Eight jobs in a row: every arena slot (every other job) is a gating pair while the
   * match has pairs to give, and an anchor pair still comes in before its last one. */
  int gating = 0, anchor_pairs = 0, anchor_before_gating_done = 0;
  for (int i = 0; i < 8; i++) {
    Xqz__Envelope env2;
    Xqz__JobRequest jr;
    xq_msg_job_request(&env2, &jr, NULL);
    env2.request_id = 70 + (uint64_t)i;
    r = rpc(w1, &env2);
    assert_int_equal(r->body_case, XQZ__ENVELOPE__BODY_JOB);
    if (r->job->kind_case == XQZ__JOB__KIND_ARENA && !r->job->arena->anchor_b[0]) {
      assert_int_equal(r->job->arena->net_a, meta.net_id);
      assert_int_equal(r->job->arena->net_b, net1);
      gating++;
    } else if (r->job->kind_case == XQZ__JOB__KIND_ARENA) {
      assert_string_equal(r->job->arena->anchor_b, "alphabeta:1");
      anchor_pairs++;
      if (gating < 4) anchor_before_gating_done = 1;
    }
    xq_wire_free(&r);
  }
  assert_int_equal(gating, 4);           /* the match's 4 pairs, on the 4 arena slots */
  assert_int_equal(anchor_pairs, 2);     /* one self-play slot in two */
  assert_true(anchor_before_gating_done); /* not starved by the open gating match */
  zmq_close(w1);
  zmq_close(w2);
  zmq_close(tr);
  stop();

  /* Only built-in players may be anchors (a worker would run anything else). */
  g_extra2 = "--anchors=greedy,uci:/bin/sh";
  pid_t pid = start_coordinator();
  int st;
  waitpid(pid, &st, 0);
  g_pid = -1;
  assert_true(WIFEXITED(st));
  assert_int_not_equal(WEXITSTATUS(st), 0);
  assert_int_equal(log_count("anchors: 'uci:/bin/sh' is not a built-in player"), 1);
  zmq_ctx_term(ctx);
  if (!getenv("XQZ_KEEP")) remove_dir();
}

/* A promotion while net 1 is measured: net 1 still gets its next anchor before the new
 * best net is measured, so each measured net has every anchor. */
/* A worker back on a new connection (it restarted, or its coordinator did) whose Hello
 * has XQ_FEATURE_HOLDING lists the pairs it holds: the pair issued to it and not listed is
 * handed out at once, not after its deadline; the listed one stays its own. */
static void test_hello_hands_back_lost_pairs(void **state) {
  (void)state;
  fresh_dir();
  g_extra = "--anchor_games=4";
  g_extra2 = "--anchors=greedy";
  g_extra3 = "--gating=none";
  g_extra4 = "--threshold_games=8";
  start_coordinator();
  void *ctx = zmq_ctx_new();
  /* A connection that has not said Hello gets self-play only: a pair issued to it could
   * never be matched to its worker's later messages. */
  void *bare = connect_dealer(ctx);
  assert_null(arena_job(bare));
  zmq_close(bare);
  void *w1 = worker(ctx, "w1", XQ_FEATURE_ANCHOR_JOBS);
  void *w2 = worker(ctx, "w2", XQ_FEATURE_ANCHOR_JOBS);
  uint64_t match = 0;
  uint32_t pairs[2];
  for (int i = 0; i < 2; i++) {
    Xqz__Envelope *r = arena_job(w1);
    assert_non_null(r);
    match = r->job->arena->match_id;
    pairs[i] = r->job->arena->pair_index;
    xq_wire_free(&r);
  }
  assert_null(arena_job(w2)); /* both pairs out to w1 */

  /* A list longer than XQ_HOLDING_MAX is ignored whole: nothing is handed out again. */
  zmq_close(w1);
  w1 = connect_dealer(ctx);
  static Xqz__ArenaPairRef many[XQ_HOLDING_MAX + 1];
  Xqz__ArenaPairRef *many_p[XQ_HOLDING_MAX + 1];
  for (int i = 0; i <= XQ_HOLDING_MAX; i++) {
    xqz__arena_pair_ref__init(&many[i]);
    many[i].match_id = match + 1000;
    many_p[i] = &many[i];
  }
  hello_holding(w1, "w1", XQ_FEATURE_ANCHOR_JOBS | XQ_FEATURE_HOLDING, many_p,
                XQ_HOLDING_MAX + 1);
  assert_int_equal(log_count("the list is ignored"), 1);
  assert_null(arena_job(w2)); /* both pairs still w1's */

  /* w1 again, holding pairs[0] only: pairs[1]'s job was lost. */
  zmq_close(w1);
  w1 = connect_dealer(ctx);
  Xqz__ArenaPairRef ref = XQZ__ARENA_PAIR_REF__INIT, *refs[1] = {&ref};
  ref.match_id = match;
  ref.pair_index = pairs[0];
  hello_holding(w1, "w1", XQ_FEATURE_ANCHOR_JOBS | XQ_FEATURE_HOLDING, refs, 1);
  Xqz__Envelope *r;
  assert_int_equal(log_count("arena pairs handed out again"), 1);
  r = arena_job(w2);
  assert_non_null(r);
  assert_int_equal(r->job->arena->match_id, match);
  assert_int_equal(r->job->arena->pair_index, pairs[1]);
  xq_wire_free(&r);
  assert_null(arena_job(w2)); /* pairs[0] is still w1's */
  assert_true(result_taken(w1, "w1", match, pairs[0], 1, 0));
  assert_true(result_taken(w2, "w2", match, pairs[1], 0, 0));
  assert_false(result_taken(w1, "w1", match, pairs[1], 1, 1)); /* given up: stale */
  assert_int_equal(log_count("arena result for a pair not issued to this peer"), 0);
  zmq_close(w1);
  zmq_close(w2);
  zmq_ctx_term(ctx);
}

static void test_each_net_every_anchor(void **state) {
  (void)state;
  fresh_dir();
  g_extra = "--anchor_games=2";
  g_extra2 = "--anchors=greedy,alphabeta:1";
  g_extra3 = "--gating=none";
  g_extra4 = "--threshold_games=2";
  start_coordinator();
  void *ctx = zmq_ctx_new();
  void *w1 = worker(ctx, "w1", XQ_FEATURE_ANCHOR_JOBS);
  char anchor[64];
  uint64_t net1 = 0, net = 0;
  open_anchor(w1, anchor, sizeof anchor, &net1);
  assert_string_equal(anchor, "greedy");
  Xqz__Envelope *r = arena_job(w1); /* net 1's one greedy pair, out with w1 */
  assert_non_null(r);
  uint64_t greedy_match = r->job->arena->match_id;
  uint32_t greedy_pair = r->job->arena->pair_index;
  xq_wire_free(&r);
  /* A candidate, promoted by its one pair. */
  void *tr = connect_dealer(ctx);
  unsigned char *buf;
  size_t len;
  nn_file_meta_t meta;
  tiny_net(&buf, &len, &meta, net1, 100);
  r = upload_candidate(tr, buf, len, 100);
  free(buf);
  assert_true(r->ack->accepted);
  xq_wire_free(&r);
  r = arena_job(w1);
  assert_non_null(r);
  assert_string_equal(r->job->arena->anchor_b, "");
  uint64_t gm = r->job->arena->match_id;
  uint32_t gp = r->job->arena->pair_index;
  xq_wire_free(&r);
  assert_true(result_taken(w1, "w1", gm, gp, 1, 1));
  r = status_of(w1);
  assert_int_equal(r->status->best_net_id, meta.net_id);
  xq_wire_free(&r);
  /* Net 1's greedy match ends: next is net 1 against alphabeta:1, not the new best. */
  assert_true(result_taken(w1, "w1", greedy_match, greedy_pair, 0, 0));
  open_anchor(w1, anchor, sizeof anchor, &net);
  assert_string_equal(anchor, "alphabeta:1");
  assert_int_equal(net, net1);
  r = arena_job(w1);
  assert_non_null(r);
  assert_true(result_taken(w1, "w1", r->job->arena->match_id, r->job->arena->pair_index, 0, 0));
  xq_wire_free(&r);
  /* Then the new best net (promotion 2). */
  open_anchor(w1, anchor, sizeof anchor, &net);
  assert_string_equal(anchor, "greedy");
  assert_int_equal(net, meta.net_id);
  r = status_of(w1);
  assert_int_equal(r->status->n_anchor_history, 2);
  assert_int_equal(r->status->open_anchor->promotion, 2);
  xq_wire_free(&r);
  zmq_close(w1);
  zmq_close(tr);
  stop();
  zmq_ctx_term(ctx);
  if (!getenv("XQZ_KEEP")) remove_dir();
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_teardown(test_anchor_matches, teardown),
      cmocka_unit_test_teardown(test_hello_hands_back_lost_pairs, teardown),
      cmocka_unit_test_teardown(test_each_net_every_anchor, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
