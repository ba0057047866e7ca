/*
 * test_trainer_population.c: the xqz-trainer binary as a member of a population (issue
 * 48, docs/population.md) against a fake coordinator (fake_coord.h) that plays the
 * coordinator's side of the conversation. The trainer resumes from a tiny-net checkpoint
 * of campaign CAMPAIGN written here, and says Hello first (role trainer, its net's
 * architecture, the slot its --dir remembers).
 *  - A Welcome with member slot 3 and settings: its BatchRequests carry slot 3 and the
 *    member's batch, the settings are logged and trained with (the progress line shows the
 *    scaled rate), a batch above --max-batch is cut to it (logged), its candidates carry
 *    its checkpoint at their step with its CRC-32 and the slot, member.slot says 3 and the
 *    next start's Hello asks for slot 3 again.
 *  - A Welcome without a member leaves it a single trainer: no slot in its requests, its
 *    own --batch.
 *  - A copy order: the trainer asks for the donor's checkpoint; one damaged in transit is
 *    refused (logged, nothing copied, the order not reported) and asked for again; the
 *    good one replaces its state (its checkpoint is written at once with the donor's
 *    weights and step), a batch that came while the copy was pending is never trained,
 *    and its requests report the order, also after a restart (member.order). An Error to
 *    a member's request (the coordinator restarted) makes it say Hello again for its slot.
 *    An order withdrawn by the coordinator (copy_net 0) is reported done without a copy.
 *  - A refused Hello: an older coordinator's refusal leaves a single trainer; a full
 *    population is asked again after a while; another architecture stops the trainer with
 *    exit status 2.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "fake_coord.h"
#include "nn/nn_checkpoint.h"
#include "nn/nn_file.h"
#include "support/atomic_file.h"
#include "support/crc32.h"
#include "wire/messages.h"
#include "wire/wire.h"

#define TRAINER XQZ_BINARY_DIR "/trainer/xqz-trainer"
#define CAMPAIGN 0x5eed5eed00c0ffeeULL
#define DONOR_NET 0xd0d0d0d0ULL
#define DONOR_STEP 50
#define NSAMPLES 200

static fake_coord_t f;
static char dir[256], logp[300];
static xq_sample_t *samples;

/* A tiny net's checkpoint at step with weights of seed, of CAMPAIGN: written to path. */
static void write_checkpoint(const char *path, uint64_t seed, int64_t step) {
  nn_arch_t arch;
  nn_model_t *m = NULL;
  nn_sgd_t opt = {0};
  xq_errbuf_t eb = {{0}};
  assert_int_equal(nn_arch_preset("tiny", &arch), 0);
  assert_int_equal(nn_model_new(&m, &arch, &eb), 0);
  nn_model_init(m, seed);
  assert_int_equal(nn_sgd_init(&opt, m, &eb), 0);
  opt.step = step;
  for (size_t i = 0; i < opt.n; i++) opt.velocity[i] = (float)(seed % 7) * 1e-3f;
  nn_file_meta_t meta;
  memset(&meta, 0, sizeof meta);
  meta.net_id = seed;
  meta.campaign_id = CAMPAIGN;
  meta.input_version = (uint32_t)nn_arch_input_version(&arch);
  if (nn_checkpoint_save(path, m, &meta, &opt, NULL, &eb)) fail_msg("%s: %s", path, eb.msg);
  nn_sgd_close(&opt);
  nn_model_free(&m);
}

static void setup_dir(void) {
  snprintf(dir, sizeof dir, "/tmp/xqz-trainer-pop-XXXXXX");
  assert_non_null(mkdtemp(dir));
  snprintf(logp, sizeof logp, "%s/trainer.log", dir);
  char path[300];
  snprintf(path, sizeof path, "%s/trainer.xqzc", dir);
  write_checkpoint(path, 11, 0);
  fake_coord_open(&f, false);
  samples = fake_samples(NSAMPLES, 5);
}

static void teardown_dir(void) {
  fake_coord_close(&f);
  free(samples);
  char cmd[400];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  assert_int_equal(system(cmd), 0);
}

