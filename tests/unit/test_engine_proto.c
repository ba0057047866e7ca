/*
 * test_engine_proto.c: the UCI / UCCI text parser (search/engine_proto.h) without an
 * engine or a network: command words, `position` with FENs and moves (and that errors
 * leave the position alone), `go` limits in both protocols, the clock budget, setoption
 * in both spellings, the option table (lookups, advertised lines, bounds) and the
 * value-to-centipawn mapping.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "rules/fen.h"
#include "rules/movegen.h"
#include "rules/notation.h"
#include "search/engine_proto.h"
#include "test_helpers.h"

static void test_command_words(void **state) {
  (void)state;
  const char *args;
  assert_int_equal(xq_proto_command("uci", &args), XQ_CMD_UCI);
  assert_int_equal(xq_proto_command("ucci\r\n", &args), XQ_CMD_UCCI);
  assert_int_equal(xq_proto_command("  isready  ", &args), XQ_CMD_ISREADY);
  assert_int_equal(xq_proto_command("position startpos moves h2e2", &args), XQ_CMD_POSITION);
  assert_string_equal(args, "startpos moves h2e2");
  assert_int_equal(xq_proto_command("go nodes 5", &args), XQ_CMD_GO);
  assert_string_equal(args, "nodes 5");
  assert_int_equal(xq_proto_command("", &args), XQ_CMD_EMPTY);
  assert_int_equal(xq_proto_command(" \t ", &args), XQ_CMD_EMPTY);
  assert_int_equal(xq_proto_command("xyz", &args), XQ_CMD_UNKNOWN);
  assert_int_equal(xq_proto_command("ucinewgamex", &args), XQ_CMD_UNKNOWN);
  assert_int_equal(xq_proto_command("UCI", &args), XQ_CMD_UNKNOWN);
  assert_int_equal(xq_proto_command("quit", &args), XQ_CMD_QUIT);
  assert_int_equal(xq_proto_command("stop", &args), XQ_CMD_STOP);
}

static void test_position(void **state) {
  (void)state;
  xq_pos_t *pos = malloc(sizeof *pos), *ref = malloc(sizeof *ref);
  xq_errbuf_t eb = {{0}};
  char fen[XQ_FEN_MAX], want[XQ_FEN_MAX];

  assert_int_equal(xq_proto_position(pos, "startpos", &eb), 0);
  xq_fen_print(pos, fen);
  assert_string_equal(fen, XQ_START_FEN);

  assert_int_equal(xq_proto_position(pos, "startpos moves h2e2 h9g7", &eb), 0);
  xq_pos_startpos(ref);
  th_play(ref, "h2e2 h9g7");
  xq_fen_print(pos, fen);
  xq_fen_print(ref, want);
  assert_string_equal(fen, want);
  assert_int_equal(pos->ply, 2); /* the history is kept for repetition */

  const char *f = "5k3/9/9/9/2R6/9/9/9/r8/r3K4 w - - 0 1";
  char line[256];
  snprintf(line, sizeof line, "fen %s moves c5c0", f);
  assert_int_equal(xq_proto_position(pos, line, &eb), 0);
  assert_int_equal(pos->side, XQ_BLACK);
  snprintf(line, sizeof line, "fen %s", f);
  assert_int_equal(xq_proto_position(pos, line, &eb), 0);
  xq_fen_print(pos, fen);
  assert_string_equal(fen, f);

  /* Errors leave the position as it was and say why. */
  assert_int_equal(xq_proto_position(pos, "startpos moves h2e2 h2e2", &eb), XQ_EMOVE);
  assert_non_null(strstr(eb.msg, "h2e2"));
  assert_int_equal(xq_proto_position(pos, "startpos moves h2e", &eb), XQ_EMOVE);
  assert_int_equal(xq_proto_position(pos, "startpos moves z9z9", &eb), XQ_EMOVE);
  assert_int_equal(xq_proto_position(pos, "startpos junk", &eb), XQ_EMOVE);
  assert_int_equal(xq_proto_position(pos, "fen xyz w - - 0 1", &eb), XQ_EFEN);
  assert_int_equal(xq_proto_position(pos, "fen", &eb), XQ_EFEN);
  assert_int_equal(xq_proto_position(pos, "fen moves h2e2", &eb), XQ_EFEN);
  assert_int_equal(xq_proto_position(pos, "", &eb), XQ_EFEN);
  assert_int_equal(xq_proto_position(pos, "nonsense", &eb), XQ_EFEN);
  xq_fen_print(pos, fen);
  assert_string_equal(fen, f);

  /* A very long FEN and a very long move list are refused, not overrun. */
  char *big = malloc(200000);
  memset(big, 'r', 199999);
  memcpy(big, "fen ", 4);
  big[199999] = 0;
  assert_int_equal(xq_proto_position(pos, big, &eb), XQ_EFEN);
  size_t n = (size_t)snprintf(big, 200000, "startpos moves");
  for (int i = 0; i < 3000 && n + 11 < 200000; i++)
    n += (size_t)snprintf(big + n, 200000 - n, " %s", i % 4 == 0 ? "h2e2" : i % 4 == 1 ? "h9g7" : i % 4 == 2 ? "e2h2" : "g7h9");
  assert_int_equal(xq_proto_position(pos, big, &eb), XQ_EMOVE);
  xq_fen_print(pos, fen);
  assert_string_equal(fen, f);
  free(big);
  free(pos);
  free(ref);
}

