/*
 * test_worker_link.c: the xqz-worker binary against a fake coordinator in this process
 * (ROUTER + PUB on free loopback ports). The fake welcomes the worker, serves a tiny net
 * in small NetChunks and a cheap SelfplayJob, decodes every GameRecord with the game-record
 * reader and acknowledges it. Checked: games arrive valid and acked; games left unacked
 * are resent after the fake restarts (closed and bound again on the same port); a
 * NetAnnounce makes the worker fetch the new net and report it in its Heartbeat; an
 * ArenaJob is played and answered with an ArenaResult; SIGTERM
 * ends the worker with exit status 0 and its unacked games in the spool directory, and a
 * new worker process on that spool resends them. A coordinator of another protocol
 * version makes the worker stop with exit status 1 and a message naming both versions.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "nn/nn_bf16.h"
#include "records/game_record.h"
#include "support/crc32.h"
#include "wire/messages.h"
#include "wire/wire.h"

#include "fake_coord.h"

#define NET_A 0x1111aaaa2222bbbbull
#define NET_B 0x3333cccc4444ddddull
#define CHUNK 4096 /* small chunks so a fetch takes many requests */
#define MAX_SEQ 512

typedef struct {
  fake_coord_t c;
  unsigned char *net[2]; /* file images of NET_A, NET_B */
  size_t net_len[2];
  uint64_t job_net;
  int ack;                 /* acknowledge games */
  uint64_t seq[MAX_SEQ];   /* distinct seqs seen */
  int seen[MAX_SEQ];       /* times each was received */
  int acked[MAX_SEQ];
  int nseq, games_rx, hellos, chunks;
  uint64_t hb_net;
  int arena_next;          /* answer the next JobRequest with an ArenaJob */
  const char *arena_fen;   /* its opening (NULL: the start position) */
  uint32_t arena_plies;    /* its length cap (0: 40) */
  float arena_material;    /* its adjudicate_material */
  const char *arena_anchor; /* non-NULL: B is this built-in player (anchor_b), net_b 0 */
  uint32_t hello_features; /* of the last Hello */
  char hello_precision[8]; /* of the last Hello */
  int job_requests;
  int arena_results;
  Xqz__ArenaResult arena;  /* the last one */
} fake_t;

static Xqz__SelfplaySettings settings(void) {
  Xqz__SelfplaySettings s = XQZ__SELFPLAY_SETTINGS__INIT;
  s.sims = 8;
  s.fast_sims = 4;
  s.full_frac = 0.5f;
  s.max_plies = 60;
  s.noise_frac = 0.25f;
  s.dirichlet_alpha = 0.3f;
  s.temp_plies = 10;
  s.resign_threshold = -1;
  s.mate_probe = 1;
  s.search = 2; /* Gumbel with the interior rule: its records go through the same path */
  s.gumbel_actions = 8;
  return s;
}

static void on_game(fake_t *f, const Xqz__Envelope *in, const uint8_t *rid, size_t rid_len) {
  const Xqz__GameRecord *g = in->game;
  xq_game_record_t r;
  xq_record_init(&r);
  xq_errbuf_t eb = {{0}};
  int rc = xq_record_decode(&r, g->record.data, g->record.len, &eb);
  if (rc) fprintf(stderr, "bad record: %s\n", eb.msg);
  assert_int_equal(rc, 0);
  assert_true(r.nplies > 0 && r.nplies <= 60);
  assert_true(r.net_id == NET_A || r.net_id == NET_B);
  assert_int_not_equal(r.result, XQ_RESULT_NONE);
  xq_record_free(&r);
  assert_string_equal(g->worker_id, "testw");
  int k = 0;
  while (k < f->nseq && f->seq[k] != g->seq) k++;
  if (k == f->nseq) {
    assert_true(f->nseq < MAX_SEQ);
    f->seq[f->nseq++] = g->seq;
  }
  f->seen[k]++;
  f->games_rx++;
  if (!f->ack) return;
  f->acked[k] = 1;
  fake_coord_ack(&f->c, rid, rid_len, in);
}

