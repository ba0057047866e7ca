/*
 * test_coordinator_state.c: the coordinator's state survives what weeks bring (issue 47,
 * State items 6, 7, 10, 11, 13), driven over loopback against a real xqz-coordinator:
 *   - a locked campaign.db (a second connection holding BEGIN IMMEDIATE, as an operator's
 *     sqlite3 shell does): the gating decision waits unannounced (no PUB, no promotions.log
 *     line, the old best in Status), Status stays fast, and once the lock goes the
 *     promotion is stored, announced and survives a restart; killed while it waits, the
 *     restart has the old best and the match resumes; an arena pair whose holder cannot be
 *     stored is kept back until it can, so a restart never finds a pair out with no holder;
 *     and an earlier holder's late result for a restored pair is stale, not forged;
 *   - a full disk under campaign.db (the fault build's SQLite VFS, tests/fault/
 *     db_fault_vfs.c): the same;
 *   - net id 0 ("no net") is refused as a candidate and in a game, and a stored match of
 *     net 0 is dropped at start instead of wedging gating;
 *   - a deleted campaign.db beside nets and games stops the start with the remedy, and one
 *     deleted while running is noticed (and a rescue copy written);
 *   - match ids come from a counter in campaign.db, not the clock: a stored match id from
 *     "an hour ahead" (a clock stepped back since) is followed, never undercut.
 */
#define _DEFAULT_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

#include "coord_test_util.h"

#define SHIPPED XQZ_BINARY_DIR "/coordinator/xqz-coordinator"
#define FAULTS XQZ_BINARY_DIR "/coordinator/xqz-coordinator-faults"

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void camp_path(char *out, size_t n, const char *name) {
  snprintf(out, n, "%s/camp/%s", g_dir, name);
}

/* Threshold gating over one pair: one result of 1,1 promotes. */
static void one_pair_gating(void) {
  g_extra = "--gating=threshold";
  g_extra2 = "--threshold_games=2";
  g_extra3 = "--threshold_score=0.5";
  g_extra4 = "--seed=1";
  g_extra5 = "--seed=1";
  g_coordinator = SHIPPED;
}

/* A SUB socket on the coordinator's PUB port, subscribed to everything. */
static void *subscriber(void *ctx) {
  void *s = zmq_socket(ctx, ZMQ_SUB);
  int linger = 0;
  zmq_setsockopt(s, ZMQ_LINGER, &linger, sizeof linger);
  zmq_setsockopt(s, ZMQ_SUBSCRIBE, "", 0);
  char addr[64];
  snprintf(addr, sizeof addr, "tcp://127.0.0.1:%d", g_pub_port);
  assert_int_equal(zmq_connect(s, addr), 0);
  return s;
}

/* The net id of the next NetAnnounce within ms, 0 when none came. */
static uint64_t announced_within(void *sub, int ms) {
  double end = now_ms() + ms;
  while (now_ms() < end) {
    zmq_pollitem_t it = {sub, 0, ZMQ_POLLIN, 0};
    if (zmq_poll(&it, 1, (long)(end - now_ms()) + 1) <= 0) continue;
    Xqz__Envelope *r = NULL;
    xq_errbuf_t eb;
    if (xq_wire_recv(sub, NULL, NULL, &r, ZMQ_DONTWAIT, &eb) != 0) continue;
    uint64_t id = r->body_case == XQZ__ENVELOPE__BODY_NET_ANNOUNCE ? r->net_announce->net_id : 0;
    xq_wire_free(&r);
    if (id) return id;
  }
  return 0;
}

static uint64_t best_of(void *s) {
  Xqz__Envelope *r = status(s);
  uint64_t b = r->status->best_net_id;
  xq_wire_free(&r);
  return b;
}

/* Lines of the campaign's promotions.log naming net id. */
static int promotions_lines(uint64_t id) {
  char path[400], line[2048], hex[40];
  camp_path(path, sizeof path, "promotions.log");
  snprintf(hex, sizeof hex, "\"net\":\"%016llx\"", (unsigned long long)id);
  FILE *f = fopen(path, "r");
  if (!f) return 0;
  int n = 0;
  while (fgets(line, sizeof line, f))
    if (strstr(line, hex)) n++;
  fclose(f);
  return n;
}

