/*
 * test_coordinator_identity.c: campaign identity and the database's schema version, over
 * loopback against the real xqz-coordinator (and xqz-trainer):
 *  - A campaign has a random id, shown by Status and the start log line, kept over a
 *    restart; net 1 records it, and a best net of another campaign in nets/ stops the
 *    start. A Hello naming 0 or this campaign is welcomed (the Welcome names the id); a
 *    Hello or BatchRequest naming another campaign gets Error XQ_ERROR_CAMPAIGN with both
 *    ids, and a refused BatchRequest does not set the trainer's step.
 *  - A CandidateNet of another campaign, or of another architecture than net_size, is
 *    refused (Ack accepted=false with the reason) and does not set the trainer's step; a
 *    net of campaign 0 (written before campaign ids) and one of this campaign are taken.
 *  - A trainer directory of campaign A (its checkpoint says A) pointed at campaign B:
 *    xqz-trainer is refused and stops with exit status 1, its log naming both ids. So does
 *    xqz-worker with a spool of A's games (SPOOL/campaign says A), keeping its spool and
 *    delivering nothing to B. A trainer whose checkpoint names no campaign (older than
 *    campaign ids) resumes on B and adopts it: its checkpoint and candidates record B.
 *  - campaign.db: a layout made before schema versions (tables missing, worker_stats
 *    without `version`) migrates to the current version and the coordinator runs; a
 *    layout that cannot migrate is refused and left untouched (one transaction); a
 *    database of a newer version is refused, naming both versions.
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
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

#include "../../coordinator/storage/schema.h"
#include "coord_test_util.h"
#include "nn/nn_checkpoint.h"
#include "nn/nn_optim.h"
#include "spool.h"
#include "spool_campaign.h"
#include "wire/messages.h"
#include "wire/wire.h"

static uint64_t campaign_of(void *s) {
  Xqz__Envelope *r = status(s);
  uint64_t id = r->status->campaign_id;
  xq_wire_free(&r);
  return id;
}

static int64_t trainer_step_of(void *s) {
  Xqz__Envelope *r = status(s);
  int64_t step = (int64_t)r->status->trainer_step;
  xq_wire_free(&r);
  return step;
}

/* Waits for the coordinator to answer a StatusRequest (it is starting). */
static void *connect_ready(void *ctx) {
  void *s = connect_dealer(ctx);
  (void)campaign_of(s);
  return s;
}

static Xqz__Envelope *hello_campaign(void *s, int role, uint64_t campaign) {
  Xqz__Envelope env;
  Xqz__Hello h;
  xq_msg_hello(&env, &h, (Xqz__Role)role, "identity-worker", "localhost", 1, campaign);
  env.request_id = 7;
  return rpc(s, &env);
}

static Xqz__Envelope *batch_request(void *s, uint64_t campaign, uint64_t step) {
  Xqz__Envelope env;
  Xqz__BatchRequest br;
  xq_msg_batch_request(&env, &br, 8, step);
  br.campaign_id = campaign;
  env.request_id = 8;
  return rpc(s, &env);
}

/* Sends a net of architecture `size` (nn_arch_preset), campaign `campaign`, step `step`;
 * returns the Ack (caller frees). */
static Xqz__Envelope *candidate_size(void *s, const char *size, uint64_t campaign,
                                     int64_t step) {
  nn_arch_t arch;
  assert_int_equal(nn_arch_preset(size, &arch), 0);
  nn_model_t *m = NULL;
  assert_int_equal(nn_model_new(&m, &arch, NULL), 0);
  nn_model_init(m, 7);
  nn_file_meta_t meta = {0};
  meta.arch = arch;
  meta.net_id = nn_file_new_id();
  meta.step = step;
  meta.campaign_id = campaign;
  unsigned char *net;
  size_t len;
  assert_int_equal(nn_file_encode(&net, &len, m, &meta, NULL), 0);
  nn_model_free(&m);
  Xqz__Envelope *r = upload_candidate(s, net, len, (uint64_t)step);
  free(net);
  assert_int_equal(r->body_case, XQZ__ENVELOPE__BODY_ACK);
  return r;
}

