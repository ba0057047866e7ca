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

#include "engine_test_util.h"

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
