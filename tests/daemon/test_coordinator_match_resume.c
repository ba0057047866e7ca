/*
 * test_coordinator_match_resume.c: an open gating match survives a coordinator restart
 * (coordinator/storage/match_store.c). A real xqz-coordinator (threshold gating, 3 pairs) opens a
 * match for a candidate; one pair is scored, one is out with a worker, and the daemon is
 * killed (SIGKILL: nothing is flushed on the way out). Restarted on the same campaign, the
 * match is the same one with the scored pair's games counted once: a repeat of that result
 * is refused, the pair that was out still counts from its holder only, the last pair is
 * handed out, and the decided match holds exactly the match's six games. Across the
 * restarts the Status keeps what campaign.db knows: the trainer's step (no trainer has
 * spoken since), the last gating decision, the throughput rows.
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

/* A DEALER that has said Hello as worker_id (after a restart: once the daemon answers). */
static void *worker(void *ctx, const char *worker_id, uint64_t *best) {
  void *s = connect_dealer(ctx);
  *best = hello_as(s, worker_id);
  return s;
}

/* The open match's games so far (-1 when none is open), and its id. */
static int64_t open_games(void *s, uint64_t *match) {
  Xqz__Envelope *r = status(s);
  int64_t n = -1;
  if (r->status->open_match) {
    n = r->status->open_match->wins + r->status->open_match->draws +
        r->status->open_match->losses;
    *match = r->status->open_match->match_id;
  }
  xq_wire_free(&r);
  return n;
}

static uint32_t arena_pair(void *s, uint64_t match) {
  Xqz__Envelope *r = arena_job(s);
  if (!r) fail_msg("no arena job handed out");
  assert_int_equal(r->job->arena->match_id, match);
  uint32_t pair = r->job->arena->pair_index;
  xq_wire_free(&r);
  return pair;
}

static void test_restart_mid_match(void **state) {
  (void)state;
  fresh_dir();
  g_extra = "--gating=threshold";
  g_extra2 = "--threshold_games=6";
  g_extra3 = "--threshold_score=0.5";
  start_coordinator();
  void *ctx = zmq_ctx_new();
  uint64_t best;
  void *w1 = worker(ctx, "w1", &best), *w2 = worker(ctx, "w2", &best);
  void *tr = connect_dealer(ctx);
  unsigned char *net;
  size_t net_len;
  nn_file_meta_t meta;
  tiny_net(&net, &net_len, &meta, best, 300);
  Xqz__Envelope *r = upload_candidate(tr, net, net_len, 300);
  free(net);
  assert_int_equal(r->body_case, XQZ__ENVELOPE__BODY_ACK);
  assert_true(r->ack->accepted);
  xq_wire_free(&r);
  uint64_t match = 0;
  assert_int_equal(open_games(w1, &match), 0);
  uint32_t p0 = arena_pair(w1, match), p1 = arena_pair(w2, match);
  assert_true(p0 != p1);
  assert_true(result_taken(w1, "w1", match, p0, 1, 0)); /* a win and a draw */
  assert_int_equal(open_games(w1, &match), 2);

  /* Killed mid-match: p0 scored, p1 out with w2, the third pair never handed out. */
  kill(g_pid, SIGKILL);
  waitpid(g_pid, NULL, 0);
  g_pid = -1;
  zmq_close(w1);
  zmq_close(w2);
  zmq_close(tr);
  start_coordinator();
  w1 = worker(ctx, "w1", &best);
  w2 = worker(ctx, "w2", &best);
  uint64_t after = 0;
  assert_int_equal(open_games(w1, &after), 2); /* the same match, its games counted once */
  assert_int_equal(after, match);
  assert_int_equal(log_count("gating match resumed after the restart"), 1);
  /* No trainer has spoken since the restart: the step is the campaign's (the candidate's). */
  Xqz__Envelope *st = status(w1);
  assert_int_equal(st->status->trainer_step, 300);
  xq_wire_free(&st);
  assert_false(result_taken(w1, "w1", match, p0, 1, 0)); /* scored already: not again */
  assert_false(result_taken(w1, "w1", match, p1, 1, 1)); /* p1 is w2's, not w1's */
  assert_int_equal(open_games(w1, &after), 2);
  uint32_t p2 = arena_pair(w1, match); /* the pair never handed out, not p0 or p1 */
  assert_true(p2 != p0 && p2 != p1);
  assert_true(result_taken(w2, "w2", match, p1, 0, 0)); /* its holder's result counts */
  assert_int_equal(open_games(w1, &after), 4);
  assert_true(result_taken(w1, "w1", match, p2, -1, 1));
  assert_int_equal(open_games(w1, &after), -1); /* decided */
  r = status(w1);
  assert_int_equal(r->status->n_recent_matches, 1);
  const Xqz__MatchStatus *m = r->status->recent_matches[0];
  assert_int_equal(m->match_id, match);
  assert_int_equal(m->wins, 2);   /* p0 win, p2 win */
  assert_int_equal(m->draws, 3);  /* p0 draw, p1 two draws */
  assert_int_equal(m->losses, 1); /* p2 loss */
  assert_string_equal(m->decision, "promoted"); /* 3.5 of 6 >= 0.5 */
  assert_int_equal(r->status->best_net_id, meta.net_id);
  xq_wire_free(&r);
  zmq_close(w1);
  zmq_close(w2);
  kill(g_pid, SIGTERM);
  waitpid(g_pid, NULL, 0);
  g_pid = -1;
  /* After another restart the last decision is still named, and the throughput rows of the
   * three runs (a row at each start and clean stop, then one for now) are there. */
  start_coordinator();
  w1 = worker(ctx, "w1", &best);
  r = status(w1);
  char want[64];
  snprintf(want, sizeof want, "net %016llx: 2-3-1", (unsigned long long)meta.net_id);
  assert_non_null(strstr(r->status->last_gating, want));
  assert_non_null(strstr(r->status->last_gating, "promoted"));
  assert_true(r->status->n_throughput_history >= 4);
  xq_wire_free(&r);
  zmq_close(w1);
  kill(g_pid, SIGTERM);
  waitpid(g_pid, NULL, 0);
  g_pid = -1;
  zmq_ctx_term(ctx);
  if (!getenv("XQZ_KEEP")) remove_dir();
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_teardown(test_restart_mid_match, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
