/*
 * test_game_summary.c: `xqz games`'s two parts. The summary of stored games: results and
 * reasons as recorded, value targets as ingest computes them (a length-capped game a rook
 * up counts for Red only with adjudication), the material-z correlation against a hand
 * computation, a record that does not replay counted as bad. The read-only segment
 * reader: it finds the records the coordinator's writer appended, stops at a torn tail
 * without touching the file, rejects a file that is not a segment, and lists segment
 * numbers in numeric order. And `xqz games` on a campaign directory: the adjudication
 * read from campaign.ini (the coordinator's default when it is not set, --adjudicate
 * over both), a just-started empty segment and a torn tail reported but not fatal, and
 * two campaigns that score capped games differently refused.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "rules/fen.h"
#include "rules/material.h"
#include "rules/movegen.h"
#include "rules/policy_index.h"
#include "records/game_record.h"
#include "records/segment_file.h"
#include "storage/segments.h"
#include "records/game_summary.h"

/* Red a rook up, nothing else but the kings (on different files). */
#define XQZ XQZ_BINARY_DIR "/tools/xqz"

#define ROOK_UP_FEN "3k5/9/9/9/9/9/9/9/9/R3K4 w - - 0 1"

/* A game from fen: nplies plies of the first legal move, each a full search with all
 * visits on the move played, then the given end. */
static void play_game(xq_game_record_t *r, const char *fen, int nplies, xq_result_t result,
                      xq_reason_t reason) {
  xq_pos_t *pos = malloc(sizeof *pos);
  assert_int_equal(xq_fen_parse(pos, fen, NULL), 0);
  xq_record_reset(r, fen, 9);
  for (int i = 0; i < nplies; i++) {
    xq_move_t mv[XQ_MAX_MOVES];
    assert_true(xq_gen_legal(pos, mv) > 0);
    xq_visit_t v = {(uint16_t)xq_policy_index_for(mv[0], pos->side), 5};
    assert_int_equal(xq_record_add(r, mv[0], true, 0.0f, &v, 1), 0);
    xq_pos_make(pos, mv[0]);
  }
  r->result = result;
  r->reason = reason;
  free(pos);
}

/* A resignation by Red after two plies from the start, and a length-capped game a rook
 * up for Red. */
static void add_two_games(xq_game_summary_t *s) {
  xq_game_record_t r;
  xq_record_init(&r);
  play_game(&r, XQ_START_FEN, 2, XQ_RESULT_BLACK_WIN, XQ_REASON_RESIGN);
  assert_int_equal(xq_game_summary_add(s, &r, NULL), 0);
  play_game(&r, ROOK_UP_FEN, 2, XQ_RESULT_DRAW, XQ_REASON_LENGTH_CAP);
  assert_int_equal(xq_game_summary_add(s, &r, NULL), 0);
  xq_record_free(&r);
}

static void test_counts_and_targets(void **state) {
  (void)state;
  xq_game_summary_t s;
  xq_game_summary_init(&s, 0.0);
  add_two_games(&s);
  assert_int_equal(s.games, 2);
  assert_int_equal(s.plies, 4);
  assert_int_equal(s.red_wins, 0);
  assert_int_equal(s.black_wins, 1);
  assert_int_equal(s.draws, 1);
  assert_int_equal(s.by_reason[XQ_REASON_RESIGN], 1);
  assert_int_equal(s.by_reason[XQ_REASON_LENGTH_CAP], 1);
  assert_int_equal(s.samples, 4);
  assert_int_equal(s.decisive, 2); /* the capped game teaches nothing without adjudication */
  /* material (mover's view) 0, 0, +9, -9 against z -1, +1, 0, 0: uncorrelated. */
  assert_true(fabs(xq_game_summary_material_z(&s)) < 1e-9);

  xq_game_summary_init(&s, 3.0);
  add_two_games(&s);
  assert_int_equal(s.draws, 1); /* the record is still a draw by the rules */
  assert_int_equal(s.decisive, 4);
  /* z -1, +1, +1, -1: cov 4.5, var(m) 40.5, var(z) 1, so r = 4.5 / sqrt(40.5). */
  assert_true(fabs(xq_game_summary_material_z(&s) - 4.5 / sqrt(40.5)) < 1e-9);
}