static void test_go(void **state) {
  (void)state;
  xq_go_t go;
  xq_errbuf_t eb = {{0}};
  assert_int_equal(xq_proto_go("nodes 50", XQ_PROTO_UCI, XQ_RED, &go, &eb), 0);
  assert_int_equal(go.nodes, 50);
  assert_int_equal(go.movetime, -1);
  assert_int_equal(xq_proto_go("movetime 200 depth 3", XQ_PROTO_UCI, XQ_RED, &go, &eb), 0);
  assert_int_equal(go.movetime, 200);
  assert_int_equal(go.depth, 3);
  assert_int_equal(xq_proto_go("infinite", XQ_PROTO_UCI, XQ_RED, &go, &eb), 0);
  assert_true(go.infinite);
  assert_int_equal(
      xq_proto_go("wtime 60000 btime 50000 winc 1000 binc 500 movestogo 20", XQ_PROTO_UCI, XQ_BLACK, &go, &eb), 0);
  assert_int_equal(go.wtime, 60000);
  assert_int_equal(go.btime, 50000);
  assert_int_equal(go.binc, 500);
  assert_int_equal(go.movestogo, 20);
  /* UCCI: `time` and `increment` are the mover's clock. */
  assert_int_equal(xq_proto_go("time 30000 increment 2000 opptime 1000", XQ_PROTO_UCCI, XQ_BLACK, &go, &eb), 0);
  assert_int_equal(go.btime, 30000);
  assert_int_equal(go.binc, 2000);
  assert_int_equal(go.wtime, -1);
  assert_int_equal(xq_proto_go("draw depth 5", XQ_PROTO_UCCI, XQ_RED, &go, &eb), 0);
  assert_int_equal(go.depth, 5);
  /* Errors. */
  assert_int_equal(xq_proto_go("nodes", XQ_PROTO_UCI, XQ_RED, &go, &eb), XQ_EINVAL);
  assert_int_equal(xq_proto_go("nodes abc", XQ_PROTO_UCI, XQ_RED, &go, &eb), XQ_EINVAL);
  assert_int_equal(xq_proto_go("nodes 99999999999999999999999", XQ_PROTO_UCI, XQ_RED, &go, &eb), XQ_EINVAL);
  assert_int_equal(xq_proto_go("sideways 3", XQ_PROTO_UCI, XQ_RED, &go, &eb), XQ_EINVAL);
  assert_non_null(strstr(eb.msg, "sideways"));
  assert_int_equal(xq_proto_go("time 100", XQ_PROTO_UCI, XQ_RED, &go, &eb), XQ_EINVAL);
}

