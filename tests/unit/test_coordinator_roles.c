/*
 * test_coordinator_roles.c: the coordinator's decisions on who may send what, tested
 * directly: the command table (coordinator/commands.def: every body case of the Envelope
 * oneof has exactly one row, named after its message; every message type x role decision,
 * against the policy written out again here: a worker may not send BatchRequest,
 * CandidateNet or AdminRequest, a trainer may not send games, nobody may send the
 * coordinator's own replies), the roles of a peer with and without CURVE (without CURVE an
 * admin request from a non-loopback address is refused, and a trainer is let in only from
 * loopback or trainer_addresses), loopback addresses and endpoints (for the start-up
 * warning); and the copies set (coordinator/window/copies.c) that refuses a game already in
 * the window: bounded by the window, forgetting the oldest games first.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "commands.h"
#include "window/copies.h"
#include "peers/roles.h"
#include "xqz.pb-c.h"

/* The rows of commands.def, as commands.c builds its table, with the handler and the
 * refusal kept as their spelling (the test links no handler). */
typedef struct {
  int body;
  unsigned roles;
  const char *handler, *refuse, *name;
  unsigned flags;
} row_t;

#define XQC_COMMAND(body, roles, handler, refuse, name, flags) \
  {XQZ__ENVELOPE__BODY_##body, roles, #handler, #refuse, name, flags},
static const row_t k_rows[] = {
#include "commands.def"
};
#undef XQC_COMMAND
#define NROWS (sizeof k_rows / sizeof k_rows[0])

static const row_t *row_of(int body) {
  for (size_t i = 0; i < NROWS; i++)
    if (k_rows[i].body == body) return &k_rows[i];
  return NULL;
}

/* The roles allowed to send a body case; 0 for none (a reply type, or no row). */
static unsigned allowed(int body) {
  const row_t *r = row_of(body);
  return r ? r->roles : 0;
}

/* The policy, written out independently of the table: who may send each request. Every
 * other body case of the oneof is the coordinator's own and may be sent by nobody. */
static const struct {
  int body;
  unsigned roles;
} k_policy[] = {
  /* a trainer says Hello to claim its population slot (docs/population.md) */
  {XQZ__ENVELOPE__BODY_HELLO, XQC_ROLE_WORKER | XQC_ROLE_TRAINER},
  {XQZ__ENVELOPE__BODY_HEARTBEAT, XQC_ROLE_WORKER},
  {XQZ__ENVELOPE__BODY_JOB_REQUEST, XQC_ROLE_WORKER},
  {XQZ__ENVELOPE__BODY_GAME, XQC_ROLE_WORKER},
  {XQZ__ENVELOPE__BODY_ARENA_RESULT, XQC_ROLE_WORKER},
  {XQZ__ENVELOPE__BODY_NET_REQUEST, XQC_ROLES_ANYONE},
  {XQZ__ENVELOPE__BODY_BATCH_REQUEST, XQC_ROLE_TRAINER},
  {XQZ__ENVELOPE__BODY_CANDIDATE, XQC_ROLE_TRAINER},
  /* a population member fetches the checkpoint its copy order names */
  {XQZ__ENVELOPE__BODY_CHECKPOINT_REQUEST, XQC_ROLE_TRAINER},
  {XQZ__ENVELOPE__BODY_STATUS_REQUEST, XQC_ROLES_ANYONE},
  {XQZ__ENVELOPE__BODY_PROMOTIONS_REQUEST, XQC_ROLES_ANYONE},
  {XQZ__ENVELOPE__BODY_ADMIN_REQUEST, XQC_ROLE_ADMIN},
  /* an enrolling key sends this and nothing else; an allowed worker is told it is in */
  {XQZ__ENVELOPE__BODY_ENROL_REQUEST, XQC_ROLE_ENROL | XQC_ROLE_WORKER},
};

static unsigned policy(int body) {
  for (size_t i = 0; i < sizeof k_policy / sizeof k_policy[0]; i++)
    if (k_policy[i].body == body) return k_policy[i].roles;
  return 0;
}

/* Every body case of the Envelope oneof has exactly one row, and every row is one of them:
 * a message added to the proto cannot be forgotten by dispatch or by the role check. */
static void test_table_covers_oneof(void **state) {
  (void)state;
  const ProtobufCMessageDescriptor *d = &xqz__envelope__descriptor;
  size_t oneof_fields = 0;
  for (unsigned i = 0; i < d->n_fields; i++) {
    const ProtobufCFieldDescriptor *f = &d->fields[i];
    if (!(f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF)) continue;
    oneof_fields++;
    size_t rows = 0;
    for (size_t k = 0; k < NROWS; k++) rows += k_rows[k].body == (int)f->id;
    if (rows != 1) fail_msg("Envelope body %s (%u) has %zu rows in commands.def, not 1",
                            f->name, f->id, rows);
    /* The row is named after the body's message type, as the logs and refusals say it. */
    const ProtobufCMessageDescriptor *m = f->descriptor;
    assert_non_null(m);
    assert_string_equal(row_of((int)f->id)->name, m->short_name);
  }
  assert_int_equal(NROWS, oneof_fields);
  assert_null(row_of(XQZ__ENVELOPE__BODY__NOT_SET));
}

/* Every message type x role decision of the table, against the policy; and the handlers,
 * refusals and flags that go with them. */
static void test_table(void **state) {
  (void)state;
  static const unsigned roles[] = {XQC_ROLE_WORKER, XQC_ROLE_TRAINER, XQC_ROLE_ADMIN,
                                   XQC_ROLE_OBSERVER, XQC_ROLE_ENROL};
  for (size_t i = 0; i < NROWS; i++) {
    const row_t *r = &k_rows[i];
    for (size_t k = 0; k < sizeof roles / sizeof roles[0]; k++)
      if (!!(r->roles & roles[k]) != !!(policy(r->body) & roles[k]))
        fail_msg("%s: role %#x is %s by the table, %s by the policy", r->name, roles[k],
                 r->roles & roles[k] ? "allowed" : "refused",
                 policy(r->body) & roles[k] ? "allowed" : "refused");
    assert_int_equal(r->roles, policy(r->body));
    /* A message no peer may send has no handler (dispatch refuses it as unexpected); a
     * request has one. */
    assert_int_equal(r->roles == 0, strcmp(r->handler, "NULL") == 0);
    /* Only AdminRequest is refused in its own reply type (AdminResult); the rest get an
     * Error. */
    assert_int_equal(r->body == XQZ__ENVELOPE__BODY_ADMIN_REQUEST, strcmp(r->refuse, "NULL") != 0);
    /* The requests whose replies may be large wait for the peer to read (guard.h). */
    bool large = r->body == XQZ__ENVELOPE__BODY_NET_REQUEST ||
                 r->body == XQZ__ENVELOPE__BODY_STATUS_REQUEST ||
                 r->body == XQZ__ENVELOPE__BODY_PROMOTIONS_REQUEST ||
                 r->body == XQZ__ENVELOPE__BODY_CHECKPOINT_REQUEST;
    assert_int_equal(large, (r->flags & XQC_CMD_LARGE_REPLY) != 0);
  }
  /* The decisions the design names, spelt out. */
  assert_int_equal(allowed(XQZ__ENVELOPE__BODY_BATCH_REQUEST), XQC_ROLE_TRAINER);
  assert_int_equal(allowed(XQZ__ENVELOPE__BODY_CANDIDATE), XQC_ROLE_TRAINER);
  assert_int_equal(allowed(XQZ__ENVELOPE__BODY_ADMIN_REQUEST), XQC_ROLE_ADMIN);
  assert_int_equal(allowed(XQZ__ENVELOPE__BODY_GAME), XQC_ROLE_WORKER);
  assert_int_equal(allowed(XQZ__ENVELOPE__BODY_ARENA_RESULT), XQC_ROLE_WORKER);
  assert_true(allowed(XQZ__ENVELOPE__BODY_STATUS_REQUEST) & XQC_ROLE_OBSERVER);
  assert_true(allowed(XQZ__ENVELOPE__BODY_NET_REQUEST) & XQC_ROLE_TRAINER);
  /* The coordinator's own messages are sent by nobody. */
  assert_int_equal(allowed(XQZ__ENVELOPE__BODY_BATCH), 0);
  assert_int_equal(allowed(XQZ__ENVELOPE__BODY_WELCOME), 0);
  assert_int_equal(allowed(XQZ__ENVELOPE__BODY_NET_ANNOUNCE), 0);
  assert_string_equal(row_of(XQZ__ENVELOPE__BODY_CANDIDATE)->name, "CandidateNet");
  char buf[64];
  xqc_roles_text(XQC_ROLE_WORKER | XQC_ROLE_OBSERVER, buf, sizeof buf);
  assert_string_equal(buf, "worker or observer");
}

static void test_roles_without_curve(void **state) {
  (void)state;
  xqc_role_facts_t f = {false, false, false, "127.0.0.1", "", false};
  unsigned r = xqc_roles_of(&f);
  assert_true(r & XQC_ROLE_ADMIN);
  assert_true(r & XQC_ROLE_TRAINER);
  /* From another host: a worker and an observer, never an admin. */
  f.address = "10.1.2.3";
  r = xqc_roles_of(&f);
  assert_int_equal(r, XQC_ROLE_WORKER | XQC_ROLE_OBSERVER);
  assert_false(r & allowed(XQZ__ENVELOPE__BODY_ADMIN_REQUEST));
  /* trainer_addresses lets a trainer in by its address, but not as an admin. */
  f.trainer_addresses = "10.9.9.9, 10.1.2.3";
  r = xqc_roles_of(&f);
  assert_true(r & XQC_ROLE_TRAINER);
  assert_false(r & XQC_ROLE_ADMIN);
  f.address = "10.1.2.33"; /* a prefix of no listed address */
  assert_false(xqc_roles_of(&f) & XQC_ROLE_TRAINER);
  f.address = "10.1.2";
  assert_false(xqc_roles_of(&f) & XQC_ROLE_TRAINER);
  /* An unknown address (not TCP) is not loopback. */
  f.address = "";
  f.trainer_addresses = "";
  assert_int_equal(xqc_roles_of(&f), XQC_ROLE_WORKER | XQC_ROLE_OBSERVER);
}

static void test_roles_with_curve(void **state) {
  (void)state;
  /* With CURVE the key decides; loopback gives nothing. */
  xqc_role_facts_t f = {true, false, false, "127.0.0.1", "127.0.0.1", false};
  assert_int_equal(xqc_roles_of(&f), XQC_ROLE_WORKER | XQC_ROLE_OBSERVER);
  f.trainer_key = true;
  assert_int_equal(xqc_roles_of(&f), XQC_ROLE_WORKER | XQC_ROLE_OBSERVER | XQC_ROLE_TRAINER);
  f.trainer_key = false;
  f.admin_key = true;
  assert_int_equal(xqc_roles_of(&f), XQC_ROLE_WORKER | XQC_ROLE_OBSERVER | XQC_ROLE_ADMIN);
  /* A key let in only to enrol has the enrol role and nothing else, whatever else is said
   * of it: it may send EnrolRequest and no other request. */
  f.enrolling = true;
  f.trainer_key = true;
  assert_int_equal(xqc_roles_of(&f), XQC_ROLE_ENROL);
  for (int b = 0; b < 64; b++)
    if (b != XQZ__ENVELOPE__BODY_ENROL_REQUEST) assert_false(allowed(b) & XQC_ROLE_ENROL);
  assert_true(allowed(XQZ__ENVELOPE__BODY_ENROL_REQUEST) & XQC_ROLE_ENROL);
  char buf[64];
  xqc_roles_text(XQC_ROLE_ENROL | XQC_ROLE_WORKER, buf, sizeof buf);
  assert_string_equal(buf, "worker or enrol");
}

static void test_loopback(void **state) {
  (void)state;
  assert_true(xqc_address_is_loopback("127.0.0.1"));
  assert_true(xqc_address_is_loopback("127.3.4.5"));
  assert_true(xqc_address_is_loopback("::1"));
  assert_true(xqc_address_is_loopback("::ffff:127.0.0.1"));
  assert_false(xqc_address_is_loopback("128.0.0.1"));
  assert_false(xqc_address_is_loopback("10.0.0.1"));
  assert_false(xqc_address_is_loopback("::ffff:10.0.0.1"));
  assert_false(xqc_address_is_loopback("localhost")); /* Peer-Address is numeric */
  assert_false(xqc_address_is_loopback(""));
  assert_true(xqc_endpoint_is_loopback("tcp://127.0.0.1:5555"));
  assert_true(xqc_endpoint_is_loopback("tcp://localhost:5555"));
  assert_true(xqc_endpoint_is_loopback("tcp://[::1]:5555"));
  assert_true(xqc_endpoint_is_loopback("ipc:///tmp/x"));
  assert_false(xqc_endpoint_is_loopback("tcp://*:5555"));
  assert_false(xqc_endpoint_is_loopback("tcp://0.0.0.0:5555"));
  assert_false(xqc_endpoint_is_loopback("tcp://10.77.0.1:5555"));
  assert_false(xqc_endpoint_is_loopback("tcp://eth0:5555"));
}

/* The copies set: a game is covered until newer games fill the window. */
static void test_copies(void **state) {
  (void)state;
  xqc_copies_t s;
  assert_int_equal(xqc_copies_init(&s, 100), 0);
  for (uint64_t h = 1; h <= 1000; h++) {
    assert_false(xqc_copies_has(&s, h * 7919));
    assert_int_equal(xqc_copies_add(&s, h * 7919, 10), 0);
    assert_true(xqc_copies_has(&s, h * 7919));
    /* The last ten games (100 positions) are covered, older ones are forgotten. */
    assert_true(s.n <= 10);
    if (h > 10) assert_false(xqc_copies_has(&s, (h - 10) * 7919));
    for (uint64_t k = h > 9 ? h - 9 : 1; k <= h; k++) assert_true(xqc_copies_has(&s, k * 7919));
  }
  xqc_copies_close(&s);
  /* Hashes depend on the key and the moves. */
  xq_game_record_t a;
  xq_record_init(&a);
  xq_record_reset(&a, "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1",
                  1);
  uint64_t h0 = xqc_copies_hash("", &a), hk = xqc_copies_hash("somekey", &a);
  assert_true(h0 != hk);
  assert_int_equal(xq_record_add(&a, 1, false, 0.0f, NULL, 0), 0);
  assert_true(xqc_copies_hash("", &a) != h0);
  xq_record_free(&a);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_table_covers_oneof),
    cmocka_unit_test(test_table),
    cmocka_unit_test(test_roles_without_curve),
    cmocka_unit_test(test_roles_with_curve),
    cmocka_unit_test(test_loopback),
    cmocka_unit_test(test_copies),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
