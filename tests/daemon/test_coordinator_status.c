/*
 * test_coordinator_status.c: the watched state of a real xqz-coordinator over loopback.
 * A worker says Hello, sends games (three good, one inconsistent) and a heartbeat; a
 * trainer reports its loss; a candidate is gated (gating=none over one pair). Status then
 * carries every field: the worker's statistics (games, results, reasons, plies, rejected),
 * limits, versions, the loss, the open and then the decided match; PromotionsRequest
 * lists the decided match after an id; after a restart the worker statistics, the loss
 * and the match list are still there. The Status JSON of the same message parses. A peer
 * of another protocol version is refused; made-up worker ids cannot grow the table; `xqz
 * status` stops with a clear message against a coordinator of another protocol version.
 */
#define _DEFAULT_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <math.h>
#include <stdbool.h>
#include <time.h>

#include "coord_test_util.h"
#include "json_check.h"
#include "support/version.h"
#include "wire/status_json.h"

static const Xqz__WorkerStatus *find_worker(const Xqz__Status *s, const char *id) {
  for (size_t i = 0; i < s->n_worker_list; i++)
    if (strcmp(s->worker_list[i]->worker_id, id) == 0) return s->worker_list[i];
  return NULL;
}

static double limit(const Xqz__Status *s, const char *name) {
  for (size_t i = 0; i < s->n_limits; i++)
    if (strcmp(s->limits[i]->name, name) == 0) return s->limits[i]->value;
  fail_msg("limit %s missing", name);
  return 0;
}

static void check_worker(const Xqz__Status *s, uint64_t best, bool alive) {
  const Xqz__WorkerStatus *w = find_worker(s, "stat-worker");
  assert_non_null(w);
  assert_int_equal(w->games, 3);
  assert_int_equal(w->rejected, 1);
  assert_int_equal(w->faults, 0);
  assert_int_equal(w->red_wins + w->black_wins + w->draws, 3);
  assert_int_equal(w->n_by_reason, XQ_REASON_RESIGN + 1);
  uint64_t sum = 0;
  for (size_t i = 0; i < w->n_by_reason; i++) sum += w->by_reason[i];
  assert_int_equal(sum, 3);
  assert_true(w->avg_plies > 0 && w->avg_plies <= 40);
  assert_true(w->positions > 0);
  assert_string_equal(w->host, "localhost");
  /* Hello.precision, for the worker table; not kept across a restart (it is the worker
   * process's, said again in its next Hello). */
  assert_string_equal(w->precision, alive ? "bf16" : "");
  assert_int_equal(w->role, XQZ__ROLE__ROLE_WORKER);
  assert_int_equal(w->net_id, best);
  assert_int_equal(w->threads, 1);
  assert_int_equal(w->alive, alive);
  /* Per-worker figures (issue 49): games in the last day and the last game's time survive
   * a restart; the state says what the worker does now. */
  assert_int_equal(w->games_day, 3);
  int64_t now = (int64_t)time(NULL);
  assert_true(w->last_game_time > now - 120 && w->last_game_time <= now);
  assert_string_equal(w->state, alive ? "playing" : "gone");
}

static Xqz__Envelope *promotions(void *s, uint64_t after) {
  Xqz__Envelope env;
  Xqz__PromotionsRequest q;
  xq_msg_promotions_request(&env, &q, after);
  Xqz__Envelope *r = rpc(s, &env);
  assert_int_equal(r->body_case, XQZ__ENVELOPE__BODY_PROMOTIONS);
  return r;
}

static void json_parses(const Xqz__Status *s) {
  char *j = xq_status_json(s);
  assert_non_null(j);
  assert_non_null(strstr(j, "\"worker_id\":\"stat-worker\""));
  assert_true(th_python_json(j, "assert d[\"worker_list\"][0][\"games\"] == 3"));
  free(j);
}

