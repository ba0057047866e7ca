/*
 * test_peer.c: the one client connection (wire/peer.h): a DEALER opened with the options
 * asked for reaches a ROUTER on loopback both ways; the hook runs before the connect and its
 * failure leaves nothing open; a bad address fails with a message naming it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>
#include <zmq.h>

#include "wire/messages.h"
#include "wire/peer.h"
#include "wire/wire.h"

static int hook_calls;

static int hook_ok(void *sock, void *arg, xq_errbuf_t *eb) {
  (void)eb;
  assert_non_null(sock);
  assert_ptr_equal(arg, &hook_calls);
  hook_calls++;
  return 0;
}

static int hook_fails(void *sock, void *arg, xq_errbuf_t *eb) {
  (void)sock;
  (void)arg;
  return xq_err_set(eb, XQ_EINVAL, "the hook said no");
}

static int int_opt(void *s, int opt) {
  int v = -1;
  size_t n = sizeof v;
  assert_int_equal(zmq_getsockopt(s, opt, &v, &n), 0);
  return v;
}

static void test_peer_round_trip(void **state) {
  (void)state;
  void *ctx = zmq_ctx_new();
  void *router = zmq_socket(ctx, ZMQ_ROUTER);
  assert_int_equal(zmq_bind(router, "tcp://127.0.0.1:*"), 0);
  char ep[64];
  size_t n = sizeof ep;
  zmq_getsockopt(router, ZMQ_LAST_ENDPOINT, ep, &n);

  xq_peer_opts_t o = {0};
  o.set_sndhwm = true;
  o.sndhwm = 77;
  o.set_linger = true;
  o.linger = 0;
  o.immediate = true;
  o.before_connect = hook_ok;
  o.arg = &hook_calls;
  void *s = NULL;
  xq_errbuf_t eb = {{0}};
  assert_int_equal(xq_peer_open(&s, ctx, ep, NULL, &o, &eb), 0);
  assert_non_null(s);
  assert_int_equal(hook_calls, 1);
  assert_int_equal(int_opt(s, ZMQ_SNDHWM), 77);
  assert_int_equal(int_opt(s, ZMQ_RCVHWM), 1000); /* not asked for: libzmq's default */
  assert_int_equal(int_opt(s, ZMQ_LINGER), 0);
  assert_int_equal(int_opt(s, ZMQ_IMMEDIATE), 1);
  int64_t max = 0;
  n = sizeof max;
  assert_int_equal(zmq_getsockopt(s, ZMQ_MAXMSGSIZE, &max, &n), 0);
  assert_int_equal(max, XQ_WIRE_MAX_FRAME); /* the wire's options */

  Xqz__Envelope env, *got = NULL;
  Xqz__JobRequest jr;
  xq_msg_job_request(&env, &jr, "peer-w");
  env.request_id = 5;
  int t = 5000;
  zmq_setsockopt(router, ZMQ_RCVTIMEO, &t, sizeof t);
  zmq_setsockopt(s, ZMQ_RCVTIMEO, &t, sizeof t);
  assert_int_equal(xq_wire_send(s, NULL, 0, &env, 0), 0);
  uint8_t rid[256];
  size_t rid_len = 0;
  assert_int_equal(xq_wire_recv(router, rid, &rid_len, &got, 0, &eb), 0);
  assert_string_equal(got->job_request->worker_id, "peer-w");
  xq_wire_free(&got);
  Xqz__Wait w;
  xq_msg_wait(&env, &w, 10, "later");
  env.request_id = 5;
  assert_int_equal(xq_wire_send(router, rid, rid_len, &env, 0), 0);
  assert_int_equal(xq_wire_recv(s, NULL, NULL, &got, 0, &eb), 0);
  assert_int_equal(got->request_id, 5);
  assert_string_equal(got->wait->reason, "later");
  xq_wire_free(&got);

  xq_peer_close(&s);
  assert_null(s);
  xq_peer_close(&s); /* NULL-safe */
  zmq_close(router);
  zmq_ctx_term(ctx);
}

static void test_peer_failures(void **state) {
  (void)state;
  void *ctx = zmq_ctx_new();
  void *s = NULL;
  xq_errbuf_t eb = {{0}};
  assert_int_equal(xq_peer_open(&s, ctx, "nonsense:5555", NULL, NULL, &eb), XQ_EIO);
  assert_null(s);
  assert_non_null(strstr(eb.msg, "zmq_connect"));
  assert_non_null(strstr(eb.msg, "nonsense:5555"));

  xq_peer_opts_t o = {0};
  o.before_connect = hook_fails;
  assert_int_equal(xq_peer_open(&s, ctx, "tcp://127.0.0.1:1", NULL, &o, &eb), XQ_EINVAL);
  assert_null(s);
  assert_string_equal(eb.msg, "the hook said no");
  zmq_ctx_term(ctx); /* returns: nothing was left open */
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_peer_round_trip),
      cmocka_unit_test(test_peer_failures),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