/* A second connection to campaign.db holding its write lock (an operator's shell). */
static sqlite3 *lock_db(void) {
  char path[400];
  camp_path(path, sizeof path, "campaign.db");
  sqlite3 *h = NULL;
  assert_int_equal(sqlite3_open(path, &h), SQLITE_OK);
  sqlite3_busy_timeout(h, 5000);
  assert_int_equal(sqlite3_exec(h, "BEGIN IMMEDIATE", NULL, NULL, NULL), SQLITE_OK);
  return h;
}

static void unlock_db(sqlite3 *h) {
  assert_int_equal(sqlite3_exec(h, "ROLLBACK", NULL, NULL, NULL), SQLITE_OK);
  sqlite3_close(h);
}

/* Runs sql on campaign.db (the coordinator stopped). */
static void db_exec(const char *sql) {
  char path[400];
  camp_path(path, sizeof path, "campaign.db");
  sqlite3 *h = NULL;
  assert_int_equal(sqlite3_open(path, &h), SQLITE_OK);
  char *err = NULL;
  if (sqlite3_exec(h, sql, NULL, NULL, &err) != SQLITE_OK) fail_msg("%s: %s", sql, err);
  sqlite3_close(h);
}

/* Waits up to ms for Status to name best as the best net. */
static bool best_becomes(void *s, uint64_t best, int ms) {
  double end = now_ms() + ms;
  while (now_ms() < end) {
    if (best_of(s) == best) return true;
    usleep(50 * 1000);
  }
  return false;
}

static void stop_and_restart(void) {
  coord_stop(g_pid);
  g_coordinator = SHIPPED;
  start_coordinator();
}

/* Uploads a fresh candidate (child of best); returns its id. */
static uint64_t candidate(void *tr, uint64_t best, uint64_t step) {
  unsigned char *net;
  size_t len;
  nn_file_meta_t meta;
  tiny_net(&net, &len, &meta, best, (int64_t)step);
  Xqz__Envelope *r = upload_candidate(tr, net, len, step);
  free(net);
  assert_int_equal(r->body_case, XQZ__ENVELOPE__BODY_ACK);
  assert_true(r->ack->accepted);
  xq_wire_free(&r);
  return meta.net_id;
}

static uint64_t open_match_id(void *s, uint64_t *cand) {
  Xqz__Envelope *r = status(s);
  uint64_t id = 0;
  if (r->status->open_match) {
    id = r->status->open_match->match_id;
    if (cand) *cand = r->status->open_match->net_a;
  }
  xq_wire_free(&r);
  return id;
}

/* The match's one pair, handed to s. */
static uint32_t take_pair(void *s, uint64_t match) {
  Xqz__Envelope *r = arena_job(s);
  if (!r) fail_msg("no arena job handed out");
  assert_int_equal(r->job->arena->match_id, match);
  uint32_t pair = r->job->arena->pair_index;
  xq_wire_free(&r);
  return pair;
}

/* Item 6 and 7: a decision the database cannot take waits, unannounced, and is stored and
 * announced once it can. `full`: a full disk (fault build), else a held lock. */