/* Serves one message (or waits up to 50 ms). */
static void serve(fake_t *f) {
  uint8_t rid[256];
  size_t rid_len;
  Xqz__Envelope *in = fake_coord_recv(&f->c, rid, &rid_len);
  if (!in) return;
  Xqz__SelfplaySettings s = settings();
  switch (in->body_case) {
    case XQZ__ENVELOPE__BODY_HELLO:
      assert_int_equal(in->hello->role, XQZ__ROLE__ROLE_WORKER);
      f->hellos++;
      f->hello_features = in->hello->features;
      snprintf(f->hello_precision, sizeof f->hello_precision, "%s",
               in->hello->precision ? in->hello->precision : "");
      fake_coord_welcome(&f->c, rid, rid_len, in, f->job_net, &s, 200);
      break;
    case XQZ__ENVELOPE__BODY_JOB_REQUEST: {
      f->job_requests++;
      if (f->arena_next) {
        f->arena_next = 0;
        Xqz__Envelope env;
        Xqz__Job j;
        Xqz__ArenaJob aj = XQZ__ARENA_JOB__INIT;
        aj.match_id = 42;
        aj.net_a = NET_B;
        aj.net_b = NET_A;
        aj.opening_fen = (char *)(f->arena_fen ? f->arena_fen : XQ_START_FEN);
        aj.pair_index = 3;
        aj.sims = 4;
        aj.max_plies = f->arena_plies ? f->arena_plies : 40;
        aj.adjudicate_material = f->arena_material;
        if (f->arena_anchor) {
          aj.net_b = 0;
          aj.anchor_b = (char *)f->arena_anchor;
        }
        xq_msg_job_arena(&env, &j, &aj);
        fake_coord_reply(&f->c, rid, rid_len, &env, in->request_id);
        break;
      }
      fake_coord_selfplay(&f->c, rid, rid_len, in->request_id, f->job_net, &s, 2);
      break;
    }
    case XQZ__ENVELOPE__BODY_NET_REQUEST: {
      const Xqz__NetRequest *r = in->net_request;
      int k = r->net_id == NET_A ? 0 : r->net_id == NET_B ? 1 : -1;
      assert_true(k >= 0);
      fake_coord_chunk(&f->c, rid, rid_len, in, f->net[k], f->net_len[k], CHUNK);
      f->chunks++;
      break;
    }
    case XQZ__ENVELOPE__BODY_GAME: on_game(f, in, rid, rid_len); break;
    case XQZ__ENVELOPE__BODY_ARENA_RESULT:
      f->arena = *in->arena_result;
      f->arena.worker_id = NULL;
      f->arena_results++;
      break;
    case XQZ__ENVELOPE__BODY_HEARTBEAT: f->hb_net = in->heartbeat->net_id; break;
    default: break;
  }
  xq_wire_free(&in);
}

static void serve_cb(void *f) { serve(f); }

typedef int (*cond_fn)(fake_t *f, void *arg);

static int serve_until(fake_t *f, cond_fn c, void *arg, double timeout_s) {
  double t0 = fake_now_s();
  while (fake_now_s() - t0 < timeout_s) {
    if (c(f, arg)) return 1;
    serve(f);
  }
  return c(f, arg);
}

static int acked_at_least(fake_t *f, void *arg) {
  int n = 0;
  for (int i = 0; i < f->nseq; i++) n += f->acked[i];
  return n >= *(int *)arg;
}
static int distinct_at_least(fake_t *f, void *arg) { return f->nseq >= *(int *)arg; }
static int all_acked(fake_t *f, void *arg) {
  (void)arg;
  for (int i = 0; i < f->nseq; i++)
    if (!f->acked[i]) return 0;
  return 1;
}
static int arena_done(fake_t *f, void *arg) {
  (void)arg;
  return f->arena_results > 0;
}
static int hb_is(fake_t *f, void *arg) { return f->hb_net == *(uint64_t *)arg; }

static int count_spool(const char *dir) {
  DIR *d = opendir(dir);
  if (!d) return -1;
  int n = 0;
  struct dirent *de;
  while ((de = readdir(d))) {
    size_t l = strlen(de->d_name);
    n += l > 4 && !strcmp(de->d_name + l - 4, ".xqs");
  }
  closedir(d);
  return n;
}