/* Issue 52: a bad limit is refused by name, never run as another search; searchmoves is
 * read, mate refused; negative clocks (a GUI flagging) still read as 0. */
static void test_go_bad_limits(void **state) {
  (void)state;
  xq_go_t go;
  static const struct {
    const char *args, *word;
  } bad[] = {{"movetime -5", "movetime -5"}, {"nodes 0", "nodes 0"},      {"depth 0", "depth 0"},
             {"depth -3", "depth -3"},       {"movestogo 0", "movestogo 0"}, {"nodes -1", "nodes -1"},
             {"movetime 0", "movetime 0"},   {"mate 3", "mate"},          {"searchmoves", "searchmoves"},
             {"searchmoves nodes 5", "searchmoves"}};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    xq_errbuf_t eb = {{0}};
    if (!xq_proto_go(bad[i].args, XQ_PROTO_UCI, XQ_RED, &go, &eb)) fail_msg("'go %s' accepted", bad[i].args);
    if (!strstr(eb.msg, bad[i].word)) fail_msg("'go %s': '%s' does not name '%s'", bad[i].args, eb.msg, bad[i].word);
  }
  xq_errbuf_t eb = {{0}};
  assert_int_equal(xq_proto_go("wtime -100 btime 5000 winc -5", XQ_PROTO_UCI, XQ_RED, &go, &eb), 0);
  assert_int_equal(go.wtime, 0);
  assert_int_equal(go.winc, 0);
  assert_int_equal(xq_proto_go("searchmoves h2e2 b0c2 nodes 30", XQ_PROTO_UCI, XQ_RED, &go, &eb), 0);
  assert_int_equal(go.nsearchmoves, 2);
  assert_int_equal(go.nodes, 30);
  char mv[8];
  xq_move_print(go.searchmoves[1], mv);
  assert_string_equal(mv, "b0c2");
  assert_int_equal(xq_proto_go("nodes 30 searchmoves h2e2", XQ_PROTO_UCI, XQ_RED, &go, &eb), 0);
  assert_int_equal(go.nsearchmoves, 1);
  /* MoveOverhead comes off movetime and the clock's budget, never below 1 ms. */
  assert_int_equal(xq_proto_go("movetime 1000", XQ_PROTO_UCI, XQ_RED, &go, &eb), 0);
  assert_int_equal(xq_proto_think_ms(&go, XQ_RED, 30), 970);
  assert_int_equal(xq_proto_think_ms(&go, XQ_RED, 5000), 1);
  assert_int_equal(xq_proto_go("wtime 60000 btime 60000", XQ_PROTO_UCI, XQ_RED, &go, &eb), 0);
  assert_int_equal(xq_proto_think_ms(&go, XQ_RED, 100), xq_proto_time_budget(&go, XQ_RED) - 100);
  assert_int_equal(xq_proto_go("infinite", XQ_PROTO_UCI, XQ_RED, &go, &eb), 0);
  assert_int_equal(xq_proto_think_ms(&go, XQ_RED, 30), 0);
  /* go depth N: a budget that grows with N and always ends. */
  assert_int_equal(xq_proto_depth_nodes(1), 32);
  assert_int_equal(xq_proto_depth_nodes(9), 8192);
  assert_true(xq_proto_depth_nodes(XQ_PROTO_DEPTH_MAX) == (int64_t)1 << 40);
  for (int d = 1; d < 60; d++) assert_true(xq_proto_depth_nodes(d + 1) >= xq_proto_depth_nodes(d));
}

