/*
 * test_engine_gui.c: `xqz engine` driven over pipes the way a Xiangqi GUI or a referee
 * drives it (issue 21, items 1-3), with a tiny freshly initialised net:
 *   - a game our rules call over (threefold repetition, no attacking pieces) still gets a
 *     legal bestmove, checked with our move generator, and an `info string` saying what
 *     our rules think; only a position without a legal move answers `(none)`;
 *   - the UCI and UCCI handshakes advertise every option with its default and bounds, and
 *     the id carries the software version;
 *   - each option is applied (Threads, Hash, MultiPV, WeightsFile, Simulations,
 *     Temperature, and UCCI's hashsize/threads) and a bad value gets an error line naming
 *     the option and its bounds while the engine keeps working;
 *   - `go` with clocks answers well inside the clock, `go movetime` ends by itself;
 *   - `stop` in the middle of a search, `ponderhit` and `quit` (exit status 0).
 * Time bounds are generous (seconds), so a loaded machine does not fail them.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "engine_test_util.h"
#include "rules/rules.h"
#include "support/version.h"

#define REPEAT4 "b0c2 b9c7 c2b0 c7b9"
#define REPETITION_POS "startpos moves " REPEAT4 " " REPEAT4 " " REPEAT4
#define BARE_KINGS_POS "fen 3k5/9/9/9/9/9/9/9/9/4K4 w - - 0 1"
#define DEFENDERS_POS "fen 3ak4/4a4/9/9/9/9/9/9/4A4/2B1KA3 w - - 0 1" /* no attackers */
#define MATED_FEN "5k3/9/9/9/9/9/9/9/r8/r3K4 w - - 0 1"

/* Reads lines into all (newline-separated) until one starts with end; returns that line's
 * offset in all. Fails the test when no such line comes within timeout_ms. */
static size_t collect(eng_t *e, const char *end, char *all, size_t size, int timeout_ms) {
  size_t len = 0;
  char line[4096];
  all[0] = 0;
  int64_t deadline = now_ms() + timeout_ms;
  for (;;) {
    int left = (int)(deadline - now_ms());
    if (left <= 0 || eng_line(e, line, sizeof line, left))
      fail_msg("engine: no line starting with '%s'; got:\n%s", end, all);
    size_t at = len;
    int n = snprintf(all + len, size - len, "%s\n", line);
    if (n > 0) len += (size_t)n < size - len ? (size_t)n : size - len - 1;
    if (!strncmp(line, end, strlen(end))) return at;
  }
}

/* isready, then checks that nothing before readyok was an error line. */
static void expect_clean(eng_t *e, const char *what) {
  char all[1 << 14];
  eng_send(e, "isready");
  collect(e, "readyok", all, sizeof all, 10000);
  if (strstr(all, "info string error")) fail_msg("%s: unexpected error:\n%s", what, all);
}

/* Sends cmd and checks it is answered by an error line holding every one of the words
 * (NULL-terminated), then that the engine still answers isready. */
static void expect_error(eng_t *e, const char *cmd, ...) {
  char line[4096];
  eng_send(e, cmd);
  eng_expect(e, "info string error", line, sizeof line, 10000);
  va_list ap;
  va_start(ap, cmd);
  const char *w;
  while ((w = va_arg(ap, const char *)))
    if (!strstr(line, w)) fail_msg("'%s' answered '%s': '%s' missing", cmd, line, w);
  va_end(ap);
  eng_send(e, "isready");
  eng_expect(e, "readyok", NULL, 0, 10000);
}

/* The move that follows "bestmove " at all + at, checked legal after `position pos_args`. */
static xq_move_t legal_bestmove(const char *all, size_t at, const char *pos_args) {
  char mv[8] = "";
  if (strncmp(all + at, "bestmove ", 9)) fail_msg("not a bestmove: %s", all + at);
  sscanf(all + at + 9, "%7s", mv);
  xq_pos_t *pos = malloc(sizeof *pos);
  xq_errbuf_t eb = {{0}};
  if (xq_proto_position(pos, pos_args, &eb)) fail_msg("test position '%s': %s", pos_args, eb.msg);
  xq_move_t m = 0;
  if (xq_move_parse_legal(pos, mv, &m, &eb))
    fail_msg("bestmove '%s' after 'position %s' is not legal: %s\n%s", mv, pos_args, eb.msg, all);
  free(pos);
  return m;
}

