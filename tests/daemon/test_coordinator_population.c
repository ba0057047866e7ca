/*
 * test_coordinator_population.c: a population's members over loopback against the real
 * xqz-coordinator (coordinator/members_wire.c; docs/population.md), with CURVE keys:
 *  - population 3: three trainer keys say Hello and get slots 1 to 3 with the default
 *    settings (slot 1 the control member); a fourth is refused, the message naming the
 *    population's size. A claim of a slot another key holds is refused and counted as a
 *    fault; another campaign and another architecture are refused with both named; a key
 *    with the worker role only cannot hold a slot.
 *  - BatchRequest: a slot this connection does not hold is refused (a fault when another
 *    key holds it), slot 0 too; each member is paced on its own: one member at its reuse
 *    limit waits while another still gets a Batch, each Batch carrying the Member.
 *  - CandidateNet of a member: its checkpoint is stored in checkpoints/, members.txt names
 *    the member's last net, and no gating match opens; a checkpoint whose CRC does not
 *    match is refused.
 *  - A copy order (xqc_members_apply on members.txt between two starts): the member's
 *    BatchRequest gets a Wait with the order, copy_net, copy_size and copy_crc32;
 *    CheckpointRequest returns the donor's bytes with their CRC, another net is refused,
 *    and once the order is reported carried out the Batch flows; the donor's old
 *    checkpoint is kept while the copy is pending, then deleted. An order whose checkpoint
 *    is damaged is not served and is withdrawn (copy_net 0, saved): the Batch flows.
 *  - Restart: members.txt is read back and a key gets its slot again; a members.txt of
 *    another size refuses the start, naming the fix.
 *  - Without CURVE a slot is its connection's, freed when its holder is silent longer than
 *    worker_timeout_ms, and then given to a waiting trainer.
 *  - Without a population a trainer's Hello gets a Welcome without Member, and no worker
 *    row appears.
 */
#define _DEFAULT_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zmq.h>

#include "coord_test_util.h"
#include "nn/nn_checkpoint.h"
#include "nn/nn_optim.h"
#include "population/members.h"
#include "support/atomic_file.h"
#include "wire/messages.h"
#include "wire/wire.h"

/* Keys: coord, t1..t4 (trainers), w1 (a worker only); CURVE on, population 3. */
static void curve_population(void) {
  make_dir("keys");
  make_dir("allow");
  make_dir("trainers");
  make_key("coord", NULL, NULL);
  const char *t[] = {"t1", "t2", "t3", "t4"};
  for (int i = 0; i < 4; i++) make_key(t[i], "allow", "trainers");
  make_key("w1", "allow", NULL);
  curve_settings("curve_trainer_dir", "trainers");
  g_extra4 = "--population=3";
  g_extra5 = "--seed=1";
}

/* A trainer's Hello asking for slot (1-based; 0 any) with net architecture arch. */
static Xqz__Envelope *hello_trainer(void *s, uint32_t slot, const char *arch, uint64_t campaign) {
  Xqz__Envelope env;
  Xqz__Hello h;
  xq_msg_hello(&env, &h, XQZ__ROLE__ROLE_TRAINER, "", "localhost", 1, campaign);
  h.member_slot = slot;
  h.net_arch = (char *)arch;
  env.request_id = 3;
  return rpc(s, &env);
}

/* Hello, expecting a Welcome with slot's Member; returns the Welcome (the caller frees). */
static Xqz__Envelope *welcomed(void *s, uint32_t ask, uint32_t slot) {
  Xqz__Envelope *r = hello_trainer(s, ask, "tiny", 0);
  if (r->body_case == XQZ__ENVELOPE__BODY_ERROR) fail_msg("refused: %s", r->error->message);
  assert_int_equal(r->body_case, XQZ__ENVELOPE__BODY_WELCOME);
  assert_non_null(r->welcome->member);
  assert_int_equal(r->welcome->member->slot, slot);
  assert_string_equal(r->welcome->worker_id, "");
  return r;
}