static void decision_waits(bool full) {
  fresh_dir();
  one_pair_gating();
  char faults[400];
  if (full) {
    snprintf(faults, sizeof faults, "%s/faults", g_dir);
    assert_int_equal(mkdir(faults, 0700), 0);
    setenv("XQZ_FAULT_DIR", faults, 1);
    g_coordinator = FAULTS;
  }
  start_coordinator();
  unsetenv("XQZ_FAULT_DIR");
  void *ctx = zmq_ctx_new();
  void *sub = subscriber(ctx);
  void *w = connect_dealer(ctx);
  uint64_t best = hello_as(w, "w1");
  void *tr = connect_dealer(ctx);
  uint64_t cand = candidate(tr, best, 100);
  uint64_t match = open_match_id(w, NULL);
  assert_true(match != 0);
  uint32_t pair = take_pair(w, match);
  usleep(300 * 1000); /* the SUB connection is up before anything could be announced */

  sqlite3 *shell = NULL;
  char flag[500];
  snprintf(flag, sizeof flag, "%s/db-full", faults);
  if (full) {
    FILE *f = fopen(flag, "w");
    assert_non_null(f);
    fclose(f);
  } else {
    shell = lock_db();
  }
  double t0 = now_ms();
  assert_true(result_taken(w, "w1", match, pair, 1, 1)); /* decides: promote */
  double result_ms = now_ms() - t0;
  double worst_status = 0;
  for (int i = 0; i < 5; i++) {
    t0 = now_ms();
    assert_int_equal(best_of(w), best); /* not promoted in memory: not durable yet */
    double dt = now_ms() - t0;
    if (dt > worst_status) worst_status = dt;
    usleep(100 * 1000);
  }
  print_message("%s: result round trip %.1f ms, worst status round trip %.1f ms\n",
                full ? "full disk" : "locked db", result_ms, worst_status);
  assert_true(result_ms < 1000);
  assert_true(worst_status < 500);
  assert_int_equal(announced_within(sub, 1000), 0); /* not announced */
  assert_int_equal(promotions_lines(cand), 0);      /* nor logged as decided */
  assert_true(log_count("gating decision not stored") >= 1);
  assert_true(log_count(full ? "database or disk is full" : "database is locked") >= 1);
  assert_true(log_count("/campaign.db:") >= 1);

  if (full) unlink(flag);
  else unlock_db(shell);
  assert_true(best_becomes(w, cand, 5000)); /* stored, then made the best */
  assert_int_equal(announced_within(sub, 3000), cand);
  assert_int_equal(promotions_lines(cand), 1);
  assert_int_equal(log_count("gating decision stored after waiting"), 1);
  zmq_close(w);
  zmq_close(tr);
  stop_and_restart(); /* the shipped binary: the promotion is in campaign.db */
  w = connect_dealer(ctx);
  assert_int_equal(hello_as(w, "w1"), cand);
  Xqz__Envelope *r = status(w);
  assert_true(r->status->n_recent_matches >= 1);
  assert_int_equal(r->status->recent_matches[r->status->n_recent_matches - 1]->match_id, match);
  assert_string_equal(r->status->recent_matches[r->status->n_recent_matches - 1]->decision,
                      "promoted");
  xq_wire_free(&r);
  zmq_close(w);
  zmq_close(sub);
  coord_stop(g_pid);
  zmq_ctx_term(ctx);
  if (!getenv("XQZ_KEEP")) remove_dir();
}

static void test_locked_db_decision_waits(void **state) {
  (void)state;
  decision_waits(false);
}

static void test_full_disk_decision_waits(void **state) {
  (void)state;
  decision_waits(true);
}

/* A fresh campaign with one-pair gating: worker w1 has said Hello on *w, a candidate
 * (*cand, a child of *best) came from *tr; returns the open match's id. */
static uint64_t one_pair_match(void *ctx, void **w, void **tr, uint64_t *best, uint64_t *cand) {
  fresh_dir();
  one_pair_gating();
  start_coordinator();
  *w = connect_dealer(ctx);
  *best = hello_as(*w, "w1");
  *tr = connect_dealer(ctx);
  *cand = candidate(*tr, *best, 100);
  return open_match_id(*w, NULL);
}

/* A pair whose holder cannot be stored (campaign.db locked) is kept back: the worker gets
 * self-play, and once the lock goes the pair is handed out with its holder saved, so that
 * after a restart the holder's result is taken. Before, the pair went out unsaved, came
 * back after a restart with no holder, and its honest result was refused as forged. */
static void test_locked_db_keeps_pairs_back(void **state) {
  (void)state;
  void *ctx = zmq_ctx_new(), *w, *tr;
  uint64_t best, cand;
  uint64_t match = one_pair_match(ctx, &w, &tr, &best, &cand);
  assert_true(match != 0);
  sqlite3 *shell = lock_db();
  Xqz__Envelope *r = arena_job(w);
  if (r) fail_msg("a pair was handed out while its holder could not be stored");
  assert_int_equal(log_count("arena pair kept back"), 1); /* one line a minute */
  unlock_db(shell);
  uint32_t pair = take_pair(w, match);
  zmq_close(w);
  zmq_close(tr);
  stop_and_restart();
  w = connect_dealer(ctx);
  assert_int_equal(hello_as(w, "w1"), best);
  assert_true(result_taken(w, "w1", match, pair, 1, 1));
  assert_int_equal(log_count("not issued to this peer"), 0);
  assert_true(best_becomes(w, cand, 5000));
  zmq_close(w);
  zmq_ctx_term(ctx);
}

