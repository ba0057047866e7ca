/*
 * test_coordinator_ingest.c: drives a real xqz-coordinator over loopback as a worker and
 * a trainer would: Hello/Welcome, a valid game (acked after fsync), its duplicate (acked,
 * not stored twice), an inconsistent game (rejected with a reason), a malformed envelope
 * (Error), Batch after the minimum, Status, a NetChunk with the file's CRC; then kill -9,
 * a torn tail appended to the segment, restart: same best net, same window, and the
 * pacing counts from the restart (the rebuilt window's positions were paced before it).
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
#include "nn/nn_file.h"
#include "nn/nn_model.h"
#include "support/crc32.h"
#include "wire/messages.h"
#include "wire/sample.h"
#include "wire/wire.h"

static void test_ingest_and_resume(void **state) {
  (void)state;
  fresh_dir();
  g_extra = "--gating=sprt";
  g_extra2 = "--seed=1";
  pid_t pid = start_coordinator();
  void *ctx = zmq_ctx_new();
  void *s = connect_dealer(ctx);
  uint64_t best = hello(s);

  /* Before any game: the trainer is told to wait. */
  Xqz__Envelope env;
  Xqz__BatchRequest br;
  xq_msg_batch_request(&env, &br, 8, 0);
  Xqz__Envelope *r = rpc(s, &env);
  assert_int_equal(r->body_case, XQZ__ENVELOPE__BODY_WAIT);
  xq_wire_free(&r);

  unsigned char *good, *bad;
  size_t good_len, bad_len;
  random_game(&good, &good_len, 7, 0);
  random_game(&bad, &bad_len, 7, 1);
  r = send_game(s, 1, good, good_len);
  assert_true(r->ack->accepted);
  xq_wire_free(&r);
  r = send_game(s, 1, good, good_len); /* duplicate: acked, not stored */
  assert_true(r->ack->accepted);
  xq_wire_free(&r);
  r = send_game(s, 2, bad, bad_len);
  assert_false(r->ack->accepted);
  assert_true(strlen(r->ack->reason) > 0);
  xq_wire_free(&r);

  /* Malformed bytes: an Error reply, and the connection still works. */
  assert_int_equal(zmq_send(s, "garbage!", 8, 0), 8);
  xq_errbuf_t eb;
  assert_int_equal(xq_wire_recv(s, NULL, NULL, &r, 0, &eb), 0);
  assert_int_equal(r->body_case, XQZ__ENVELOPE__BODY_ERROR);
  xq_wire_free(&r);

  r = status(s);
  assert_int_equal(r->status->games, 1);
  uint64_t positions = r->status->positions;
  assert_true(positions >= 10);
  assert_int_equal(r->status->window_positions, positions);
  assert_int_equal(r->status->best_net_id, best);
  xq_wire_free(&r);

  r = rpc(s, &env); /* BatchRequest again: now a batch */
  assert_int_equal(r->body_case, XQZ__ENVELOPE__BODY_BATCH);
  assert_int_equal(r->batch->n_samples, 8);
  assert_int_equal(r->batch->samples[0]->board.len, 90);
  assert_int_equal(r->batch->window_positions, positions);
  xq_sample_t *smp = malloc(sizeof *smp);
  xq_pos_t *spos = malloc(sizeof *spos);
  for (size_t i = 0; i < r->batch->n_samples; i++) {
    xq_errbuf_t seb;
    if (xq_sample_from_proto(smp, spos, r->batch->samples[i], &seb) != 0)
      fail_msg("sample %zu does not validate: %s", i, seb.msg);
  }
  free(spos);
  free(smp);
  xq_wire_free(&r);

  /* The net in chunks; the pieces put together match the file's CRC. */
  Xqz__NetRequest nr;
  Xqz__Envelope ne;
  xq_msg_net_request(&ne, &nr, best, 0, 0);
  uint32_t crc = 0, want = 0;
  uint64_t total = 1;
  while (nr.offset < total) {
    r = rpc(s, &ne);
    assert_int_equal(r->body_case, XQZ__ENVELOPE__BODY_NET_CHUNK);
    assert_int_equal(r->net_chunk->offset, nr.offset);
    assert_true(r->net_chunk->data.len > 0 && r->net_chunk->data.len <= XQ_WIRE_NET_CHUNK);
    crc = xq_crc32(crc, r->net_chunk->data.data, r->net_chunk->data.len);
    total = r->net_chunk->total;
    want = r->net_chunk->file_crc32;
    nr.offset += r->net_chunk->data.len;
    xq_wire_free(&r);
  }
  assert_int_equal(nr.offset, total);
  assert_int_equal(crc, want);

  /* kill -9, a torn record at the end of the segment, restart. */
  kill(pid, SIGKILL);
  int st;
  waitpid(pid, &st, 0);
  char seg[400];
  snprintf(seg, sizeof seg, "%s/camp/games/seg-000001.bin", g_dir);
  FILE *f = fopen(seg, "ab");
  assert_non_null(f);
  fwrite("\x40\x00\x00\x00\x01\x02\x03\x04torn", 1, 12, f);
  fclose(f);
  zmq_close(s);
  pid = start_coordinator();
  s = connect_dealer(ctx);
  assert_int_equal(hello(s), best);
  r = status(s);
  assert_int_equal(r->status->games, 1);
  assert_int_equal(r->status->positions, positions);
  assert_int_equal(r->status->window_positions, positions);
  xq_wire_free(&r);
  r = send_game(s, 1, good, good_len); /* resent after the restart: still a duplicate */
  assert_true(r->ack->accepted);
  xq_wire_free(&r);
  r = status(s);
  assert_int_equal(r->status->games, 1);
  xq_wire_free(&r);
  /* The window is full, but its positions were paced before the restart: counting them
   * again would let a trainer take R samples of each at once, unpaced. So it waits for
   * new games, and each one releases R samples per position. */
  r = rpc(s, &env);
  assert_int_equal(r->body_case, XQZ__ENVELOPE__BODY_WAIT);
  assert_non_null(strstr(r->wait->reason, "0 positions since start"));
  xq_wire_free(&r);
  unsigned char *next;
  size_t next_len;
  random_game(&next, &next_len, 8, 0);
  r = send_game(s, 3, next, next_len);
  assert_true(r->ack->accepted);
  xq_wire_free(&r);
  r = rpc(s, &env); /* 8 samples <= R (2) x the new game's positions */
  assert_int_equal(r->body_case, XQZ__ENVELOPE__BODY_BATCH);
  assert_int_equal(r->batch->n_samples, 8);
  xq_wire_free(&r);
  free(next);

  kill(pid, SIGTERM);
  waitpid(pid, &st, 0);
  assert_true(WIFEXITED(st));
  assert_int_equal(WEXITSTATUS(st), 0);
  g_pid = -1;
  zmq_close(s);
  zmq_ctx_term(ctx);
  free(good);
  free(bad);
  remove_dir();
}