/* Expects an Error of code whose message holds w1 and w2 (w2 may be NULL). */
static void refused(Xqz__Envelope *r, unsigned code, const char *w1, const char *w2) {
  assert_int_equal(r->body_case, XQZ__ENVELOPE__BODY_ERROR);
  const char *msg = r->error->message;
  if (r->error->code != code || !strstr(msg, w1) || (w2 && !strstr(msg, w2)))
    fail_msg("Error %u \"%s\": code %u with \"%s\" and \"%s\" expected", r->error->code, msg,
             code, w1, w2 ? w2 : "");
  xq_wire_free(&r);
}

/* Hello, expecting a Welcome with slot's Member. */
static void claim_ok(void *s, uint32_t ask, uint32_t slot) {
  Xqz__Envelope *r = welcomed(s, ask, slot);
  xq_wire_free(&r);
}

static Xqz__Envelope *batch_request(void *s, uint32_t size, uint32_t slot, uint64_t order) {
  Xqz__Envelope env;
  Xqz__BatchRequest br;
  xq_msg_batch_request(&env, &br, size, 10);
  br.member_slot = slot;
  br.member_order = order;
  env.request_id = 9;
  return rpc(s, &env);
}

static Xqz__Envelope *checkpoint_request(void *s, uint64_t net, uint32_t slot) {
  Xqz__Envelope env;
  Xqz__CheckpointRequest r;
  xq_msg_checkpoint_request(&env, &r, net, slot);
  env.request_id = 11;
  return rpc(s, &env);
}

/* n fresh random games from the worker w1 (seeds from seed). */
static void feed(void *w, uint64_t seed, int n) {
  for (int i = 0; i < n; i++) {
    unsigned char *g;
    size_t len;
    random_game(&g, &len, seed + (uint64_t)i, 0);
    Xqz__Envelope *r = send_game_as(w, "pop-worker", seed + (uint64_t)i, g, len);
    assert_true(r->ack->accepted);
    xq_wire_free(&r);
    free(g);
  }
}

/* A member's upload: a tiny net at step and its checkpoint (.xqzc bytes, malloc'd). */
typedef struct {
  unsigned char *net, *ck;
  size_t net_len, ck_len;
  uint64_t id;
} member_net_t;

static member_net_t member_net(int64_t step) {
  member_net_t u;
  nn_arch_t arch;
  assert_int_equal(nn_arch_preset("tiny", &arch), 0);
  nn_model_t *m = NULL;
  assert_int_equal(nn_model_new(&m, &arch, NULL), 0);
  nn_model_init(m, (uint64_t)step);
  nn_sgd_t opt = {.momentum = 0.9f};
  assert_int_equal(nn_sgd_init(&opt, m, NULL), 0);
  opt.step = step;
  nn_file_meta_t meta = {0};
  meta.arch = arch;
  meta.net_id = u.id = nn_file_new_id();
  meta.step = step;
  assert_int_equal(nn_file_encode(&u.net, &u.net_len, m, &meta, NULL), 0);
  char path[400];
  path_of(path, sizeof path, "upload.xqzc");
  xq_errbuf_t eb = {{0}};
  assert_int_equal(nn_checkpoint_save(path, m, &meta, &opt, NULL, &eb), 0);
  assert_int_equal(xq_read_file(path, 1u << 26, &u.ck, &u.ck_len, &eb), 0);
  unlink(path);
  nn_sgd_close(&opt);
  nn_model_free(&m);
  return u;
}

static Xqz__Envelope *upload_member(void *s, const member_net_t *u, uint32_t slot, uint32_t crc) {
  Xqz__Envelope env;
  Xqz__CandidateNet cn;
  xq_msg_candidate(&env, &cn, u->net, u->net_len, 500);
  cn.checkpoint.data = u->ck;
  cn.checkpoint.len = u->ck_len;
  cn.checkpoint_crc32 = crc;
  cn.member_slot = slot;
  env.request_id = 40;
  return rpc(s, &env);
}

static int faults(void) { return log_count("bad message from peer"); }