/* A pair handed to a second worker (the first lost its job) stores only the newest
 * holder; after a restart the first worker's late result is stale, as it was before the
 * restart, not forged: campaign.db does not keep earlier holders, so a restored pair
 * cannot tell a forger from one of them, and charges no fault. Before, the honest first
 * worker was charged a fault for a forged result. */
static void test_restored_pair_earlier_holder_is_stale(void **state) {
  (void)state;
  fresh_dir();
  one_pair_gating();
  start_coordinator();
  void *ctx = zmq_ctx_new();
  void *w1 = connect_dealer(ctx), *w2 = connect_dealer(ctx);
  hello_features(w1, "w1", XQ_FEATURE_HOLDING); /* holding nothing */
  uint64_t best = hello_as(w2, "w2");
  void *tr = connect_dealer(ctx);
  uint64_t cand = candidate(tr, best, 100);
  uint64_t match = open_match_id(w1, NULL);
  assert_true(match != 0);
  uint32_t pair = take_pair(w1, match);
  zmq_close(w1); /* w1 comes back without the job: the pair is handed out again */
  w1 = connect_dealer(ctx);
  hello_features(w1, "w1", XQ_FEATURE_HOLDING); /* holding nothing */
  assert_int_equal(take_pair(w2, match), pair);
  assert_false(result_taken(w1, "w1", match, pair, 1, 1)); /* an earlier holder: stale */
  zmq_close(w1);
  zmq_close(w2);
  zmq_close(tr);
  stop_and_restart();
  w1 = connect_dealer(ctx);
  w2 = connect_dealer(ctx);
  hello_features(w1, "w1", XQ_FEATURE_HOLDING); /* holding nothing */
  hello_as(w2, "w2");
  assert_false(result_taken(w1, "w1", match, pair, 1, 1)); /* still stale, not forged */
  assert_int_equal(log_count("not issued to this peer"), 0);
  assert_true(result_taken(w2, "w2", match, pair, 1, 1)); /* the holder's result decides */
  assert_true(best_becomes(w2, cand, 5000));
  zmq_close(w1);
  zmq_close(w2);
  zmq_ctx_term(ctx);
}

/* Killed while a decision waits for the lock: nothing was announced, and the restart has
 * the old best with the match resumed; its holder's result then decides it. */
static void test_killed_while_waiting(void **state) {
  (void)state;
  void *ctx = zmq_ctx_new(), *w, *tr;
  uint64_t best, cand;
  uint64_t match = one_pair_match(ctx, &w, &tr, &best, &cand);
  uint32_t pair = take_pair(w, match);
  sqlite3 *shell = lock_db();
  assert_true(result_taken(w, "w1", match, pair, 1, 1));
  assert_int_equal(best_of(w), best);
  kill(g_pid, SIGKILL);
  waitpid(g_pid, NULL, 0);
  g_pid = -1;
  unlock_db(shell);
  zmq_close(w);
  zmq_close(tr);
  start_coordinator();
  w = connect_dealer(ctx);
  assert_int_equal(hello_as(w, "w1"), best); /* never announced, never promoted */
  assert_int_equal(promotions_lines(cand), 0);
  assert_int_equal(open_match_id(w, NULL), match); /* the match goes on */
  assert_true(result_taken(w, "w1", match, pair, 1, 1)); /* the holder's result, again */
  assert_true(best_becomes(w, cand, 3000));
  zmq_close(w);
  coord_stop(g_pid);
  zmq_ctx_term(ctx);
  if (!getenv("XQZ_KEEP")) remove_dir();
}

/* Item 10: net id 0 is refused as a candidate and in a game; a stored match of net 0 (as
 * an older build accepted) is dropped at start, so the next candidate plays at once. */
