/*
 * test_trainer_loop.c: the xqz-trainer binary against a fake coordinator (a ROUTER on a
 * free loopback port in this test) serving Batches of real samples. Without a checkpoint
 * the trainer fetches the best net (StatusRequest, then NetRequests served here in small
 * chunks) and trains on from it, so without --size its candidates have that net's
 * architecture (tiny here, not the 6x64 default). Its Hello is answered with a Welcome
 * without a member (no population: a single trainer). Wait is honoured, a
 * bad sample is dropped, a CandidateNet arrives every 3 steps that nn_file loads with the
 * right step and parent; SIGTERM leaves a checkpoint and exit 0; a restart resumes at
 * the checkpoint's step, also when the coordinator comes up after the trainer; a
 * coordinator of another protocol version stops the trainer with exit status 1. Two
 * batches are always requested ahead; across a coordinator restart with both in flight,
 * no batch is trained twice; a candidate upload without an Ack is uploaded again, and a
 * refusal is logged with its reason. A best net with the survival head (tiny-s) trains on
 * the samples' survival targets: its candidates keep the head and the progress line
 * reports the survival loss, which a net without the head never does. With --ema-steps
 * the candidates carry the averaged weights, not the last step's, and the checkpoint
 * keeps the average across a restart; --ema-steps 0 drops it again. A trainer whose
 * loss explodes (--lr 0:99) stops with exit status 1 before it writes a checkpoint or a
 * candidate; the older checkpoint generations (trainer.xqzc.1, ...) are kept, and a
 * damaged newest checkpoint is moved aside and the trainer resumes from the one before.
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
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

#include <cmocka.h>

#include "fake_coord.h"

#include "nn/encode.h"
#include "nn/nn_checkpoint.h"
#include "nn/nn_ema.h"
#include "nn/nn_file.h"
#include "rules/movegen.h"
#include "rules/rules.h"
#include "support/crc32.h"
#include "records/targets.h"
#include "wire/messages.h"
#include "wire/sample.h"
#include "wire/wire.h"

#define TRAINER XQZ_BINARY_DIR "/trainer/xqz-trainer"
#define BEST_NET 42
#define NSAMPLES 400

static xq_sample_t *samples;
static int nsamples;
static const char *best_size = "tiny"; /* the best net's architecture */
static char endpoint[256], dir[256];
static void *ctx, *router;


static const char *ema_steps = "0"; /* the trainer's --ema-steps */
static const char *lr = "0:0.02";   /* the trainer's --lr */
static const char *ckpt_every = "1000"; /* the trainer's --checkpoint-every-s */

static pid_t spawn_trainer(void) {
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL); /* a failed test leaves no daemon behind */
    char log[300];
    snprintf(log, sizeof log, "%s/trainer.log", dir); /* read back by log_has() */
    FILE *f = freopen(log, "a", stderr);
    (void)f;
    execl(TRAINER, TRAINER, "--coordinator", endpoint, "--dir", dir,
          "--batch", "16", "--candidate-every", "3", "--log-every", "1",
          "--checkpoint-every-s", ckpt_every, "--timeout-ms", "3000", "--threads", "2",
          "--ema-steps", ema_steps, "--lr", lr, (char *)NULL);
    _exit(127);
  }
  return pid;
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* A trainer's Hello gets a Welcome without a member (no population): true when env was
 * one (answered and freed). */
static bool welcomed(const uint8_t *rid, size_t rid_len, Xqz__Envelope **env) {
  if ((*env)->body_case != XQZ__ENVELOPE__BODY_HELLO) return false;
  assert_int_equal((*env)->hello->role, XQZ__ROLE__ROLE_TRAINER);
  Xqz__Envelope w;
  Xqz__Welcome wel;
  xq_msg_welcome(&w, &wel, NULL, BEST_NET, NULL, 0, 0);
  w.request_id = (*env)->request_id;
  assert_int_equal(xq_wire_send(router, rid, rid_len, &w, 0), 0);
  xq_wire_free(env);
  return true;
}

