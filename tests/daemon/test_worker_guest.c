/*
 * test_worker_guest.c: the worker as a guest on a lent machine (worker/guest.h, issue 49).
 * Pure parts: the --active window (wrapping midnight), /proc/stat and /proc/self/stat
 * parsing, the --idle-only hysteresis. The xqz-worker binary against a fake coordinator in
 * this process (ROUTER on a free loopback port; self-play jobs with no net, so the uniform
 * evaluator plays and no net is fetched): it runs at nice 19 with idle I/O priority by
 * default; SIGUSR1 pauses its games while heartbeats go on saying "paused (signal)", and
 * SIGUSR2 resumes them; --max-rss-mb below its size and an --active window that excludes
 * now keep it paused ("memory", "schedule") from the start, playing no game.
 */
#define _GNU_SOURCE /* syscall() */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guest.h"
#include "wire/wire.h"

#include "fake_coord.h"

/* ---- pure parts ---- */

static void test_active_window(void **state) {
  (void)state;
  xq_active_t a;
  xq_errbuf_t eb = {{0}};
  assert_int_equal(xq_active_parse(&a, "19:00-08:00", &eb), 0);
  assert_int_equal(a.from, 19 * 60);
  assert_int_equal(a.to, 8 * 60);
  assert_true(xq_active_in(&a, 23 * 60));
  assert_true(xq_active_in(&a, 0));
  assert_true(xq_active_in(&a, 7 * 60 + 59));
  assert_false(xq_active_in(&a, 8 * 60));
  assert_false(xq_active_in(&a, 12 * 60));
  assert_true(xq_active_in(&a, 19 * 60));
  assert_int_equal(xq_active_parse(&a, "09:30-17:00", &eb), 0);
  assert_true(xq_active_in(&a, 9 * 60 + 30));
  assert_false(xq_active_in(&a, 17 * 60));
  assert_false(xq_active_in(&a, 3 * 60));
  assert_int_equal(xq_active_parse(&a, "00:00-00:00", &eb), 0);
  assert_true(xq_active_in(&a, 600)); /* from == to: always */
  const char *bad[] = {"", "19:00", "25:00-08:00", "19:60-08:00", "19:00-08:00x", "7-8", "19:00 08:00"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    assert_int_equal(xq_active_parse(&a, bad[i], &eb), XQ_EINVAL);
    assert_non_null(strstr(eb.msg, "HH:MM-HH:MM"));
  }
}

static void test_cpu_parse(void **state) {
  (void)state;
  uint64_t busy = 0, self = 0;
  /* user nice system idle iowait irq softirq steal guest guest_nice */
  assert_int_equal(xq_cpu_parse_stat("cpu  100 20 30 5000 40 5 6 7 0 0\ncpu0 1 2 3 4\n", &busy), 0);
  assert_int_equal(busy, 100 + 20 + 30 + 5 + 6 + 7);
  assert_int_equal(xq_cpu_parse_stat("intr 1 2 3", &busy), XQ_EFORMAT);
  /* The command name may hold spaces and parentheses: fields count from the last ')'. */
  const char *st = "4242 (xqz (w) x) S 1 4242 4242 0 -1 4194560 100 0 0 0 1234 567 0 0 39 19 3";
  assert_int_equal(xq_cpu_parse_self(st, &self), 0);
  assert_int_equal(self, 1234 + 567);
  assert_int_equal(xq_cpu_parse_self("4242 xqz S", &self), XQ_EFORMAT);
  assert_int_equal(xq_cpu_sample(&busy, &self), 0); /* this machine's /proc reads */
  assert_true(xq_guest_rss_mb() > 0);
}

static void test_idle_hysteresis(void **state) {
  (void)state;
  xq_idle_t s = {.limit = 1.0};
  assert_false(xq_idle_step(&s, 0.5, 1000));
  assert_true(xq_idle_step(&s, 1.5, 3000));   /* someone compiles: pause at once */
  assert_true(xq_idle_step(&s, 0.9, 5000));   /* below the limit, not below 3/4 of it */
  assert_true(xq_idle_step(&s, 0.2, 7000));   /* quiet from here ... */
  assert_true(xq_idle_step(&s, 0.2, 7000 + XQ_IDLE_RESUME_MS - 1));
  assert_true(xq_idle_step(&s, 1.2, 7000 + XQ_IDLE_RESUME_MS)); /* a burst restarts it */
  int64_t t = 8000 + XQ_IDLE_RESUME_MS;
  assert_true(xq_idle_step(&s, 0.1, t));
  assert_true(xq_idle_step(&s, 0.1, t + XQ_IDLE_RESUME_MS - 1));
  assert_false(xq_idle_step(&s, 0.1, t + XQ_IDLE_RESUME_MS)); /* quiet long enough: resume */
  xq_idle_t off = {.limit = 0};
  assert_false(xq_idle_step(&off, 100.0, 1));
  assert_string_equal(xq_pause_reason(XQ_PAUSE_SCHEDULE | XQ_PAUSE_BUSY), "schedule");
  assert_string_equal(xq_pause_reason(0), "");
}