static void test_time_budget(void **state) {
  (void)state;
  xq_go_t go;
  xq_errbuf_t eb = {{0}};
  xq_proto_go("wtime 60000 btime 30000 winc 1000", XQ_PROTO_UCI, XQ_RED, &go, &eb);
  assert_int_equal(xq_proto_time_budget(&go, XQ_RED), 60000 / 30 + 750);
  assert_int_equal(xq_proto_time_budget(&go, XQ_BLACK), 30000 / 30);
  xq_proto_go("wtime 10000 movestogo 1", XQ_PROTO_UCI, XQ_RED, &go, &eb);
  assert_int_equal(xq_proto_time_budget(&go, XQ_RED), 10000 - (50 + 500)); /* never the whole clock */
  xq_proto_go("wtime 300 movestogo 1", XQ_PROTO_UCI, XQ_RED, &go, &eb);
  assert_int_equal(xq_proto_time_budget(&go, XQ_RED), 300 - 30); /* margin: a tenth */
  xq_proto_go("wtime 20 winc 5000", XQ_PROTO_UCI, XQ_RED, &go, &eb);
  assert_true(xq_proto_time_budget(&go, XQ_RED) <= 20);
  assert_true(xq_proto_time_budget(&go, XQ_RED) >= 1);
  xq_proto_go("nodes 5", XQ_PROTO_UCI, XQ_RED, &go, &eb);
  assert_int_equal(xq_proto_time_budget(&go, XQ_RED), 0);
}

static void test_setoption(void **state) {
  (void)state;
  char name[16], value[16];
  xq_errbuf_t eb = {{0}};
  assert_int_equal(xq_proto_setoption("name UCI_Variant value xiangqi", name, sizeof name, value, sizeof value, &eb), 0);
  assert_string_equal(name, "UCI_Variant");
  assert_string_equal(value, "xiangqi");
  assert_int_equal(xq_proto_setoption("name Clear Hash", name, sizeof name, value, sizeof value, &eb), 0);
  assert_string_equal(name, "Clear Hash");
  assert_string_equal(value, "");
  assert_int_equal(xq_proto_setoption("usemillisec true", name, sizeof name, value, sizeof value, &eb), 0);
  assert_string_equal(name, "usemillisec");
  assert_string_equal(value, "true");
  assert_int_equal(xq_proto_setoption("name A_very_long_option_name value a_very_long_value_here",
                                      name, sizeof name, value, sizeof value, &eb), 0);
  assert_int_equal(strlen(name), sizeof name - 1);
  assert_int_equal(strlen(value), sizeof value - 1);
  assert_int_equal(xq_proto_setoption("", name, sizeof name, value, sizeof value, &eb), XQ_EINVAL);
  assert_int_equal(xq_proto_setoption("name", name, sizeof name, value, sizeof value, &eb), XQ_EINVAL);
}

/* The option table: lookups in any case and by UCCI alias, the advertised lines in both
 * protocols, and values checked against the bounds with messages naming them. */