/* Next message to the fake coordinator within 20 s (a Hello is answered on the way). */
static Xqz__Envelope *next(uint8_t *rid, size_t *rid_len) {
  zmq_pollitem_t pi = {router, 0, ZMQ_POLLIN, 0};
  double t0 = now_s();
  while (now_s() - t0 < 20.0) {
    if (zmq_poll(&pi, 1, 200) <= 0) continue;
    Xqz__Envelope *env = NULL;
    xq_errbuf_t eb = {{0}};
    int rc = xq_wire_recv(router, rid, rid_len, &env, ZMQ_DONTWAIT, &eb);
    if (rc == 0 && !welcomed(rid, *rid_len, &env)) return env;
  }
  fail_msg("no message from the trainer within 20 s");
  return NULL;
}

static void reply(const uint8_t *rid, size_t rid_len, Xqz__Envelope *env, uint64_t req) {
  env->request_id = req;
  assert_int_equal(xq_wire_send(router, rid, rid_len, env, 0), 0);
}

static void send_wait(const uint8_t *rid, size_t rid_len, uint64_t req) {
  Xqz__Envelope env;
  Xqz__Wait w;
  xq_msg_wait(&env, &w, 50, "window filling");
  reply(rid, rid_len, &env, req);
}

static void send_ack(const uint8_t *rid, size_t rid_len, uint64_t req, bool ok,
                     const char *reason) {
  Xqz__Envelope env;
  Xqz__Ack a;
  xq_msg_ack(&env, &a, NULL, 0, ok, reason);
  reply(rid, rid_len, &env, req);
}

/* A batch of 16 samples (plus one hostile one when bad). */
static void send_batch(const uint8_t *rid, size_t rid_len, uint64_t req, bool bad) {
  Xqz__Envelope env;
  Xqz__Batch b;
  fake_batch(&env, &b, samples, nsamples, 16, bad);
  b.best_net_id = BEST_NET;
  b.window_positions = (uint64_t)nsamples;
  reply(rid, rid_len, &env, req);
}

/* The best net: a tiny net with id BEST_NET, served in chunks of at most 1000 bytes. */
static unsigned char *best_file;
static size_t best_len;

static void make_best_net(void) {
  nn_arch_t arch;
  nn_model_t *m = NULL;
  xq_errbuf_t eb = {{0}};
  assert_int_equal(nn_arch_preset(best_size, &arch), 0);
  assert_int_equal(nn_model_new(&m, &arch, &eb), 0);
  nn_model_init(m, 9);
  nn_file_meta_t meta;
  memset(&meta, 0, sizeof meta);
  meta.net_id = BEST_NET;
  meta.input_version = NN_INPUT_VERSION;
  assert_int_equal(nn_file_encode(&best_file, &best_len, m, &meta, &eb), 0);
  nn_model_free(&m);
}

static void serve_status(const uint8_t *rid, size_t rid_len, uint64_t req) {
  Xqz__Envelope env;
  Xqz__Status st = XQZ__STATUS__INIT;
  st.best_net_id = BEST_NET;
  xq_msg_status(&env, &st);
  reply(rid, rid_len, &env, req);
}

static void serve_net(const uint8_t *rid, size_t rid_len, uint64_t req, const Xqz__NetRequest *r) {
  assert_int_equal(r->net_id, BEST_NET);
  assert_true(r->offset < best_len);
  size_t n = best_len - (size_t)r->offset;
  if (n > 1000) n = 1000;
  Xqz__Envelope env;
  Xqz__NetChunk ch;
  xq_msg_net_chunk(&env, &ch, BEST_NET, r->offset, best_len, xq_crc32(0, best_file, best_len),
                   best_file + r->offset, n);
  reply(rid, rid_len, &env, req);
}

/* Serves batches until a candidate for `want_step` arrives and the trainer asks for the
 * batch after it. first_step: the trainer_step expected in its first request. */
static int fetches; /* StatusRequests seen: one per fresh start */
static nn_model_t *last_candidate; /* the last CandidateNet's weights */

