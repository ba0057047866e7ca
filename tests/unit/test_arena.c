/*
 * test_arena.c: players and matches. alphabeta:3 must beat random and greedy (a real
 * check of the search, the players and the arena), random games must end with a valid
 * reason, the uci player against /usr/games/fairy-stockfish must play only legal moves
 * (xq_arena_game checks every move with our rules), and bad specs and openings must be
 * rejected with a useful message.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "search/arena.h"
#include "test_helpers.h"

#define FAIRY "/usr/games/fairy-stockfish"

typedef struct {
  int games, bad;
} seen_t;

static void check_game(void *ctx, int64_t game, bool a_red, xq_outcome_t out, int plies,
                       const xq_arena_stats_t *st) {
  (void)a_red;
  seen_t *s = ctx;
  s->games++;
  if (out.result == XQ_RESULT_NONE || out.reason == XQ_REASON_NONE ||
      out.reason == XQ_REASON_RESIGN || plies < 0 || st->games != game + 1 ||
      st->wins + st->draws + st->losses != st->games)
    s->bad++;
}

/* Plays a match between two specs and returns A's score. */
static double match(const char *a_spec, const char *b_spec, int games, int max_plies,
                    xq_arena_stats_t *st) {
  xq_errbuf_t eb = {{0}};
  xq_player_t *a = NULL, *b = NULL;
  if (xq_player_new(&a, a_spec, 11, &eb)) fail_msg("%s: %s", a_spec, eb.msg);
  if (xq_player_new(&b, b_spec, 12, &eb)) fail_msg("%s: %s", b_spec, eb.msg);
  xq_openings_t op;
  assert_int_equal(xq_openings_load(&op, NULL, &eb), 0);
  seen_t seen = {0, 0};
  xq_arena_config_t cfg = {.games = games, .max_plies = max_plies, .seed = 5,
                           .on_game = check_game, .ctx = &seen};
  int rc = xq_arena_run(&cfg, a, b, &op, st, &eb);
  if (rc) fail_msg("%s vs %s: %s", a_spec, b_spec, eb.msg);
  assert_int_equal(seen.games, games);
  assert_int_equal(seen.bad, 0);
  assert_int_equal(st->games, games);
  int64_t by_reason = 0;
  for (int r = 0; r <= XQ_REASON_RESIGN; r++) by_reason += st->reasons[r];
  assert_int_equal(by_reason, games);
  xq_openings_close(&op);
  xq_player_free(&a);
  xq_player_free(&b);
  assert_null(a);
  return (st->wins + 0.5 * st->draws) / (double)st->games;
}

static void test_alphabeta_beats_baselines(void **state) {
  (void)state;
  static const char *const weak[] = {"random", "greedy"};
  for (int i = 0; i < 2; i++) {
    xq_arena_stats_t st;
    double s = match("alphabeta:3", weak[i], 8, 200, &st);
    if (!(s > 0.75))
      fail_msg("alphabeta:3 vs %s scored %.3f (+%lld =%lld -%lld), want > 0.75", weak[i], s,
               (long long)st.wins, (long long)st.draws, (long long)st.losses);
  }
}

static void test_random_games_end_properly(void **state) {
  (void)state;
  xq_arena_stats_t st;
  match("random", "random", 6, 300, &st); /* check_game validates every outcome */
  int64_t pairs = 0;
  for (int k = 0; k < 5; k++) pairs += st.pairs[k];
  assert_int_equal(pairs, 3);
  match("greedy", "random", 3, 100, &st); /* an odd count: the last game has no pair */
  pairs = 0;
  for (int k = 0; k < 5; k++) pairs += st.pairs[k];
  assert_int_equal(pairs, 1);
}

static void test_uci_fairy_stockfish(void **state) {
  (void)state;
  if (access(FAIRY, X_OK))
    fail_msg(FAIRY " is missing: run scripts/bootstrap.sh (it installs fairy-stockfish)");
  xq_arena_stats_t st;
  /* Every engine move is parsed and checked for legality by the uci player and again by
   * xq_arena_game; an illegal move or a rank off by one (UCI 1-10 vs ICCS 0-9) fails. */
  match("uci:" FAIRY ":depth=1", "alphabeta:1", 2, 120, &st);
  match("random", "uci:" FAIRY ":nodes=200", 2, 80, &st);
}

static void test_bad_specs(void **state) {
  (void)state;
  static const char *const bad[] = {"", "randomx", "alphabeta", "alphabeta:0", "alphabeta:x",
                                    "alphabeta:99", "uci:", "uci:" FAIRY ":depth=0",
                                    "uci:/nonexistent/engine", "net:"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    xq_errbuf_t eb = {{0}};
    xq_player_t *p = (xq_player_t *)&eb; /* must be reset to NULL */
    int rc = xq_player_new(&p, bad[i], 1, &eb);
    if (rc == 0) fail_msg("spec '%s' accepted", bad[i]);
    assert_null(p);
    if (!eb.msg[0]) fail_msg("spec '%s': no message", bad[i]);
  }
  xq_errbuf_t eb = {{0}};
  xq_player_t *p = NULL;
  assert_int_equal(xq_player_new(&p, "bogus", 1, &eb), XQ_EINVAL);
  if (!strstr(eb.msg, "alphabeta:D") || !strstr(eb.msg, "uci:COMMAND"))
    fail_msg("message does not list the valid forms: %s", eb.msg);
  xq_player_free(&p);
  xq_player_free(NULL);
}

