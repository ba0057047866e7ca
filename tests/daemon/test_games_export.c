/*
 * test_games_export.c: `xqz games export` writes stored games as PGN that replays. Games of
 * known endings (a checkmate from a set-up position, so with a [FEN] tag; random games run
 * to their end by the rules; a resignation) go into a campaign's segment, written by the
 * coordinator's own writer, and into an `xqz selfplay` record file. The test runs the xqz
 * binary on both, then reads the PGN back with its own small reader (tags, move numbers,
 * comments, result), replays every game with the rules and checks: every move legal, the
 * moves those of the record, the [Result] the record's, and, where the rules can say it, the
 * same end reason (checkmate, stalemate, repetition, 60 moves, length cap) as the comment.
 * Also: --net keeps one net's games, --since/--until work on the file's day, --values
 * writes values as comments the reader skips.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include <cmocka.h>

#include "rules/fen.h"
#include "rules/movegen.h"
#include "rules/notation.h"
#include "rules/rules.h"
#include "records/game_record.h"
#include "storage/segments.h"

#define MAX_GAMES 16
#define XQZ XQZ_BINARY_DIR "/tools/xqz"

typedef struct {
  xq_game_record_t rec[MAX_GAMES];
  int n;
} games_t;

/* Plays a random game from fen with seed until the rules end it or cap plies (a length-cap
 * draw), into r. */
static void random_game(xq_game_record_t *r, const char *fen, uint32_t seed, int cap, uint64_t net) {
  static xq_pos_t pos;
  assert_int_equal(xq_fen_parse(&pos, fen, NULL), 0);
  xq_record_reset(r, fen, net);
  for (;;) {
    xq_outcome_t oc = xq_adjudicate(&pos, cap);
    if (oc.result != XQ_RESULT_NONE) {
      r->result = oc.result;
      r->reason = oc.reason;
      return;
    }
    xq_move_t mv[XQ_MAX_MOVES];
    int n = xq_gen_legal(&pos, mv);
    seed = seed * 1103515245u + 12345u;
    xq_move_t m = mv[(seed >> 16) % (uint32_t)n];
    xq_visit_t v = {.index = 0, .count = 1};
    assert_int_equal(xq_record_add(r, m, pos.ply % 3 == 0, 0.25f, &v, 1), 0);
    xq_pos_make(&pos, m);
  }
}

/* The games of the test: mate in one from a set-up position, random games, a resignation. */
static void make_games(games_t *g) {
  g->n = 0;
  xq_game_record_t *r = &g->rec[g->n++];
  xq_record_init(r);
  random_game(r, "4k4/R8/9/9/9/9/9/9/1R7/5K3 w - - 0 1", 1, 0, 0xabcdef0011223344ull);
  xq_record_reset(r, "4k4/R8/9/9/9/9/9/9/1R7/5K3 w - - 0 1", 0xabcdef0011223344ull);
  xq_move_t m;
  assert_int_equal(xq_move_parse("b1b9", &m, NULL), 0);
  assert_int_equal(xq_record_add(r, m, true, 0.9f, NULL, 0), 0);
  r->result = XQ_RESULT_RED_WIN;
  r->reason = XQ_REASON_CHECKMATE;
  for (uint32_t s = 0; s < 6; s++) {
    r = &g->rec[g->n++];
    xq_record_init(r);
    random_game(r, s == 5 ? "3k5/9/9/9/9/9/9/9/3p5/4K4 b - - 0 1" : XQ_START_FEN, 7 + s * 13,
                s < 3 ? 60 : 300, 0x1111222233334444ull);
  }
  /* The start position with Black to move: a [FEN] with horses and elephants in it. */
  r = &g->rec[g->n++];
  xq_record_init(r);
  random_game(r, "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR b - - 0 1", 99, 10,
              0x1111222233334444ull);
  r->result = XQ_RESULT_BLACK_WIN;
  r->reason = XQ_REASON_RESIGN;
}

typedef struct {
  char fen[256], result[256], comment[256];
  bool variant; /* a [Variant "xiangqi"] tag came */
  xq_move_t moves[1200];
  int n;
} pgn_game_t;

/* The value of tag name in the tag line line ("[Name "value"]"), into out; false if it is
 * another tag. */
static bool tag_value(const char *line, const char *name, char *out, size_t n) {
  size_t k = strlen(name);
  if (line[0] != '[' || strncmp(line + 1, name, k) || line[1 + k] != ' ' || line[2 + k] != '"')
    return false;
  const char *v = line + 3 + k, *e = strrchr(v, '"');
  if (!e) fail_msg("tag line without its closing quote: %s", line);
  snprintf(out, n, "%.*s", (int)(e - v), v);
  return true;
}