static void test_status_fields(void **state) {
  (void)state;
  fresh_dir();
  g_extra = "--gating=none";
  g_extra2 = "--threshold_games=2";
  pid_t pid = start_coordinator();
  void *ctx = zmq_ctx_new();
  void *s = connect_dealer(ctx);
  uint64_t best = hello_as(s, "stat-worker");

  for (uint64_t seq = 1; seq <= 3; seq++) {
    unsigned char *g;
    size_t len;
    random_game(&g, &len, 100 + seq, GAME_OK);
    Xqz__Envelope *r = send_game_as(s, "stat-worker", seq, g, len);
    assert_true(r->ack->accepted);
    xq_wire_free(&r);
    free(g);
  }
  unsigned char *bad;
  size_t bad_len;
  random_game(&bad, &bad_len, 9, GAME_ILLEGAL_MOVE);
  Xqz__Envelope *r = send_game_as(s, "stat-worker", 4, bad, bad_len);
  assert_false(r->ack->accepted);
  xq_wire_free(&r);
  free(bad);

  Xqz__Envelope env;
  Xqz__Heartbeat hb;
  xq_msg_heartbeat(&env, &hb, "stat-worker", best, 0);
  r = rpc(s, &env);
  xq_wire_free(&r);

  /* The trainer's loss report (a separate peer, as the real trainer is). */
  void *tr = connect_dealer(ctx);
  Xqz__BatchRequest br;
  xq_msg_batch_request(&env, &br, 4, 30);
  br.loss_steps = 5;
  br.loss = 2.5f;
  br.loss_policy = 2.0f;
  br.loss_value = 0.5f;
  br.candidate_every = 100; /* the trainer's plan: Status.progress */
  br.max_steps = 1000;
  r = rpc(tr, &env);
  xq_wire_free(&r);

  usleep(1200 * 1000); /* one rate sample after the games */
  r = status(s);
  const Xqz__Status *st = r->status;
  check_worker(st, best, true);
  assert_int_equal(st->workers, 1);
  assert_string_equal(st->campaign, "camp");
  assert_string_equal(st->software_version, XQ_SOFTWARE_NAME);
  assert_int_equal(st->protocol_version, XQ_PROTOCOL_VERSION);
  assert_string_equal(st->gating_mode, "none");
  assert_string_equal(st->arena_precision, "fp32"); /* the default */
  assert_int_equal(st->window_capacity, 1000);
  assert_int_equal(st->games, 3);
  assert_int_equal(st->rejected_games, 1);
  assert_true(st->positions_per_s > 0);
  assert_true(st->uptime_s >= 1);
  assert_int_equal(st->trainer_step, 30);
  assert_non_null(st->last_loss);
  assert_int_equal(st->last_loss->step, 30);
  assert_true(fabsf(st->last_loss->loss - 2.5f) < 1e-6f);
  assert_int_equal(st->n_loss_history, 1);
  assert_true(fabsf(st->loss_history[0]->policy - 2.0f) < 1e-6f);
  assert_null(st->open_match);
  assert_int_equal(st->n_recent_matches, 0);
  assert_int_equal(limit(st, "max_peer_errors"), 20);
  assert_true(limit(st, "worker_timeout_ms") > 0);
  /* The ROUTER's ZMQ_MAXMSGSIZE: the largest envelope plus slack for framing. */
  assert_int_equal(limit(st, "max_message_bytes"), XQ_WIRE_MAX_FRAME);
  assert_int_equal(limit(st, "cutoff_s"), 600);
  assert_int_equal(limit(st, "fault_window_s"), 60);
  /* Progress: the plan is known, the step rate is not (one report), so times are unknown. */
  const Xqz__Progress *pg = st->progress;
  assert_non_null(pg);
  assert_int_equal(pg->candidate_every, 100);
  assert_int_equal(pg->next_candidate_step, 100);
  assert_true(pg->bounded);
  assert_int_equal(pg->max_steps, 1000);
  assert_true(isnan(pg->steps_per_s) && isnan(pg->next_candidate_s) && isnan(pg->end_s));
  assert_int_equal(pg->match_games_max, 0);
  json_parses(st);
  char *json = xq_status_json(st);
  assert_non_null(strstr(json, "\"next_candidate_step\":100"));
  assert_non_null(strstr(json, "\"next_candidate_s\":null"));
  assert_non_null(strstr(json, "\"state\":\"playing\""));
  free(json);
  xq_wire_free(&r);

  /* A candidate: the match is open until its one pair is reported. */
  unsigned char *net;
  size_t net_len;
  nn_file_meta_t meta;
  tiny_net(&net, &net_len, &meta, best, 500);
  r = upload_candidate(tr, net, net_len, 500);
  assert_true(r->ack->accepted);
  xq_wire_free(&r);
  r = status(s);
  assert_non_null(r->status->open_match);
  assert_string_equal(r->status->open_match->decision, "open");
  assert_int_equal(r->status->open_match->net_a, meta.net_id);
  assert_int_equal(r->status->open_match->step, 500);
  assert_int_equal(r->status->progress->match_games, 0);
  assert_int_equal(r->status->progress->match_games_max, 2); /* threshold_games=2: one pair */
  uint64_t match = r->status->open_match->match_id;
  xq_wire_free(&r);

  /* The pair is reported by the worker it was issued to. */
  r = arena_job(s);
  assert_non_null(r);
  assert_int_equal(r->job->arena->match_id, match);
  uint32_t pair = r->job->arena->pair_index;
  xq_wire_free(&r);
  r = arena_result(s, "stat-worker", match, pair, 1, 0);
  assert_true(r->ack->accepted);
  xq_wire_free(&r);

  r = status(s);
  st = r->status;
  assert_null(st->open_match);
  assert_int_equal(st->n_recent_matches, 1);
  const Xqz__MatchStatus *m = st->recent_matches[0];
  assert_int_equal(m->match_id, match);
  assert_int_equal(m->net_a, meta.net_id);
  assert_int_equal(m->net_b, best);
  assert_int_equal(m->step, 500);
  assert_int_equal(m->wins, 1);
  assert_int_equal(m->draws, 1);
  assert_int_equal(m->losses, 0);
  assert_string_equal(m->decision, "promoted");
  assert_true(m->elo_lo < m->elo && m->elo <= m->elo_hi);
  assert_true(m->best_elo > 0 && fabs(m->best_elo - st->best_elo) < 1e-9);
  assert_true(m->time > 0);
  xq_wire_free(&r);

  r = promotions(s, 0);
  assert_int_equal(r->promotions->n_matches, 1);
  assert_int_equal(r->promotions->matches[0]->match_id, match);
  xq_wire_free(&r);
  r = promotions(s, match);
  assert_int_equal(r->promotions->n_matches, 0);
  xq_wire_free(&r);

  /* Restart: statistics, loss and matches come back from the database. */
  kill(pid, SIGTERM);
  int ws;
  waitpid(pid, &ws, 0);
  assert_true(WIFEXITED(ws) && WEXITSTATUS(ws) == 0);
  zmq_close(s);
  zmq_close(tr);
  pid = start_coordinator();
  s = connect_dealer(ctx);
  r = status(s);
  st = r->status;
  check_worker(st, best, false);
  assert_int_equal(st->workers, 0);
  assert_non_null(st->last_loss);
  assert_int_equal(st->last_loss->step, 30);
  assert_int_equal(st->n_recent_matches, 1);
  assert_int_equal(st->recent_matches[0]->match_id, match);
  xq_wire_free(&r);

  kill(pid, SIGTERM);
  waitpid(pid, NULL, 0);
  g_pid = -1;
  zmq_close(s);
  zmq_ctx_term(ctx);
  free(net);
  remove_dir();
}