static void test_bad_record_and_merge(void **state) {
  (void)state;
  xq_game_summary_t s, a, b;
  xq_game_summary_init(&s, 3.0);
  xq_game_record_t r;
  xq_record_init(&r);
  /* Black is to move after 3 plies, so a resignation cannot be Red's loss. */
  play_game(&r, XQ_START_FEN, 3, XQ_RESULT_BLACK_WIN, XQ_REASON_RESIGN);
  xq_errbuf_t eb = {{0}};
  assert_true(xq_game_summary_add(&s, &r, &eb) < 0);
  assert_non_null(strstr(eb.msg, "resignation"));
  assert_int_equal(s.bad, 1);
  assert_int_equal(s.games, 0);
  assert_int_equal(s.samples, 0);
  assert_true(isnan(xq_game_summary_material_z(&s)));
  xq_record_free(&r);

  add_two_games(&s);
  xq_game_summary_init(&a, 3.0);
  xq_game_summary_init(&b, 3.0);
  add_two_games(&a);
  add_two_games(&b);
  xq_game_summary_merge(&a, &b);
  assert_int_equal(a.games, 4);
  assert_int_equal(a.samples, 8);
  assert_int_equal(a.by_reason[XQ_REASON_RESIGN], 2);
  assert_true(fabs(xq_game_summary_material_z(&a) - xq_game_summary_material_z(&s)) < 1e-9);
}

typedef struct {
  int n;
  char ids[8][32];
  uint64_t seqs[8];
} visits_t;

static int count_visit(void *user, const char *worker_id, uint64_t seq,
                       const unsigned char *rec, size_t len) {
  visits_t *v = user;
  xq_game_record_t r;
  xq_record_init(&r);
  assert_int_equal(xq_record_decode(&r, rec, len, NULL), 0);
  xq_record_free(&r);
  snprintf(v->ids[v->n], sizeof v->ids[v->n], "%s", worker_id);
  v->seqs[v->n++] = seq;
  return 0;
}