/* Flips the last byte of the file at path (a damaged file on the coordinator's disk). */
static void flip_last_byte(const char *path) {
  FILE *f = fopen(path, "r+b");
  assert_non_null(f);
  assert_int_equal(fseek(f, -1, SEEK_END), 0);
  int ch = fgetc(f);
  assert_int_equal(fseek(f, -1, SEEK_END), 0);
  fputc(ch ^ 0x10, f);
  assert_int_equal(fclose(f), 0);
}

static void test_claims(void **state) {
  (void)state;
  fresh_dir();
  curve_population();
  start_coordinator();
  void *ctx = zmq_ctx_new();
  void *t[4];
  const char *names[] = {"t1", "t2", "t3", "t4"};
  for (int i = 0; i < 4; i++) t[i] = curve_dealer(ctx, names[i]);
  Xqz__Envelope *r = status(t[0]);
  uint64_t campaign = r->status->campaign_id;
  xq_wire_free(&r);

  for (uint32_t i = 0; i < 3; i++) {
    r = welcomed(t[i], 0, i + 1);
    const Xqz__Member *m = r->welcome->member;
    assert_non_null(m->settings);
    assert_true(m->settings->lr_scale == 1 && m->settings->l2 == 1e-4 &&
                m->settings->value_weight == 1);
    assert_int_equal(m->settings->batch, 256); /* batch_size */
    assert_int_equal(m->generation, 0);
    assert_int_equal(m->parent, 0);
    assert_int_equal(m->order, 0);
    assert_int_equal(m->control, i == 0);
    assert_int_equal(r->welcome->campaign_id, campaign);
    xq_wire_free(&r);
  }
  /* Hello again on the same connection: the same slot. */
  claim_ok(t[1], 2, 2);

  int f0 = faults();
  refused(hello_trainer(t[3], 0, "tiny", 0), XQ_ERROR_NOT_ALLOWED, "all 3 population slots", NULL);
  assert_int_equal(faults(), f0);
  /* A forged claim: slot 2 belongs to t2's key. */
  refused(hello_trainer(t[3], 2, "tiny", 0), XQ_ERROR_NOT_ALLOWED, "forged", "slot");
  assert_int_equal(faults(), f0 + 1);
  refused(hello_trainer(t[3], 9, "tiny", 0), XQ_ERROR_BAD_FIELD, "slots are 1 to 3", NULL);
  assert_int_equal(faults(), f0 + 2);
  /* Another architecture and another campaign: both named, not faults. */
  refused(hello_trainer(t[3], 0, "4x16", 0), XQ_ERROR_BAD_FIELD, "2x16", "4x16");
  char want[40], have[40];
  snprintf(want, sizeof want, "%016" PRIx64, campaign);
  snprintf(have, sizeof have, "%016" PRIx64, campaign ^ 0x77);
  refused(hello_trainer(t[3], 0, "tiny", campaign ^ 0x77), XQ_ERROR_CAMPAIGN, want, have);
  /* A key with the worker role only. */
  void *w = curve_dealer(ctx, "w1");
  refused(hello_trainer(w, 0, "tiny", 0), XQ_ERROR_NOT_ALLOWED, "not one", "worker");
  /* A trainer's Hello claims no worker id: no worker row. */
  r = status(t[0]);
  assert_int_equal(r->status->n_worker_list, 0);
  xq_wire_free(&r);

  /* BatchRequest: slot 0, a slot t2 holds (a fault), a slot that does not exist. */
  int f1 = faults();
  refused(batch_request(t[0], 8, 0, 0), XQ_ERROR_BAD_FIELD, "member_slot 0", NULL);
  assert_int_equal(faults(), f1);
  refused(batch_request(t[0], 8, 2, 0), XQ_ERROR_BAD_FIELD,
          "slot 2 is not held by this connection: say Hello first", NULL);
  assert_int_equal(faults(), f1 + 1);
  refused(batch_request(t[0], 8, 4, 0), XQ_ERROR_BAD_FIELD, "does not exist", NULL);
  assert_int_equal(faults(), f1 + 2);
  refused(checkpoint_request(t[0], 5, 2), XQ_ERROR_BAD_FIELD, "not held", NULL);
  assert_int_equal(faults(), f1 + 3);

  for (int i = 0; i < 4; i++) zmq_close(t[i]);
  zmq_close(w);
  zmq_ctx_term(ctx);
  coord_stop(g_pid);
  remove_dir();
}