/* The same for a net of blocks x channels without global pooling. */
static Xqz__Envelope *candidate(void *s, int blocks, int channels, uint64_t campaign,
                                int64_t step) {
  char size[32];
  snprintf(size, sizeof size, "%dx%d", blocks, channels);
  return candidate_size(s, size, campaign, step);
}

static void expect_campaign_refusal(Xqz__Envelope *r, uint64_t ours, uint64_t theirs,
                                    const char *fix) {
  assert_int_equal(r->body_case, XQZ__ENVELOPE__BODY_ERROR);
  assert_int_equal(r->error->code, XQ_ERROR_CAMPAIGN);
  char a[17], b[17];
  snprintf(a, sizeof a, "%016llx", (unsigned long long)ours);
  snprintf(b, sizeof b, "%016llx", (unsigned long long)theirs);
  if (!strstr(r->error->message, a) || !strstr(r->error->message, b) ||
      !strstr(r->error->message, fix))
    fail_msg("refusal does not name %s, %s and '%s': %s", a, b, fix, r->error->message);
}

static void stop_coordinator(pid_t pid) {
  kill(pid, SIGTERM);
  waitpid(pid, NULL, 0);
  g_pid = -1;
}

/* Waits for the coordinator to exit by itself; returns its exit status. */
static int exit_status(pid_t pid) {
  int st = 0;
  pid_t done = 0;
  for (int i = 0; i < 200 && (done = waitpid(pid, &st, WNOHANG)) == 0; i++) usleep(50000);
  if (done != pid || !WIFEXITED(st)) {
    kill(pid, SIGKILL);
    waitpid(pid, &st, 0);
    g_pid = -1;
    fail_msg("the coordinator did not stop by itself");
  }
  g_pid = -1;
  return WEXITSTATUS(st);
}