/* Reads every game of text (a PGN file) into out (at most max); the count. Moves are read
 * with the rules as they come, so an illegal one fails the test. */
static int read_pgn(char *text, pgn_game_t *out, int max) {
  int n = -1;
  static xq_pos_t pos;
  char *save = NULL;
  for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
    char v[200];
    if (tag_value(line, "Game", v, sizeof v)) {
      assert_string_equal(v, "Chinese Chess");
      assert_true(++n < max);
      memset(&out[n], 0, sizeof out[n]);
      snprintf(out[n].fen, sizeof out[n].fen, "%s", XQ_START_FEN);
      assert_int_equal(xq_fen_parse(&pos, XQ_START_FEN, NULL), 0);
      continue;
    }
    assert_true(n >= 0);
    pgn_game_t *g = &out[n];
    if (tag_value(line, "Variant", v, sizeof v)) {
      assert_string_equal(v, "xiangqi");
      g->variant = true;
      continue;
    }
    if (tag_value(line, "FEN", v, sizeof v)) {
      /* XBoard reads the FEN as soon as it meets it, in the variant named so far, and its
       * xiangqi FEN names the horse H and the elephant E (docs/operations.md). */
      assert_true(g->variant);
      for (const char *c = v; *c && *c != ' '; c++) assert_null(strchr("NnBb", *c));
      snprintf(g->fen, sizeof g->fen, "%s", v);
      xq_errbuf_t eb = {{0}};
      if (xq_fen_parse(&pos, v, &eb)) fail_msg("bad [FEN \"%s\"]: %s", v, eb.msg);
      continue;
    }
    if (tag_value(line, "Result", v, sizeof v)) snprintf(g->result, sizeof g->result, "%s", v);
    if (tag_value(line, "Format", v, sizeof v)) assert_string_equal(v, "ICCS");
    if (line[0] == '[') continue;
    /* Movetext: numbers "12." and "12...", comments {...}, moves, and the result. */
    for (char *p = line; *p;) {
      if (*p == ' ') {
        p++;
        continue;
      }
      if (*p == '{') {
        char *e = strchr(p, '}');
        if (!e) fail_msg("comment not closed on its line: %s", p);
        snprintf(g->comment, sizeof g->comment, "%.*s", (int)(e - p - 1), p + 1);
        p = e + 1;
        continue;
      }
      size_t k = strcspn(p, " ");
      char tok[32];
      snprintf(tok, sizeof tok, "%.*s", (int)k, p);
      p += k;
      if (tok[k - 1] == '.' || !strcmp(tok, "1-0") || !strcmp(tok, "0-1") ||
          !strcmp(tok, "1/2-1/2") || !strcmp(tok, "*"))
        continue;
      xq_move_t m;
      xq_errbuf_t eb = {{0}};
      if (xq_move_parse_any(&pos, tok, &m, &eb))
        fail_msg("game %d, move %d '%s' does not replay: %s", n + 1, g->n + 1, tok, eb.msg);
      xq_pos_make(&pos, m);
      g->moves[g->n++] = m;
    }
  }
  return n + 1;
}

/* Replays g and checks it against its record r. */
static void check_game(const pgn_game_t *g, const xq_game_record_t *r) {
  static xq_pos_t pos, start;
  assert_true(g->variant);
  assert_int_equal(xq_fen_parse(&pos, g->fen, NULL), 0);
  assert_int_equal(xq_fen_parse(&start, r->start_fen, NULL), 0);
  char a[XQ_FEN_MAX], b[XQ_FEN_MAX];
  xq_fen_print(&pos, a);
  xq_fen_print(&start, b);
  assert_string_equal(a, b);
  assert_int_equal(g->n, r->nplies);
  for (int i = 0; i < g->n; i++) {
    assert_int_equal(g->moves[i], r->plies[i].move);
    xq_pos_make(&pos, g->moves[i]);
  }
  assert_string_equal(g->result, xq_result_name(r->result));
  assert_non_null(strstr(g->comment, xq_reason_name(r->reason)));
  if (r->reason == XQ_REASON_RESIGN) return; /* the rules cannot see a resignation */
  xq_outcome_t oc = xq_adjudicate(&pos, r->reason == XQ_REASON_LENGTH_CAP ? r->nplies : 0);
  assert_int_equal(oc.reason, r->reason);
  assert_int_equal(oc.result, r->result);
}

static char *slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) fail_msg("cannot open %s", path);
  static char buf[1 << 20];
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = 0;
  return buf;
}

/* Runs the xqz command line cmd; its exit status. */
static int run(const char *cmd) {
  int st = system(cmd);
  return st == -1 ? -1 : WEXITSTATUS(st);
}