static pid_t spawn_trainer(void) {
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL); /* a failed test leaves no daemon behind */
    FILE *fp = freopen(logp, "a", stderr);
    (void)fp;
    execl(TRAINER, TRAINER, "--coordinator", f.router_ep, "--dir", dir, "--batch",
          "16", "--max-batch", "32", "--candidate-every", "2", "--log-every", "1",
          "--checkpoint-every-s", "1000", "--timeout-ms", "1500", "--threads", "1",
          "--prefetch", "1", "--lr", "0:0.01", (char *)NULL);
    _exit(127);
  }
  return pid;
}

static void stop_trainer(pid_t pid) {
  int status = 0;
  assert_int_equal(kill(pid, SIGTERM), 0);
  assert_true(fake_worker_wait(pid, 20.0, NULL, NULL, &status));
  assert_true(WIFEXITED(status));
  assert_int_equal(WEXITSTATUS(status), 0);
  uint8_t rid[256];
  size_t rid_len;
  for (Xqz__Envelope *e; (e = fake_coord_recv(&f, rid, &rid_len));) xq_wire_free(&e);
}

/* The trainer's next message within 20 s. */
static Xqz__Envelope *next(uint8_t *rid, size_t *rid_len) {
  double t0 = fake_now_s();
  while (fake_now_s() - t0 < 20.0) {
    Xqz__Envelope *e = fake_coord_recv(&f, rid, rid_len);
    if (e) return e;
  }
  fail_msg("no message from the trainer within 20 s");
  return NULL;
}

static Xqz__Envelope *expect(uint8_t *rid, size_t *rid_len, Xqz__Envelope__BodyCase body) {
  Xqz__Envelope *e = next(rid, rid_len);
  if (e->body_case != body) fail_msg("expected body %d, got %d", (int)body, (int)e->body_case);
  return e;
}

/* A member of slot with these settings and copy order (0: none). */
static Xqz__Member member;
static Xqz__MemberSettings msettings;

static Xqz__Member *make_member(uint32_t slot, double lr_scale, double l2, double wv,
                                uint32_t batch, uint64_t order) {
  xqz__member__init(&member);
  xqz__member_settings__init(&msettings);
  msettings.lr_scale = lr_scale;
  msettings.l2 = l2;
  msettings.value_weight = wv;
  msettings.batch = batch;
  member.slot = slot;
  member.settings = &msettings;
  member.order = order;
  return &member;
}

static void answer_welcome(const uint8_t *rid, size_t rid_len, uint64_t rq, Xqz__Member *m) {
  Xqz__Envelope env;
  Xqz__Welcome w;
  xq_msg_welcome(&env, &w, NULL, 0, NULL, 0, CAMPAIGN);
  w.member = m;
  fake_coord_reply(&f, rid, rid_len, &env, rq);
}

static void answer_batch(const uint8_t *rid, size_t rid_len, uint64_t rq, int count,
                         Xqz__Member *m) {
  Xqz__Envelope env;
  Xqz__Batch b;
  fake_batch(&env, &b, samples, NSAMPLES, count, false);
  b.campaign_id = CAMPAIGN;
  b.member = m;
  fake_coord_reply(&f, rid, rid_len, &env, rq);
}

static void answer_wait(const uint8_t *rid, size_t rid_len, uint64_t rq, Xqz__Member *m) {
  Xqz__Envelope env;
  Xqz__Wait w;
  xq_msg_wait(&env, &w, 100, "test");
  w.member = m;
  fake_coord_reply(&f, rid, rid_len, &env, rq);
}

static void answer_ack(const uint8_t *rid, size_t rid_len, uint64_t rq) {
  Xqz__Envelope env;
  Xqz__Ack a;
  xq_msg_ack(&env, &a, NULL, 0, true, "");
  fake_coord_reply(&f, rid, rid_len, &env, rq);
}

static void answer_error(const uint8_t *rid, size_t rid_len, uint64_t rq, uint32_t code,
                         const char *msg) {
  Xqz__Envelope env;
  Xqz__Error er;
  xq_msg_error(&env, &er, code, msg);
  fake_coord_reply(&f, rid, rid_len, &env, rq);
}