static void test_worker_against_fake_coordinator(void **state) {
  (void)state;
  char dir[] = "/tmp/xqz-test-worker-XXXXXX";
  assert_non_null(mkdtemp(dir));
  fake_t *f = calloc(1, sizeof *f);
  assert_non_null(f);
  fake_net(NET_A, 1, &f->net[0], &f->net_len[0]);
  fake_net(NET_B, 2, &f->net[1], &f->net_len[1]);
  f->job_net = NET_A;
  f->ack = 1;
  fake_coord_open(&f->c, true);
  char cache[600], spool[600];
  snprintf(cache, sizeof cache, "%s/cache", dir);
  snprintf(spool, sizeof spool, "%s/spool", dir);
  const char *args[] = {"--games-per-thread", "2", "--timeout", "1500", "--progress", "2", NULL};
  pid_t pid = fake_worker_start(&f->c, dir, "testw", NULL, NULL, args);

  /* Games arrive, decode and are acknowledged; the net was fetched in many chunks. */
  int want = 2;
  assert_true(serve_until(f, acked_at_least, &want, 30));
  assert_true(f->hellos >= 1);
  assert_true(f->chunks >= (int)(f->net_len[0] / CHUNK));

  /* Unacked games are resent after the coordinator restarts on the same port. */
  f->ack = 0;
  int base = f->nseq;
  want = base + 2;
  assert_true(serve_until(f, distinct_at_least, &want, 30));
  fake_coord_rebind(&f->c);
  f->ack = 1;
  int hellos = f->hellos;
  assert_true(serve_until(f, all_acked, NULL, 30));
  assert_true(f->hellos > hellos);
  for (int i = base; i < base + 2; i++) assert_true(f->seen[i] >= 2);

  /* A NetAnnounce makes the worker fetch the new net and play with it. */
  f->job_net = NET_B;
  Xqz__Envelope env;
  Xqz__NetAnnounce an;
  xq_msg_net_announce(&env, &an, NET_B, f->net_len[1], xq_crc32(0, f->net[1], f->net_len[1]));
  assert_int_equal(xq_wire_send(f->c.pub, NULL, 0, &env, 0), 0);
  uint64_t want_net = NET_B;
  assert_true(serve_until(f, hb_is, &want_net, 30));
  char path[700];
  snprintf(path, sizeof path, "%s/%016llx.xqzn", cache, (unsigned long long)NET_B);
  assert_int_equal(access(path, R_OK), 0);

  /* An arena job: both games of the pair with the two nets, the result from A's view. */
  f->arena_next = 1;
  assert_true(serve_until(f, arena_done, NULL, 30));
  assert_int_equal(f->arena.match_id, 42);
  assert_int_equal(f->arena.pair_index, 3);
  assert_true(f->arena.result_a_red >= -1 && f->arena.result_a_red <= 1);
  assert_true(f->arena.result_a_black >= -1 && f->arena.result_a_black <= 1);
  assert_true(f->arena.reason_a_red > XQ_REASON_NONE && f->arena.reason_a_red <= XQ_REASON_RESIGN);
  assert_true(f->arena.reason_a_black > XQ_REASON_NONE && f->arena.reason_a_black <= XQ_REASON_RESIGN);

  /* The job's adjudicate_material scores a capped game: Red is a rook up and the cap is
   * one ply, so Red wins both games, whichever net plays it. */
  f->arena_fen = "5k3/9/9/9/9/9/9/9/9/R2K5 w - - 0 1";
  f->arena_plies = 1;
  f->arena_material = 3.0f;
  f->arena_results = 0;
  f->arena_next = 1;
  assert_true(serve_until(f, arena_done, NULL, 30));
  assert_int_equal(f->arena.result_a_red, 1);
  assert_int_equal(f->arena.result_a_black, -1);
  assert_int_equal(f->arena.reason_a_red, XQ_REASON_LENGTH_CAP);
  assert_int_equal(f->arena.reason_a_black, XQ_REASON_LENGTH_CAP);

  /* An anchor job (its Hello says it plays them): B is the built-in player, net_b 0;
   * the same capped position scores the same, so the pair was played with the anchor. */
  assert_true(f->hello_features & XQ_FEATURE_ANCHOR_JOBS);
  /* --precision's default (auto), resolved on this CPU, said. */
  assert_string_equal(f->hello_precision, nn_bf16_cpu_supported() ? "bf16" : "fp32");
  f->arena_anchor = "alphabeta:1";
  f->arena_results = 0;
  f->arena_next = 1;
  assert_true(serve_until(f, arena_done, NULL, 30));
  assert_int_equal(f->arena.result_a_red, 1);
  assert_int_equal(f->arena.result_a_black, -1);
  /* An anchor that is not a built-in player (a command) is never run: no result, and the
   * worker asks for its next job. */
  f->arena_anchor = "uci:/bin/true";
  f->arena_results = 0;
  f->arena_next = 1;
  int asked = f->job_requests;
  int want_asks = asked + 2;
  double t_anchor = fake_now_s();
  while (fake_now_s() - t_anchor < 10 && f->job_requests < want_asks) serve(f);
  assert_true(f->job_requests >= want_asks);
  assert_int_equal(f->arena_results, 0);
  f->arena_anchor = NULL;

  /* SIGTERM: exit 0 with the unacknowledged games left in the spool. */
  f->ack = 0;
  want = f->nseq + 1;
  assert_true(serve_until(f, distinct_at_least, &want, 30));
  int unacked = 0;
  for (int i = 0; i < f->nseq; i++) unacked += !f->acked[i];
  assert_int_equal(kill(pid, SIGTERM), 0);
  int status = 0;
  assert_true(fake_worker_wait(pid, 40, serve_cb, f, &status));
  assert_true(WIFEXITED(status));
  assert_int_equal(WEXITSTATUS(status), 0);
  int spooled = count_spool(spool);
  fprintf(stderr, "unacked at SIGTERM: %d, in the spool after exit: %d\n", unacked, spooled);
  assert_true(spooled >= unacked);
  assert_true(spooled >= 1);

  /* A new worker process on the same spool resends the spooled games; acks empty it. */
  f->ack = 1;
  const char *again[] = {"--games-per-thread", "2", "--timeout", "1500", NULL};
  pid = fake_worker_start(&f->c, dir, "testw", NULL, NULL, again);
  assert_true(serve_until(f, all_acked, NULL, 30));
  assert_int_equal(kill(pid, SIGTERM), 0);
  assert_true(fake_worker_wait(pid, 40, serve_cb, f, &status));
  assert_true(WIFEXITED(status));
  assert_int_equal(WEXITSTATUS(status), 0);

  fake_coord_close(&f->c);
  free(f->net[0]);
  free(f->net[1]);
  free(f);
  char cmd[700];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  assert_int_equal(system(cmd), 0);
}