static void serve_until_candidate(int64_t first_step, int64_t want_step) {
  uint8_t rid[256];
  size_t rid_len;
  bool first = true, waited = false, got = false;
  uint32_t reported = 0;
  int64_t served = 0;
  for (;;) {
    Xqz__Envelope *env = next(rid, &rid_len);
    if (env->body_case == XQZ__ENVELOPE__BODY_STATUS_REQUEST) {
      serve_status(rid, rid_len, env->request_id);
      fetches++;
    } else if (env->body_case == XQZ__ENVELOPE__BODY_NET_REQUEST) {
      serve_net(rid, rid_len, env->request_id, env->net_request);
    } else if (env->body_case == XQZ__ENVELOPE__BODY_BATCH_REQUEST) {
      const Xqz__BatchRequest *br = env->batch_request;
      assert_int_equal(br->size, 16);
      if (first) assert_int_equal((int64_t)br->trainer_step, first_step);
      first = false;
      /* The loss report covers the steps since the previous request (two are in flight,
       * so at most the two batches trained since). */
      assert_true(br->loss_steps <= 2);
      if (br->loss_steps) {
        assert_true(br->loss > 0 && br->loss < 100);
        assert_true(br->loss_policy > 0 && br->loss_policy <= br->loss);
        assert_true(br->loss_value >= 0 && br->loss_value <= 4);
      }
      reported += br->loss_steps;
      if (got && (int64_t)br->trainer_step == want_step) {
        /* Every step reported; left unanswered: the trainer is idle when signalled. */
        assert_int_equal(reported, (uint32_t)(want_step - first_step));
        xq_wire_free(&env);
        return;
      }
      if (!waited) {
        send_wait(rid, rid_len, env->request_id);
        waited = true;
      } else if (first_step + served < want_step) { /* batches up to the wanted step only */
        send_batch(rid, rid_len, env->request_id, served == 0);
        served++;
      } else {
        send_wait(rid, rid_len, env->request_id);
      }
    } else if (env->body_case == XQZ__ENVELOPE__BODY_CANDIDATE) {
      const Xqz__CandidateNet *cn = env->candidate;
      nn_model_t *m = NULL;
      nn_file_meta_t meta;
      xq_errbuf_t eb = {{0}};
      if (nn_file_decode(&m, &meta, cn->net.data, cn->net.len, &eb))
        fail_msg("candidate does not load: %s", eb.msg);
      print_message("candidate step %llu parent %llu blocks %d\n",
                    (unsigned long long)cn->step, (unsigned long long)meta.parent_id,
                    m->arch.blocks);
      assert_int_equal((int64_t)cn->step, (int64_t)meta.step);
      assert_int_equal(meta.parent_id, BEST_NET);
      /* Trained on from the served tiny net, not a fresh net of the 6x64 default. */
      assert_int_equal(m->arch.blocks, 2);
      assert_int_equal(m->arch.channels, 16);
      assert_int_equal(m->arch.survival, strcmp(best_size, "tiny-s") == 0);
      assert_true((int64_t)cn->step <= want_step);
      assert_int_equal(cn->step % 3, 0);
      if ((int64_t)cn->step == want_step) got = true;
      send_ack(rid, rid_len, env->request_id, true, "");
      nn_model_free(&last_candidate);
      last_candidate = m;
    }
    xq_wire_free(&env);
  }
}

/* The next BatchRequest (answering nothing else but net fetches). */
static Xqz__Envelope *next_batch_request(uint8_t *rid, size_t *rid_len) {
  for (;;) {
    Xqz__Envelope *env = next(rid, rid_len);
    if (env->body_case == XQZ__ENVELOPE__BODY_BATCH_REQUEST) return env;
    fail_msg("expected a BatchRequest, got body %d", (int)env->body_case);
  }
}

static void rebind_router(void) {
  router = zmq_socket(ctx, ZMQ_ROUTER);
  assert_int_equal(xq_wire_socket_setup(router), 0);
  int rc = -1;
  for (int i = 0; i < 100 && rc; i++) { /* the old listener's port is released async */
    rc = zmq_bind(router, endpoint);
    if (rc) nanosleep(&(struct timespec){0, 50000000L}, NULL);
  }
  assert_int_equal(rc, 0);
}

/* Resumed at `step`: two BatchRequests arrive before any answer (one batch always
 * requested ahead). The coordinator restarts with both in flight; the trainer asks again,
 * and of a batch delivered twice and a batch for a forgotten request it trains neither:
 * two answered requests make exactly two steps. */