/* The Hello: a trainer's, of CAMPAIGN and a tiny net, asking for slot. */
static Xqz__Envelope *expect_hello(uint8_t *rid, size_t *rid_len, uint32_t slot) {
  Xqz__Envelope *e = expect(rid, rid_len, XQZ__ENVELOPE__BODY_HELLO);
  assert_int_equal(e->hello->role, XQZ__ROLE__ROLE_TRAINER);
  assert_int_equal(e->hello->campaign_id, CAMPAIGN);
  assert_string_equal(e->hello->net_arch, "2x16");
  assert_int_equal(e->hello->member_slot, slot);
  return e;
}

/* The step and weights of the checkpoint at path. */
static int64_t load_ckpt(const char *path, nn_model_t **m) {
  nn_file_meta_t meta;
  nn_sgd_t opt = {0};
  xq_errbuf_t eb = {{0}};
  if (nn_checkpoint_load(path, m, &meta, &opt, NULL, &eb)) fail_msg("%s: %s", path, eb.msg);
  int64_t step = opt.step;
  nn_sgd_close(&opt);
  return step;
}

static int64_t own_checkpoint(nn_model_t **m) {
  char path[300];
  snprintf(path, sizeof path, "%s/trainer.xqzc", dir);
  nn_model_t *l = NULL;
  int64_t step = load_ckpt(path, &l);
  if (m) *m = l;
  else nn_model_free(&l);
  return step;
}

static bool same_weights(const nn_model_t *a, const nn_model_t *b) {
  return a->nparams == b->nparams && a->nstats == b->nstats &&
         !memcmp(a->params, b->params, a->nparams * sizeof(float)) &&
         !memcmp(a->stats, b->stats, a->nstats * sizeof(float));
}

/* A candidate of a member: the net at step, its checkpoint (CRC-32 right) at that step,
 * the slot. */
static void check_candidate(const Xqz__CandidateNet *cn, uint32_t slot) {
  assert_int_equal(cn->member_slot, slot);
  assert_true(cn->checkpoint.len > cn->net.len);
  assert_int_equal(cn->checkpoint_crc32, xq_crc32(0, cn->checkpoint.data, cn->checkpoint.len));
  char path[300];
  snprintf(path, sizeof path, "%s/../xqz-candidate-%d.xqzc", dir, (int)getpid());
  const void *parts[] = {cn->checkpoint.data};
  const size_t sizes[] = {cn->checkpoint.len};
  assert_int_equal(xq_atomic_write(path, parts, sizes, 1, NULL), 0);
  nn_model_t *m = NULL;
  assert_int_equal(load_ckpt(path, &m), (int64_t)cn->step);
  unlink(path);
  nn_model_free(&m);
}

static bool file_says(const char *name, const char *want) {
  char path[300], got[32] = "";
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *fp = fopen(path, "r");
  if (!fp) return false;
  size_t n = fread(got, 1, sizeof got - 1, fp);
  fclose(fp);
  got[n] = '\0';
  return strcmp(got, want) == 0;
}

/* Two batches of `batch` positions to the member's requests (of slot, order and that
 * size), Waits after, until its candidate at cand_step: the net with its checkpoint at that
 * step. */
static void serve_two_steps(uint32_t slot, uint32_t batch, uint64_t order, int64_t cand_step) {
  uint8_t rid[256];
  size_t rid_len;
  int served = 0;
  for (bool candidate = false; !candidate;) {
    Xqz__Envelope *e = next(rid, &rid_len);
    if (e->body_case == XQZ__ENVELOPE__BODY_BATCH_REQUEST) {
      assert_int_equal(e->batch_request->member_slot, slot);
      assert_int_equal(e->batch_request->member_order, order);
      assert_int_equal(e->batch_request->size, batch);
      if (served++ < 2) answer_batch(rid, rid_len, e->request_id, (int)batch, &member);
      else answer_wait(rid, rid_len, e->request_id, &member);
    } else if (e->body_case == XQZ__ENVELOPE__BODY_CANDIDATE) {
      assert_int_equal(e->candidate->step, cand_step);
      check_candidate(e->candidate, slot);
      answer_ack(rid, rid_len, e->request_id);
      candidate = true;
    } else {
      fail_msg("unexpected body %d", (int)e->body_case);
    }
    xq_wire_free(&e);
  }
}