static void test_campaign_identity(void **state) {
  (void)state;
  fresh_dir();
  g_extra = "--gating=none";
  pid_t pid = start_coordinator();
  void *ctx = zmq_ctx_new();
  void *s = connect_ready(ctx);
  uint64_t id = campaign_of(s);
  assert_true(id != 0);
  char line[80];
  snprintf(line, sizeof line, "curve=off campaign=%016llx", (unsigned long long)id);
  assert_int_equal(log_count(line), 1);

  /* Hello: 0 (fresh) and this campaign are welcomed, with the id; another is refused. */
  Xqz__Envelope *r = hello_campaign(s, XQZ__ROLE__ROLE_WORKER, 0);
  assert_int_equal(r->body_case, XQZ__ENVELOPE__BODY_WELCOME);
  assert_int_equal(r->welcome->campaign_id, id);
  xq_wire_free(&r);
  r = hello_campaign(s, XQZ__ROLE__ROLE_WORKER, id);
  assert_int_equal(r->body_case, XQZ__ENVELOPE__BODY_WELCOME);
  xq_wire_free(&r);
  uint64_t other = id ^ 0x5a5a000000000001ull;
  r = hello_campaign(s, XQZ__ROLE__ROLE_WORKER, other);
  expect_campaign_refusal(r, id, other, "--spool");
  xq_wire_free(&r);
  r = hello_campaign(s, XQZ__ROLE__ROLE_TRAINER, other);
  expect_campaign_refusal(r, id, other, "--dir");
  xq_wire_free(&r);

  /* BatchRequest of another campaign: refused, its step not taken. */
  r = batch_request(s, other, 6570);
  expect_campaign_refusal(r, id, other, "--dir");
  xq_wire_free(&r);
  assert_int_equal(trainer_step_of(s), 0);
  r = batch_request(s, id, 5);
  assert_int_equal(r->body_case, XQZ__ENVELOPE__BODY_WAIT); /* empty window */
  xq_wire_free(&r);
  assert_int_equal(trainer_step_of(s), 5);

  /* CandidateNet: another campaign, another architecture (net_size is tiny = 2x16):
   * refused with the reason, the step not taken. */
  r = candidate(s, 2, 16, other, 100);
  assert_false(r->ack->accepted);
  assert_non_null(strstr(r->ack->reason, "belongs to campaign"));
  snprintf(line, sizeof line, "%016llx", (unsigned long long)other);
  assert_non_null(strstr(r->ack->reason, line));
  xq_wire_free(&r);
  r = candidate(s, 4, 16, id, 200);
  assert_false(r->ack->accepted);
  if (!strstr(r->ack->reason, "4x16") || !strstr(r->ack->reason, "net_size is tiny"))
    fail_msg("architecture refusal: %s", r->ack->reason);
  xq_wire_free(&r);
  /* 2x16 with global pooling is another architecture too, and named as such. */
  r = candidate_size(s, "tiny-g", id, 250);
  assert_false(r->ack->accepted);
  if (!strstr(r->ack->reason, "is 2x16g") || !strstr(r->ack->reason, "net_size is tiny (2x16,"))
    fail_msg("pooling architecture refusal: %s", r->ack->reason);
  xq_wire_free(&r);
  assert_int_equal(trainer_step_of(s), 5);
  assert_int_equal(log_count("candidate refused"), 3);
  /* Campaign 0 (a trainer older than campaign ids): taken, with a warning; this
   * campaign's: taken. */
  r = candidate(s, 2, 16, 0, 300);
  assert_true(r->ack->accepted);
  xq_wire_free(&r);
  assert_int_equal(log_count("candidate net has no campaign id"), 1);
  r = candidate(s, 2, 16, id, 400);
  assert_true(r->ack->accepted);
  xq_wire_free(&r);
  assert_int_equal(trainer_step_of(s), 400);
  zmq_close(s);

  /* The id is the campaign's: the same after a restart. */
  stop_coordinator(pid);
  pid = start_coordinator();
  s = connect_ready(ctx);
  assert_int_equal(campaign_of(s), id);
  r = hello_campaign(s, XQZ__ROLE__ROLE_WORKER, 0);
  uint64_t best = r->welcome->best_net_id;
  xq_wire_free(&r);
  zmq_close(s);
  stop_coordinator(pid);

  /* A best net of another campaign in nets/ (two campaigns mixed): refused at start. */
  char path[400];
  snprintf(path, sizeof path, "%s/camp/nets/%016llx.xqzn", g_dir, (unsigned long long)best);
  nn_model_t *m = NULL;
  nn_file_meta_t meta;
  xq_errbuf_t eb = {{0}};
  assert_int_equal(nn_file_load(path, &m, &meta, &eb), 0);
  assert_int_equal(meta.campaign_id, id); /* net 1 records its campaign */
  meta.campaign_id = other;
  assert_int_equal(nn_file_save(path, m, &meta, &eb), 0);
  nn_model_free(&m);
  pid = start_coordinator();
  assert_int_not_equal(exit_status(pid), 0);
  assert_int_equal(log_count("the directory mixes two campaigns"), 1);
  zmq_ctx_term(ctx);
  remove_dir();
}

/* Runs argv (relative to the build directory) with stderr to log; returns its pid. */
static pid_t spawn(char *const argv[], const char *log) {
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (chdir(XQZ_BINARY_DIR) != 0 || !freopen(log, "w", stderr) ||
        !freopen("/dev/null", "w", stdout))
      _exit(127);
    execv(argv[0], argv);
    _exit(127);
  }
  return pid;
}

static bool file_has(const char *path, const char *what) {
  FILE *f = fopen(path, "r");
  if (!f) return false;
  char line[4096];
  bool found = false;
  while (!found && fgets(line, sizeof line, f)) found = strstr(line, what) != NULL;
  fclose(f);
  return found;
}