static int64_t check_prefetch_restart(int64_t step) {
  uint8_t rid[256], rid2[256];
  size_t rid_len, rid2_len;
  Xqz__Envelope *r1 = next_batch_request(rid, &rid_len);
  Xqz__Envelope *r2 = next_batch_request(rid, &rid_len);
  assert_int_equal((int64_t)r1->batch_request->trainer_step, step);
  assert_int_equal((int64_t)r2->batch_request->trainer_step, step);
  assert_int_not_equal(r1->request_id, r2->request_id);
  uint64_t forgotten = r1->request_id;
  xq_wire_free(&r1);
  xq_wire_free(&r2);
  zmq_close(router); /* the restart: both requests are lost with the old socket */
  rebind_router();
  Xqz__Envelope *r3 = next_batch_request(rid, &rid_len); /* after --timeout-ms */
  Xqz__Envelope *r4 = next_batch_request(rid2, &rid2_len);
  assert_true(r3->request_id > forgotten && r4->request_id > r3->request_id);
  send_batch(rid, rid_len, r3->request_id, false);
  send_batch(rid, rid_len, r3->request_id, false); /* delivered twice */
  send_batch(rid, rid_len, forgotten, false);      /* a reply to a forgotten request */
  send_batch(rid2, rid2_len, r4->request_id, false);
  xq_wire_free(&r3);
  xq_wire_free(&r4);
  /* Two refills, sent ahead before each step; a Wait frees one for a request that
   * reports the step after both batches. */
  for (int k = 0; k < 2; k++) {
    Xqz__Envelope *r = next_batch_request(rid, &rid_len);
    assert_int_equal((int64_t)r->batch_request->trainer_step, step + k);
    if (k == 0) send_wait(rid, rid_len, r->request_id);
    xq_wire_free(&r);
  }
  Xqz__Envelope *r = next_batch_request(rid, &rid_len);
  assert_int_equal((int64_t)r->batch_request->trainer_step, step + 2);
  xq_wire_free(&r);
  return step + 2;
}

/* Reads the trainer's log (its stderr) for a line containing all of the given parts. */
static bool log_has(const char *a, const char *b) {
  char path[300], line[2048];
  snprintf(path, sizeof path, "%s/trainer.log", dir);
  FILE *f = fopen(path, "r");
  bool found = false;
  while (f && !found && fgets(line, sizeof line, f)) found = strstr(line, a) && strstr(line, b);
  if (f) fclose(f);
  return found;
}

/* Lines of the trainer's log holding both a and b. */
static int log_count(const char *a, const char *b) {
  char path[300], line[2048];
  snprintf(path, sizeof path, "%s/trainer.log", dir);
  FILE *f = fopen(path, "r");
  int n = 0;
  while (f && fgets(line, sizeof line, f)) n += strstr(line, a) && strstr(line, b);
  if (f) fclose(f);
  return n;
}

/* A candidate upload the coordinator never acknowledges (lost in a restart) is uploaded
 * again, the same net, after --timeout-ms; a refusal ends it and is logged with its
 * reason. Batches are served until the step `want` (a multiple of 3) is reached. */
static void check_candidate_resent(int64_t step, int64_t want) {
  uint8_t rid[256];
  size_t rid_len;
  uint64_t net = 0;
  int uploads = 0;
  int64_t served = 0;
  while (uploads < 2) {
    Xqz__Envelope *env = next(rid, &rid_len);
    if (env->body_case == XQZ__ENVELOPE__BODY_BATCH_REQUEST) {
      if (step + served < want) { /* exactly the batches up to the step `want` */
        send_batch(rid, rid_len, env->request_id, false);
        served++;
      } else
        send_wait(rid, rid_len, env->request_id); /* idle until the candidate is settled */
    } else if (env->body_case == XQZ__ENVELOPE__BODY_CANDIDATE) {
      nn_model_t *m = NULL;
      nn_file_meta_t meta;
      assert_int_equal(nn_file_decode(&m, &meta, env->candidate->net.data,
                                      env->candidate->net.len, NULL), 0);
      nn_model_free(&m);
      assert_int_equal((int64_t)env->candidate->step, want);
      if (uploads++ == 0) {
        net = meta.net_id; /* not acknowledged */
      } else {
        assert_int_equal(meta.net_id, net);
        send_ack(rid, rid_len, env->request_id, false, "refused by the test");
      }
    } else {
      fail_msg("unexpected body %d", (int)env->body_case);
    }
    xq_wire_free(&env);
  }
  /* The refusal is logged once the trainer has read it: wait for its next request. */
  Xqz__Envelope *r = next_batch_request(rid, &rid_len);
  xq_wire_free(&r);
  double t0 = now_s();
  while (!log_has("candidate refused", "refused by the test") && now_s() - t0 < 10)
    nanosleep(&(struct timespec){0, 50000000L}, NULL);
  assert_true(log_has("candidate refused", "reason=\"refused by the test\""));
  assert_true(log_has("no Ack for the candidate; uploading it again", ""));
}