/* A fresh directory, the trainer started in it, and its first Hello (no slot yet). */
static pid_t start(uint8_t *rid, size_t *rid_len, Xqz__Envelope **hello) {
  setup_dir();
  pid_t pid = spawn_trainer();
  *hello = expect_hello(rid, rid_len, 0);
  return pid;
}

/* Slot 3 with its settings; a batch above --max-batch; its candidate; the slot asked for
 * again after a restart, and a Welcome without a member then. */
static void test_member_settings(void **state) {
  (void)state;
  uint8_t rid[256];
  size_t rid_len;
  Xqz__Envelope *e = NULL;
  pid_t pid = start(rid, &rid_len, &e);
  answer_welcome(rid, rid_len, e->request_id, make_member(3, 0.5, 2e-4, 1.5, 24, 0));
  xq_wire_free(&e);
  serve_two_steps(3, 24, 0, 2); /* two steps of the member's 24 positions */
  assert_int_equal(fake_log_count(logp, "member settings slot=3 lr_scale=0.5 l2=0.0002"
                                        " value_weight=1.5 batch=24", NULL), 1);
  assert_true(fake_log_count(logp, "population member slot=3", NULL) == 1);
  assert_true(fake_log_count(logp, "training step=2 ", " lr=0.005 ") == 1); /* 0.01 x 0.5 */
  assert_true(file_says("member.slot", "3\n"));
  /* Batch 40 > --max-batch 32: cut to 32, said once. */
  make_member(3, 0.5, 2e-4, 1.5, 40, 0);
  for (int k = 0; k < 3; k++) {
    e = expect(rid, &rid_len, XQZ__ENVELOPE__BODY_BATCH_REQUEST);
    if (k > 0) assert_int_equal(e->batch_request->size, 32);
    answer_wait(rid, rid_len, e->request_id, &member);
    xq_wire_free(&e);
  }
  assert_int_equal(fake_log_count(logp, "above --max-batch", "batch=40 max_batch=32"), 1);
  stop_trainer(pid);

  /* Restarted: Hello asks for slot 3; a Welcome without a member: a single trainer. */
  pid = spawn_trainer();
  e = expect_hello(rid, &rid_len, 3);
  answer_welcome(rid, rid_len, e->request_id, NULL);
  xq_wire_free(&e);
  e = expect(rid, &rid_len, XQZ__ENVELOPE__BODY_BATCH_REQUEST);
  assert_int_equal(e->batch_request->member_slot, 0);
  assert_int_equal(e->batch_request->member_order, 0);
  assert_int_equal(e->batch_request->size, 16);
  assert_int_equal(e->batch_request->trainer_step, 2);
  answer_batch(rid, rid_len, e->request_id, 16, NULL);
  xq_wire_free(&e);
  e = expect(rid, &rid_len, XQZ__ENVELOPE__BODY_BATCH_REQUEST);
  assert_int_equal(e->batch_request->member_slot, 0);
  assert_int_equal(e->batch_request->size, 16);
  xq_wire_free(&e);
  stop_trainer(pid);
  assert_true(fake_log_count(logp, "the coordinator runs no population", NULL) == 1);
  teardown_dir();
}

/* Answers the trainer's messages until its BatchRequest reports order `order`: a
 * CheckpointRequest with ck (damaged: the first `damaged` ones, one byte flipped), a
 * BatchRequest with a Batch the first time (the copy is pending: never trained) and a
 * Wait after. Returns that BatchRequest's trainer step. */