/* A coordinator of another protocol version: the worker stops at once with exit status 1
 * and a log line naming both versions, whether its Hello is answered by an envelope of
 * version 99 (`refusal` 0) or by the coordinator's version-refusal Error (1). */
static void worker_meets_other_version(int refusal) {
  char dir[] = "/tmp/xqz-test-worker-XXXXXX";
  assert_non_null(mkdtemp(dir));
  fake_coord_t c;
  fake_coord_open(&c, false);
  char logp[600];
  snprintf(logp, sizeof logp, "%s/worker.log", dir);
  const char *args[] = {"--timeout", "1500", NULL};
  pid_t pid = fake_worker_start(&c, dir, "oldw", logp, NULL, args);
  uint8_t rid[256];
  size_t rid_len;
  Xqz__Envelope *env = NULL;
  double t_hello = fake_now_s();
  while (!env && fake_now_s() - t_hello < 10) env = fake_coord_recv(&c, rid, &rid_len);
  assert_non_null(env);
  assert_int_equal(env->body_case, XQZ__ENVELOPE__BODY_HELLO);
  assert_string_equal(env->hello->software_version, XQ_SOFTWARE_NAME);
  Xqz__Envelope r;
  Xqz__Welcome w;
  Xqz__Error e;
  if (refusal) {
    xq_msg_error(&r, &e, XQ_ERROR_PROTOCOL_VERSION,
                 "it speaks protocol 1, this coordinator speaks 99 (upgrade one of them)");
  } else {
    xq_msg_welcome(&r, &w, "oldw", 0, NULL, 0, 0);
    r.version = 99; /* broken on purpose: another protocol version */
  }
  fake_coord_reply(&c, rid, rid_len, &r, env->request_id);
  xq_wire_free(&env);
  int status = 0;
  if (!fake_worker_wait(pid, 15, NULL, NULL, &status)) {
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    fail_msg("the worker kept running against another protocol version");
  }
  assert_true(WIFEXITED(status));
  assert_int_equal(WEXITSTATUS(status), 1);
  FILE *f = fopen(logp, "r");
  assert_non_null(f);
  char line[1024];
  int found = 0;
  while (fgets(line, sizeof line, f))
    found |= strstr(line, "another protocol version") && strstr(line, XQ_VERSION_LINE) &&
             strstr(line, refusal ? "speaks 99" : "speaks protocol 99") != NULL;
  fclose(f);
  assert_true(found);
  fake_coord_close(&c);
  char cmd[700];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  assert_int_equal(system(cmd), 0);
}

static void test_worker_other_version(void **state) {
  (void)state;
  worker_meets_other_version(0);
  worker_meets_other_version(1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_worker_against_fake_coordinator),
      cmocka_unit_test(test_worker_other_version),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