/* Our rules call pos_args finished with reason, and the position has a legal move. */
static void assert_over_by_rules(const char *pos_args, xq_reason_t reason) {
  xq_pos_t *pos = malloc(sizeof *pos);
  xq_errbuf_t eb = {{0}};
  if (xq_proto_position(pos, pos_args, &eb)) fail_msg("%s: %s", pos_args, eb.msg);
  xq_outcome_t o = xq_adjudicate(pos, 0);
  assert_int_equal(o.reason, reason);
  xq_move_t moves[XQ_MAX_MOVES];
  assert_true(xq_gen_legal(pos, moves) > 0);
  free(pos);
}

/* position + go; returns the offset of the bestmove line in all. */
static size_t search(eng_t *e, const char *pos_args, const char *go, char *all, size_t size) {
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "position %s", pos_args);
  eng_send(e, cmd);
  eng_send(e, go);
  return collect(e, "bestmove", all, size, 60000);
}

/* The nodes count of the last info line in all, -1 if none. */
static long last_nodes(const char *all) {
  long nodes = -1;
  for (const char *p = all; (p = strstr(p, " nodes ")); p++) nodes = strtol(p + 7, NULL, 10);
  return nodes;
}

static void test_plays_on_when_our_rules_end_the_game(void **state) {
  (void)state;
  assert_over_by_rules(REPETITION_POS, XQ_REASON_REPETITION);
  assert_over_by_rules(BARE_KINGS_POS, XQ_REASON_NO_ATTACKERS);
  assert_over_by_rules(DEFENDERS_POS, XQ_REASON_NO_ATTACKERS);
  static char all[1 << 16];
  eng_t *e = eng_uci();
  static const struct {
    const char *pos, *reason;
  } cases[] = {{REPETITION_POS, "(repetition)"},
               {BARE_KINGS_POS, "(no-attackers)"},
               {DEFENDERS_POS, "(no-attackers)"}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    size_t at = search(e, cases[i].pos, "go nodes 50", all, sizeof all);
    legal_bestmove(all, at, cases[i].pos);
    if (!strstr(all, "info string game over by our rules") || !strstr(all, cases[i].reason))
      fail_msg("no adjudication info line for %s:\n%s", cases[i].pos, all);
  }
  /* With a clock too, and in UCCI: a move, never nobestmove. */
  size_t at = search(e, REPETITION_POS, "go wtime 2000 btime 2000", all, sizeof all);
  legal_bestmove(all, at, REPETITION_POS);
  eng_send(e, "ucci");
  eng_expect(e, "ucciok", NULL, 0, 10000);
  at = search(e, REPETITION_POS, "go time 2000 increment 0", all, sizeof all);
  legal_bestmove(all, at, REPETITION_POS);
  /* Only a position with no legal move has no move to give. */
  eng_send(e, "uci");
  eng_expect(e, "uciok", NULL, 0, 10000);
  at = search(e, "fen " MATED_FEN, "go nodes 50", all, sizeof all);
  assert_string_equal(all + at, "bestmove (none)\n");
  eng_quit(e);
  free(e);
}

/* Every line of want[] (NULL-terminated) appears, whole, among the lines of all. */
static void assert_lines(const char *all, const char *const *want) {
  char line[1024];
  for (int i = 0; want[i]; i++) {
    snprintf(line, sizeof line, "\n%s\n", want[i]);
    if (strncmp(all, line + 1, strlen(line + 1)) && !strstr(all, line))
      fail_msg("handshake lacks '%s':\n%s", want[i], all);
  }
}