static int64_t serve_copy(const unsigned char *ck, size_t len, int damaged, uint64_t order) {
  uint8_t rid[256];
  size_t rid_len;
  int asked = 0;
  bool batch_sent = false;
  for (;;) {
    Xqz__Envelope *e = next(rid, &rid_len);
    if (e->body_case == XQZ__ENVELOPE__BODY_CHECKPOINT_REQUEST) {
      assert_int_equal(e->checkpoint_request->net_id, DONOR_NET);
      assert_int_equal(e->checkpoint_request->member_slot, 2);
      unsigned char *data = malloc(len);
      memcpy(data, ck, len);
      if (asked++ < damaged) data[len / 2] ^= 0x10;
      Xqz__Envelope env;
      Xqz__Checkpoint c;
      xq_msg_checkpoint(&env, &c, DONOR_NET, DONOR_STEP, xq_crc32(0, ck, len), data, len);
      fake_coord_reply(&f, rid, rid_len, &env, e->request_id);
      free(data);
    } else if (e->body_case == XQZ__ENVELOPE__BODY_BATCH_REQUEST) {
      const Xqz__BatchRequest *br = e->batch_request;
      assert_int_equal(br->member_slot, 2);
      if (br->member_order == order) {
        int64_t step = (int64_t)br->trainer_step;
        answer_wait(rid, rid_len, e->request_id, &member);
        xq_wire_free(&e);
        assert_int_equal(asked, damaged + 1);
        return step;
      }
      if (!batch_sent) answer_batch(rid, rid_len, e->request_id, 16, &member);
      else answer_wait(rid, rid_len, e->request_id, &member);
      batch_sent = true;
    } else {
      fail_msg("unexpected body %d", (int)e->body_case);
    }
    xq_wire_free(&e);
  }
}

/* A copy order: a damaged checkpoint is refused, the good one copied bit for bit; the
 * next candidate carries the copied state trained on; the order survives a restart. */
static void test_member_copy(void **state) {
  (void)state;
  uint8_t rid[256];
  size_t rid_len;
  Xqz__Envelope *e = NULL;
  pid_t pid = start(rid, &rid_len, &e); /* its Hello waits for the donor */
  char donor_path[300];
  snprintf(donor_path, sizeof donor_path, "%s/donor.xqzc.src", dir);
  write_checkpoint(donor_path, 99, DONOR_STEP);
  unsigned char *ck = NULL;
  size_t len = 0;
  assert_int_equal(xq_read_file(donor_path, 1u << 26, &ck, &len, NULL), 0);
  nn_model_t *donor = NULL;
  assert_int_equal(load_ckpt(donor_path, &donor), DONOR_STEP);
  unlink(donor_path);
  make_member(2, 1.0, 1e-4, 1.0, 16, 1);
  member.copy_net = DONOR_NET;
  member.copy_size = len;
  member.copy_crc32 = xq_crc32(0, ck, len);
  member.parent = 1;
  answer_welcome(rid, rid_len, e->request_id, &member);
  xq_wire_free(&e);
  int64_t step = serve_copy(ck, len, 1, 1);
  assert_int_equal(step, DONOR_STEP);
  /* The batch sent while it was pending was never trained, before or after the copy. */
  assert_int_equal(fake_log_count(logp, "training step=", NULL), 0);
  assert_int_equal(fake_log_count(logp, "member copy failed", "CRC-32"), 1);
  assert_int_equal(fake_log_count(logp, "member copied slot=2", "step=50 order=1"), 1);
  nn_model_t *mine = NULL;
  assert_int_equal(own_checkpoint(&mine), DONOR_STEP); /* written at once */
  assert_true(same_weights(mine, donor));
  nn_model_free(&mine);
  assert_true(file_says("member.order", "1\n"));
  assert_true(file_says("member.slot", "2\n"));

  serve_two_steps(2, 16, 1, DONOR_STEP + 2); /* its candidate: the copied state trained on */
  stop_trainer(pid);
  assert_int_equal(own_checkpoint(NULL), DONOR_STEP + 2);

  /* Restarted: the same slot, and order 1 is already carried out: no copy again. */
  pid = spawn_trainer();
  e = expect_hello(rid, &rid_len, 2);
  answer_welcome(rid, rid_len, e->request_id, &member);
  xq_wire_free(&e);
  e = expect(rid, &rid_len, XQZ__ENVELOPE__BODY_BATCH_REQUEST);
  assert_int_equal(e->batch_request->member_order, 1);
  assert_int_equal(e->batch_request->trainer_step, DONOR_STEP + 2);
  /* The coordinator restarted meanwhile (the slot is no longer this connection's): the
   * member says Hello again, for its slot, and goes on. */
  answer_error(rid, rid_len, e->request_id, XQ_ERROR_BAD_FIELD,
               "slot 2 is not held by this connection: say Hello first");
  xq_wire_free(&e);
  e = expect_hello(rid, &rid_len, 2);
  answer_welcome(rid, rid_len, e->request_id, &member);
  xq_wire_free(&e);
  e = expect(rid, &rid_len, XQZ__ENVELOPE__BODY_BATCH_REQUEST);
  assert_int_equal(e->batch_request->member_slot, 2);
  assert_int_equal(e->batch_request->member_order, 1);
  /* Order 2, withdrawn by the coordinator (copy_net 0: the donor's checkpoint could not be
   * served): no CheckpointRequest, the order reported done, the member trains on. */
  member.order = 2;
  member.copy_net = 0;
  member.copy_size = 0;
  member.copy_crc32 = 0;
  answer_wait(rid, rid_len, e->request_id, &member);
  xq_wire_free(&e);
  e = expect(rid, &rid_len, XQZ__ENVELOPE__BODY_BATCH_REQUEST);
  assert_int_equal(e->batch_request->member_order, 2);
  xq_wire_free(&e);
  stop_trainer(pid);
  assert_true(file_says("member.order", "2\n"));
  assert_int_equal(fake_log_count(logp, "copy order withdrawn", "order=2"), 1);
  assert_int_equal(fake_log_count(logp, "member copied", NULL), 1);
  nn_model_free(&donor);
  free(ck);
  teardown_dir();
}