/* A candidate with gating=none over one pair: an arena job, a result, a promotion that
 * reaches the PUB socket, promotions.log and Status, and survives a restart. */
static void test_candidate_promotion(void **state) {
  (void)state;
  fresh_dir();
  g_extra = "--gating=none";
  g_extra2 = "--threshold_games=2";
  pid_t pid = start_coordinator();
  void *ctx = zmq_ctx_new();
  void *sub = zmq_socket(ctx, ZMQ_SUB);
  char addr[64];
  snprintf(addr, sizeof addr, "tcp://127.0.0.1:%d", g_pub_port);
  int t = 8000, linger = 0;
  zmq_setsockopt(sub, ZMQ_RCVTIMEO, &t, sizeof t);
  zmq_setsockopt(sub, ZMQ_LINGER, &linger, sizeof linger);
  zmq_setsockopt(sub, ZMQ_SUBSCRIBE, "", 0);
  void *s = connect_dealer(ctx);
  uint64_t best = hello(s); /* the coordinator is up: now subscribe */
  assert_int_equal(zmq_connect(sub, addr), 0);
  usleep(300 * 1000); /* let the subscription reach the PUB socket */

  unsigned char *net;
  size_t net_len;
  nn_file_meta_t meta;
  tiny_net(&net, &net_len, &meta, best, 500);

  Xqz__Envelope env;
  Xqz__CandidateNet cn;
  xq_msg_candidate(&env, &cn, net, net_len, 500);
  Xqz__Envelope *r = rpc(s, &env);
  assert_int_equal(r->body_case, XQZ__ENVELOPE__BODY_ACK);
  assert_true(r->ack->accepted);
  xq_wire_free(&r);
  /* Uploaded again (the trainer lost the Ack): the same bytes are acknowledged again. */
  r = rpc(s, &env);
  assert_int_equal(r->body_case, XQZ__ENVELOPE__BODY_ACK);
  assert_true(r->ack->accepted);
  xq_wire_free(&r);
  net[200] ^= 0xff; /* a damaged candidate is refused */
  r = rpc(s, &env);
  assert_int_equal(r->body_case, XQZ__ENVELOPE__BODY_ACK);
  assert_false(r->ack->accepted);
  xq_wire_free(&r);

  /* Jobs alternate: within two requests one is the arena pair. */
  Xqz__JobRequest jr;
  xq_msg_job_request(&env, &jr, "test-worker");
  uint64_t match = 0;
  int arena = 0;
  for (int i = 0; i < 2; i++) {
    r = rpc(s, &env);
    assert_int_equal(r->body_case, XQZ__ENVELOPE__BODY_JOB);
    if (r->job->kind_case == XQZ__JOB__KIND_ARENA) {
      arena++;
      match = r->job->arena->match_id;
      assert_int_equal(r->job->arena->net_a, meta.net_id);
      assert_int_equal(r->job->arena->net_b, best);
      assert_int_equal(r->job->arena->pair_index, 0);
      assert_true(strlen(r->job->arena->opening_fen) > 10);
      assert_true(r->job->arena->adjudicate_material == 3.0f); /* the default, passed on */
    } else {
      assert_int_equal(r->job->kind_case, XQZ__JOB__KIND_SELFPLAY);
      assert_int_equal(r->job->selfplay->net_id, best);
    }
    xq_wire_free(&r);
  }
  assert_int_equal(arena, 1);

  Xqz__ArenaResult ar;
  xq_msg_arena_result(&env, &ar, "test-worker", match, 0, 1, 0);
  r = rpc(s, &env);
  assert_int_equal(r->body_case, XQZ__ENVELOPE__BODY_ACK);
  assert_true(r->ack->accepted);
  xq_wire_free(&r);

  xq_errbuf_t eb;
  assert_int_equal(xq_wire_recv(sub, NULL, NULL, &r, 0, &eb), 0);
  assert_int_equal(r->body_case, XQZ__ENVELOPE__BODY_NET_ANNOUNCE);
  assert_int_equal(r->net_announce->net_id, meta.net_id);
  assert_int_equal(r->net_announce->size, net_len);
  assert_true(r->net_announce->elo > 0);
  xq_wire_free(&r);

  r = status(s);
  assert_int_equal(r->status->best_net_id, meta.net_id);
  assert_int_equal(r->status->promotions, 2);
  assert_non_null(strstr(r->status->last_gating, "promoted"));
  xq_wire_free(&r);

  char path[400], line[1024];
  snprintf(path, sizeof path, "%s/camp/promotions.log", g_dir);
  FILE *f = fopen(path, "r");
  assert_non_null(f);
  int lines = 0, promoted = 0;
  while (fgets(line, sizeof line, f)) {
    lines++;
    if (strstr(line, "\"promoted\":true")) promoted++;
  }
  fclose(f);
  assert_int_equal(lines, 2);
  assert_int_equal(promoted, 2);

  kill(pid, SIGKILL);
  waitpid(pid, NULL, 0);
  zmq_close(s);
  pid = start_coordinator();
  s = connect_dealer(ctx);
  assert_int_equal(hello(s), meta.net_id);
  kill(pid, SIGTERM);
  int st;
  waitpid(pid, &st, 0);
  g_pid = -1;
  assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  zmq_close(s);
  zmq_close(sub);
  zmq_ctx_term(ctx);
  free(net);
  remove_dir();
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test_teardown(test_ingest_and_resume, teardown),
                                     cmocka_unit_test_teardown(test_candidate_promotion, teardown)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
