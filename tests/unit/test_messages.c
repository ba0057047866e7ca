/*
 * test_messages.c: every message constructor (wire/messages.h) makes an envelope that packs,
 * unpacks with this protocol version and request id 0, carries the body it names, and
 * delivers each argument intact; a NULL string argument arrives as "".
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "support/version.h"
#include "wire/messages.h"
#include "wire/wire.h"

/* Packs env, unpacks it and checks the envelope's own fields and body case; the caller frees
 * the copy (xq_wire_free). */
static Xqz__Envelope *round_trip(const Xqz__Envelope *env, Xqz__Envelope__BodyCase body) {
  assert_int_equal(env->body_case, body);
  uint8_t *buf = NULL;
  size_t len = 0;
  assert_int_equal(xq_wire_pack(env, &buf, &len), 0);
  Xqz__Envelope *got = NULL;
  xq_errbuf_t eb = {{0}};
  int rc = xq_wire_unpack(buf, len, &got, &eb);
  if (rc) fail_msg("body %d does not unpack: %s", (int)body, eb.msg);
  free(buf);
  assert_int_equal(got->version, XQ_PROTOCOL_VERSION);
  assert_int_equal(got->request_id, 0);
  assert_int_equal(got->body_case, body);
  return got;
}

static void test_worker_messages(void **state) {
  (void)state;
  Xqz__Envelope env, *got;
  Xqz__Hello h;
  xq_msg_hello(&env, &h, XQZ__ROLE__ROLE_TRAINER, "w1", "box", 3, 0x1122334455667788ull);
  got = round_trip(&env, XQZ__ENVELOPE__BODY_HELLO);
  assert_int_equal(got->hello->role, XQZ__ROLE__ROLE_TRAINER);
  assert_string_equal(got->hello->worker_id, "w1");
  assert_string_equal(got->hello->host, "box");
  assert_int_equal(got->hello->threads, 3);
  assert_string_equal(got->hello->software_version, XQ_SOFTWARE_NAME);
  assert_int_equal(got->hello->campaign_id, 0x1122334455667788ull);
  xq_wire_free(&got);

  Xqz__Heartbeat hb;
  xq_msg_heartbeat(&env, &hb, "w2", 77, 5);
  got = round_trip(&env, XQZ__ENVELOPE__BODY_HEARTBEAT);
  assert_string_equal(got->heartbeat->worker_id, "w2");
  assert_int_equal(got->heartbeat->net_id, 77);
  assert_int_equal(got->heartbeat->games_done, 5);
  assert_false(got->heartbeat->paused);
  xq_wire_free(&got);

  Xqz__JobRequest jr;
  xq_msg_job_request(&env, &jr, NULL);
  got = round_trip(&env, XQZ__ENVELOPE__BODY_JOB_REQUEST);
  assert_string_equal(got->job_request->worker_id, "");
  xq_wire_free(&got);

  static const uint8_t rec[] = {1, 2, 3, 0, 5};
  Xqz__GameRecord g;
  xq_msg_game(&env, &g, "w3", 9, rec, sizeof rec);
  got = round_trip(&env, XQZ__ENVELOPE__BODY_GAME);
  assert_string_equal(got->game->worker_id, "w3");
  assert_int_equal(got->game->seq, 9);
  assert_int_equal(got->game->record.len, sizeof rec);
  assert_memory_equal(got->game->record.data, rec, sizeof rec);
  xq_wire_free(&got);

  Xqz__ArenaResult ar;
  xq_msg_arena_result(&env, &ar, "w4", 12, 3, -1, 1);
  got = round_trip(&env, XQZ__ENVELOPE__BODY_ARENA_RESULT);
  assert_string_equal(got->arena_result->worker_id, "w4");
  assert_int_equal(got->arena_result->match_id, 12);
  assert_int_equal(got->arena_result->pair_index, 3);
  assert_int_equal(got->arena_result->result_a_red, -1);
  assert_int_equal(got->arena_result->result_a_black, 1);
  xq_wire_free(&got);

  Xqz__NetRequest nr;
  xq_msg_net_request(&env, &nr, 0xabcdull, 4096, 1000);
  got = round_trip(&env, XQZ__ENVELOPE__BODY_NET_REQUEST);
  assert_int_equal(got->net_request->net_id, 0xabcdull);
  assert_int_equal(got->net_request->offset, 4096);
  assert_int_equal(got->net_request->max_bytes, 1000);
  xq_wire_free(&got);

  Xqz__EnrolRequest er;
  xq_msg_enrol_request(&env, &er, "tok-1", "host a");
  got = round_trip(&env, XQZ__ENVELOPE__BODY_ENROL_REQUEST);
  assert_string_equal(got->enrol_request->token, "tok-1");
  assert_string_equal(got->enrol_request->host, "host a");
  xq_wire_free(&got);
}