/* Waits up to 15 s for pid to exit by itself; returns its exit status. */
static int daemon_exit(pid_t pid, const char *what) {
  int st = 0;
  pid_t done = 0;
  for (int i = 0; i < 300 && (done = waitpid(pid, &st, WNOHANG)) == 0; i++) usleep(50000);
  if (done != pid) {
    kill(pid, SIGKILL);
    waitpid(pid, &st, 0);
    fail_msg("the %s of another campaign did not stop within 15 s", what);
  }
  assert_true(WIFEXITED(st));
  return WEXITSTATUS(st);
}

/* A worker whose spool holds one game of campaign a, pointed at the coordinator of
 * campaign b: refused, it stops with status 1, keeps the game, and b stores nothing. */
static void worker_of_another_campaign(void *s, uint64_t a, uint64_t b) {
  char spool[300], cache[300], wlog[300], coord[64], pub[64];
  snprintf(spool, sizeof spool, "%s/spoolA", g_dir);
  snprintf(cache, sizeof cache, "%s/cache", g_dir);
  snprintf(wlog, sizeof wlog, "%s/worker.log", g_dir);
  xq_spool_t *sp = NULL;
  xq_errbuf_t eb = {{0}};
  assert_int_equal(xq_spool_open(&sp, spool, 10, &eb), 0);
  unsigned char *game;
  size_t len;
  random_game(&game, &len, 11, GAME_OK);
  uint64_t seq;
  assert_int_equal(xq_spool_add(sp, "worker-of-A", game, len, &seq, &eb), 0);
  free(game);
  xq_spool_free(&sp);
  assert_int_equal(xq_spool_campaign_save(spool, a, &eb), 0);
  snprintf(coord, sizeof coord, "tcp://127.0.0.1:%d", g_router_port);
  snprintf(pub, sizeof pub, "tcp://127.0.0.1:%d", g_pub_port);
  char *wargv[] = {"worker/xqz-worker", "--coordinator", coord, "--pub", pub, "--spool", spool,
                   "--cache", cache, "--id", "worker-of-A", "--games-per-thread", "1", NULL};
  assert_int_equal(daemon_exit(spawn(wargv, wlog), "worker"), 1);
  char ha[17], hb[17];
  snprintf(ha, sizeof ha, "%016llx", (unsigned long long)a);
  snprintf(hb, sizeof hb, "%016llx", (unsigned long long)b);
  assert_true(file_has(wlog, "the coordinator runs another campaign"));
  assert_true(file_has(wlog, ha));
  assert_true(file_has(wlog, hb));
  assert_true(file_has(wlog, "--spool"));
  /* The game is still spooled (for campaign a) and b has none. */
  assert_int_equal(xq_spool_open(&sp, spool, 10, &eb), 0);
  assert_int_equal(xq_spool_count(sp), 1);
  xq_spool_free(&sp);
  uint64_t still;
  assert_int_equal(xq_spool_campaign_load(spool, &still, &eb), 0);
  assert_int_equal(still, a);
  Xqz__Envelope *r = status(s);
  assert_int_equal(r->status->games, 0);
  xq_wire_free(&r);
}

/* Writes DIR/trainer.xqzc: a tiny net at `step` whose checkpoint says `campaign`. */
static void write_checkpoint(const char *dir, uint64_t campaign, int64_t step) {
  char ckpt[400];
  assert_int_equal(mkdir(dir, 0755), 0);
  snprintf(ckpt, sizeof ckpt, "%s/trainer.xqzc", dir);
  nn_arch_t arch;
  assert_int_equal(nn_arch_preset("tiny", &arch), 0);
  nn_model_t *m = NULL;
  assert_int_equal(nn_model_new(&m, &arch, NULL), 0);
  nn_model_init(m, 3);
  nn_sgd_t opt = {.momentum = 0.9f};
  assert_int_equal(nn_sgd_init(&opt, m, NULL), 0);
  opt.step = step;
  nn_file_meta_t meta = {0};
  meta.net_id = nn_file_new_id();
  meta.campaign_id = campaign;
  xq_errbuf_t eb = {{0}};
  assert_int_equal(nn_checkpoint_save(ckpt, m, &meta, &opt, NULL, &eb), 0);
  nn_sgd_close(&opt);
  nn_model_free(&m);
}