static void test_export_replays(void **state) {
  (void)state;
  static games_t g;
  make_games(&g);
  char dir[] = "/tmp/xqz-export-XXXXXX", games[300], cmd[1400], out[300], recs[300];
  assert_non_null(mkdtemp(dir));
  snprintf(games, sizeof games, "%s/games", dir);
  assert_int_equal(mkdir(games, 0700), 0);
  xqc_segments_t w;
  assert_int_equal(xqc_seg_open(&w, games, "/nonexistent/q", 1u << 20, NULL, NULL, NULL), 0);
  for (int i = 0; i < g.n; i++) {
    unsigned char *buf;
    size_t len;
    assert_int_equal(xq_record_encode(&g.rec[i], &buf, &len), 0);
    assert_int_equal(xqc_seg_append(&w, "lab-a", 10 + (uint64_t)i, buf, len, NULL), 0);
    free(buf);
  }
  xqc_seg_close(&w);
  snprintf(recs, sizeof recs, "%s/g.xqzg", dir);
  FILE *f = fopen(recs, "wb");
  assert_non_null(f);
  assert_int_equal(xq_record_write_header(f, NULL), 0);
  for (int i = 0; i < g.n; i++) assert_int_equal(xq_record_write(f, &g.rec[i], NULL), 0);
  fclose(f);

  static pgn_game_t pgn[MAX_GAMES];
  snprintf(out, sizeof out, "%s/all.pgn", dir);
  /* The campaign and the record file, with values: every game twice. */
  snprintf(cmd, sizeof cmd, "%s games export %s %s --values --out %s 2>/dev/null", XQZ, dir,
           recs, out);
  assert_int_equal(run(cmd), 0);
  int n = read_pgn(slurp(out), pgn, MAX_GAMES);
  assert_int_equal(n, 2 * g.n);
  for (int i = 0; i < n; i++) check_game(&pgn[i], &g.rec[i % g.n]);
  assert_non_null(strstr(slurp(out), "[Variant \"xiangqi\"]\n"
                                     "[FEN \"4k4/R8/9/9/9/9/9/9/1R7/5K3 w - - 0 1\"]"));
  assert_non_null(strstr(slurp(out), "[FEN \"rheakaehr/9/1c5c1/p1p1p1p1p/9/9/"
                                     "P1P1P1P1P/1C5C1/9/RHEAKAEHR b - - 0 1\"]"));
  assert_non_null(strstr(slurp(out), "[Red \"xqzero abcdef0011223344\"]"));
  assert_non_null(strstr(slurp(out), "{+0.900}"));
  /* One net's games only, without values. */
  snprintf(cmd, sizeof cmd, "%s games export %s --net ABCDEF --out %s 2>/dev/null", XQZ,
           games, out);
  assert_int_equal(run(cmd), 0);
  assert_int_equal(read_pgn(slurp(out), pgn, MAX_GAMES), 1);
  check_game(&pgn[0], &g.rec[0]);
  assert_null(strstr(slurp(out), "{+"));
  /* Dates: the record file last written on 2020-01-02. */
  struct timeval tv[2] = {{.tv_sec = 1577966400}, {.tv_sec = 1577966400}}; /* 12:00 UTC */
  assert_int_equal(utimes(recs, tv), 0);
  snprintf(cmd, sizeof cmd, "%s games export %s --since 2020-01-02 --until 2020-01-02 "
           "--out %s 2>/dev/null", XQZ, recs, out);
  assert_int_equal(run(cmd), 0);
  assert_int_equal(read_pgn(slurp(out), pgn, MAX_GAMES), g.n);
  assert_non_null(strstr(slurp(out), "[Date \"2020.01.02\"]"));
  snprintf(cmd, sizeof cmd, "%s games export %s --since 2020-01-03 --out %s 2>/dev/null", XQZ,
           recs, out);
  assert_int_equal(run(cmd), 0);
  assert_int_equal(read_pgn(slurp(out), pgn, MAX_GAMES), 0);
  /* Bad input is refused by name. */
  snprintf(cmd, sizeof cmd, "%s games export %s/none 2>/dev/null", XQZ, dir);
  assert_int_equal(run(cmd), 1);
  snprintf(cmd, sizeof cmd, "%s games export %s --since 2020-13-01 2>/dev/null", XQZ, recs);
  assert_int_equal(run(cmd), 2);
  snprintf(cmd, sizeof cmd, "%s games export %s --net xyz 2>/dev/null", XQZ, recs);
  assert_int_equal(run(cmd), 2);
  for (int i = 0; i < g.n; i++) xq_record_free(&g.rec[i]);
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  assert_int_equal(run(cmd), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_export_replays),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
