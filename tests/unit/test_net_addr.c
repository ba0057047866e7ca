/*
 * test_net_addr.c: address settings checked before use (support/net_addr.h). ZeroMQ bind
 * endpoints: tcp://HOST:PORT in the forms the docs and deploy files use, and ipc://PATH,
 * are accepted; a missing scheme or port, a port out of range, an empty host and other
 * transports are refused with the setting and the address named. HOST:PORT resolves
 * numeric hosts and *, and refuses a missing or bad port.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "support/net_addr.h"

static void test_zmq_accepted(void **state) {
  (void)state;
  static const char *const ok[] = {"tcp://127.0.0.1:5555", "tcp://*:5555", "tcp://127.0.0.1:*",
                                   "tcp://10.77.0.1:5556", "tcp://[::1]:5555", "tcp://eth0:5555",
                                   "tcp://localhost:0", "ipc:///tmp/xqz.sock"};
  for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
    xq_errbuf_t eb = {{0}};
    int rc = xq_addr_check_zmq_bind("router", ok[i], &eb);
    if (rc) fprintf(stderr, "refused %s: %s\n", ok[i], eb.msg);
    assert_int_equal(rc, 0);
  }
}

/* The refusal names the part that is missing (issue 49: tcp://127.0.0.1 was said to have
 * "no host and port"). */
static void test_zmq_names_the_part(void **state) {
  (void)state;
  static const struct {
    const char *ep, *says;
  } cases[] = {{"tcp://127.0.0.1", "'tcp://127.0.0.1' has no port: add one, as in tcp://127.0.0.1:5555"},
               {"tcp://[::1]", "has no port"},
               {"tcp://:5555", "'tcp://:5555' has no host"},
               {"tcp://127.0.0.1:55a5", "the port must be 0..65535 or *"}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    xq_errbuf_t eb = {{0}};
    assert_int_equal(xq_addr_check_zmq_bind("router", cases[i].ep, &eb), XQ_EINVAL);
    if (!strstr(eb.msg, cases[i].says)) fail_msg("%s: '%s', want '%s'", cases[i].ep, eb.msg, cases[i].says);
  }
}

static void test_zmq_refused(void **state) {
  (void)state;
  static const char *const bad[] = {"127.0.0.1:5555", "tcp://127.0.0.1", "tcp://127.0.0.1:",
                                    "tcp://:5555", "tcp://127.0.0.1:65536", "tcp://127.0.0.1:-1",
                                    "tcp://127.0.0.1:55a5", "tcp://127.0.0.1: 5", "tcp://a b:5",
                                    "udp://1.2.3.4:5", "ipc://", "", "tcp://"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    xq_errbuf_t eb = {{0}};
    assert_int_equal(xq_addr_check_zmq_bind("pub", bad[i], &eb), XQ_EINVAL);
    char want[160];
    snprintf(want, sizeof want, "pub: '%s'", bad[i]);
    if (!strstr(eb.msg, want)) fprintf(stderr, "message for '%s': %s\n", bad[i], eb.msg);
    assert_non_null(strstr(eb.msg, want));
  }
}

static void test_hostport(void **state) {
  (void)state;
  struct sockaddr_storage ss;
  xq_errbuf_t eb = {{0}};
  assert_int_equal(xq_addr_resolve("http", "127.0.0.1:5580", &ss, &eb), 0);
  assert_int_equal(ss.ss_family, AF_INET);
  assert_int_equal(xq_addr_resolve("http", "*:0", &ss, &eb), 0);
  assert_int_equal(xq_addr_resolve("http", "[::1]:80", &ss, &eb), 0);
  assert_int_equal(ss.ss_family, AF_INET6);
  static const char *const bad[] = {"127.0.0.1", "127.0.0.1:", "127.0.0.1:99999", ":80",
                                    "127.0.0.1:8x"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    assert_int_equal(xq_addr_resolve("http", bad[i], &ss, &eb), XQ_EINVAL);
    char want[160];
    snprintf(want, sizeof want, "http address '%s'", bad[i]);
    assert_non_null(strstr(eb.msg, want));
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_zmq_accepted),
      cmocka_unit_test(test_zmq_refused),
      cmocka_unit_test(test_zmq_names_the_part),
      cmocka_unit_test(test_hostport),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
