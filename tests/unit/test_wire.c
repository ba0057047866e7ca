/*
 * test_wire.c: envelopes survive a round trip over a real ZeroMQ ROUTER/DEALER pair on
 * loopback; malformed bytes, a wrong protocol version, an empty envelope and extra frames
 * are rejected with a reason and leave the socket usable.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>
#include <zmq.h>

#include "wire/messages.h"
#include "wire/wire.h"

static void test_pack_unpack(void **state) {
  (void)state;
  Xqz__Envelope env;
  Xqz__Hello hello;
  xq_msg_hello(&env, &hello, XQZ__ROLE__ROLE_WORKER, "w1", NULL, 2, 0);
  env.request_id = 77;
  uint8_t *buf;
  size_t len;
  assert_int_equal(xq_wire_pack(&env, &buf, &len), 0);
  Xqz__Envelope *got;
  xq_errbuf_t eb = {{0}};
  assert_int_equal(xq_wire_unpack(buf, len, &got, &eb), 0);
  assert_int_equal(got->body_case, XQZ__ENVELOPE__BODY_HELLO);
  assert_string_equal(got->hello->worker_id, "w1");
  assert_int_equal(got->request_id, 77);
  xq_wire_free(&got);
  assert_null(got);
  /* Truncated and garbage bytes. */
  assert_int_not_equal(xq_wire_unpack(buf, len - 3, &got, &eb), 0);
  assert_null(got);
  static const uint8_t garbage[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
  assert_int_equal(xq_wire_unpack(garbage, sizeof garbage, &got, &eb), XQ_EFORMAT);
  assert_non_null(strstr(eb.msg, "malformed"));
  free(buf);
  /* Wrong version. */
  env.version = 99;
  assert_int_equal(xq_wire_pack(&env, &buf, &len), 0);
  assert_int_equal(xq_wire_unpack(buf, len, &got, &eb), XQ_EVERSION);
  assert_non_null(strstr(eb.msg, "it speaks protocol 99, this program speaks 1"));
  free(buf);
  /* No body: the bare envelope (no constructor makes one). */
  xq_wire_init(&env);
  assert_int_equal(xq_wire_pack(&env, &buf, &len), 0);
  assert_int_equal(xq_wire_unpack(buf, len, &got, &eb), XQ_EFORMAT);
  assert_non_null(strstr(eb.msg, "without a body"));
  free(buf);
  /* Oversized (checked before parsing). */
  assert_int_equal(xq_wire_unpack(garbage, (size_t)XQ_WIRE_MAX_MESSAGE + 1, &got, &eb), XQ_ERANGE);
}

/* Every code of the one error table has its meaning; a code not in it says so. */
static void test_error_table(void **state) {
  (void)state;
  const uint32_t codes[] = {XQ_ERROR_MALFORMED, XQ_ERROR_UNEXPECTED, XQ_ERROR_NOT_FOUND,
                            XQ_ERROR_BAD_FIELD, XQ_ERROR_INTERNAL, XQ_ERROR_PROTOCOL_VERSION,
                            XQ_ERROR_BANNED, XQ_ERROR_CAMPAIGN, XQ_ERROR_NOT_ALLOWED,
                            XQ_ERROR_WORKER_ID, XQ_ERROR_HELLO_FIRST};
  for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++) {
    assert_int_equal(codes[i], i + 1); /* dense from 1: a gap would be a lost row */
    assert_string_not_equal(xq_wire_error_text(codes[i]), "unknown error code");
  }
  assert_string_equal(xq_wire_error_text(XQ_ERROR_CAMPAIGN), "another campaign");
  assert_string_equal(xq_wire_error_text(0), "unknown error code");
  assert_string_equal(xq_wire_error_text(99), "unknown error code");
  assert_int_equal(XQZ__ERROR_CODE__ERROR_WORKER_ID, XQ_ERROR_WORKER_ID);
  assert_int_equal(XQZ__ERROR_CODE__ERROR_HELLO_FIRST, XQ_ERROR_HELLO_FIRST);
}

static void test_router_dealer(void **state) {
  (void)state;
  void *ctx = zmq_ctx_new();
  void *router = zmq_socket(ctx, ZMQ_ROUTER), *dealer = zmq_socket(ctx, ZMQ_DEALER);
  assert_int_equal(xq_wire_socket_setup(router), 0);
  assert_int_equal(xq_wire_socket_setup(dealer), 0);
  assert_int_equal(zmq_bind(router, "tcp://127.0.0.1:*"), 0);
  char ep[256];
  size_t eplen = sizeof ep;
  zmq_getsockopt(router, ZMQ_LAST_ENDPOINT, ep, &eplen);
  assert_int_equal(zmq_connect(dealer, ep), 0);
  int timeout = 5000;
  zmq_setsockopt(router, ZMQ_RCVTIMEO, &timeout, sizeof timeout);
  zmq_setsockopt(dealer, ZMQ_RCVTIMEO, &timeout, sizeof timeout);

  /* A raw two-frame message from the dealer is rejected and drained. */
  zmq_send(dealer, "a", 1, ZMQ_SNDMORE);
  zmq_send(dealer, "b", 1, 0);
  uint8_t rid[256];
  size_t rid_len;
  Xqz__Envelope *got;
  xq_errbuf_t eb = {{0}};
  assert_int_equal(xq_wire_recv(router, rid, &rid_len, &got, 0, &eb), XQ_EFORMAT);
  /* A good message after it still arrives, and the reply routes back. */
  Xqz__Envelope env;
  Xqz__JobRequest jr;
  xq_msg_job_request(&env, &jr, "w2");
  assert_int_equal(xq_wire_send(dealer, NULL, 0, &env, 0), 0);
  assert_int_equal(xq_wire_recv(router, rid, &rid_len, &got, 0, &eb), 0);
  assert_string_equal(got->job_request->worker_id, "w2");
  xq_wire_free(&got);
  Xqz__Wait w;
  xq_msg_wait(&env, &w, 250, NULL);
  assert_int_equal(xq_wire_send(router, rid, rid_len, &env, 0), 0);
  assert_int_equal(xq_wire_recv(dealer, NULL, NULL, &got, 0, &eb), 0);
  assert_int_equal(got->wait->retry_ms, 250);
  xq_wire_free(&got);
  zmq_close(dealer);
  zmq_close(router);
  zmq_ctx_term(ctx);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_pack_unpack),
      cmocka_unit_test(test_router_dealer),
      cmocka_unit_test(test_error_table),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