/* ---- the binary against a fake coordinator ---- */

typedef struct {
  fake_coord_t c;
  int games, hbs;
  int paused;          /* of the last heartbeat */
  char reason[32];     /* of the last heartbeat */
} fake_t;

/* Serves one message (or waits up to 50 ms): Welcome, cheap self-play jobs, acks. */
static void serve(fake_t *f) {
  uint8_t rid[256];
  size_t rid_len;
  Xqz__Envelope *in = fake_coord_recv(&f->c, rid, &rid_len);
  if (!in) return;
  Xqz__SelfplaySettings s = XQZ__SELFPLAY_SETTINGS__INIT;
  s.sims = 4;
  s.fast_sims = 2;
  s.full_frac = 0.5f;
  s.max_plies = 30;
  s.resign_threshold = -1;
  switch (in->body_case) {
    case XQZ__ENVELOPE__BODY_HELLO: fake_coord_welcome(&f->c, rid, rid_len, in, 0, &s, 200); break;
    case XQZ__ENVELOPE__BODY_JOB_REQUEST:
      fake_coord_selfplay(&f->c, rid, rid_len, in->request_id, 0, &s, 2);
      break;
    case XQZ__ENVELOPE__BODY_GAME:
      f->games++;
      fake_coord_ack(&f->c, rid, rid_len, in);
      break;
    case XQZ__ENVELOPE__BODY_HEARTBEAT:
      f->hbs++;
      f->paused = in->heartbeat->paused;
      snprintf(f->reason, sizeof f->reason, "%s",
               in->heartbeat->pause_reason ? in->heartbeat->pause_reason : "");
      break;
    default: break;
  }
  xq_wire_free(&in);
}

static void serve_cb(void *f) { serve(f); }

static void serve_for(fake_t *f, double s) {
  double t0 = fake_now_s();
  while (fake_now_s() - t0 < s) serve(f);
}

/* Serves until the last heartbeat says paused == want (with reason, when not NULL). */
static int serve_until_paused(fake_t *f, int want, const char *reason, double timeout_s) {
  double t0 = fake_now_s();
  while (fake_now_s() - t0 < timeout_s) {
    if (f->hbs && f->paused == want && (!reason || !strcmp(f->reason, reason))) return 1;
    serve(f);
  }
  return 0;
}

static int serve_until_games(fake_t *f, int n, double timeout_s) {
  double t0 = fake_now_s();
  while (fake_now_s() - t0 < timeout_s && f->games < n) serve(f);
  return f->games >= n;
}

static void fake_open(fake_t *f) {
  memset(f, 0, sizeof *f);
  fake_coord_open(&f->c, false);
}

static void fake_close(fake_t *f) { fake_coord_close(&f->c); }

/* Starts xqz-worker in dir against f with the extra options (NULL-terminated). */
static pid_t start_worker(const fake_t *f, const char *dir, const char **extra) {
  char logp[600];
  snprintf(logp, sizeof logp, "%s/worker.log", dir);
  const char *args[32] = {"--games-per-thread", "2", "--timeout", "3000"};
  int n = 4;
  for (int i = 0; extra && extra[i]; i++) args[n++] = extra[i];
  args[n] = NULL;
  return fake_worker_start(&f->c, dir, "guestw", logp, NULL, args);
}

static void stop_worker(fake_t *f, pid_t pid) {
  assert_int_equal(kill(pid, SIGTERM), 0);
  int status = 0;
  assert_true(fake_worker_wait(pid, 30, serve_cb, f, &status));
  assert_true(WIFEXITED(status));
  assert_int_equal(WEXITSTATUS(status), 0);
}

static int log_has(const char *dir, const char *what) {
  char p[600];
  snprintf(p, sizeof p, "%s/worker.log", dir);
  return fake_log_count(p, what, NULL) > 0;
}

/* The nice value (field 19 of /proc/PID/stat). */
static int nice_of(pid_t pid) {
  char p[64], buf[1024];
  snprintf(p, sizeof p, "/proc/%d/stat", (int)pid);
  FILE *fp = fopen(p, "r");
  assert_non_null(fp);
  size_t n = fread(buf, 1, sizeof buf - 1, fp);
  fclose(fp);
  buf[n] = 0;
  const char *q = strrchr(buf, ')');
  assert_non_null(q);
  int nice = -100;
  assert_int_equal(sscanf(q + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d"
                          " %*d %d", &nice), 1);
  return nice;
}