static void test_members_train(void **state) {
  (void)state;
  fresh_dir();
  curve_population();
  start_coordinator();
  void *ctx = zmq_ctx_new();
  void *t1 = curve_dealer(ctx, "t1"), *t2 = curve_dealer(ctx, "t2"),
       *t3 = curve_dealer(ctx, "t3"), *w = curve_dealer(ctx, "w1");
  Xqz__Envelope *r;
  claim_ok(t1, 0, 1);
  claim_ok(t2, 0, 2);
  claim_ok(t3, 0, 3);
  (void)hello_as(w, "pop-worker");
  feed(w, 100, 3);

  /* Per-member pacing: slot 1 takes batches until it waits; slot 2 still gets one. */
  int batches = 0;
  for (;; batches++) {
    r = batch_request(t1, 32, 1, 0);
    if (r->body_case == XQZ__ENVELOPE__BODY_WAIT) break;
    assert_int_equal(r->body_case, XQZ__ENVELOPE__BODY_BATCH);
    assert_non_null(r->batch->member);
    assert_int_equal(r->batch->member->slot, 1);
    xq_wire_free(&r);
    assert_true(batches < 100);
  }
  assert_true(batches >= 1);
  assert_non_null(r->wait->member);
  assert_int_equal(r->wait->member->slot, 1);
  xq_wire_free(&r);
  r = batch_request(t2, 32, 2, 0);
  assert_int_equal(r->body_case, XQZ__ENVELOPE__BODY_BATCH);
  assert_int_equal(r->batch->member->slot, 2);
  xq_wire_free(&r);

  /* A member's candidate: the checkpoint stored, members.txt names it, no gating match. */
  member_net_t u = member_net(500), bad = member_net(600);
  int f0 = faults();
  r = upload_member(t2, &bad, 2, xq_crc32(0, bad.ck, bad.ck_len) ^ 1);
  assert_int_equal(r->body_case, XQZ__ENVELOPE__BODY_ACK);
  assert_false(r->ack->accepted);
  assert_non_null(strstr(r->ack->reason, "CRC"));
  xq_wire_free(&r);
  assert_int_equal(faults(), f0 + 1);
  r = upload_member(t2, &u, 3, xq_crc32(0, u.ck, u.ck_len)); /* not t2's slot */
  assert_false(r->ack->accepted);
  xq_wire_free(&r);
  r = upload_member(t2, &u, 2, xq_crc32(0, u.ck, u.ck_len));
  assert_int_equal(r->body_case, XQZ__ENVELOPE__BODY_ACK);
  if (!r->ack->accepted) fail_msg("refused: %s", r->ack->reason);
  xq_wire_free(&r);
  char path[400], sub[80], text[4096], line[80];
  snprintf(sub, sizeof sub, "camp/checkpoints/%016" PRIx64 ".xqzc", u.id);
  path_of(path, sizeof path, sub);
  unsigned char *stored;
  size_t stored_len;
  assert_int_equal(xq_read_file(path, 1u << 26, &stored, &stored_len, NULL), 0);
  assert_true(stored_len == u.ck_len && !memcmp(stored, u.ck, u.ck_len));
  free(stored);
  snprintf(sub, sizeof sub, "camp/checkpoints/%016" PRIx64 ".xqzc", bad.id);
  path_of(path, sizeof path, sub);
  assert_int_not_equal(access(path, F_OK), 0);
  path_of(path, sizeof path, "camp/members.txt");
  FILE *fp = fopen(path, "r");
  assert_non_null(fp);
  size_t got = fread(text, 1, sizeof text - 1, fp);
  text[got] = '\0';
  fclose(fp);
  snprintf(line, sizeof line, "slot 1 used=1 gen=0 parent=-1 step=500 net=%016" PRIx64, u.id);
  if (!strstr(text, line)) fail_msg("members.txt lacks \"%s\":\n%s", line, text);
  r = status(t1);
  assert_null(r->status->open_match);
  xq_wire_free(&r);

  /* A copy order between two starts: slot 3 continues from slot 2's checkpoint. */
  coord_stop(g_pid);
  xqc_members_t tab;
  xq_errbuf_t eb;
  assert_int_equal(xqc_members_load(&tab, path, &eb), 0);
  xqc_pbt_order_t o = {.member = 2, .donor = 1};
  memcpy(o.settings, tab.slot[1].settings, sizeof o.settings);
  o.settings[XQC_MS_LR_SCALE] = 0.8;
  char why[200];
  assert_int_equal(xqc_members_apply(&tab, &o, why, sizeof why), 0);
  assert_int_equal(xqc_members_save(&tab, path, &eb), 0);
  start_coordinator();
  zmq_close(t2);
  zmq_close(t3);
  zmq_close(w);
  t2 = curve_dealer(ctx, "t2");
  t3 = curve_dealer(ctx, "t3");
  w = curve_dealer(ctx, "w1");
  /* A member's candidate waits for the round after a restart too, not for gating. */
  r = status(t3);
  assert_null(r->status->open_match);
  xq_wire_free(&r);
  /* The same keys get their slots back, in another order, asking for any. */
  claim_ok(t3, 0, 3);
  claim_ok(t2, 0, 2);
  r = batch_request(t3, 32, 3, 0);
  assert_int_equal(r->body_case, XQZ__ENVELOPE__BODY_WAIT);
  assert_non_null(strstr(r->wait->reason, "copy order 1 pending"));
  const Xqz__Member *m = r->wait->member;
  assert_non_null(m);
  assert_int_equal(m->order, 1);
  assert_int_equal(m->copy_net, u.id);
  assert_int_equal(m->copy_size, u.ck_len);
  assert_int_equal(m->copy_crc32, xq_crc32(0, u.ck, u.ck_len));
  assert_int_equal(m->generation, 1);
  assert_int_equal(m->parent, 2);
  assert_true(m->settings->lr_scale == 0.8);
  xq_wire_free(&r);
  r = checkpoint_request(t3, u.id, 3);
  assert_int_equal(r->body_case, XQZ__ENVELOPE__BODY_CHECKPOINT);
  assert_int_equal(r->checkpoint->net_id, u.id);
  assert_int_equal(r->checkpoint->step, 500);
  assert_int_equal(r->checkpoint->crc32, xq_crc32(0, u.ck, u.ck_len));
  assert_true(r->checkpoint->data.len == u.ck_len &&
              !memcmp(r->checkpoint->data.data, u.ck, u.ck_len));
  xq_wire_free(&r);
  snprintf(sub, sizeof sub, "camp/checkpoints/%016" PRIx64 ".xqzc", u.id);
  path_of(path, sizeof path, sub);
  int f1 = faults();
  refused(checkpoint_request(t3, bad.id, 3), XQ_ERROR_BAD_FIELD, "copy order names", NULL);
  refused(checkpoint_request(t2, u.id, 2), XQ_ERROR_BAD_FIELD, "no net", NULL);
  assert_int_equal(faults(), f1 + 2);
  /* The donor's next candidate: its old checkpoint is kept while the copy is pending. */
  member_net_t u2 = member_net(700);
  r = upload_member(t2, &u2, 2, xq_crc32(0, u2.ck, u2.ck_len));
  assert_true(r->ack->accepted);
  xq_wire_free(&r);
  assert_int_equal(access(path, F_OK), 0);
  /* Its previous net, replaced and played by nothing, is retired like a rejected one. */
  char gone[1024], sub2[128];
  snprintf(sub2, sizeof sub2, "camp/nets/%016" PRIx64 ".xqzn", u.id);
  path_of(gone, sizeof gone, sub2);
  assert_int_not_equal(access(gone, F_OK), 0);
  snprintf(sub2, sizeof sub2, "camp/nets/rejected/%016" PRIx64 ".xqzn", u.id);
  path_of(gone, sizeof gone, sub2);
  assert_int_equal(access(gone, F_OK), 0);
  /* Carried out: fresh games, and the Batch flows; the old checkpoint goes. */
  (void)hello_as(w, "pop-worker");
  feed(w, 200, 2);
  r = batch_request(t3, 8, 3, 1);
  assert_int_equal(r->body_case, XQZ__ENVELOPE__BODY_BATCH);
  assert_int_equal(r->batch->member->order, 1);
  xq_wire_free(&r);
  assert_int_not_equal(access(path, F_OK), 0);
  snprintf(sub, sizeof sub, "camp/checkpoints/%016" PRIx64 ".xqzc", u2.id);
  path_of(path, sizeof path, sub);
  assert_int_equal(access(path, F_OK), 0);
  /* Restarted once more: the member's Hello says order 1 is done, so the order's checkpoint,
   * deleted, is no error (the coordinator does not take the done copy for a pending one). */
  int unserved = log_count("cannot be served");
  zmq_close(t3);
  coord_stop(g_pid);
  start_coordinator();
  t3 = curve_dealer(ctx, "t3");
  Xqz__Envelope henv;
  Xqz__Hello hh;
  xq_msg_hello(&henv, &hh, XQZ__ROLE__ROLE_TRAINER, "", "localhost", 1, 0);
  hh.member_slot = 3;
  hh.net_arch = (char *)"tiny";
  hh.member_order = 1;
  henv.request_id = 3;
  r = rpc(t3, &henv);
  assert_int_equal(r->body_case, XQZ__ENVELOPE__BODY_WELCOME);
  assert_int_equal(r->welcome->member->order, 1);
  xq_wire_free(&r);
  assert_int_equal(log_count("cannot be served"), unserved);

  /* A copy order whose checkpoint is damaged on the coordinator: not served (an Error
   * naming the file), and the order withdrawn rather than waited for: the member trains on
   * with its own weights and the order's settings, and members.txt keeps the withdrawal. */
  zmq_close(t3);
  coord_stop(g_pid);
  path_of(path, sizeof path, "camp/members.txt");
  assert_int_equal(xqc_members_load(&tab, path, &eb), 0);
  o.settings[XQC_MS_LR_SCALE] = 1.2;
  assert_int_equal(xqc_members_apply(&tab, &o, why, sizeof why), 0);
  assert_int_equal(tab.slot[2].order, 2);
  assert_true(tab.slot[2].copy_net == u2.id);
  assert_int_equal(xqc_members_save(&tab, path, &eb), 0);
  snprintf(sub, sizeof sub, "camp/checkpoints/%016" PRIx64 ".xqzc", u2.id);
  char ckpath[1024];
  path_of(ckpath, sizeof ckpath, sub);
  start_coordinator();
  t3 = curve_dealer(ctx, "t3");
  f1 = faults();
  claim_ok(t3, 3, 3); /* the Welcome names the order with the intact file's size */
  flip_last_byte(ckpath);
  refused(checkpoint_request(t3, u2.id, 3), XQ_ERROR_INTERNAL, sub + 5, "withdrew");
  assert_int_equal(faults(), f1);
  zmq_close(w); /* fresh games: pacing counts positions since the start */
  w = curve_dealer(ctx, "w1");
  (void)hello_as(w, "pop-worker");
  feed(w, 400, 2);
  r = batch_request(t3, 8, 3, 1);
  assert_int_equal(r->body_case, XQZ__ENVELOPE__BODY_BATCH);
  assert_int_equal(r->batch->member->order, 2);
  assert_int_equal(r->batch->member->copy_net, 0);
  assert_true(r->batch->member->settings->lr_scale == 1.2);
  xq_wire_free(&r);
  /* A request that crossed the withdrawal is refused without a fault. */
  refused(checkpoint_request(t3, u2.id, 3), XQ_ERROR_BAD_FIELD, "was withdrawn", NULL);
  assert_int_equal(faults(), f1);
  assert_int_equal(log_count("the order is withdrawn"), 1);
  assert_int_equal(xqc_members_load(&tab, path, &eb), 0);
  assert_int_equal(tab.slot[2].order, 2);
  assert_true(tab.slot[2].copy_net == 0);
  free(u2.net);
  free(u2.ck);
  zmq_close(t1);
  zmq_close(t2);
  zmq_close(t3);
  zmq_close(w);
  zmq_ctx_term(ctx);
  coord_stop(g_pid);

  /* Another population size against the saved table: the start is refused. */
  g_extra4 = "--population=4";
  pid_t pid = start_coordinator();
  int st;
  waitpid(pid, &st, 0);
  g_pid = -1;
  assert_true(WIFEXITED(st) && WEXITSTATUS(st) != 0);
  assert_int_equal(log_count("population of 3 members"), 1);
  assert_int_equal(log_count("move members.txt away"), 1);
  free(u.net);
  free(u.ck);
  free(bad.net);
  free(bad.ck);
  remove_dir();
}