/* Waits up to 20 s for the trainer to exit by itself and checks its exit status. */
static void expect_exit(pid_t pid, int code, const char *why) {
  int status = 0;
  double t0 = now_s();
  while (waitpid(pid, &status, WNOHANG) == 0) {
    if (now_s() - t0 > 20.0) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      fail_msg("trainer did not stop within 20 s %s", why);
    }
    nanosleep(&(struct timespec){0, 20000000L}, NULL);
  }
  assert_true(WIFEXITED(status));
  assert_int_equal(WEXITSTATUS(status), code);
}

/* Drops what a stopped trainer left queued (the request it had sent ahead), so the
 * next phase reads only its own trainer's messages. */
static void drain_router(void) {
  zmq_pollitem_t pi = {router, 0, ZMQ_POLLIN, 0};
  while (zmq_poll(&pi, 1, 200) > 0) {
    Xqz__Envelope *env = NULL;
    uint8_t rid[256];
    size_t rid_len;
    if (xq_wire_recv(router, rid, &rid_len, &env, ZMQ_DONTWAIT, NULL) == 0) xq_wire_free(&env);
  }
}

static void stop_trainer(pid_t pid) {
  assert_int_equal(kill(pid, SIGTERM), 0);
  expect_exit(pid, 0, "of SIGTERM");
  drain_router();
}

/* The checkpoint's step; its model and average into m and ema when they are not NULL. */
static int64_t load_checkpoint(nn_model_t **m, nn_ema_t *ema) {
  char path[300];
  snprintf(path, sizeof path, "%s/trainer.xqzc", dir);
  nn_model_t *l = NULL;
  nn_file_meta_t meta;
  nn_sgd_t opt;
  memset(&opt, 0, sizeof opt);
  xq_errbuf_t eb = {{0}};
  if (nn_checkpoint_load(path, &l, &meta, &opt, ema, &eb)) fail_msg("checkpoint: %s", eb.msg);
  int64_t step = opt.step;
  nn_sgd_close(&opt);
  if (m) *m = l;
  else nn_model_free(&l);
  return step;
}

static int64_t checkpoint_step(void) { return load_checkpoint(NULL, NULL); }

/* A fake coordinator serving fresh samples and a best net of `size`, in a new dir. */
static void fake_up(const char *size) {
  fetches = 0;
  best_size = size;
  nsamples = NSAMPLES;
  samples = fake_samples(nsamples, 77);
  snprintf(dir, sizeof dir, "/tmp/xqz-trainer-test-XXXXXX");
  assert_non_null(mkdtemp(dir));
  ctx = zmq_ctx_new();
  router = zmq_socket(ctx, ZMQ_ROUTER);
  assert_int_equal(xq_wire_socket_setup(router), 0);
  assert_int_equal(zmq_bind(router, "tcp://127.0.0.1:*"), 0);
  size_t len = sizeof endpoint;
  assert_int_equal(zmq_getsockopt(router, ZMQ_LAST_ENDPOINT, endpoint, &len), 0);
  make_best_net();
}