static void test_coordinator_messages(void **state) {
  (void)state;
  Xqz__Envelope env, *got;
  Xqz__SelfplaySettings s = XQZ__SELFPLAY_SETTINGS__INIT;
  s.sims = 33;
  Xqz__Welcome w;
  xq_msg_welcome(&env, &w, "w1", 5, &s, 250, 0x99ull);
  got = round_trip(&env, XQZ__ENVELOPE__BODY_WELCOME);
  assert_string_equal(got->welcome->worker_id, "w1");
  assert_int_equal(got->welcome->best_net_id, 5);
  assert_non_null(got->welcome->settings);
  assert_int_equal(got->welcome->settings->sims, 33);
  assert_int_equal(got->welcome->heartbeat_ms, 250);
  assert_int_equal(got->welcome->campaign_id, 0x99ull);
  xq_wire_free(&got);

  Xqz__Job job;
  Xqz__SelfplayJob sp;
  xq_msg_job_selfplay(&env, &job, &sp, 6, &s, 4);
  got = round_trip(&env, XQZ__ENVELOPE__BODY_JOB);
  assert_int_equal(got->job->kind_case, XQZ__JOB__KIND_SELFPLAY);
  assert_int_equal(got->job->selfplay->net_id, 6);
  assert_int_equal(got->job->selfplay->settings->sims, 33);
  assert_int_equal(got->job->selfplay->games, 4);
  xq_wire_free(&got);

  Xqz__ArenaJob aj = XQZ__ARENA_JOB__INIT;
  aj.match_id = 8;
  aj.opening_fen = "9/9/9/9/9/9/9/9/9/4K4 w - - 0 1";
  xq_msg_job_arena(&env, &job, &aj);
  got = round_trip(&env, XQZ__ENVELOPE__BODY_JOB);
  assert_int_equal(got->job->kind_case, XQZ__JOB__KIND_ARENA);
  assert_int_equal(got->job->arena->match_id, 8);
  assert_string_equal(got->job->arena->opening_fen, aj.opening_fen);
  xq_wire_free(&got);

  Xqz__Ack a;
  xq_msg_ack(&env, &a, "w2", 11, true, NULL);
  got = round_trip(&env, XQZ__ENVELOPE__BODY_ACK);
  assert_string_equal(got->ack->worker_id, "w2");
  assert_int_equal(got->ack->seq, 11);
  assert_true(got->ack->accepted);
  assert_string_equal(got->ack->reason, "");
  xq_wire_free(&got);
  xq_msg_ack(&env, &a, "", 12, false, "illegal move");
  got = round_trip(&env, XQZ__ENVELOPE__BODY_ACK);
  assert_false(got->ack->accepted);
  assert_string_equal(got->ack->reason, "illegal move");
  xq_wire_free(&got);

  static const uint8_t bytes[] = {9, 8, 7, 6};
  Xqz__NetChunk ch;
  xq_msg_net_chunk(&env, &ch, 3, 100, 104, 0xdeadbeefu, bytes, sizeof bytes);
  got = round_trip(&env, XQZ__ENVELOPE__BODY_NET_CHUNK);
  assert_int_equal(got->net_chunk->net_id, 3);
  assert_int_equal(got->net_chunk->offset, 100);
  assert_int_equal(got->net_chunk->total, 104);
  assert_int_equal(got->net_chunk->file_crc32, 0xdeadbeefu);
  assert_int_equal(got->net_chunk->data.len, sizeof bytes);
  assert_memory_equal(got->net_chunk->data.data, bytes, sizeof bytes);
  xq_wire_free(&got);

  Xqz__CheckpointRequest ckr;
  xq_msg_checkpoint_request(&env, &ckr, 0x55ull, 3);
  got = round_trip(&env, XQZ__ENVELOPE__BODY_CHECKPOINT_REQUEST);
  assert_int_equal(got->checkpoint_request->net_id, 0x55);
  assert_int_equal(got->checkpoint_request->member_slot, 3);
  xq_wire_free(&got);
  Xqz__Checkpoint ck;
  xq_msg_checkpoint(&env, &ck, 0x56ull, 700, 0xfeedu, bytes, sizeof bytes);
  got = round_trip(&env, XQZ__ENVELOPE__BODY_CHECKPOINT);
  assert_int_equal(got->checkpoint->net_id, 0x56);
  assert_int_equal(got->checkpoint->step, 700);
  assert_int_equal(got->checkpoint->crc32, 0xfeedu);
  assert_int_equal(got->checkpoint->data.len, sizeof bytes);
  assert_memory_equal(got->checkpoint->data.data, bytes, sizeof bytes);
  xq_wire_free(&got);

  Xqz__NetAnnounce an;
  xq_msg_net_announce(&env, &an, 4, 5000, 0x1234u);
  got = round_trip(&env, XQZ__ENVELOPE__BODY_NET_ANNOUNCE);
  assert_int_equal(got->net_announce->net_id, 4);
  assert_int_equal(got->net_announce->size, 5000);
  assert_int_equal(got->net_announce->file_crc32, 0x1234u);
  xq_wire_free(&got);

  Xqz__Sample smp = XQZ__SAMPLE__INIT, *ptrs[2] = {&smp, &smp};
  smp.side = 1;
  Xqz__Batch b;
  xq_msg_batch(&env, &b, ptrs, 2);
  got = round_trip(&env, XQZ__ENVELOPE__BODY_BATCH);
  assert_int_equal(got->batch->n_samples, 2);
  assert_int_equal(got->batch->samples[1]->side, 1);
  xq_wire_free(&got);

  Xqz__Wait wt;
  xq_msg_wait(&env, &wt, 1500, "window filling");
  got = round_trip(&env, XQZ__ENVELOPE__BODY_WAIT);
  assert_int_equal(got->wait->retry_ms, 1500);
  assert_string_equal(got->wait->reason, "window filling");
  xq_wire_free(&got);

  Xqz__Status st = XQZ__STATUS__INIT;
  st.best_net_id = 21;
  xq_msg_status(&env, &st);
  got = round_trip(&env, XQZ__ENVELOPE__BODY_STATUS);
  assert_int_equal(got->status->best_net_id, 21);
  xq_wire_free(&got);

  Xqz__Error e;
  xq_msg_error(&env, &e, XQ_ERROR_NOT_FOUND, "net 0003 not found");
  got = round_trip(&env, XQZ__ENVELOPE__BODY_ERROR);
  assert_int_equal(got->error->code, XQ_ERROR_NOT_FOUND);
  assert_string_equal(got->error->message, "net 0003 not found");
  xq_wire_free(&got);

  Xqz__MatchStatus ms = XQZ__MATCH_STATUS__INIT, *mp = &ms;
  ms.match_id = 17;
  Xqz__Promotions pr = XQZ__PROMOTIONS__INIT;
  pr.n_matches = 1;
  pr.matches = &mp;
  xq_msg_promotions(&env, &pr);
  got = round_trip(&env, XQZ__ENVELOPE__BODY_PROMOTIONS);
  assert_int_equal(got->promotions->n_matches, 1);
  assert_int_equal(got->promotions->matches[0]->match_id, 17);
  xq_wire_free(&got);

  Xqz__AdminResult res;
  xq_msg_admin_result(&env, &res, true, "banned w9");
  got = round_trip(&env, XQZ__ENVELOPE__BODY_ADMIN_RESULT);
  assert_true(got->admin_result->ok);
  assert_string_equal(got->admin_result->message, "banned w9");
  xq_wire_free(&got);

  Xqz__EnrolResult enr;
  xq_msg_enrol_result(&env, &enr, XQZ__ENROL_RESULT__REASON__REASON_NONE, "enrolled");
  got = round_trip(&env, XQZ__ENVELOPE__BODY_ENROL_RESULT);
  assert_true(got->enrol_result->ok);
  assert_int_equal(got->enrol_result->reason, XQZ__ENROL_RESULT__REASON__REASON_NONE);
  assert_string_equal(got->enrol_result->message, "enrolled");
  xq_wire_free(&got);
  xq_msg_enrol_result(&env, &enr, XQZ__ENROL_RESULT__REASON__REASON_EXPIRED, "expired");
  got = round_trip(&env, XQZ__ENVELOPE__BODY_ENROL_RESULT);
  assert_false(got->enrol_result->ok);
  assert_int_equal(got->enrol_result->reason, XQZ__ENROL_RESULT__REASON__REASON_EXPIRED);
  xq_wire_free(&got);
}