/* A peer of protocol 99 is refused: an Error it can read (its own version, its request
 * id, both versions named), one log line however often it tries; the coordinator goes
 * on serving others. */
static void test_version_refused(void **state) {
  (void)state;
  fresh_dir();
  g_extra = "--gating=sprt";
  g_extra2 = "--seed=1";
  pid_t pid = start_coordinator();
  void *ctx = zmq_ctx_new();
  void *s = connect_dealer(ctx);
  hello(s); /* the coordinator is up */
  void *old = connect_dealer(ctx);
  for (uint64_t i = 0; i < 2; i++) {
    Xqz__Envelope env;
    Xqz__Hello h;
    xq_msg_hello(&env, &h, XQZ__ROLE__ROLE_WORKER, "from-the-future", NULL, 0, 0);
    env.version = 99;
    env.request_id = 77 + i;
    size_t len = xqz__envelope__get_packed_size(&env);
    uint8_t *buf = malloc(len);
    xqz__envelope__pack(&env, buf);
    assert_int_equal(zmq_send(old, buf, len, 0), (int)len);
    free(buf);
    expect_version_refusal(old, 99, 77 + i);
  }
  Xqz__Envelope *r = status(s);
  assert_null(find_worker(r->status, "from-the-future"));
  xq_wire_free(&r);
  kill(pid, SIGTERM);
  waitpid(pid, NULL, 0);
  g_pid = -1;
  assert_int_equal(log_count("refused peer: it speaks protocol 99, this coordinator speaks 1"
                             " (upgrade one of them)"), 1);
  zmq_close(old);
  zmq_close(s);
  zmq_ctx_term(ctx);
  remove_dir();
}

/* Hellos under made-up ids cannot grow the worker table past 4096 (XQC_WORKERS_MAX): while
 * every entry is alive a new id is not tracked; once they are silent, new ids replace the
 * ones seen longest ago, and the database keeps the same bound across a restart. */
#define TABLE_MAX 4096
static void send_hello_id(void *s, const char *id) {
  Xqz__Envelope env;
  Xqz__Hello h;
  xq_msg_hello(&env, &h, XQZ__ROLE__ROLE_WORKER, id, NULL, 0, 0);
  assert_int_equal(xq_wire_send(s, NULL, 0, &env, 0), 0);
}