static void test_handshakes(void **state) {
  (void)state;
  static char all[1 << 14];
  char net_line[512];
  eng_t *e = calloc(1, sizeof *e);
  /* --precision sets the Precision option at start, and its advertised default. */
  eng_start_args(e, (const char *const[]){"--precision", "fp32", NULL});
  eng_send(e, "uci");
  collect(e, "uciok", all, sizeof all, 10000);
  snprintf(net_line, sizeof net_line, "option name WeightsFile type string default %s", g_net);
  const char *const uci[] = {
      "id name xqzero " XQ_SOFTWARE_VERSION,
      "id author the xqzero authors",
      "option name Threads type spin default 1 min 1 max 64",
      "option name Hash type spin default 256 min 1 max 65536",
      "option name MultiPV type spin default 1 min 1 max 128",
      net_line,
      "option name Simulations type spin default 800 min 1 max 100000000",
      "option name Temperature type string default 0",
      "option name UCI_Variant type combo default xiangqi var xiangqi",
      "option name Ponder type check default false",
      "option name MoveOverhead type spin default 30 min 0 max 5000",
      "option name Precision type combo default fp32 var auto var fp32 var bf16",
      "uciok",
      NULL};
  assert_lines(all, uci);
  eng_send(e, "ucci");
  collect(e, "ucciok", all, sizeof all, 10000);
  snprintf(net_line, sizeof net_line, "option WeightsFile type string default %s", g_net);
  const char *const ucci[] = {
      "id name xqzero " XQ_SOFTWARE_VERSION,
      "option threads type spin min 1 max 64 default 1",
      "option hashsize type spin min 1 max 65536 default 256",
      "option MultiPV type spin min 1 max 128 default 1",
      net_line,
      "option usemillisec type check default true",
      "option newgame type button",
      "option Precision type combo var auto var fp32 var bf16 default fp32",
      "ucciok",
      NULL};
  assert_lines(all, ucci);
  if (strstr(all, "UCI_Variant")) fail_msg("UCCI handshake advertises UCI_Variant:\n%s", all);
  eng_send(e, "quit");
  eng_expect(e, "bye", NULL, 0, 10000);
  eng_wait(e);
  free(e);
}

static void test_bad_option_values(void **state) {
  (void)state;
  eng_t *e = eng_uci();
  expect_error(e, "setoption name Threads value 0", "Threads", "1 to 64", NULL);
  expect_error(e, "setoption name Threads value 65", "Threads", "1 to 64", NULL);
  expect_error(e, "setoption name Threads value two", "Threads", "1 to 64", NULL);
  expect_error(e, "setoption name Hash value 0", "Hash", "1 to 65536 MB", NULL);
  expect_error(e, "setoption name Hash value 1.5", "Hash", "1 to 65536 MB", NULL);
  expect_error(e, "setoption name MoveOverhead value -1", "MoveOverhead", "0 to 5000 ms", NULL);
  expect_error(e, "setoption name MultiPV value 0", "MultiPV", "1 to 128", NULL);
  expect_error(e, "setoption name MultiPV value 129", "MultiPV", "1 to 128", NULL);
  expect_error(e, "setoption name Simulations value 0", "Simulations", "1 to 100000000", NULL);
  expect_error(e, "setoption name Temperature value 11", "Temperature", "0 to 10", NULL);
  expect_error(e, "setoption name Temperature value -0.5", "Temperature", "0 to 10", NULL);
  expect_error(e, "setoption name Temperature value hot", "Temperature", "0 to 10", NULL);
  expect_error(e, "setoption name Threads", "Threads", "1 to 64", NULL); /* no value */
  expect_error(e, "setoption name Ponder value maybe", "Ponder", "true or false", NULL);
  expect_error(e, "setoption name Precision value fp16", "Precision", "auto, fp32 or bf16",
               "keeping", NULL);
  char cmd[1024], missing[600], junk[600];
  snprintf(missing, sizeof missing, "%s/no-such.xqzn", g_dir);
  snprintf(cmd, sizeof cmd, "setoption name WeightsFile value %s", missing);
  expect_error(e, cmd, "WeightsFile", missing, "keeping", g_net, NULL);
  snprintf(junk, sizeof junk, "%s/junk.xqzn", g_dir);
  FILE *f = fopen(junk, "w");
  assert_non_null(f);
  fputs("not a net\n", f);
  fclose(f);
  snprintf(cmd, sizeof cmd, "setoption name WeightsFile value %s", junk);
  expect_error(e, cmd, "WeightsFile", junk, "keeping", g_net, NULL);
  /* After all that the engine plays with the old net and settings. */
  static char all[1 << 16];
  size_t at = search(e, "startpos", "go nodes 40", all, sizeof all);
  legal_bestmove(all, at, "startpos");
  assert_int_equal(last_nodes(all), 40);
  if (strstr(all, "multipv")) fail_msg("MultiPV changed by a refused value:\n%s", all);
  eng_quit(e);
  free(e);
}