/* Without CURVE a slot is its connection's; a holder silent for worker_timeout_ms lets
 * it go, and a waiting trainer gets it. */
static void test_silent_holders(void **state) {
  (void)state;
  fresh_dir();
  g_extra = "--population=2";
  g_extra2 = "--worker_timeout_ms=1000";
  g_extra3 = g_extra4 = g_extra5 = "--seed=1";
  start_coordinator();
  void *ctx = zmq_ctx_new();
  void *t[3];
  for (int i = 0; i < 3; i++) t[i] = connect_dealer(ctx);
  claim_ok(t[0], 0, 1);
  claim_ok(t[1], 0, 2);
  refused(hello_trainer(t[2], 0, "2x16", 0), XQ_ERROR_NOT_ALLOWED, "all 2 population slots",
          NULL);
  usleep(600 * 1000);
  Xqz__Envelope *r = batch_request(t[1], 8, 2, 0); /* slot 2's holder speaks: kept */
  assert_int_equal(r->body_case, XQZ__ENVELOPE__BODY_WAIT); /* an empty window */
  assert_non_null(r->wait->member);
  xq_wire_free(&r);
  usleep(700 * 1000);
  claim_ok(t[2], 0, 1);
  refused(batch_request(t[0], 8, 1, 0), XQ_ERROR_BAD_FIELD, "say Hello first", NULL);
  assert_true(log_count("population slots freed") >= 1);
  for (int i = 0; i < 3; i++) zmq_close(t[i]);
  zmq_ctx_term(ctx);
  coord_stop(g_pid);
  remove_dir();
}