static void test_options(void **state) {
  (void)state;
  assert_int_equal(xq_proto_option_find("Threads"), XQ_OPT_THREADS);
  assert_int_equal(xq_proto_option_find("threads"), XQ_OPT_THREADS);
  assert_int_equal(xq_proto_option_find("HASH"), XQ_OPT_HASH);
  assert_int_equal(xq_proto_option_find("hashsize"), XQ_OPT_HASH);
  assert_int_equal(xq_proto_option_find("weightsfile"), XQ_OPT_WEIGHTS_FILE);
  assert_int_equal(xq_proto_option_find("Hashes"), -1);
  char line[256];
  const xq_proto_option_t *hash = &xq_proto_options[XQ_OPT_HASH];
  assert_true(xq_proto_option_line(hash, XQ_PROTO_UCI, NULL, line, sizeof line));
  assert_string_equal(line, "option name Hash type spin default 256 min 1 max 65536");
  assert_true(xq_proto_option_line(hash, XQ_PROTO_UCCI, NULL, line, sizeof line));
  assert_string_equal(line, "option hashsize type spin min 1 max 65536 default 256");
  const xq_proto_option_t *wf = &xq_proto_options[XQ_OPT_WEIGHTS_FILE];
  assert_true(xq_proto_option_line(wf, XQ_PROTO_UCI, "nets/a.xqzn", line, sizeof line));
  assert_string_equal(line, "option name WeightsFile type string default nets/a.xqzn");
  assert_true(xq_proto_option_line(&xq_proto_options[XQ_OPT_VARIANT], XQ_PROTO_UCI, NULL, line, sizeof line));
  assert_string_equal(line, "option name UCI_Variant type combo default xiangqi var xiangqi");
  assert_false(xq_proto_option_line(&xq_proto_options[XQ_OPT_VARIANT], XQ_PROTO_UCCI, NULL, line, sizeof line));
  assert_false(xq_proto_option_line(&xq_proto_options[XQ_OPT_PROTOCOL], XQ_PROTO_UCI, NULL, line, sizeof line));
  assert_true(xq_proto_option_line(&xq_proto_options[XQ_OPT_NEWGAME], XQ_PROTO_UCCI, NULL, line, sizeof line));
  assert_string_equal(line, "option newgame type button");
  /* A tiny buffer is cut, never overrun. */
  char tiny[12];
  xq_proto_option_line(&xq_proto_options[XQ_OPT_SIMULATIONS], XQ_PROTO_UCI, NULL, tiny, sizeof tiny);
  assert_int_equal(strlen(tiny), sizeof tiny - 1);

  double v = -1;
  xq_errbuf_t eb = {{0}};
  assert_int_equal(xq_proto_option_number(hash, "256", &v, &eb), 0);
  assert_true(v == 256.0);
  assert_int_equal(xq_proto_option_number(hash, "65537", &v, &eb), XQ_ERANGE);
  assert_string_equal(eb.msg, "option Hash: '65537' is not a whole number from 1 to 65536 MB");
  assert_int_equal(xq_proto_option_number(hash, "", &v, &eb), XQ_ERANGE);
  assert_int_equal(xq_proto_option_number(hash, "2.5", &v, &eb), XQ_ERANGE);
  assert_int_equal(xq_proto_option_number(hash, "nan", &v, &eb), XQ_ERANGE);
  const xq_proto_option_t *temp = &xq_proto_options[XQ_OPT_TEMPERATURE];
  assert_int_equal(xq_proto_option_number(temp, "0.35", &v, &eb), 0);
  assert_true(v > 0.349 && v < 0.351);
  assert_int_equal(xq_proto_option_number(temp, "inf", &v, &eb), XQ_ERANGE);
  assert_string_equal(eb.msg, "option Temperature: 'inf' is not a number from 0 to 10");
  bool flag = false;
  assert_int_equal(xq_proto_option_check(&xq_proto_options[XQ_OPT_USEMILLISEC], "TRUE", &flag, &eb), 0);
  assert_true(flag);
  assert_int_equal(xq_proto_option_check(&xq_proto_options[XQ_OPT_USEMILLISEC], "yes", &flag, &eb), XQ_EINVAL);
}

static void test_value_to_cp(void **state) {
  (void)state;
  assert_int_equal(xq_proto_value_to_cp(0.0f), 0);
  int a = xq_proto_value_to_cp(0.5f), b = xq_proto_value_to_cp(-0.5f);
  assert_int_equal(a, -b);
  /* lc0's mapping: 111.714640912 * tan(1.5620688421 * 0.5) = 110.8... */
  assert_in_range(a, 109, 112);
  assert_int_equal(xq_proto_value_to_cp(1.0f), XQ_PROTO_CP_MAX);
  assert_int_equal(xq_proto_value_to_cp(-1.0f), -XQ_PROTO_CP_MAX);
  assert_int_equal(xq_proto_value_to_cp(5.0f), XQ_PROTO_CP_MAX);
  assert_true(xq_proto_value_to_cp(0.9f) > xq_proto_value_to_cp(0.8f));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_command_words), cmocka_unit_test(test_position),
      cmocka_unit_test(test_go), cmocka_unit_test(test_go_bad_limits),            cmocka_unit_test(test_time_budget),
      cmocka_unit_test(test_setoption),     cmocka_unit_test(test_value_to_cp),
      cmocka_unit_test(test_options),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
