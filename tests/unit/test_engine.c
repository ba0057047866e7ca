/*
 * test_engine.c: drives `xqz engine --net F` over two pipes as a Xiangqi GUI would, with a
 * tiny freshly initialised net: the UCI and UCCI handshakes, `isready`, legal bestmoves
 * (checked with our rules) for several positions including one with a single legal move
 * and a mated one, `stop` ending a long search quickly, malformed input answered with an
 * error line while the engine keeps working, and a clean `quit` (exit status 0, so the
 * sanitizers found no leak in the engine).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

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
  unlink(g_net);
  rmdir(g_dir);
  return 0;
}

static void eng_start(eng_t *e) {
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
    execl(XQZ, "xqz", "engine", "--net", g_net, "--seed", "7", (char *)NULL);
    _exit(127);
  }
  close(to[0]);
  close(from[1]);
  e->in = to[1];
  e->out = from[0];
  e->len = 0;
}

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

#define ONE_MOVE_FEN "5k3/9/9/9/2R6/9/9/9/r8/r3K4 w - - 0 1"  /* only c5c0 blocks the check */
#define MATED_FEN "5k3/9/9/9/9/9/9/9/r8/r3K4 w - - 0 1"       /* Red is checkmated */

static void test_uci_session(void **state) {
  (void)state;
  eng_t *e = calloc(1, sizeof *e);
  char line[512];
  eng_start(e);
  eng_send(e, "uci");
  eng_expect(e, "id name ", line, sizeof line, 10000);
  assert_non_null(strstr(line, "xqzero"));
  eng_expect(e, "option name UCI_Variant", NULL, 0, 5000);
  eng_expect(e, "uciok", NULL, 0, 5000);
  eng_send(e, "setoption name UCI_Variant value xiangqi");
  eng_send(e, "ucinewgame");
  eng_send(e, "isready");
  eng_expect(e, "readyok", line, sizeof line, 5000);

  check_bestmove(e, "startpos", "go nodes 50");
  check_bestmove(e, "startpos moves h2e2 h9g7 h0g2 i9h9", "go nodes 50");
  check_bestmove(e, "fen rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR b - - 0 1", "go depth 2");
  check_bestmove(e, "fen 4k4/4a4/9/9/9/9/9/9/9/3K1R3 w", "go nodes 20");
  /* The single legal move, however the limits are given. */
  char want[8];
  xq_move_t m = check_bestmove(e, "fen " ONE_MOVE_FEN, "go nodes 50");
  xq_move_print(m, want);
  assert_string_equal(want, "c5c0");
  m = check_bestmove(e, "fen " ONE_MOVE_FEN, "go wtime 1000 btime 1000 winc 10 binc 10");
  xq_move_print(m, want);
  assert_string_equal(want, "c5c0");

  /* The mated side has no move. */
  eng_send(e, "position fen " MATED_FEN);
  eng_send(e, "go nodes 50");
  eng_expect(e, "bestmove", line, sizeof line, 10000);
  assert_string_equal(line, "bestmove (none)");
  /* Mated after a move: Black plays the rook from a2 to a0. */
  eng_send(e, "position fen 5k3/9/9/9/9/9/9/r8/r8/4K4 b - - 0 1 moves a2a0");
  eng_send(e, "go nodes 50");
  eng_expect(e, "bestmove", line, sizeof line, 10000);
  assert_string_equal(line, "bestmove (none)");

  /* An info line with a score and a pv comes before the bestmove of a longer search. */
  eng_send(e, "position startpos");
  eng_send(e, "go nodes 200");
  eng_expect(e, "info depth ", line, sizeof line, 30000);
  assert_non_null(strstr(line, " score cp "));
  assert_non_null(strstr(line, " nodes "));
  assert_non_null(strstr(line, " pv "));
  eng_expect(e, "bestmove ", NULL, 0, 30000);
  eng_quit(e);
  free(e);
}

