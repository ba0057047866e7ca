/*
 * test_worker_messages.c: a worker pointed at the wrong place says so (issue 49, messages
 * 2 and 3). Pointed at a PUB socket (the coordinator's PUB port is its ROUTER port + 1),
 * its "coordinator not answering" line says this looks like the PUB port and names the
 * port one lower; pointed at a port where nothing listens, the line names the address and
 * the likely causes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Runs xqz-worker against ep until its log holds every string of want (or 20 s pass);
 * returns 1 when it did. The log is copied to stderr on failure. */
static int worker_says(const char *ep, const char **want) {
  char dir[] = "/tmp/xqz-test-wmsg-XXXXXX";
  assert_non_null(mkdtemp(dir));
  char cache[600], spool[600], bin[600], logp[600];
  snprintf(cache, sizeof cache, "%s/cache", dir);
  snprintf(spool, sizeof spool, "%s/spool", dir);
  snprintf(logp, sizeof logp, "%s/worker.log", dir);
  snprintf(bin, sizeof bin, "%s/worker/xqz-worker", XQZ_BINARY_DIR);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL); /* a failed test leaves no daemon behind */
    if (!freopen(logp, "w", stderr)) _exit(127);
    execl(bin, bin, "--coordinator", ep, "--pub", "tcp://127.0.0.1:1", "--threads", "1",
          "--cache", cache, "--spool", spool, "--id", "msgw", "--timeout", "300",
          (char *)NULL);
    _exit(127);
  }
  int found = 0;
  double t0 = now_s();
  while (!found && now_s() - t0 < 20) {
    struct timespec ts = {0, 200000000L};
    nanosleep(&ts, NULL);
    FILE *f = fopen(logp, "r");
    if (!f) continue;
    char line[2048];
    while (!found && fgets(line, sizeof line, f)) {
      found = 1;
      for (int i = 0; want[i]; i++) found &= strstr(line, want[i]) != NULL;
    }
    fclose(f);
  }
  kill(pid, SIGKILL);
  waitpid(pid, NULL, 0);
  if (!found) {
    char cmd[700];
    snprintf(cmd, sizeof cmd, "cat '%s' >&2", logp);
    (void)!system(cmd);
  }
  char cmd[700];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  assert_int_equal(system(cmd), 0);
  return found;
}

static void test_pub_port(void **state) {
  (void)state;
  void *ctx = zmq_ctx_new();
  void *pub = zmq_socket(ctx, ZMQ_PUB);
  int linger = 0;
  zmq_setsockopt(pub, ZMQ_LINGER, &linger, sizeof linger);
  assert_int_equal(zmq_bind(pub, "tcp://127.0.0.1:*"), 0);
  char ep[64], lower[80];
  size_t n = sizeof ep;
  zmq_getsockopt(pub, ZMQ_LAST_ENDPOINT, ep, &n);
  int port = atoi(strrchr(ep, ':') + 1);
  snprintf(lower, sizeof lower, "give --coordinator tcp://127.0.0.1:%d", port - 1);
  const char *want[] = {"coordinator not answering", "looks like the coordinator's PUB port",
                        lower, NULL};
  assert_true(worker_says(ep, want));
  zmq_close(pub);
  zmq_ctx_term(ctx);
}

static void test_nothing_listens(void **state) {
  (void)state;
  /* A port just found free and closed again: nothing listens there. */
  void *ctx = zmq_ctx_new();
  void *r = zmq_socket(ctx, ZMQ_ROUTER);
  int linger = 0;
  zmq_setsockopt(r, ZMQ_LINGER, &linger, sizeof linger);
  assert_int_equal(zmq_bind(r, "tcp://127.0.0.1:*"), 0);
  char ep[64], named[120];
  size_t n = sizeof ep;
  zmq_getsockopt(r, ZMQ_LAST_ENDPOINT, ep, &n);
  zmq_close(r);
  zmq_ctx_term(ctx);
  snprintf(named, sizeof named, "no connection to %s (nothing listens there", ep);
  const char *want[] = {"coordinator not answering", named, "the coordinator is not running",
                        NULL};
  assert_true(worker_says(ep, want));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_pub_port),
      cmocka_unit_test(test_nothing_listens),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