static void rm_rf(const char *dir) {
  char cmd[700];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  assert_int_equal(system(cmd), 0);
}

static void test_worker_priority_and_signals(void **state) {
  (void)state;
  char dir[] = "/tmp/xqz-test-guest-XXXXXX";
  assert_non_null(mkdtemp(dir));
  fake_t f;
  fake_open(&f);
  pid_t pid = start_worker(&f, dir, NULL);
  assert_true(serve_until_games(&f, 2, 60));
  /* The default: the lowest CPU priority and the idle I/O class, both logged. */
  assert_int_equal(nice_of(pid), 19);
  long io = syscall(SYS_ioprio_get, 1 /* IOPRIO_WHO_PROCESS */, pid);
  assert_int_equal(io >> 13, 3 /* IOPRIO_CLASS_IDLE */);
  assert_true(log_has(dir, "priority nice=19 io=idle"));
  assert_true(serve_until_paused(&f, 0, NULL, 10));

  /* SIGUSR1: heartbeats go on and say paused; no game is played once the running ones
   * are done. */
  assert_int_equal(kill(pid, SIGUSR1), 0);
  assert_true(serve_until_paused(&f, 1, "signal", 10));
  serve_for(&f, 3.0); /* the running games finish (30 plies at 4 simulations) */
  int games = f.games, hbs = f.hbs;
  serve_for(&f, 2.0);
  fprintf(stderr, "paused: %d games before, %d after 2 s; %d heartbeats meanwhile\n", games,
          f.games, f.hbs - hbs);
  assert_int_equal(f.games, games);
  assert_true(f.hbs - hbs >= 5); /* every 200 ms: the connection is kept */
  assert_true(f.paused);
  assert_true(log_has(dir, "pausing: no new games"));

  /* SIGUSR2: playing again. */
  assert_int_equal(kill(pid, SIGUSR2), 0);
  assert_true(serve_until_paused(&f, 0, "", 10));
  assert_true(serve_until_games(&f, games + 2, 60));
  assert_true(log_has(dir, "resuming after"));
  stop_worker(&f, pid);
  fake_close(&f);
  rm_rf(dir);
}

/* A worker that must not play now (memory above its cap, outside its window) is alive and
 * paused from the start, with the reason in its heartbeat, and plays no game. */
static void paused_from_start(const char **extra, const char *reason, const char *logged) {
  char dir[] = "/tmp/xqz-test-guest-XXXXXX";
  assert_non_null(mkdtemp(dir));
  fake_t f;
  fake_open(&f);
  pid_t pid = start_worker(&f, dir, extra);
  assert_true(serve_until_paused(&f, 1, reason, 15));
  serve_for(&f, 2.0);
  assert_int_equal(f.games, 0);
  assert_true(f.paused);
  assert_true(log_has(dir, logged));
  stop_worker(&f, pid);
  fake_close(&f);
  rm_rf(dir);
}

static void test_worker_memory_cap(void **state) {
  (void)state;
  const char *extra[] = {"--max-rss-mb", "1", NULL};
  paused_from_start(extra, "memory", "resident memory above --max-rss-mb");
}

static void test_worker_schedule(void **state) {
  (void)state;
  /* A one-hour window starting an hour from now excludes now. */
  int m = xq_active_minute_now();
  char win[32];
  int from = (m + 60) % 1440, to = (m + 120) % 1440;
  snprintf(win, sizeof win, "%02d:%02d-%02d:%02d", from / 60, from % 60, to / 60, to % 60);
  const char *extra[] = {"--active", win, "--nice", "19", NULL};
  paused_from_start(extra, "schedule", "reason=schedule");
}

/* Bad guest options are refused by name with exit status 2. */
static void test_worker_guest_options(void **state) {
  (void)state;
  const char *cases[][2] = {{"--nice", "20"}, {"--nice", "-1"}, {"--active", "19-8"},
                            {"--idle-only", "x"}, {"--cache-mb", "0"}, {"--max-rss-mb", "-5"}};
  char bin[600];
  snprintf(bin, sizeof bin, "%s/worker/xqz-worker", XQZ_BINARY_DIR);
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
      if (!freopen("/dev/null", "w", stderr)) _exit(127);
      execl(bin, bin, cases[i][0], cases[i][1], (char *)NULL);
      _exit(127);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 2);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_active_window),
      cmocka_unit_test(test_cpu_parse),
      cmocka_unit_test(test_idle_hysteresis),
      cmocka_unit_test(test_worker_guest_options),
      cmocka_unit_test(test_worker_priority_and_signals),
      cmocka_unit_test(test_worker_memory_cap),
      cmocka_unit_test(test_worker_schedule),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