static void fake_down(void) {
  char path[300];
  snprintf(path, sizeof path, "%s/trainer.xqzc", dir);
  unlink(path);
  for (int g = 1; g <= 3; g++) { /* the older generations the trainer keeps */
    snprintf(path, sizeof path, "%s/trainer.xqzc.%d", dir, g);
    unlink(path);
  }
  snprintf(path, sizeof path, "%s/trainer.xqzc.damaged", dir);
  unlink(path);
  snprintf(path, sizeof path, "%s/%016llx.xqzn", dir, (unsigned long long)BEST_NET);
  unlink(path);
  snprintf(path, sizeof path, "%s/trainer.log", dir);
  unlink(path);
  rmdir(dir);
  free(best_file);
  zmq_close(router);
  zmq_ctx_term(ctx);
  free(samples);
  nn_model_free(&last_candidate);
  best_size = "tiny";
  ema_steps = "0";
  lr = "0:0.02";
}

static void test_trainer_loop(void **state) {
  (void)state;
  fake_up("tiny");
  print_message("fake coordinator at %s, dir %s\n", endpoint, dir);
  pid_t pid = spawn_trainer();
  serve_until_candidate(0, 3);
  stop_trainer(pid);
  assert_int_equal(fetches, 1);
  assert_int_equal(checkpoint_step(), 3);

  pid = spawn_trainer(); /* resumes at step 3 */
  serve_until_candidate(3, 6);
  stop_trainer(pid);
  assert_int_equal(checkpoint_step(), 6);

  /* Coordinator down at start: the trainer retries until it is back, then trains. */
  zmq_close(router);
  pid = spawn_trainer();
  nanosleep(&(struct timespec){0, 700000000L}, NULL);
  rebind_router();
  serve_until_candidate(6, 9);
  stop_trainer(pid);
  assert_int_equal(checkpoint_step(), 9);
  assert_int_equal(fetches, 1); /* resumes never fetch */

  /* Prefetch across a coordinator restart, then a candidate whose Ack was lost. */
  pid = spawn_trainer();
  int64_t step = check_prefetch_restart(9);
  check_candidate_resent(step, 12);
  stop_trainer(pid);
  assert_int_equal(checkpoint_step(), 12);

  /* A coordinator of another protocol version: the trainer stops with status 1 (after its
   * checkpoint) instead of asking again forever. */
  pid = spawn_trainer();
  {
    uint8_t rid[256];
    size_t rid_len;
    Xqz__Envelope *q = next(rid, &rid_len);
    assert_int_equal(q->body_case, XQZ__ENVELOPE__BODY_BATCH_REQUEST);
    Xqz__Envelope env;
    Xqz__Wait w;
    xq_msg_wait(&env, &w, 0, NULL);
    env.version = 99; /* broken on purpose: another protocol version */
    reply(rid, rid_len, &env, q->request_id);
    xq_wire_free(&q);
    expect_exit(pid, 1, "of meeting another protocol version");
    assert_int_equal(checkpoint_step(), 12);
  }

  assert_false(log_has("training step=", "survival="));
  fake_down();
}

/* From a best net of `size` with an auxiliary head: three steps on samples that carry
 * the head's targets, a candidate of that size, the head in the start line (`start_has`)
 * and its loss in the progress log (`loss_has`). */
static void trainer_with_head(const char *size, const char *start_has, const char *loss_has) {
  fake_up(size);
  assert_true(samples[0].has_survive && samples[0].has_reply);
  pid_t pid = spawn_trainer();
  serve_until_candidate(0, 3);
  stop_trainer(pid);
  assert_int_equal(checkpoint_step(), 3);
  assert_true(log_has("starting from the best net", start_has));
  assert_true(log_has("training step=3 ", loss_has));
  fake_down();
}

static bool same_weights(const nn_model_t *a, const nn_model_t *b) {
  return a->nparams == b->nparams && a->nstats == b->nstats &&
         !memcmp(a->params, b->params, a->nparams * sizeof(float)) &&
         !memcmp(a->stats, b->stats, a->nstats * sizeof(float));
}

/* --ema-steps: the candidate is the checkpoint's average of every step so far, not its
 * last step's weights; a restart goes on with the stored average; --ema-steps 0 drops it
 * and the candidates are the last step's weights again. */