/* The campaign id and step of DIR/trainer.xqzc. */
static uint64_t checkpoint_campaign(const char *dir, int64_t *step) {
  char ckpt[400];
  snprintf(ckpt, sizeof ckpt, "%s/trainer.xqzc", dir);
  nn_model_t *l = NULL;
  nn_sgd_t lo = {0};
  nn_file_meta_t got;
  xq_errbuf_t eb = {{0}};
  if (nn_checkpoint_load(ckpt, &l, &got, &lo, NULL, &eb)) fail_msg("checkpoint: %s", eb.msg);
  *step = lo.step;
  nn_sgd_close(&lo);
  nn_model_free(&l);
  return got.campaign_id;
}

/* A trainer whose checkpoint names no campaign (written before campaign ids) resumes,
 * adopts campaign b from its first Batch, and its checkpoint and candidates record b. */
static void trainer_adopts_campaign(void *s, uint64_t b) {
  for (uint64_t seq = 1; seq <= 3; seq++) { /* positions for the window */
    unsigned char *game;
    size_t len;
    random_game(&game, &len, 100 + seq, GAME_OK);
    Xqz__Envelope *r = send_game_as(s, "identity-worker", seq, game, len);
    assert_true(r->ack->accepted);
    xq_wire_free(&r);
    free(game);
  }
  char tdir[300], tlog[400], coord[64];
  snprintf(tdir, sizeof tdir, "%s/trainer0", g_dir);
  write_checkpoint(tdir, 0, 10);
  snprintf(tlog, sizeof tlog, "%s/trainer0.log", g_dir);
  snprintf(coord, sizeof coord, "tcp://127.0.0.1:%d", g_router_port);
  char *targv[] = {"trainer/xqz-trainer", "--coordinator", coord, "--dir", tdir, "--batch",
                   "16", "--max-steps", "14", "--candidate-every", "2", NULL};
  assert_int_equal(daemon_exit(spawn(targv, tlog), "trainer"), 0);
  assert_true(file_has(tlog, "checkpoint names no campaign"));
  assert_true(file_has(tlog, "adopted the coordinator's campaign"));
  int64_t step;
  assert_int_equal(checkpoint_campaign(tdir, &step), b);
  assert_int_equal(step, 14);
  assert_true(log_count("candidate received") >= 1);
  assert_int_equal(log_count("candidate refused"), 0);
  assert_int_equal(log_count("candidate net has no campaign id"), 0);
}

/* A trainer directory of campaign A (a tiny-net checkpoint at step 6570 that says A),
 * pointed at campaign B: refused, the trainer stops with status 1 and names both ids;
 * then a worker with a spool of A's games, the same. */