static void test_stop(void **state) {
  (void)state;
  eng_t *e = calloc(1, sizeof *e);
  eng_start(e);
  eng_send(e, "uci");
  eng_expect(e, "uciok", NULL, 0, 10000);
  /* A long movetime search cut short by stop. */
  eng_send(e, "position startpos");
  eng_send(e, "go movetime 20000");
  struct timespec ts = {0, 200 * 1000000};
  nanosleep(&ts, NULL);
  int64_t t0 = now_ms();
  eng_send(e, "stop");
  eng_expect(e, "bestmove ", NULL, 0, 5000);
  int64_t dt = now_ms() - t0;
  if (dt > 2000) fail_msg("stop took %lld ms", (long long)dt);
  /* go infinite only answers after stop; isready is answered meanwhile. */
  eng_send(e, "go infinite");
  eng_send(e, "isready");
  eng_expect(e, "readyok", NULL, 0, 5000);
  nanosleep(&ts, NULL);
  eng_send(e, "stop");
  eng_expect(e, "bestmove ", NULL, 0, 5000);
  /* A short movetime ends by itself. */
  t0 = now_ms();
  eng_send(e, "go movetime 200");
  eng_expect(e, "bestmove ", NULL, 0, 10000);
  dt = now_ms() - t0;
  if (dt > 5000) fail_msg("go movetime 200 took %lld ms", (long long)dt);
  /* quit in the middle of a search. */
  eng_send(e, "go infinite");
  eng_quit(e);
  free(e);
}

static void test_ucci_session(void **state) {
  (void)state;
  eng_t *e = calloc(1, sizeof *e);
  char line[512];
  eng_start(e);
  eng_send(e, "ucci");
  eng_expect(e, "id name ", NULL, 0, 10000);
  eng_expect(e, "ucciok", NULL, 0, 5000);
  eng_send(e, "setoption usemillisec true");
  eng_send(e, "setoption newgame");
  eng_send(e, "isready");
  eng_expect(e, "readyok", line, sizeof line, 5000);
  check_bestmove(e, "fen rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1 moves h2e2 h9g7",
                 "go nodes 40");
  check_bestmove(e, "startpos moves b2e2", "go time 5000 increment 0");
  eng_send(e, "position fen " MATED_FEN);
  eng_send(e, "go depth 3");
  eng_expect(e, "nobestmove", NULL, 0, 10000);
  eng_send(e, "quit");
  eng_expect(e, "bye", NULL, 0, 10000);
  eng_wait(e);
  free(e);
}

static void test_malformed(void **state) {
  (void)state;
  eng_t *e = calloc(1, sizeof *e);
  char line[512];
  eng_start(e);
  eng_send(e, "uci");
  eng_expect(e, "uciok", NULL, 0, 10000);
  eng_send(e, "position startpos moves h2e2");
  static const char *const bad[] = {
      "xyz", "position", "position fen", "position fen nonsense w", "position startpos moves h2e2 h2e2",
      "position startpos moves h0h9x", "go sideways", "go nodes", "go nodes -x",
      "setoption name NoSuchOption value 3", "setoption name UCI_Variant value chess", "\x01\x02\x7f",
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    eng_send(e, bad[i]);
    eng_expect(e, "info string error", line, sizeof line, 5000);
    eng_send(e, "isready");
    eng_expect(e, "readyok", NULL, 0, 5000);
  }
  eng_send(e, "xyz");
  eng_expect(e, "info string error: unknown command 'xyz'", NULL, 0, 5000);
  /* Lines far longer than any real command. */
  char *big = malloc(300000);
  memset(big, 'x', 299999);
  big[299999] = 0;
  eng_send(e, big);
  eng_expect(e, "info string error", NULL, 0, 5000);
  memcpy(big, "position startpos moves ", 24);
  for (size_t i = 24; i + 5 < 299999; i += 5) memcpy(big + i, "h2e2 ", 5);
  big[60000] = 0;
  eng_send(e, big);
  eng_expect(e, "info string error", NULL, 0, 5000);
  free(big);
  eng_send(e, "isready");
  eng_expect(e, "readyok", NULL, 0, 5000);
  /* The position is still the one before the errors: Black to move after h2e2. */
  eng_send(e, "go nodes 30");
  eng_expect(e, "bestmove ", line, sizeof line, 30000);
  xq_pos_t *pos = malloc(sizeof *pos);
  xq_errbuf_t eb = {{0}};
  xq_proto_position(pos, "startpos moves h2e2", &eb);
  xq_move_t m;
  char mv[8] = "";
  sscanf(line + 9, "%7s", mv);
  if (xq_move_parse_legal(pos, mv, &m, &eb)) fail_msg("%s: %s", line, eb.msg);
  free(pos);
  eng_quit(e);
  free(e);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_uci_session),
      cmocka_unit_test(test_stop),
      cmocka_unit_test(test_ucci_session),
      cmocka_unit_test(test_malformed),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