/* Without a population: a trainer's Hello gets a plain Welcome and no worker row. */
static void test_no_population(void **state) {
  (void)state;
  fresh_dir();
  g_extra = "--seed=1";
  g_extra2 = "--seed=1";
  g_extra3 = "--seed=1";
  g_extra4 = "--seed=1";
  g_extra5 = "--seed=1";
  start_coordinator();
  void *ctx = zmq_ctx_new();
  void *s = connect_dealer(ctx);
  Xqz__Envelope *r = hello_trainer(s, 2, "tiny", 0);
  assert_int_equal(r->body_case, XQZ__ENVELOPE__BODY_WELCOME);
  assert_null(r->welcome->member);
  assert_true(r->welcome->best_net_id != 0);
  xq_wire_free(&r);
  r = status(s);
  assert_int_equal(r->status->n_worker_list, 0);
  xq_wire_free(&r);
  refused(checkpoint_request(s, 5, 1), XQ_ERROR_NOT_FOUND, "no population", NULL);
  zmq_close(s);
  zmq_ctx_term(ctx);
  coord_stop(g_pid);
  remove_dir();
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_teardown(test_claims, teardown),
      cmocka_unit_test_teardown(test_members_train, teardown),
      cmocka_unit_test_teardown(test_silent_holders, teardown),
      cmocka_unit_test_teardown(test_no_population, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