/* Refused Hellos: an older coordinator's refusal (NOT_ALLOWED) leaves a single trainer; a
 * full table is asked again after a while; another architecture stops it, status 2. */
static void test_hello_refused(void **state) {
  (void)state;
  uint8_t rid[256];
  size_t rid_len;
  Xqz__Envelope *e = NULL;
  pid_t pid = start(rid, &rid_len, &e);
  answer_error(rid, rid_len, e->request_id, XQ_ERROR_NOT_ALLOWED,
               "Hello is for workers: a trainer asks for batches");
  xq_wire_free(&e);
  e = expect(rid, &rid_len, XQZ__ENVELOPE__BODY_BATCH_REQUEST);
  assert_int_equal(e->batch_request->member_slot, 0);
  xq_wire_free(&e);
  stop_trainer(pid);
  assert_int_equal(fake_log_count(logp, "does not take the trainer's Hello", "code=9"), 1);

  pid = spawn_trainer();
  e = expect_hello(rid, &rid_len, 0);
  answer_error(rid, rid_len, e->request_id, XQ_ERROR_BAD_FIELD,
               "all 4 population slots are held by live trainers: stop one, or raise"
               " population");
  xq_wire_free(&e);
  double t0 = fake_now_s();
  e = expect_hello(rid, &rid_len, 0); /* asked again, after --timeout-ms */
  assert_true(fake_now_s() - t0 >= 1.0);
  answer_error(rid, rid_len, e->request_id, XQ_ERROR_BAD_FIELD,
               "architecture mismatch: this population trains 6x64 nets, the trainer's net is"
               " 2x16; start the trainer with the campaign's net_size");
  xq_wire_free(&e);
  int status = 0;
  assert_true(fake_worker_wait(pid, 20.0, NULL, NULL, &status));
  assert_true(WIFEXITED(status));
  assert_int_equal(WEXITSTATUS(status), 2);
  assert_int_equal(fake_log_count(logp, "no population slot for this trainer now",
                                  "slots are held"), 1);
  assert_int_equal(fake_log_count(logp, "the population refuses this trainer",
                                  "architecture mismatch"), 1);
  teardown_dir();
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_member_settings),
                                     cmocka_unit_test(test_member_copy),
                                     cmocka_unit_test(test_hello_refused)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