static void test_options_applied(void **state) {
  (void)state;
  static char all[1 << 16];
  eng_t *e = eng_uci();

  /* Threads: several search threads share the tree; the node limit holds exactly. */
  eng_send(e, "setoption name Threads value 3");
  expect_clean(e, "Threads 3");
  size_t at = search(e, "startpos moves h2e2", "go nodes 120", all, sizeof all);
  legal_bestmove(all, at, "startpos moves h2e2");
  assert_int_equal(last_nodes(all), 120);

  /* Hash sizes the tree's node pool: hashfull (per mille of the pool) is far higher for
   * the same search with 1 MB than with the default. */
  search(e, "startpos", "go nodes 30", all, sizeof all);
  const char *hf = strstr(all, " hashfull ");
  if (!hf) fail_msg("no hashfull:\n%s", all);
  int full_default = atoi(hf + 10);
  eng_send(e, "setoption name Hash value 1");
  expect_clean(e, "Hash 1");
  search(e, "startpos", "go nodes 30", all, sizeof all);
  hf = strstr(all, " hashfull ");
  if (!hf) fail_msg("Hash 1: no hashfull:\n%s", all);
  if (atoi(hf + 10) <= full_default) fail_msg("Hash 1 does not fill faster than the default:\n%s", all);

  /* MultiPV: one info line per root move asked for, each a different legal move. */
  eng_send(e, "setoption name Threads value 1");
  eng_send(e, "setoption name MultiPV value 3");
  expect_clean(e, "MultiPV 3");
  at = search(e, "startpos", "go nodes 100", all, sizeof all);
  char first[3][8] = {"", "", ""};
  for (int k = 1; k <= 3; k++) {
    char key[32];
    snprintf(key, sizeof key, " multipv %d ", k);
    const char *p = NULL, *q = all;
    while ((q = strstr(q, key))) p = q++; /* the last slice's line */
    if (!p) fail_msg("no '%s' line:\n%s", key, all);
    const char *pv = strstr(p, " pv ");
    assert_non_null(pv);
    sscanf(pv + 4, "%7s", first[k - 1]);
    /* Each line's move is legal at the root. */
    char fake[64];
    snprintf(fake, sizeof fake, "bestmove %s\n", first[k - 1]);
    legal_bestmove(fake, 0, "startpos");
  }
  assert_string_not_equal(first[0], first[1]);
  assert_string_not_equal(first[1], first[2]);
  assert_string_not_equal(first[0], first[2]);
  eng_send(e, "setoption name MultiPV value 1");

  /* Precision: the nets are rebuilt in the arithmetic asked for, said in an info string;
   * bf16 on a CPU without avx512_bf16 falls back to fp32 and says so (there the rebuild is
   * not exercised: every value resolves to the fp32 the engine already runs). */
  char pline[512];
  eng_send(e, "setoption name Precision value fp32");
  eng_expect(e, "info string precision=", pline, sizeof pline, 10000);
  assert_string_equal(pline, "info string precision=fp32 (fp32 asked for)");
  eng_send(e, "setoption name Precision value bf16");
  eng_expect(e, "info string precision=", pline, sizeof pline, 10000);
  if (strcmp(pline, "info string precision=bf16 (bf16 asked for)") &&
      strcmp(pline, "info string precision=fp32 (bf16 asked for, but the CPU lacks avx512_bf16: fp32)"))
    fail_msg("Precision bf16: %s", pline);
  at = search(e, "startpos", "go nodes 30", all, sizeof all);
  legal_bestmove(all, at, "startpos");
  assert_int_equal(last_nodes(all), 30);
  eng_send(e, "setoption name Precision value auto");
  eng_expect(e, "info string precision=", pline, sizeof pline, 10000);
  if (!strstr(pline, "(auto: the CPU ")) fail_msg("Precision auto: %s", pline);

  /* Simulations: the size of a `go` without limits. */
  eng_send(e, "setoption name Simulations value 30");
  expect_clean(e, "Simulations 30");
  at = search(e, "startpos", "go", all, sizeof all);
  legal_bestmove(all, at, "startpos");
  assert_int_equal(last_nodes(all), 30);

  /* Temperature: 0 plays the most visited move every time; a high one varies. (Each
   * search starts from an empty tree: a `go` on the position searched last goes on in its
   * tree.) */
  char moves[6][16];
  for (int i = 0; i < 6; i++) {
    eng_send(e, "ucinewgame");
    at = search(e, "startpos", "go nodes 60", all, sizeof all);
    sscanf(all + at, "bestmove %15s", moves[i]);
    if (i) assert_string_equal(moves[i], moves[0]);
  }
  eng_send(e, "setoption name Temperature value 10");
  expect_clean(e, "Temperature 10");
  int distinct = 1;
  for (int i = 0; i < 6; i++) {
    eng_send(e, "ucinewgame");
    at = search(e, "startpos", "go nodes 60", all, sizeof all);
    legal_bestmove(all, at, "startpos");
    sscanf(all + at, "bestmove %15s", moves[i]);
    bool seen = false;
    for (int j = 0; j < i; j++) seen = seen || !strcmp(moves[j], moves[i]);
    if (i && !seen) distinct++;
  }
  if (distinct < 2) fail_msg("Temperature 10 played %s six times", moves[0]);
  eng_send(e, "setoption name Temperature value 0");

  /* WeightsFile: another net is loaded and played with. */
  char other[600], cmd[1024], line[1024];
  snprintf(other, sizeof other, "%s/other.xqzn", g_dir);
  snprintf(cmd, sizeof cmd, "'%s' net init --size tiny --seed 6 --out '%s' >/dev/null", XQZ, other);
  assert_int_equal(system(cmd), 0);
  snprintf(cmd, sizeof cmd, "setoption name WeightsFile value %s", other);
  eng_send(e, cmd);
  eng_expect(e, "info string loaded ", line, sizeof line, 20000);
  assert_non_null(strstr(line, other));
  expect_clean(e, "WeightsFile");
  at = search(e, "startpos moves h2e2", "go nodes 30", all, sizeof all);
  legal_bestmove(all, at, "startpos moves h2e2");

  /* UCCI's spellings of the same options. */
  eng_send(e, "ucci");
  eng_expect(e, "ucciok", NULL, 0, 10000);
  eng_send(e, "setoption hashsize 2");
  eng_send(e, "setoption threads 2");
  eng_send(e, "setoption usemillisec true");
  expect_clean(e, "UCCI options");
  at = search(e, "startpos", "go nodes 40", all, sizeof all);
  legal_bestmove(all, at, "startpos");
  assert_int_equal(last_nodes(all), 40);
  check_bestmove(e, "startpos moves h2e2 h9g7", "go depth 2");
  eng_send(e, "quit");
  eng_expect(e, "bye", NULL, 0, 10000);
  eng_wait(e);
  free(e);
}