static void test_peers_of_another_campaign(void **state) {
  (void)state;
  fresh_dir();
  g_extra = "--gating=none";
  char dir[300], aside[300];
  snprintf(dir, sizeof dir, "%s/camp", g_dir);
  snprintf(aside, sizeof aside, "%s/campA", g_dir);
  pid_t pid = start_coordinator(); /* campaign A in DIR/camp */
  void *ctx = zmq_ctx_new();
  void *s = connect_ready(ctx);
  uint64_t a = campaign_of(s);
  zmq_close(s);
  stop_coordinator(pid);
  /* Campaign B: a new campaign directory in the same place (A moved aside). */
  assert_int_equal(rename(dir, aside), 0);
  pid = start_coordinator();
  s = connect_ready(ctx);
  uint64_t b = campaign_of(s);
  assert_true(a != b);

  char tdir[300], tlog[400], coord[64];
  snprintf(tdir, sizeof tdir, "%s/trainerA", g_dir);
  write_checkpoint(tdir, a, 6570);
  snprintf(tlog, sizeof tlog, "%s/trainer.log", g_dir);
  snprintf(coord, sizeof coord, "tcp://127.0.0.1:%d", g_router_port);
  char *targv[] = {"trainer/xqz-trainer", "--coordinator", coord, "--dir", tdir, "--batch",
                   "16", NULL};
  assert_int_equal(daemon_exit(spawn(targv, tlog), "trainer"), 1);
  char ha[17], hb[17];
  snprintf(ha, sizeof ha, "%016llx", (unsigned long long)a);
  snprintf(hb, sizeof hb, "%016llx", (unsigned long long)b);
  assert_true(file_has(tlog, "the coordinator runs another campaign"));
  assert_true(file_has(tlog, ha));
  assert_true(file_has(tlog, hb));
  assert_true(file_has(tlog, "--dir"));
  /* The coordinator took neither its step nor anything else. */
  assert_int_equal(trainer_step_of(s), 0);
  assert_true(log_count("refused a peer of another campaign") >= 1);
  /* Its checkpoint still says A. */
  int64_t step;
  assert_int_equal(checkpoint_campaign(tdir, &step), a);
  assert_int_equal(step, 6570);
  worker_of_another_campaign(s, a, b);
  trainer_adopts_campaign(s, b);
  zmq_close(s);
  stop_coordinator(pid);
  zmq_ctx_term(ctx);
  remove_dir();
}

/* Runs sql on DB with the sqlite3 shell. */
static void sql(const char *db, const char *q) {
  char cmd[4096];
  snprintf(cmd, sizeof cmd, "sqlite3 '%s' \"%s\"", db, q);
  if (system(cmd) != 0) fail_msg("sqlite3 failed: %s", cmd);
}

/* The first line sqlite3 prints for q. */
static void sql_get(const char *db, const char *q, char *out, size_t n) {
  char cmd[4096];
  snprintf(cmd, sizeof cmd, "sqlite3 '%s' \"%s\"", db, q);
  FILE *p = popen(cmd, "r");
  assert_non_null(p);
  out[0] = '\0';
  if (fgets(out, (int)n, p)) out[strcspn(out, "\n")] = '\0';
  pclose(p);
}

