/*
 * test_game_summary.c: `xqz games`'s two parts. The summary of stored games: results and
 * reasons as recorded, value targets as ingest computes them (a length-capped game a rook
 * up counts for Red only with adjudication), the material-z correlation against a hand
 * computation, a record that does not replay counted as bad. The read-only segment
 * reader: it finds the records the coordinator's writer appended, stops at a torn tail
 * without touching the file, rejects a file that is not a segment, and lists segment
 * numbers in numeric order.
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
#include <unistd.h>

#include <cmocka.h>

#include "rules/fen.h"
#include "rules/movegen.h"
#include "rules/policy_index.h"
#include "search/game_record.h"
#include "search/segment_file.h"
#include "segments.h"
#include "wire/game_summary.h"

/* Red a rook up, nothing else but the kings (on different files). */
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
  assert_int_equal(xqc_seg_open(&w, dir, 1u << 20, NULL, NULL, NULL), 0);
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
  uint64_t end;
  int torn;
  assert_int_equal(xq_seg_scan_file(path, count_visit, &v, &end, &torn, NULL), 0);
  assert_int_equal(v.n, 3);
  assert_string_equal(v.ids[1], "lab-b");
  assert_int_equal(v.seqs[2], 102);
  assert_int_equal(torn, 1);
  assert_int_equal(end, (uint64_t)whole);
  assert_int_equal(file_size(path), whole + 6); /* the reader never truncates */

  /* Not a segment file; the list is numeric and ignores other names. */
  char other[300];
  snprintf(other, sizeof other, "%s/seg-000010.bin", dir);
  f = fopen(other, "wb");
  fputs("not a segment file", f);
  fclose(f);
  xq_errbuf_t eb = {{0}};
  assert_int_equal(xq_seg_scan_file(other, NULL, NULL, &end, &torn, &eb), XQ_EFORMAT);
  assert_non_null(strstr(eb.msg, "not a segment file"));
  snprintf(other, sizeof other, "%s/seg-2.bin", dir);
  fclose(fopen(other, "wb"));
  snprintf(other, sizeof other, "%s/seg-000002.bin", dir);
  fclose(fopen(other, "wb"));
  int *idx, n;
  assert_int_equal(xq_seg_list(dir, &idx, &n, NULL), 0);
  assert_int_equal(n, 3);
  assert_int_equal(idx[0], 1);
  assert_int_equal(idx[1], 2);
  assert_int_equal(idx[2], 10);
  free(idx);
  assert_int_equal(xq_seg_list("/nonexistent/xqz", &idx, &n, &eb), XQ_EIO);

  const char *names[] = {"seg-000001.bin", "seg-000002.bin", "seg-000010.bin", "seg-2.bin"};
  for (int i = 0; i < 4; i++) {
    snprintf(other, sizeof other, "%s/%s", dir, names[i]);
    unlink(other);
  }
  rmdir(dir);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_counts_and_targets),
      cmocka_unit_test(test_bad_record_and_merge),
      cmocka_unit_test(test_segment_reader),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