static void test_net_id_zero(void **state) {
  (void)state;
  fresh_dir();
  one_pair_gating();
  start_coordinator();
  void *ctx = zmq_ctx_new();
  void *w = connect_dealer(ctx);
  uint64_t best = hello_as(w, "w1");
  void *tr = connect_dealer(ctx);
  unsigned char *net;
  size_t len;
  nn_file_meta_t meta;
  tiny_net(&net, &len, &meta, best, 50);
  meta.net_id = 0;
  free(net);
  nn_arch_t arch = meta.arch;
  nn_model_t *m = NULL;
  assert_int_equal(nn_model_new(&m, &arch, NULL), 0);
  nn_model_init(m, 7);
  assert_int_equal(nn_file_encode(&net, &len, m, &meta, NULL), 0);
  nn_model_free(&m);
  Xqz__Envelope *r = upload_candidate(tr, net, len, 50);
  free(net);
  assert_int_equal(r->body_case, XQZ__ENVELOPE__BODY_ACK);
  assert_false(r->ack->accepted);
  assert_non_null(strstr(r->ack->reason, "net id 0"));
  xq_wire_free(&r);
  assert_int_equal(open_match_id(w, NULL), 0);

  /* A game that names net 0. */
  unsigned char *buf;
  size_t blen;
  random_game(&buf, &blen, 5, GAME_OK);
  xq_game_record_t rec;
  xq_record_init(&rec);
  assert_int_equal(xq_record_decode(&rec, buf, blen, NULL), 0);
  free(buf);
  rec.net_id = 0;
  assert_int_equal(xq_record_encode(&rec, &buf, &blen), 0);
  xq_record_free(&rec);
  r = send_game_as(w, "w1", 1, buf, blen);
  free(buf);
  assert_false(r->ack->accepted);
  assert_non_null(strstr(r->ack->reason, "net id 0"));
  xq_wire_free(&r);
  zmq_close(w);
  zmq_close(tr);
  coord_stop(g_pid);

  /* What an older build stored for such a candidate: its row and its open match. */
  char sql[600];
  snprintf(sql, sizeof sql,
           "INSERT INTO nets VALUES(0, '0000000000000000', %lld, 50, 'candidate', NULL, 1);"
           "INSERT INTO open_matches VALUES(77, 'gating', 0, %lld, '', %lld, 50, 1, 1);",
           (long long)best, (long long)best, (long long)best);
  db_exec(sql);
  start_coordinator();
  w = connect_dealer(ctx);
  assert_int_equal(hello_as(w, "w1"), best);
  assert_int_equal(open_match_id(w, NULL), 0); /* dropped, not resumed */
  assert_int_equal(log_count("stored gating match dropped"), 1);
  tr = connect_dealer(ctx);
  uint64_t cand = candidate(tr, best, 60), playing = 0;
  assert_true(open_match_id(w, &playing) != 0);
  assert_int_equal(playing, cand); /* plays at once, not queued behind net 0 */
  zmq_close(w);
  zmq_close(tr);
  coord_stop(g_pid);
  zmq_ctx_term(ctx);
  if (!getenv("XQZ_KEEP")) remove_dir();
}

/* Item 11: a campaign.db deleted while stopped stops the next start with the remedy and
 * makes nothing; one deleted while running is noticed, and a rescue copy written. */
