/*
 * engine_test_util.h: helpers of the tests that drive `xqz engine` over two pipes as a GUI
 * does (test_engine, test_engine_gui): a tiny fresh net made by `xqz net init` in a temp
 * directory (setup/teardown), starting the engine with extra arguments, sending lines,
 * reading lines with a timeout, waiting for a line with a given start, checking a bestmove
 * with our rules, and a clean exit. Include it once per test program, after cmocka.h.
 */
#ifndef XQZ_ENGINE_TEST_UTIL_H
#define XQZ_ENGINE_TEST_UTIL_H

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rules/movegen.h"
#include "rules/notation.h"
#include "search/engine_proto.h"

#define XQZ XQZ_BINARY_DIR "/tools/xqz"

static char g_dir[256];
static char g_net[300];

typedef struct {
  pid_t pid;
  int in;  /* we write the engine's stdin */
  int out; /* we read the engine's stdout */
  char buf[1 << 16];
  size_t len;
} eng_t;

static int64_t now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int setup(void **state) {
  (void)state;
  signal(SIGPIPE, SIG_IGN); /* an engine that died shows as a failed write, not a killed test */
  snprintf(g_dir, sizeof g_dir, "/tmp/xqz_test_engine_XXXXXX");
  if (!mkdtemp(g_dir)) return -1;
  snprintf(g_net, sizeof g_net, "%s/tiny.xqzn", g_dir);
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "'%s' net init --size tiny --seed 5 --out '%s' >/dev/null", XQZ, g_net);
  return system(cmd) == 0 ? 0 : -1;
}

static int teardown(void **state) {
  (void)state;
  char cmd[512];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir); /* the net and whatever a test made */
  return system(cmd) == 0 ? 0 : -1;
}

/* Starts `xqz engine --net g_net --seed 7` followed by extra (NULL-terminated, may be NULL). */
static void eng_start_args(eng_t *e, const char *const *extra) {
  int to[2], from[2];
  assert_int_equal(pipe(to), 0);
  assert_int_equal(pipe(from), 0);
  e->pid = fork();
  assert_true(e->pid >= 0);
  if (e->pid == 0) {
    dup2(to[0], 0);
    dup2(from[1], 1);
    close(to[0]);
    close(to[1]);
    close(from[0]);
    close(from[1]);
    const char *argv[32] = {"xqz", "engine", "--net", g_net, "--seed", "7"};
    int argc = 6;
    for (int i = 0; extra && extra[i] && argc < 31; i++) argv[argc++] = extra[i];
    argv[argc] = NULL;
    execv(XQZ, (char *const *)argv);
    _exit(127);
  }
  close(to[0]);
  close(from[1]);
  e->in = to[1];
  e->out = from[0];
  e->len = 0;
}

static void eng_start(eng_t *e) { eng_start_args(e, NULL); }

static void eng_send(eng_t *e, const char *line) {
  size_t n = strlen(line), off = 0;
  while (off < n) {
    ssize_t w = write(e->in, line + off, n - off);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) fail_msg("write to engine failed: %s", strerror(errno));
    off += (size_t)w;
  }
  if (write(e->in, "\n", 1) != 1) fail_msg("write to engine failed");
}

/* Reads one line within timeout_ms into line; returns 0, or -1 on timeout or EOF. */
static int eng_line(eng_t *e, char *line, size_t size, int timeout_ms) {
  int64_t end = now_ms() + timeout_ms;
  for (;;) {
    char *nl = memchr(e->buf, '\n', e->len);
    if (nl) {
      size_t n = (size_t)(nl - e->buf);
      size_t c = n < size - 1 ? n : size - 1;
      memcpy(line, e->buf, c);
      line[c] = 0;
      memmove(e->buf, nl + 1, e->len - n - 1);
      e->len -= n + 1;
      return 0;
    }
    int left = (int)(end - now_ms());
    if (left <= 0 || e->len == sizeof e->buf) return -1;
    struct pollfd p = {.fd = e->out, .events = POLLIN};
    int rc = poll(&p, 1, left);
    if (rc < 0 && errno == EINTR) continue;
    if (rc <= 0) return -1;
    ssize_t r = read(e->out, e->buf + e->len, sizeof e->buf - e->len);
    if (r <= 0) return -1;
    e->len += (size_t)r;
  }
}

/* Reads lines until one starts with prefix (copied into line); fails the test on timeout. */
static void eng_expect(eng_t *e, const char *prefix, char *line, size_t size, int timeout_ms) {
  char tmp[4096];
  for (;;) {
    if (eng_line(e, tmp, sizeof tmp, timeout_ms)) fail_msg("engine: no line starting with '%s'", prefix);
    if (!strncmp(tmp, prefix, strlen(prefix))) {
      if (line) { /* truncating copy: the callers' buffers are smaller than tmp */
        size_t k = strnlen(tmp, size - 1);
        memcpy(line, tmp, k);
        line[k] = '\0';
      }
      return;
    }
  }
}

/* A new engine (caller frees after eng_quit) past the UCI handshake: `uci` sent, `uciok`
 * read. */
static inline eng_t *eng_uci(void) {
  eng_t *e = calloc(1, sizeof *e);
  assert_non_null(e);
  eng_start(e);
  eng_send(e, "uci");
  eng_expect(e, "uciok", NULL, 0, 10000);
  return e;
}

/* Waits for the engine to exit and checks it exited with status 0. */
static void eng_wait(eng_t *e) {
  int status = 0;
  int64_t end = now_ms() + 20000;
  pid_t r;
  while ((r = waitpid(e->pid, &status, WNOHANG)) == 0 && now_ms() < end) {
    struct timespec ts = {0, 10 * 1000000};
    nanosleep(&ts, NULL);
  }
  close(e->in);
  close(e->out);
  if (r == 0) {
    kill(e->pid, SIGKILL);
    waitpid(e->pid, &status, 0);
    fail_msg("engine did not exit after quit");
  }
  assert_true(WIFEXITED(status));
  assert_int_equal(WEXITSTATUS(status), 0);
}

static void eng_quit(eng_t *e) {
  eng_send(e, "quit");
  eng_wait(e);
}

/* Sends position + go, and checks the bestmove is legal in that position. Returns it. */
static xq_move_t check_bestmove(eng_t *e, const char *position_args, const char *go) {
  char cmd[1024], line[256];
  snprintf(cmd, sizeof cmd, "position %s", position_args);
  eng_send(e, cmd);
  eng_send(e, go);
  eng_expect(e, "bestmove ", line, sizeof line, 30000);
  xq_pos_t *pos = malloc(sizeof *pos);
  xq_errbuf_t eb = {{0}};
  if (xq_proto_position(pos, position_args, &eb)) fail_msg("test position: %s", eb.msg);
  char mv[8] = "";
  sscanf(line + 9, "%7s", mv);
  xq_move_t m = 0;
  if (xq_move_parse_legal(pos, mv, &m, &eb))
    fail_msg("bestmove '%s' after 'position %s': %s", mv, position_args, eb.msg);
  free(pos);
  return m;
}

#endif