/* position + go, timed: the bestmove must come before limit_ms (the clock the GUI gave). */
static void timed_go(eng_t *e, const char *pos_args, const char *go, int64_t limit_ms) {
  static char all[1 << 16];
  int64_t t0 = now_ms();
  size_t at = search(e, pos_args, go, all, sizeof all);
  int64_t dt = now_ms() - t0;
  legal_bestmove(all, at, pos_args);
  if (dt >= limit_ms) fail_msg("'%s' answered after %lld ms (clock %lld ms)", go, (long long)dt, (long long)limit_ms);
}

static void test_clocks(void **state) {
  (void)state;
  eng_t *e = eng_uci();
  /* Each budget is a small part of the clock (remaining / 30 or / movestogo, plus 3/4 of
   * the increment: 100 to 375 ms here), so the answer must come long before the flag
   * falls; the bound is the clock itself, many times the budget, so a loaded machine does
   * not fail it. */
  timed_go(e, "startpos", "go wtime 3000 btime 3000", 3000);
  timed_go(e, "startpos moves h2e2", "go wtime 3000 btime 3000 winc 0 binc 0", 3000);
  timed_go(e, "startpos", "go wtime 6000 btime 9000 winc 100 binc 100", 6000);
  timed_go(e, "startpos", "go wtime 8000 btime 8000 movestogo 20", 8000);
  timed_go(e, "startpos", "go wtime 200 btime 200", 200 + 3000); /* a nearly flagged clock */
  timed_go(e, "startpos", "go movetime 300", 3000);
  eng_send(e, "ucci");
  eng_expect(e, "ucciok", NULL, 0, 10000);
  timed_go(e, "startpos moves h2e2", "go time 3000 increment 0 opptime 3000", 3000);
  timed_go(e, "startpos", "go time 6000 movestogo 20 increment 100", 6000);
  eng_send(e, "quit");
  eng_expect(e, "bye", NULL, 0, 10000);
  eng_wait(e);
  free(e);
}