static void test_openings(void **state) {
  (void)state;
  static xq_pos_t pos;
  xq_errbuf_t eb = {{0}};
  assert_int_equal(xq_opening_setup(&pos, "startpos moves h2e2 h9g7", &eb), 0);
  assert_int_equal(pos.ply, 2);
  assert_int_equal(xq_opening_setup(&pos, XQ_START_FEN " h2e2", &eb), 0);
  assert_int_equal(pos.ply, 1);
  assert_int_equal(pos.side, XQ_BLACK);
  assert_int_equal(xq_opening_setup(&pos, "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/"
                                          "RNBAKABNR b",
                                    &eb),
                   0);
  assert_int_equal(pos.side, XQ_BLACK);
  assert_int_not_equal(xq_opening_setup(&pos, "startpos moves h2e3", &eb), 0);
  if (!strstr(eb.msg, "h2e3")) fail_msg("message does not name the move: %s", eb.msg);
  assert_int_not_equal(xq_opening_setup(&pos, "notafen w", &eb), 0);

  char path[] = "/tmp/xqz_test_openings_XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  FILE *f = fdopen(fd, "w");
  fprintf(f, "# two openings\n\n%s\nstartpos h2e2 h7e7\n", XQ_START_FEN);
  fclose(f);
  xq_openings_t op;
  assert_int_equal(xq_openings_load(&op, path, &eb), 0);
  assert_int_equal(op.n, 2);
  xq_openings_close(&op);
  f = fopen(path, "w");
  fprintf(f, "startpos h2e2\nstartpos h2h8\n");
  fclose(f);
  assert_int_not_equal(xq_openings_load(&op, path, &eb), 0);
  if (!strstr(eb.msg, ":2:")) fail_msg("message does not name line 2: %s", eb.msg);
  unlink(path);
  assert_int_not_equal(xq_openings_load(&op, "/nonexistent/openings", &eb), 0);

  /* The built-in set: 88 legal two-ply lines, no two alike, and the same lines as the
   * ladder's file (both are every pairing of the same first moves and replies). */
  assert_int_equal(xq_openings_load(&op, NULL, &eb), 0);
  assert_int_equal(op.n, 88);
  static uint64_t keys[88];
  for (int i = 0; i < op.n; i++) {
    if (xq_opening_setup(&pos, op.lines[i], &eb)) fail_msg("%s: %s", op.lines[i], eb.msg);
    assert_int_equal(pos.ply, 2);
    keys[i] = pos.key;
    for (int j = 0; j < i; j++)
      if (keys[j] == keys[i]) fail_msg("openings %d and %d are alike: %s", j, i, op.lines[i]);
  }
  xq_openings_t ladder;
  assert_int_equal(
      xq_openings_load(&ladder, XQZ_SOURCE_DIR "/scripts/bench/openings-ladder.txt", &eb), 0);
  assert_int_equal(ladder.n, op.n);
  for (int i = 0; i < ladder.n; i++) {
    assert_int_equal(xq_opening_setup(&pos, ladder.lines[i], &eb), 0);
    int found = 0;
    for (int j = 0; j < op.n && !found; j++) found = keys[j] == pos.key;
    if (!found) fail_msg("ladder opening %s is not built in", ladder.lines[i]);
  }
  xq_openings_close(&ladder);
  xq_openings_close(&op);
}

/* With material adjudication a length-capped game goes to the side ahead; without, a draw.
 * Red is a rook up and cannot mate or lose it in the one ply the cap allows. */
static void test_length_cap_by_material(void **state) {
  (void)state;
  const char *fen = "5k3/9/9/9/9/9/9/9/9/R2K5 w - - 0 1";
  const double margin[4] = {0.0, 3.0, 9.0, 9.5};
  const xq_result_t want[4] = {XQ_RESULT_DRAW, XQ_RESULT_RED_WIN, XQ_RESULT_RED_WIN,
                               XQ_RESULT_DRAW};
  xq_errbuf_t eb = {{0}};
  xq_player_t *a = NULL, *b = NULL;
  assert_int_equal(xq_player_new(&a, "random", 3, &eb), 0);
  assert_int_equal(xq_player_new(&b, "random", 4, &eb), 0);
  for (int i = 0; i < 4; i++) {
    for (int g = 0; g < 5; g++) {
      xq_outcome_t out;
      int plies = 0;
      assert_int_equal(xq_arena_game(a, b, fen, 1, margin[i], &out, &plies, &eb), 0);
      assert_int_equal(plies, 1);
      assert_int_equal(out.reason, XQ_REASON_LENGTH_CAP);
      assert_int_equal(out.result, want[i]);
    }
  }
  xq_player_free(&a);
  xq_player_free(&b);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_bad_specs),
      cmocka_unit_test(test_openings),
      cmocka_unit_test(test_length_cap_by_material),
      cmocka_unit_test(test_random_games_end_properly),
      cmocka_unit_test(test_alphabeta_beats_baselines),
      cmocka_unit_test(test_uci_fairy_stockfish),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