static void test_deleted_db(void **state) {
  (void)state;
  fresh_dir();
  one_pair_gating();
  start_coordinator();
  void *ctx = zmq_ctx_new();
  void *w = connect_dealer(ctx);
  hello_as(w, "w1");
  unsigned char *buf;
  size_t blen;
  random_game(&buf, &blen, 9, GAME_OK);
  Xqz__Envelope *r = send_game_as(w, "w1", 1, buf, blen);
  free(buf);
  assert_true(r->ack->accepted);
  xq_wire_free(&r);

  /* While running: moved away, noticed within the watch's period, rescued; moved back. */
  char db[400], aside[400], rescue[400];
  camp_path(db, sizeof db, "campaign.db");
  camp_path(aside, sizeof aside, "campaign.db.aside");
  camp_path(rescue, sizeof rescue, "campaign.db.rescue");
  assert_int_equal(rename(db, aside), 0);
  for (int i = 0; i < 50 && !log_count("campaign.db was deleted or moved away"); i++)
    usleep(100 * 1000);
  assert_int_equal(log_count("campaign.db was deleted or moved away"), 1);
  assert_int_equal(access(rescue, F_OK), 0);
  assert_int_equal(rename(aside, db), 0);
  for (int i = 0; i < 50 && !log_count("campaign.db is back"); i++) usleep(100 * 1000);
  assert_int_equal(log_count("campaign.db is back"), 1);
  zmq_close(w);
  coord_stop(g_pid);

  /* While stopped: deleted. The start refuses, naming what is there and the remedy. */
  char cmd[1400];
  snprintf(cmd, sizeof cmd, "rm -f %s %s-wal %s-shm", db, db, db);
  assert_int_equal(system(cmd), 0);
  start_coordinator();
  int st;
  assert_int_equal(waitpid(g_pid, &st, 0), g_pid);
  g_pid = -1;
  assert_true(WIFEXITED(st));
  assert_true(WEXITSTATUS(st) != 0);
  assert_int_equal(log_count("campaign.db is missing, but this directory holds a campaign"), 1);
  assert_true(log_count("restore campaign.db from a backup") >= 1);
  assert_true(access(db, F_OK) != 0); /* nothing made */
  char plog[400], line[2048];
  camp_path(plog, sizeof plog, "promotions.log");
  FILE *f = fopen(plog, "r");
  assert_non_null(f);
  int firsts = 0;
  while (fgets(line, sizeof line, f)) firsts += strstr(line, "\"first\":true") != NULL;
  fclose(f);
  assert_int_equal(firsts, 1);
  /* The rescue copy brings the campaign back. */
  assert_int_equal(rename(rescue, db), 0);
  start_coordinator();
  w = connect_dealer(ctx);
  hello_as(w, "w1");
  r = status(w);
  assert_int_equal(r->status->games, 1);
  xq_wire_free(&r);
  zmq_close(w);
  coord_stop(g_pid);
  zmq_ctx_term(ctx);
  if (!getenv("XQZ_KEEP")) remove_dir();
}

/* Item 13: match ids from a counter. A decided match stored under a clock-made id from an
 * hour ahead (the clock has stepped back since) is followed by a larger id, so the newest
 * decision is last everywhere. */
static void test_match_ids_counter(void **state) {
  (void)state;
  fresh_dir();
  one_pair_gating();
  start_coordinator();
  void *ctx = zmq_ctx_new();
  void *w = connect_dealer(ctx);
  uint64_t best = hello_as(w, "w1");
  zmq_close(w);
  coord_stop(g_pid);
  long long ahead = ((long long)time(NULL) + 3600) * 1000;
  char sql[400];
  snprintf(sql, sizeof sql, "INSERT INTO matches VALUES(%lld, 1234, %lld, 0, 0, 2, 0.0,"
           " -800.0, 'rejected', %lld)", ahead, (long long)best, (long long)time(NULL) + 3600);
  db_exec(sql);
  start_coordinator();
  w = connect_dealer(ctx);
  hello_as(w, "w1");
  void *tr = connect_dealer(ctx);
  uint64_t cand = candidate(tr, best, 100);
  uint64_t match = open_match_id(w, NULL);
  assert_true(match > (uint64_t)ahead);
  uint32_t pair = take_pair(w, match);
  assert_true(result_taken(w, "w1", match, pair, 1, 1));
  assert_true(best_becomes(w, cand, 3000));
  zmq_close(w);
  zmq_close(tr);
  stop_and_restart();
  w = connect_dealer(ctx);
  hello_as(w, "w1");
  Xqz__Envelope *r = status(w);
  char want[64];
  snprintf(want, sizeof want, "net %016llx", (unsigned long long)cand);
  assert_non_null(strstr(r->status->last_gating, want)); /* the newest decision */
  assert_int_equal(r->status->recent_matches[r->status->n_recent_matches - 1]->match_id, match);
  xq_wire_free(&r);
  zmq_close(w);
  coord_stop(g_pid);
  zmq_ctx_term(ctx);
  if (!getenv("XQZ_KEEP")) remove_dir();
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_teardown(test_locked_db_decision_waits, teardown),
      cmocka_unit_test_teardown(test_full_disk_decision_waits, teardown),
      cmocka_unit_test_teardown(test_killed_while_waiting, teardown),
      cmocka_unit_test_teardown(test_locked_db_keeps_pairs_back, teardown),
      cmocka_unit_test_teardown(test_restored_pair_earlier_holder_is_stale, teardown),
      cmocka_unit_test_teardown(test_net_id_zero, teardown),
      cmocka_unit_test_teardown(test_deleted_db, teardown),
      cmocka_unit_test_teardown(test_match_ids_counter, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