static long file_size(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

static void test_segment_reader(void **state) {
  (void)state;
  char dir[] = "/tmp/xqz-games-XXXXXX";
  assert_non_null(mkdtemp(dir));
  xqc_segments_t w;
  assert_int_equal(xqc_seg_open(&w, dir, "/nonexistent/q", 1u << 20, NULL, NULL, NULL), 0);
  xq_game_record_t r;
  xq_record_init(&r);
  play_game(&r, XQ_START_FEN, 2, XQ_RESULT_BLACK_WIN, XQ_REASON_RESIGN);
  unsigned char *buf;
  size_t len;
  assert_int_equal(xq_record_encode(&r, &buf, &len), 0);
  const char *ids[3] = {"lab-a", "lab-b", "lab-a"};
  for (int i = 0; i < 3; i++)
    assert_int_equal(xqc_seg_append(&w, ids[i], 100 + (uint64_t)i, buf, len, NULL), 0);
  xqc_seg_close(&w);
  free(buf);
  xq_record_free(&r);

  char path[300];
  xq_seg_path(path, sizeof path, dir, 1);
  long whole = file_size(path);
  /* A torn tail, as a crash in the middle of an append leaves it. */
  FILE *f = fopen(path, "ab");
  assert_non_null(f);
  fwrite("\x40\x00\x00\x00\x01\x02", 1, 6, f);
  fclose(f);
  visits_t v = {0};
  xq_seg_scan_t st;
  assert_int_equal(xq_seg_scan(path, count_visit, NULL, &v, &st, NULL), 0);
  assert_int_equal(v.n, 3);
  assert_string_equal(v.ids[1], "lab-b");
  assert_int_equal(v.seqs[2], 102);
  assert_int_equal(st.tail, 6);
  assert_int_equal(st.records, 3);
  assert_int_equal(st.regions, 0);
  assert_int_equal(st.end, (uint64_t)whole);
  assert_int_equal(file_size(path), whole + 6); /* the reader never truncates */

  /* Not a segment file; the list is numeric and ignores other names. */
  char other[300];
  snprintf(other, sizeof other, "%s/seg-000010.bin", dir);
  f = fopen(other, "wb");
  fputs("not a segment file", f);
  fclose(f);
  xq_errbuf_t eb = {{0}};
  assert_int_equal(xq_seg_scan(other, NULL, NULL, NULL, &st, &eb), XQ_EFORMAT);
  assert_non_null(strstr(eb.msg, "not a segment file"));
  /* A segment of another format version names both versions. */
  f = fopen(other, "wb");
  fwrite(XQ_SEG_MAGIC, 1, 8, f);
  const unsigned char v9[4] = {9, 0, 0, 0};
  fwrite(v9, 1, 4, f);
  for (int k = 12; k < XQ_SEG_HEADER_SIZE; k++) fputc(0, f);
  fclose(f);
  assert_int_equal(xq_seg_scan(other, NULL, NULL, NULL, &st, &eb), XQ_EFORMAT);
  if (!strstr(eb.msg, "version 9") || !strstr(eb.msg, "reads version 1"))
    fail_msg("the versions are not named: %s", eb.msg);
  snprintf(other, sizeof other, "%s/seg-2.bin", dir);
  fclose(fopen(other, "wb"));
  snprintf(other, sizeof other, "%s/seg-000002.bin", dir);
  fclose(fopen(other, "wb"));
  snprintf(other, sizeof other, "%s/seg-000001.bin~", dir); /* an editor's backup */
  fclose(fopen(other, "wb"));
  snprintf(other, sizeof other, "%s/seg-+00003.bin", dir);
  fclose(fopen(other, "wb"));
  int *idx, n;
  assert_int_equal(xq_seg_list(dir, &idx, &n, NULL), 0);
  assert_int_equal(n, 3);
  assert_int_equal(idx[0], 1);
  assert_int_equal(idx[1], 2);
  assert_int_equal(idx[2], 10);
  free(idx);
  assert_int_equal(xq_seg_list("/nonexistent/xqz", &idx, &n, &eb), XQ_EIO);

  const char *names[] = {"seg-000001.bin", "seg-000002.bin", "seg-000010.bin", "seg-2.bin",
                         "seg-000001.bin~", "seg-+00003.bin"};
  for (int i = 0; i < 6; i++) {
    snprintf(other, sizeof other, "%s/%s", dir, names[i]);
    unlink(other);
  }
  rmdir(dir);
}

/* Runs `xqz games ARGS --json` with stdout and stderr into files under dir; returns the
 * exit status and the stdout text in out (cap bytes). */
static int run_games(const char *dir, const char *args, char *out, size_t cap, char *err,
                     size_t ecap) {
  char cmd[2048], path[600];
  snprintf(cmd, sizeof cmd, "%s games %s --json >%s/out.txt 2>%s/err.txt", XQZ, args, dir, dir);
  int st = system(cmd);
  snprintf(path, sizeof path, "%s/out.txt", dir);
  FILE *f = fopen(path, "r");
  size_t n = f ? fread(out, 1, cap - 1, f) : 0;
  out[n] = '\0';
  if (f) fclose(f);
  snprintf(path, sizeof path, "%s/err.txt", dir);
  f = fopen(path, "r");
  n = f ? fread(err, 1, ecap - 1, f) : 0;
  err[n] = '\0';
  if (f) fclose(f);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* The campaign camp/ of dir: games/seg-000001.bin with the two games of add_two_games, an
 * empty seg-000002.bin (just started) and campaign.ini with ini_line. */
static void make_campaign(const char *dir, const char *camp, const char *ini_line) {
  char path[600];
  snprintf(path, sizeof path, "%s/%s", dir, camp);
  assert_int_equal(mkdir(path, 0700), 0);
  snprintf(path, sizeof path, "%s/%s/campaign.ini", dir, camp);
  FILE *f = fopen(path, "w");
  fprintf(f, "; settings\nsims = 64\n%s\n", ini_line);
  fclose(f);
  snprintf(path, sizeof path, "%s/%s/games", dir, camp);
  assert_int_equal(mkdir(path, 0700), 0);
  xqc_segments_t w;
  assert_int_equal(xqc_seg_open(&w, path, "/nonexistent/q", 1u << 20, NULL, NULL, NULL), 0);
  xq_game_record_t r;
  xq_record_init(&r);
  unsigned char *buf;
  size_t len;
  play_game(&r, XQ_START_FEN, 2, XQ_RESULT_BLACK_WIN, XQ_REASON_RESIGN);
  assert_int_equal(xq_record_encode(&r, &buf, &len), 0);
  assert_int_equal(xqc_seg_append(&w, "w1", 1, buf, len, NULL), 0);
  free(buf);
  play_game(&r, ROOK_UP_FEN, 2, XQ_RESULT_DRAW, XQ_REASON_LENGTH_CAP);
  assert_int_equal(xq_record_encode(&r, &buf, &len), 0);
  assert_int_equal(xqc_seg_append(&w, "w1", 2, buf, len, NULL), 0);
  free(buf);
  xq_record_free(&r);
  xqc_seg_close(&w);
  snprintf(path, sizeof path, "%s/%s/games/seg-000002.bin", dir, camp);
  fclose(fopen(path, "wb"));
}

static void test_cli_on_campaign(void **state) {
  (void)state;
  char dir[] = "/tmp/xqz-gamescli-XXXXXX";
  assert_non_null(mkdtemp(dir));
  make_campaign(dir, "a", "adjudicate_material = 0");
  make_campaign(dir, "b", "; adjudicate_material not set");
  char out[8192], err[4096], args[1024];

  snprintf(args, sizeof args, "%s/a", dir);
  assert_int_equal(run_games(dir, args, out, sizeof out, err, sizeof err), 0);
  /* seg-000001, the empty seg-000002 and the total; capped games drawn in a/. */
  assert_non_null(strstr(out, "seg-000001.bin\",\"adjudicate_material\":0,\"games\":2,"));
  assert_non_null(strstr(out, "seg-000002.bin\",\"adjudicate_material\":0,\"games\":0,"));
  assert_non_null(strstr(out, "\"file\":\"all\""));
  assert_non_null(strstr(out, "\"samples\":4,\"decisive_samples\":2,"));

  /* b/ does not set it: the coordinator's default, also for a segment named directly. */
  snprintf(args, sizeof args, "%s/b/games/seg-000001.bin", dir);
  assert_int_equal(run_games(dir, args, out, sizeof out, err, sizeof err), 0);
  assert_non_null(strstr(out, "\"adjudicate_material\":" XQ_ADJUDICATE_DEFAULT ","));
  assert_non_null(strstr(out, "\"samples\":4,\"decisive_samples\":4,"));
  assert_null(strstr(out, "\"all\""));
  snprintf(args, sizeof args, "%s/b --adjudicate 0", dir);
  assert_int_equal(run_games(dir, args, out, sizeof out, err, sizeof err), 0);
  assert_non_null(strstr(out, "\"samples\":4,\"decisive_samples\":2,"));

  /* Two campaigns scoring capped games differently: refused unless --adjudicate. */
  snprintf(args, sizeof args, "%s/a %s/b", dir, dir);
  assert_int_equal(run_games(dir, args, out, sizeof out, err, sizeof err), 1);
  assert_non_null(strstr(err, "give --adjudicate"));
  snprintf(args, sizeof args, "%s/a %s/b --adjudicate 3", dir, dir);
  assert_int_equal(run_games(dir, args, out, sizeof out, err, sizeof err), 0);
  assert_non_null(strstr(out, "\"file\":\"all\",\"adjudicate_material\":3,\"games\":4,"));

  /* A torn tail: counted up to it, and said. */
  char path[600];
  snprintf(path, sizeof path, "%s/a/games/seg-000001.bin", dir);
  FILE *f = fopen(path, "ab");
  fwrite("\x40\x00\x00", 1, 3, f);
  fclose(f);
  snprintf(args, sizeof args, "%s/a", dir);
  assert_int_equal(run_games(dir, args, out, sizeof out, err, sizeof err), 0);
  assert_non_null(strstr(out, "\"games\":2,"));
  assert_non_null(strstr(err, "seg-000001.bin: read up to byte"));

  snprintf(path, sizeof path, "rm -rf %s", dir);
  assert_int_equal(system(path), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_counts_and_targets),
      cmocka_unit_test(test_bad_record_and_merge),
      cmocka_unit_test(test_segment_reader),
      cmocka_unit_test(test_cli_on_campaign),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