static void test_trainer_average(void **state) {
  (void)state;
  fake_up("tiny");
  ema_steps = "1000";
  pid_t pid = spawn_trainer();
  serve_until_candidate(0, 3);
  stop_trainer(pid);
  assert_true(log_has("trainer started", "ema_steps=1000"));
  nn_model_t *m = NULL;
  nn_ema_t ema = {0};
  assert_int_equal(load_checkpoint(&m, &ema), 3);
  assert_non_null(ema.avg);
  assert_int_equal(ema.count, 3);
  assert_true(same_weights(last_candidate, ema.avg));
  assert_false(same_weights(last_candidate, m));
  nn_model_free(&m);

  pid = spawn_trainer(); /* the average goes on from the checkpoint */
  serve_until_candidate(3, 6);
  stop_trainer(pid);
  assert_true(log_has("averaged weights resumed from the checkpoint", "averaged=3"));
  assert_int_equal(load_checkpoint(&m, &ema), 6);
  assert_int_equal(ema.count, 6);
  assert_true(same_weights(last_candidate, ema.avg));
  assert_false(same_weights(last_candidate, m));
  nn_model_free(&m);

  ema_steps = "0";
  pid = spawn_trainer();
  serve_until_candidate(6, 9);
  stop_trainer(pid);
  assert_true(log_has("dropping the checkpoint's averaged weights", "averaged=6"));
  assert_int_equal(load_checkpoint(&m, &ema), 9);
  assert_null(ema.avg);
  assert_true(same_weights(last_candidate, m));
  nn_model_free(&m);
  fake_down();
}

/* The step of the checkpoint generation `gen` (0: trainer.xqzc, k: trainer.xqzc.k). */
static int64_t generation_step(int gen) {
  char path[300];
  if (gen == 0) snprintf(path, sizeof path, "%s/trainer.xqzc", dir);
  else snprintf(path, sizeof path, "%s/trainer.xqzc.%d", dir, gen);
  nn_model_t *l = NULL;
  nn_file_meta_t meta;
  nn_sgd_t opt;
  memset(&opt, 0, sizeof opt);
  xq_errbuf_t eb = {{0}};
  if (nn_checkpoint_load(path, &l, &meta, &opt, NULL, &eb)) fail_msg("%s: %s", path, eb.msg);
  nn_model_free(&l);
  nn_sgd_close(&opt);
  return opt.step;
}

/* Serves batches and acknowledges candidates (each must load: all weights finite) until
 * the trainer exits by itself, at most max_batches batches and 60 s; returns its exit
 * status. */
static int serve_until_exit(pid_t pid, int max_batches) {
  int served = 0, status = 0, candidates = 0;
  double t0 = now_s();
  while (waitpid(pid, &status, WNOHANG) == 0) {
    if (served >= max_batches || now_s() - t0 > 60.0) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      fail_msg("the trainer went on training after %d batches (%d candidates): it does not"
               " stop on divergence", served, candidates);
    }
    zmq_pollitem_t pi = {router, 0, ZMQ_POLLIN, 0};
    if (zmq_poll(&pi, 1, 100) <= 0) continue;
    Xqz__Envelope *env = NULL;
    uint8_t rid[256];
    size_t rid_len;
    if (xq_wire_recv(router, rid, &rid_len, &env, ZMQ_DONTWAIT, NULL)) continue;
    if (welcomed(rid, rid_len, &env)) continue;
    if (env->body_case == XQZ__ENVELOPE__BODY_BATCH_REQUEST) {
      send_batch(rid, rid_len, env->request_id, false);
      served++;
    } else if (env->body_case == XQZ__ENVELOPE__BODY_CANDIDATE) {
      nn_model_t *m = NULL;
      nn_file_meta_t meta;
      xq_errbuf_t eb = {{0}};
      if (nn_file_decode(&m, &meta, env->candidate->net.data, env->candidate->net.len, &eb))
        fail_msg("a candidate of a diverged net was uploaded: %s", eb.msg);
      nn_model_free(&m);
      candidates++;
      send_ack(rid, rid_len, env->request_id, true, "");
    }
    xq_wire_free(&env);
  }
  drain_router();
  print_message("trainer exited after %d batches, %d candidates\n", served, candidates);
  assert_true(WIFEXITED(status));
  return WEXITSTATUS(status);
}