static void test_trainer_and_tool_messages(void **state) {
  (void)state;
  Xqz__Envelope env, *got;
  Xqz__BatchRequest br;
  xq_msg_batch_request(&env, &br, 256, 1234);
  got = round_trip(&env, XQZ__ENVELOPE__BODY_BATCH_REQUEST);
  assert_int_equal(got->batch_request->size, 256);
  assert_int_equal(got->batch_request->trainer_step, 1234);
  assert_int_equal(got->batch_request->loss_steps, 0);
  xq_wire_free(&got);

  static const uint8_t net[] = {'X', 'Q', 'Z', 'N', 0, 1};
  Xqz__CandidateNet cn;
  xq_msg_candidate(&env, &cn, net, sizeof net, 4000);
  got = round_trip(&env, XQZ__ENVELOPE__BODY_CANDIDATE);
  assert_int_equal(got->candidate->step, 4000);
  assert_int_equal(got->candidate->net.len, sizeof net);
  assert_memory_equal(got->candidate->net.data, net, sizeof net);
  xq_wire_free(&got);

  Xqz__StatusRequest sr;
  xq_msg_status_request(&env, &sr);
  got = round_trip(&env, XQZ__ENVELOPE__BODY_STATUS_REQUEST);
  assert_non_null(got->status_request);
  xq_wire_free(&got);

  Xqz__PromotionsRequest pq;
  xq_msg_promotions_request(&env, &pq, 41);
  got = round_trip(&env, XQZ__ENVELOPE__BODY_PROMOTIONS_REQUEST);
  assert_int_equal(got->promotions_request->after_match_id, 41);
  xq_wire_free(&got);

  Xqz__AdminRequest ad;
  xq_msg_admin_request(&env, &ad, XQZ__ADMIN_REQUEST__ACTION__ACTION_BAN, "w9");
  got = round_trip(&env, XQZ__ENVELOPE__BODY_ADMIN_REQUEST);
  assert_int_equal(got->admin_request->action, XQZ__ADMIN_REQUEST__ACTION__ACTION_BAN);
  assert_string_equal(got->admin_request->target, "w9");
  xq_wire_free(&got);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_worker_messages),
      cmocka_unit_test(test_coordinator_messages),
      cmocka_unit_test(test_trainer_and_tool_messages),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