/* Reads what the engine says within ms; fails if it includes a bestmove. */
static void expect_no_bestmove(eng_t *e, int ms) {
  char line[4096];
  int64_t end = now_ms() + ms;
  int left;
  while ((left = (int)(end - now_ms())) > 0)
    if (!eng_line(e, line, sizeof line, left) && !strncmp(line, "bestmove", 8))
      fail_msg("'%s' before stop or ponderhit", line);
}

/* stop must end a search that would otherwise run for a minute or forever; the bound is
 * generous for a loaded machine. */
#define STOP_BOUND_MS 4000

static void test_stop_ponderhit_quit(void **state) {
  (void)state;
  static char all[1 << 16];
  eng_t *e = eng_uci();

  /* stop in the middle of an infinite search and of a long movetime. */
  eng_send(e, "position startpos");
  eng_send(e, "go infinite");
  expect_no_bestmove(e, 400);
  int64_t t0 = now_ms();
  eng_send(e, "stop");
  size_t at = collect(e, "bestmove", all, sizeof all, 5000);
  legal_bestmove(all, at, "startpos");
  if (now_ms() - t0 > STOP_BOUND_MS) fail_msg("bestmove came %lld ms after stop", (long long)(now_ms() - t0));
  eng_send(e, "go movetime 60000");
  expect_no_bestmove(e, 300);
  t0 = now_ms();
  eng_send(e, "stop");
  collect(e, "bestmove", all, sizeof all, 5000);
  if (now_ms() - t0 > STOP_BOUND_MS) fail_msg("bestmove came %lld ms after stop", (long long)(now_ms() - t0));

  /* ponder: no bestmove while pondering; ponderhit starts the clock and the move comes. */
  eng_send(e, "setoption name Ponder value true");
  expect_clean(e, "Ponder true");
  const char *pos = "startpos moves h2e2 h9g7";
  eng_send(e, "position startpos moves h2e2 h9g7");
  eng_send(e, "go ponder wtime 3000 btime 3000");
  expect_no_bestmove(e, 500);
  t0 = now_ms();
  eng_send(e, "ponderhit");
  at = collect(e, "bestmove", all, sizeof all, 5000);
  legal_bestmove(all, at, pos);
  if (now_ms() - t0 >= 3000) fail_msg("bestmove %lld ms after ponderhit (clock 3000)", (long long)(now_ms() - t0));
  /* A ponder miss: the GUI stops the ponder search and gets its bestmove. */
  eng_send(e, "go ponder wtime 3000 btime 3000");
  expect_no_bestmove(e, 300);
  t0 = now_ms();
  eng_send(e, "stop");
  collect(e, "bestmove", all, sizeof all, 5000);
  if (now_ms() - t0 > STOP_BOUND_MS) fail_msg("bestmove came %lld ms after stop", (long long)(now_ms() - t0));

  /* stop with several threads searching. */
  eng_send(e, "setoption name Threads value 2");
  eng_send(e, "go infinite");
  expect_no_bestmove(e, 300);
  t0 = now_ms();
  eng_send(e, "stop");
  at = collect(e, "bestmove", all, sizeof all, 5000);
  legal_bestmove(all, at, pos);
  if (now_ms() - t0 > STOP_BOUND_MS) fail_msg("bestmove came %lld ms after stop", (long long)(now_ms() - t0));

  /* quit in the middle of a search: exit status 0 (and no leak under the sanitizers). */
  eng_send(e, "go infinite");
  expect_no_bestmove(e, 200);
  eng_quit(e);
  free(e);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_plays_on_when_our_rules_end_the_game),
      cmocka_unit_test(test_handshakes),
      cmocka_unit_test(test_bad_option_values),
      cmocka_unit_test(test_options_applied),
      cmocka_unit_test(test_clocks),
      cmocka_unit_test(test_stop_ponderhit_quit),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
