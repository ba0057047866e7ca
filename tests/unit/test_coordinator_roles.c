/*
 * test_coordinator_roles.c: the coordinator's decisions on who may send what
 * (coordinator/peers/roles.c), tested directly: the one table (a worker may not send
 * BatchRequest, CandidateNet or AdminRequest; a trainer may not send games), the roles of
 * a peer with and without CURVE (without CURVE an admin request from a non-loopback
 * address is refused, and a trainer is let in only from loopback or trainer_addresses),
 * loopback addresses and endpoints (for the start-up warning); and the copies set
 * (coordinator/peers/copies.c) that refuses a game already in the window: bounded by the window,
 * forgetting the oldest games first.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdint.h>
#include <string.h>

#include "copies.h"
#include "roles.h"
#include "xqz.pb-c.h"

static void test_table(void **state) {
  (void)state;
  assert_int_equal(xqc_roles_allowed(XQZ__ENVELOPE__BODY_BATCH_REQUEST), XQC_ROLE_TRAINER);
  assert_int_equal(xqc_roles_allowed(XQZ__ENVELOPE__BODY_CANDIDATE), XQC_ROLE_TRAINER);
  assert_int_equal(xqc_roles_allowed(XQZ__ENVELOPE__BODY_ADMIN_REQUEST), XQC_ROLE_ADMIN);
  assert_int_equal(xqc_roles_allowed(XQZ__ENVELOPE__BODY_GAME), XQC_ROLE_WORKER);
  assert_int_equal(xqc_roles_allowed(XQZ__ENVELOPE__BODY_ARENA_RESULT), XQC_ROLE_WORKER);
  assert_true(xqc_roles_allowed(XQZ__ENVELOPE__BODY_STATUS_REQUEST) & XQC_ROLE_OBSERVER);
  assert_true(xqc_roles_allowed(XQZ__ENVELOPE__BODY_NET_REQUEST) & XQC_ROLE_TRAINER);
  /* The coordinator's own messages are sent by nobody. */
  assert_int_equal(xqc_roles_allowed(XQZ__ENVELOPE__BODY_BATCH), 0);
  assert_int_equal(xqc_roles_allowed(XQZ__ENVELOPE__BODY_WELCOME), 0);
  assert_int_equal(xqc_roles_allowed(XQZ__ENVELOPE__BODY_NET_ANNOUNCE), 0);
  assert_string_equal(xqc_roles_message_name(XQZ__ENVELOPE__BODY_CANDIDATE), "CandidateNet");
  char buf[64];
  xqc_roles_text(XQC_ROLE_WORKER | XQC_ROLE_OBSERVER, buf, sizeof buf);
  assert_string_equal(buf, "worker or observer");
}

static void test_roles_without_curve(void **state) {
  (void)state;
  xqc_role_facts_t f = {false, false, false, "127.0.0.1", ""};
  unsigned r = xqc_roles_of(&f);
  assert_true(r & XQC_ROLE_ADMIN);
  assert_true(r & XQC_ROLE_TRAINER);
  /* From another host: a worker and an observer, never an admin. */
  f.address = "10.1.2.3";
  r = xqc_roles_of(&f);
  assert_int_equal(r, XQC_ROLE_WORKER | XQC_ROLE_OBSERVER);
  assert_false(r & xqc_roles_allowed(XQZ__ENVELOPE__BODY_ADMIN_REQUEST));
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
  xqc_role_facts_t f = {true, false, false, "127.0.0.1", "127.0.0.1"};
  assert_int_equal(xqc_roles_of(&f), XQC_ROLE_WORKER | XQC_ROLE_OBSERVER);
  f.trainer_key = true;
  assert_int_equal(xqc_roles_of(&f), XQC_ROLE_WORKER | XQC_ROLE_OBSERVER | XQC_ROLE_TRAINER);
  f.trainer_key = false;
  f.admin_key = true;
  assert_int_equal(xqc_roles_of(&f), XQC_ROLE_WORKER | XQC_ROLE_OBSERVER | XQC_ROLE_ADMIN);
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
    cmocka_unit_test(test_table),
    cmocka_unit_test(test_roles_without_curve),
    cmocka_unit_test(test_roles_with_curve),
    cmocka_unit_test(test_loopback),
    cmocka_unit_test(test_copies),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