/* Issue 47 item 12: a trainer whose loss explodes (--lr 0:99) stops with exit status 1
 * and an error naming the step, the loss and the learning rate, before it writes a
 * checkpoint or uploads a damaged candidate: the good checkpoint and the generation
 * before it stay. A newest checkpoint that does not load is moved aside, loudly, and the
 * trainer resumes from the generation before it. */
static void test_trainer_diverges(void **state) {
  (void)state;
  fake_up("tiny");
  pid_t pid = spawn_trainer();
  serve_until_candidate(0, 3);
  stop_trainer(pid);
  pid = spawn_trainer();
  serve_until_candidate(3, 6);
  stop_trainer(pid);
  assert_int_equal(generation_step(0), 6);
  assert_int_equal(generation_step(1), 3); /* the one before it is kept */

  lr = "0:99";
  pid = spawn_trainer();
  assert_int_equal(serve_until_exit(pid, 300), 1);
  assert_true(log_has("training diverged", "--lr"));
  assert_true(log_has("training diverged", "step="));
  assert_true(log_has("training diverged", "loss="));
  assert_int_equal(generation_step(0), 6); /* not overwritten */
  assert_int_equal(generation_step(1), 3);

  /* The newest checkpoint damaged (one byte flipped in its weights): moved aside, and the
   * trainer resumes from generation 1 at step 3. */
  char path[300];
  snprintf(path, sizeof path, "%s/trainer.xqzc", dir);
  FILE *f = fopen(path, "r+b");
  assert_non_null(f);
  assert_int_equal(fseek(f, 400, SEEK_SET), 0);
  int c = fgetc(f);
  assert_int_equal(fseek(f, 400, SEEK_SET), 0);
  fputc(c ^ 0x55, f);
  fclose(f);
  lr = "0:0.02";
  pid = spawn_trainer();
  serve_until_candidate(3, 6);
  stop_trainer(pid);
  assert_true(log_has("checkpoint does not load", "trainer.xqzc.damaged"));
  assert_true(log_has("resumed from an older checkpoint", "step=3"));
  snprintf(path, sizeof path, "%s/trainer.xqzc.damaged", dir);
  struct stat st;
  assert_int_equal(stat(path, &st), 0);
  assert_int_equal(generation_step(0), 6);
  fake_down();
}

static void test_trainer_survival(void **state) {
  (void)state;
  trainer_with_head("tiny-s", "survival=1", " survival=");
}

/* The opponent-reply head: its targets travel in the samples, its loss is logged. */
static void test_trainer_reply(void **state) {
  (void)state;
  trainer_with_head("tiny-r", "reply=1", " reply=");
}

/* A trainer kept waiting (paced, or no samples yet) writes its timer checkpoint once per
 * new step: rewriting the same step would push every older generation out of the ring
 * (--keep-checkpoints), leaving nothing to fall back to when the newest one is damaged. */
static void test_trainer_timer_checkpoint(void **state) {
  (void)state;
  ckpt_every = "1"; /* the least the trainer takes */
  fake_up("tiny");
  pid_t pid = spawn_trainer();
  serve_until_candidate(0, 3);
  /* Four seconds of Waits: about four timer ticks with the step standing at 3. */
  double t0 = now_s();
  while (now_s() - t0 < 4.0) {
    uint8_t rid[256];
    size_t rid_len;
    Xqz__Envelope *env = next(rid, &rid_len);
    if (env->body_case == XQZ__ENVELOPE__BODY_BATCH_REQUEST)
      send_wait(rid, rid_len, env->request_id);
    xq_wire_free(&env);
  }
  stop_trainer(pid);
  assert_int_equal(checkpoint_step(), 3);
  int timer = log_count("checkpoint written", "why=timer");
  assert_true(timer >= 1); /* the steps up to 3 were written by the timer */
  assert_int_equal(log_count("checkpoint written", "step=3 why=timer"), 1);
  fake_down();
  ckpt_every = "1000";
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_trainer_loop),
                                     cmocka_unit_test(test_trainer_timer_checkpoint),
                                     cmocka_unit_test(test_trainer_survival),
                                     cmocka_unit_test(test_trainer_reply),
                                     cmocka_unit_test(test_trainer_average),
                                     cmocka_unit_test(test_trainer_diverges)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