static void test_schema_version(void **state) {
  (void)state;
  fresh_dir();
  g_extra = "--gating=none";
  char camp[300], db[400], out[256];
  snprintf(camp, sizeof camp, "%s/camp", g_dir);
  assert_int_equal(mkdir(camp, 0755), 0);
  snprintf(db, sizeof db, "%s/campaign.db", camp);
  /* A layout no build made (bans without its key column): the migration fails as a whole,
   * naming the table and column, and leaves the database as it was (no `losses`). */
  sql(db, "CREATE TABLE bans(reason TEXT, time INTEGER);");
  pid_t pid = start_coordinator();
  assert_int_not_equal(exit_status(pid), 0);
  assert_int_equal(log_count("from version 0 to 1"), 1);
  assert_int_equal(log_count("table bans lacks its key column target"), 1);
  sql_get(db, "PRAGMA user_version", out, sizeof out);
  assert_string_equal(out, "0");
  sql_get(db, "SELECT COUNT(*) FROM sqlite_master WHERE name='losses'", out, sizeof out);
  assert_string_equal(out, "0");
  char rm[1300];
  snprintf(rm, sizeof rm, "rm -f '%s' '%s-wal' '%s-shm'", db, db, db);
  assert_int_equal(system(rm), 0);
  /* The first coordinator's layout (nets, matches, promotions, workers), with a
   * worker_stats lacking `version` and a net row that must survive. */
  sql(db, "CREATE TABLE nets(id INTEGER PRIMARY KEY, hex TEXT, parent INTEGER, step INTEGER,"
          " state TEXT, elo REAL, created INTEGER);"
          "CREATE TABLE matches(id INTEGER PRIMARY KEY, net_a INTEGER, net_b INTEGER,"
          " wins INTEGER, draws INTEGER, losses INTEGER, score REAL, elo REAL, decision TEXT,"
          " time INTEGER);"
          "CREATE TABLE promotions(seq INTEGER PRIMARY KEY AUTOINCREMENT, net INTEGER,"
          " parent INTEGER, step INTEGER, match INTEGER, score REAL, elo REAL, time INTEGER);"
          "CREATE TABLE workers(worker_id TEXT PRIMARY KEY, host TEXT, threads INTEGER,"
          " role INTEGER, first_seen INTEGER, last_seen INTEGER);"
          "CREATE TABLE worker_stats(worker_id TEXT PRIMARY KEY, host TEXT, threads INTEGER,"
          " role INTEGER, net_id INTEGER, games INTEGER, positions INTEGER, plies INTEGER,"
          " red_wins INTEGER, black_wins INTEGER, draws INTEGER, by_reason TEXT,"
          " rejected INTEGER, faults INTEGER, last_seen_ms INTEGER, key TEXT, banned INTEGER);"
          "INSERT INTO nets VALUES(42, '000000000000002a', 0, 17, 'rejected', 0, 1);");
  sql_get(db, "PRAGMA user_version", out, sizeof out);
  assert_string_equal(out, "0");
  pid = start_coordinator();
  void *ctx = zmq_ctx_new();
  void *s = connect_ready(ctx);
  assert_true(campaign_of(s) != 0);
  /* A Hello and a game: the worker statistics (with `version`) are written. */
  Xqz__Envelope *r = hello_campaign(s, XQZ__ROLE__ROLE_WORKER, 0);
  assert_int_equal(r->body_case, XQZ__ENVELOPE__BODY_WELCOME);
  xq_wire_free(&r);
  zmq_close(s);
  stop_coordinator(pid);
  char latest[16];
  snprintf(latest, sizeof latest, "%d", XQC_SCHEMA_VERSION);
  sql_get(db, "PRAGMA user_version", out, sizeof out);
  assert_string_equal(out, latest);
  sql_get(db, "SELECT version FROM worker_stats WHERE worker_id='identity-worker'", out,
          sizeof out);
  assert_string_equal(out, XQ_SOFTWARE_NAME); /* the column exists and holds the Hello's */
  sql_get(db, "SELECT step FROM nets WHERE id=42", out, sizeof out);
  assert_string_equal(out, "17");
  sql_get(db, "SELECT COUNT(*) FROM bans", out, sizeof out);
  assert_string_equal(out, "0");
  assert_int_equal(log_count("schema migrated"), 1);
  assert_int_equal(log_count("no such column"), 0);
  assert_int_equal(log_count("sqlite error"), 0);

  /* A newer schema: refused, naming both versions; the database is left as it is. */
  char newer[64], newer_v[16];
  snprintf(newer_v, sizeof newer_v, "%d", XQC_SCHEMA_VERSION + 1);
  snprintf(newer, sizeof newer, "PRAGMA user_version=%s", newer_v);
  sql(db, newer);
  pid = start_coordinator();
  assert_int_not_equal(exit_status(pid), 0);
  char refusal[120];
  snprintf(refusal, sizeof refusal, "schema version %s found, this build knows versions up to"
           " %d", newer_v, XQC_SCHEMA_VERSION);
  assert_int_equal(log_count(refusal), 1);
  sql_get(db, "PRAGMA user_version", out, sizeof out);
  assert_string_equal(out, newer_v);
  zmq_ctx_term(ctx);
  remove_dir();
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_teardown(test_campaign_identity, teardown),
      cmocka_unit_test_teardown(test_peers_of_another_campaign, teardown),
      cmocka_unit_test_teardown(test_schema_version, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
