/*
 * test_coordinator_enrol.c: one-time enrolment tokens (docs/protocol.md, Enrolment) on a
 * real xqz-coordinator with CURVE over loopback. Without an open token an unknown key is
 * refused at the handshake; `xqz enrol-token` (an admin key) opens one and prints it with
 * the worker's command line; while it is open an unknown key may send EnrolRequest and
 * nothing else; the token enrols one key once (a second use says used, xqz-worker --enrol
 * says so too), an expired one says expired, a wrong one unknown; the enrolled key is a
 * worker (Hello answered) and nothing more (BatchRequest and AdminRequest refused); the
 * token's text is neither in campaign.db nor in the log.
 */
#define _DEFAULT_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zmq.h>

#include "coord_test_util.h"
#include "wire/curve.h"
#include "wire/messages.h"
#include "wire/wire.h"

/* Runs a shell line; returns its exit status, its output (stdout and stderr) in out. */
static int run(const char *cmd, char *out, size_t cap) {
  FILE *f = popen(cmd, "r");
  assert_non_null(f);
  size_t n = fread(out, 1, cap - 1, f);
  out[n] = '\0';
  int st = pclose(f);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* `xqz enrol-token` with the admin key: the token (first line of its output) into tok. */
static void enrol_token(char tok[64], char *out, size_t cap) {
  char cmd[1500];
  snprintf(cmd, sizeof cmd, "%s/tools/xqz enrol-token --ttl 1h --coordinator tcp://127.0.0.1:%d"
           " --server-key %s/keys/coord.pub --key %s/keys/op.secret 2>&1", XQZ_BINARY_DIR,
           g_router_port, g_dir, g_dir);
  int rc = run(cmd, out, cap);
  if (rc != 0) fail_msg("xqz enrol-token: %d %s", rc, out);
  size_t n = strcspn(out, "\n");
  assert_int_equal(n, 32);
  memcpy(tok, out, n);
  tok[n] = '\0';
}

static Xqz__Envelope *enrol(void *s, const char *token) {
  Xqz__Envelope env;
  Xqz__EnrolRequest q;
  xq_msg_enrol_request(&env, &q, token, "test/host name");
  send_env(s, &env);
  Xqz__Envelope *r = recv_within(s, 5000);
  if (!r) fail_msg("no answer to EnrolRequest");
  return r;
}

static void enrol_refused(void *s, const char *token, Xqz__EnrolResult__Reason why,
                          const char *word) {
  Xqz__Envelope *r = enrol(s, token);
  assert_int_equal(r->body_case, XQZ__ENVELOPE__BODY_ENROL_RESULT);
  assert_false(r->enrol_result->ok);
  assert_int_equal(r->enrol_result->reason, why);
  assert_non_null(strstr(r->enrol_result->message, word));
  xq_wire_free(&r);
}

static void send_batch_request(void *s) {
  Xqz__Envelope env;
  Xqz__BatchRequest q;
  xq_msg_batch_request(&env, &q, 8, 0);
  send_env(s, &env);
}

static Xqz__Envelope *ban(void *s, const char *target) {
  Xqz__Envelope env;
  Xqz__AdminRequest q;
  xq_msg_admin_request(&env, &q, XQZ__ADMIN_REQUEST__ACTION__ACTION_BAN, target);
  send_env(s, &env);
  Xqz__Envelope *r = recv_within(s, 5000);
  if (!r) fail_msg("no answer to AdminRequest");
  return r;
}

/* Files in dir/ whose name contains what. */
static int files_with(const char *sub, const char *what) {
  char p[400];
  path_of(p, sizeof p, sub);
  DIR *d = opendir(p);
  assert_non_null(d);
  int n = 0;
  struct dirent *de;
  while ((de = readdir(d)))
    if (strstr(de->d_name, what)) n++;
  closedir(d);
  return n;
}

static void test_enrol(void **state) {
  (void)state;
  fresh_dir();
  make_dir("keys");
  make_dir("allow");
  make_dir("admin");
  make_dir("trainer");
  make_key("coord", NULL, NULL);
  make_key("op", "allow", "admin");
  make_key("tr", "allow", "trainer");
  make_key("new1", NULL, NULL);
  make_key("new2", NULL, NULL);
  make_key("stranger", NULL, NULL);
  static char a4[500];
  curve_settings("curve_admin_dir", "admin");
  snprintf(a4, sizeof a4, "--curve_trainer_dir=%s/trainer", g_dir);
  g_extra4 = a4;
  g_extra5 = "--max_peer_errors=100";
  pid_t pid = start_coordinator();
  void *ctx = zmq_ctx_new();
  void *op = curve_dealer(ctx, "op");
  Xqz__Envelope *r = status(op); /* the coordinator is up */
  xq_wire_free(&r);

  /* No token open: an unknown key is refused at the handshake, EnrolRequest or not. */
  void *x = curve_dealer(ctx, "stranger");
  send_status_request(x);
  expect_nothing(x, 1000);
  zmq_close(x);

  /* An admin makes a token: printed once, with the worker's command line. */
  char tok[64], out[8192];
  enrol_token(tok, out, sizeof out);
  char want[200];
  snprintf(want, sizeof want, "--enrol %s", tok);
  assert_non_null(strstr(out, want));
  assert_non_null(strstr(out, "--server-key"));
  assert_int_equal(log_count("enrolment token made"), 1);
  char tok2[64], out2[8192]; /* a second token keeps enrolment open after the first is used */
  enrol_token(tok2, out2, sizeof out2);
  assert_string_not_equal(tok, tok2);

  /* Enrolment open: an unknown key is let in, but may send EnrolRequest only. */
  x = curve_dealer(ctx, "stranger");
  send_status_request(x);
  expect_error(x, XQ_ERROR_NOT_ALLOWED);
  send_game_msg(x, "stranger", 1, "x", 1);
  expect_error(x, XQ_ERROR_NOT_ALLOWED);
  send_batch_request(x);
  expect_error(x, XQ_ERROR_NOT_ALLOWED);
  send_net_request(x, 1, 0);
  expect_error(x, XQ_ERROR_NOT_ALLOWED);
  enrol_refused(x, "0123456789abcdef0123456789abcdef", XQZ__ENROL_RESULT__REASON__REASON_UNKNOWN,
                "unknown");
  enrol_refused(x, "not a token", XQZ__ENROL_RESULT__REASON__REASON_UNKNOWN, "unknown");
  zmq_close(x);
  assert_true(log_count("enrolment refused: unknown") >= 2); /* each one a fault */
  assert_int_equal(files_with("allow", "enrolled-"), 0);

  /* The token enrols new1, once. */
  void *n1 = curve_dealer(ctx, "new1");
  r = enrol(n1, tok);
  assert_int_equal(r->body_case, XQZ__ENVELOPE__BODY_ENROL_RESULT);
  assert_true(r->enrol_result->ok);
  assert_non_null(strstr(r->enrol_result->key_name, "enrolled-testhostname-"));
  xq_wire_free(&r);
  zmq_close(n1);
  assert_int_equal(files_with("allow", "enrolled-testhostname-"), 1);
  assert_int_equal(files_with("admin", "enrolled-"), 0);
  assert_int_equal(files_with("trainer", "enrolled-"), 0);
  assert_int_equal(log_count("worker key enrolled"), 1);

  /* A second use is refused as used (while the other token keeps enrolment open), by the
   * protocol and by xqz-worker --enrol. */
  void *n2 = curve_dealer(ctx, "new2");
  enrol_refused(n2, tok, XQZ__ENROL_RESULT__REASON__REASON_USED, "used");
  zmq_close(n2);
  char cmd[1500];
  snprintf(cmd, sizeof cmd, "%s/worker/xqz-worker --coordinator tcp://127.0.0.1:%d"
           " --server-key %s/keys/coord.pub --key %s/keys/new2.secret --enrol %s"
           " --cache %s/wc --spool %s/ws 2>&1", XQZ_BINARY_DIR, g_router_port, g_dir, g_dir,
           tok, g_dir, g_dir);
  assert_int_equal(run(cmd, out, sizeof out), 1);
  assert_non_null(strstr(out, "used"));

  /* new1, connecting again, is a worker and nothing more. */
  n1 = curve_dealer(ctx, "new1");
  assert_int_not_equal(hello_as(n1, "new1"), 0);
  send_batch_request(n1);
  expect_error(n1, XQ_ERROR_NOT_ALLOWED);
  char tpub[41], path[400];
  xq_errbuf_t eb;
  snprintf(path, sizeof path, "%s/keys/tr.pub", g_dir);
  assert_int_equal(xq_curve_read_key(path, tpub, &eb), 0);
  r = ban(n1, tpub);
  assert_int_equal(r->body_case, XQZ__ENVELOPE__BODY_ADMIN_RESULT);
  assert_false(r->admin_result->ok);
  xq_wire_free(&r);
  /* Enrolling again is a no-op for an allowed key (the token is not looked at). */
  r = enrol(n1, "0123456789abcdef0123456789abcdef");
  assert_true(r->enrol_result->ok);
  xq_wire_free(&r);
  zmq_close(n1);

  /* An expired token says expired (its expiry moved into the past in campaign.db). */
  snprintf(cmd, sizeof cmd, "sqlite3 %s/camp/campaign.db \"UPDATE enrol_tokens SET expires = 1"
           " WHERE used_at IS NULL\"", g_dir);
  assert_int_equal(system(cmd), 0);
  n2 = curve_dealer(ctx, "new2");
  enrol_refused(n2, tok2, XQZ__ENROL_RESULT__REASON__REASON_EXPIRED, "expired");
  zmq_close(n2);
  assert_int_equal(files_with("allow", "enrolled-"), 1);
  /* Now no token is open (one used, one expired): unknown keys are refused at the
   * handshake again. */
  n2 = curve_dealer(ctx, "new2");
  send_status_request(n2);
  expect_nothing(n2, 1000);
  zmq_close(n2);

  /* The tokens' text is nowhere on disk: the database and the log hold hashes only. */
  const char *toks[] = {tok, tok2};
  for (int i = 0; i < 2; i++) {
    snprintf(cmd, sizeof cmd, "grep -rqa %s %s/camp %s/coordinator.log", toks[i], g_dir, g_dir);
    assert_int_not_equal(system(cmd), 0);
  }
  zmq_close(op);
  coord_stop(pid);
  zmq_ctx_term(ctx);
  if (!getenv("XQZ_KEEP")) remove_dir();
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test_teardown(test_enrol, teardown)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