static void test_worker_table_bounded(void **state) {
  (void)state;
  fresh_dir();
  g_extra = "--worker_timeout_ms=500";
  g_extra2 = "--heartbeat_ms=100";
  pid_t pid = start_coordinator();
  void *ctx = zmq_ctx_new();
  void *q = connect_dealer(ctx);
  hello(q); /* "test-worker": up */
  /* The hellos' Welcomes are not read: the ROUTER drops what does not fit. */
  void *h = connect_dealer(ctx);
  char id[64];
  for (int i = 0; i < TABLE_MAX - 1; i++) { /* "test-worker" holds one entry */
    snprintf(id, sizeof id, "made-up-%d", i);
    send_hello_id(h, id);
  }
  send_hello_id(h, "one-too-many");
  for (int tries = 0; tries < 100 && !log_count("hello worker=one-too-many"); tries++)
    usleep(100 * 1000); /* until every hello is handled */
  Xqz__Envelope *r = status(q);
  assert_int_equal(r->status->n_worker_list, TABLE_MAX);
  assert_non_null(find_worker(r->status, "made-up-4094"));
  assert_null(find_worker(r->status, "one-too-many")); /* all alive: not tracked */
  xq_wire_free(&r);
  usleep(700 * 1000); /* every entry is silent now */
  send_hello_id(h, "newcomer");
  for (int tries = 0; tries < 100; tries++) {
    r = status(q);
    if (find_worker(r->status, "newcomer")) break;
    xq_wire_free(&r);
    usleep(50 * 1000);
  }
  assert_non_null(find_worker(r->status, "newcomer"));
  assert_int_equal(r->status->n_worker_list, TABLE_MAX);
  xq_wire_free(&r);
  kill(pid, SIGTERM);
  waitpid(pid, NULL, 0);
  zmq_close(h);
  zmq_close(q);

  pid = start_coordinator();
  q = connect_dealer(ctx);
  r = status(q);
  assert_int_equal(r->status->n_worker_list, TABLE_MAX);
  assert_non_null(find_worker(r->status, "newcomer"));
  xq_wire_free(&r);
  kill(pid, SIGTERM);
  waitpid(pid, NULL, 0);
  g_pid = -1;
  zmq_close(q);
  zmq_ctx_term(ctx);
  remove_dir();
}

/* `xqz status` against a coordinator of another protocol version (a fake ROUTER here):
 * exit status 1 and a message naming both versions, not a time-out. */
static void test_cli_other_version(void **state) {
  (void)state;
  fresh_dir();
  void *ctx = zmq_ctx_new();
  void *router = zmq_socket(ctx, ZMQ_ROUTER);
  int linger = 0, t = 10000;
  zmq_setsockopt(router, ZMQ_LINGER, &linger, sizeof linger);
  zmq_setsockopt(router, ZMQ_RCVTIMEO, &t, sizeof t);
  char ep[64], errp[300];
  snprintf(ep, sizeof ep, "tcp://127.0.0.1:%d", g_router_port);
  assert_int_equal(zmq_bind(router, ep), 0);
  snprintf(errp, sizeof errp, "%s/cli.err", g_dir);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL); /* a failed test leaves no daemon behind */
    if (!freopen(errp, "w", stderr) || !freopen("/dev/null", "w", stdout)) _exit(127);
    execl(XQZ_BINARY_DIR "/tools/xqz", "xqz", "status", "--coordinator", ep, (char *)NULL);
    _exit(127);
  }
  uint8_t rid[256];
  size_t rid_len;
  Xqz__Envelope *q = NULL;
  xq_errbuf_t eb;
  assert_int_equal(xq_wire_recv(router, rid, &rid_len, &q, 0, &eb), 0);
  assert_int_equal(q->body_case, XQZ__ENVELOPE__BODY_STATUS_REQUEST);
  Xqz__Envelope env;
  Xqz__Status st = XQZ__STATUS__INIT;
  xq_msg_status(&env, &st);
  env.version = 99;
  env.request_id = q->request_id;
  assert_int_equal(xq_wire_send(router, rid, rid_len, &env, 0), 0);
  xq_wire_free(&q);
  int status = 0;
  waitpid(pid, &status, 0);
  assert_true(WIFEXITED(status));
  assert_int_equal(WEXITSTATUS(status), 1);
  FILE *f = fopen(errp, "r");
  assert_non_null(f);
  char line[1024] = "";
  assert_non_null(fgets(line, sizeof line, f));
  fclose(f);
  assert_non_null(strstr(line, "another protocol version"));
  assert_non_null(strstr(line, XQ_VERSION_LINE));
  assert_non_null(strstr(line, "it speaks protocol 99"));
  zmq_close(router);
  zmq_ctx_term(ctx);
  remove_dir();
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test_teardown(test_status_fields, teardown),
                                     cmocka_unit_test_teardown(test_version_refused, teardown),
                                     cmocka_unit_test_teardown(test_worker_table_bounded, teardown),
                                     cmocka_unit_test_teardown(test_cli_other_version, teardown)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
