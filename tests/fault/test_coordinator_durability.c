/*
 * test_coordinator_durability.c: what the coordinator does when its disk misbehaves, driven
 * over loopback as a worker would, with the fault-injection build xqz-coordinator-faults
 * (tests/fault/seg_fault_io.c: control files make writes fail with ENOSPC after a short
 * write, or an fsync or ftruncate fail with EIO):
 *   - a full disk: no ack, no partial record, the state in Status and one log line;
 *     space back: the resent games are stored and acked;
 *   - one failed fsync: the pending game is rewritten into a new file and then acked;
 *   - an fsync that fails again on the new file: the coordinator stops, unacked;
 *   - a write that cannot be rolled back: the file is sealed, its torn end quarantined;
 *   - one flipped byte in the middle of the newest and of an older segment: every other
 *     record survives a restart, in the window, the bad bytes in quarantine, counted.
 * After each, a restart with the shipped binary must hold every acknowledged game exactly
 * once, and no file a partial record.
 */
#define _DEFAULT_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

#include "coord_test_util.h"
#include "records/segment_file.h"
#include "support/le.h"

#define SHIPPED XQZ_BINARY_DIR "/coordinator/xqz-coordinator"
#define FAULTS XQZ_BINARY_DIR "/coordinator/xqz-coordinator-faults"
#define MAX_SEQ 64

static char g_faults[300];

/* Creates (on) or removes (off) a fault control file. */
static void fault(const char *name, int on) {
  char path[400];
  snprintf(path, sizeof path, "%s/%s", g_faults, name);
  if (on) {
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fclose(f);
  } else {
    unlink(path);
  }
}

static void *start_faulty(void *ctx) {
  snprintf(g_faults, sizeof g_faults, "%s/faults", g_dir);
  assert_int_equal(mkdir(g_faults, 0700), 0);
  setenv("XQZ_FAULT_DIR", g_faults, 1);
  g_coordinator = FAULTS;
  start_coordinator();
  unsetenv("XQZ_FAULT_DIR");
  void *s = connect_dealer(ctx);
  hello(s);
  return s;
}

/* What the segment files hold: how often each seq of test-worker is stored, the bytes of
 * torn tails and of damaged runs. */
typedef struct {
  int count[MAX_SEQ];
  int records;
  uint64_t tail, damaged;
} stored_t;

static int count_visit(void *user, const char *worker_id, uint64_t seq,
                       const unsigned char *rec, size_t len) {
  (void)rec;
  (void)len;
  stored_t *st = user;
  assert_string_equal(worker_id, "test-worker");
  assert_true(seq < MAX_SEQ);
  st->count[seq]++;
  st->records++;
  return 0;
}

static stored_t stored(void) {
  stored_t st;
  memset(&st, 0, sizeof st);
  char games[400];
  snprintf(games, sizeof games, "%s/camp/games", g_dir);
  int *idx, n;
  assert_int_equal(xq_seg_list(games, &idx, &n, NULL), 0);
  for (int i = 0; i < n; i++) {
    char path[500];
    xq_seg_path(path, sizeof path, games, idx[i]);
    xq_seg_scan_t sc;
    assert_int_equal(xq_seg_scan(path, count_visit, NULL, &st, &sc, NULL), 0);
    st.tail += sc.tail;
    st.damaged += sc.damaged;
  }
  free(idx);
  return st;
}

static long seg_size(int index) {
  char games[400], path[500];
  snprintf(games, sizeof games, "%s/camp/games", g_dir);
  xq_seg_path(path, sizeof path, games, index);
  struct stat st;
  return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

/* Files in the campaign's quarantine directory. */
static int quarantined(void) {
  char dir[400];
  snprintf(dir, sizeof dir, "%s/camp/quarantine", g_dir);
  uint64_t files, bytes;
  xq_seg_quarantine_count(dir, &files, &bytes);
  return (int)files;
}

static void game(uint64_t seq, unsigned char **buf, size_t *len) { random_game(buf, len, 1000 + seq, 0); }

static void send_acked(void *s, uint64_t seq) {
  unsigned char *buf;
  size_t len;
  game(seq, &buf, &len);
  Xqz__Envelope *r = send_game(s, seq, buf, len);
  assert_true(r->ack->accepted);
  xq_wire_free(&r);
  free(buf);
}

static void send_unacked(void *s, uint64_t seq) {
  unsigned char *buf;
  size_t len;
  game(seq, &buf, &len);
  send_game_msg(s, "test-worker", seq, buf, len);
  free(buf);
}

static void kill_coordinator(void) {
  kill(g_pid, SIGKILL);
  waitpid(g_pid, NULL, 0);
  g_pid = -1;
}

/* Restarts with the shipped binary; returns a connected socket. */
static void *restart(void *ctx) {
  g_coordinator = SHIPPED;
  start_coordinator();
  void *s = connect_dealer(ctx);
  hello(s);
  return s;
}

static void stop_and_clean(void *ctx, void *s) {
  if (g_pid > 0) kill_coordinator();
  zmq_close(s);
  zmq_ctx_term(ctx);
  remove_dir();
  g_coordinator = SHIPPED;
}

/* Every seq in [1, acked] stored exactly once, nothing torn or damaged. */
static void expect_stored_once(int acked) {
  stored_t st = stored();
  for (int q = 1; q <= acked; q++)
    if (st.count[q] != 1) fail_msg("acked game seq %d stored %d times", q, st.count[q]);
  assert_int_equal(st.tail, 0);
  assert_int_equal(st.damaged, 0);
}

static void test_full_disk(void **state) {
  (void)state;
  fresh_dir();
  void *ctx = zmq_ctx_new();
  void *s = start_faulty(ctx);
  for (uint64_t q = 1; q <= 3; q++) send_acked(s, q);
  long before = seg_size(1);

  fault("enospc", 1);
  for (uint64_t q = 4; q <= 6; q++) send_unacked(s, q);
  expect_nothing(s, 1500); /* nothing stored, so nothing acknowledged */
  Xqz__Envelope *r = status(s);
  assert_int_equal(r->status->games, 3);
  assert_non_null(strstr(r->status->storage_error, "No space left on device"));
  assert_int_equal(r->status->storage_unstored_games, 3);
  xq_wire_free(&r);
  assert_int_equal(seg_size(1), before); /* the short write was rolled back */
  assert_int_equal(log_count("cannot store games; acknowledgements paused"), 1);
  assert_int_equal(log_count("free space in"), 1);

  fault("enospc", 0); /* space is back: the worker resends */
  for (uint64_t q = 4; q <= 6; q++) send_acked(s, q);
  r = status(s);
  assert_int_equal(r->status->games, 6);
  assert_string_equal(r->status->storage_error, "");
  assert_int_equal(r->status->storage_blocked_s, 0);
  xq_wire_free(&r);
  assert_int_equal(log_count("storing games again"), 1);

  kill_coordinator();
  zmq_close(s);
  expect_stored_once(6);
  s = restart(ctx);
  r = status(s);
  assert_int_equal(r->status->games, 6);
  xq_wire_free(&r);
  stop_and_clean(ctx, s);
}

static void test_fsync_failure_rewrites(void **state) {
  (void)state;
  fresh_dir();
  void *ctx = zmq_ctx_new();
  void *s = start_faulty(ctx);
  send_acked(s, 1);
  fault("fsync-eio-once", 1);
  send_acked(s, 2); /* acked only after the rewrite into a new file was fsynced */
  assert_int_equal(log_count("fsync failed; the file is sealed"), 1);
  assert_int_equal(log_count("pending records rewritten after a failed fsync"), 1);
  assert_true(seg_size(2) > 0);
  send_acked(s, 3);
  kill_coordinator();
  zmq_close(s);
  /* seq 2 is in the sealed file too (the fault left its bytes in the page cache). */
  stored_t st = stored();
  assert_int_equal(st.count[2], 2);
  s = restart(ctx);
  Xqz__Envelope *r = status(s);
  assert_int_equal(r->status->games, 3); /* the copy is read once */
  xq_wire_free(&r);
  assert_int_equal(log_count("copies_skipped=1"), 1);
  stop_and_clean(ctx, s);
}

static void test_fsync_fails_twice_stops(void **state) {
  (void)state;
  fresh_dir();
  void *ctx = zmq_ctx_new();
  void *s = start_faulty(ctx);
  send_acked(s, 1);
  fault("fsync-eio", 1);
  send_unacked(s, 2);
  expect_nothing(s, 1500);
  int st = 0;
  for (int i = 0; i < 100 && waitpid(g_pid, &st, WNOHANG) == 0; i++) usleep(50 * 1000);
  assert_true(WIFEXITED(st));
  assert_int_equal(WEXITSTATUS(st), 1);
  g_pid = -1;
  assert_int_equal(log_count("nothing written can be trusted"), 1);
  zmq_close(s);
  s = restart(ctx);
  /* The unacked game was written (to the sealed file and to the new one): read once, and
   * its resend is a duplicate, acknowledged now. */
  send_acked(s, 2);
  Xqz__Envelope *r = status(s);
  assert_int_equal(r->status->games, 2);
  assert_int_equal(r->status->duplicates, 1);
  xq_wire_free(&r);
  kill_coordinator();
  stored_t st2 = stored();
  assert_int_equal(st2.count[1], 1);
  assert_int_equal(st2.count[2], 2); /* copies on disk, dropped when read */
  assert_int_equal(st2.tail + st2.damaged, 0);
  stop_and_clean(ctx, s);
}

static void test_rollback_fails_seals(void **state) {
  (void)state;
  fresh_dir();
  void *ctx = zmq_ctx_new();
  void *s = start_faulty(ctx);
  send_acked(s, 1);
  fault("ftruncate-eio", 1);
  fault("enospc", 1);
  send_unacked(s, 2); /* half of it stays in seg 1, which is sealed */
  expect_nothing(s, 1000);
  assert_int_equal(log_count("cannot roll a failed write back"), 1);
  fault("enospc", 0);
  fault("ftruncate-eio", 0);
  send_acked(s, 2); /* into seg 2 */
  assert_true(seg_size(2) > 0);
  kill_coordinator();
  zmq_close(s);
  s = restart(ctx);
  Xqz__Envelope *r = status(s);
  assert_int_equal(r->status->games, 2);
  assert_int_equal(r->status->quarantine_files, 1); /* seg 1's torn end */
  xq_wire_free(&r);
  assert_int_equal(quarantined(), 1);
  kill_coordinator();
  expect_stored_once(2);
  stop_and_clean(ctx, s);
}

/* Offset of the k-th record (0-based) of segment `index`, and its seq. */
static long record_offset(int index, int k, uint64_t *seq) {
  char games[400], path[500];
  snprintf(games, sizeof games, "%s/camp/games", g_dir);
  xq_seg_path(path, sizeof path, games, index);
  FILE *f = fopen(path, "rb");
  assert_non_null(f);
  long off = XQ_SEG_HEADER_SIZE;
  for (int i = 0;; i++) {
    unsigned char fr[8 + 2 + 255 + 8];
    assert_int_equal(fseek(f, off, SEEK_SET), 0);
    assert_true(fread(fr, 1, 8 + 2 + 11 + 8, f) == 29); /* "test-worker" is 11 bytes */
    if (i == k) {
      *seq = xq_get_le64(fr + 8 + 2 + 11);
      fclose(f);
      return off;
    }
    off += 8 + (long)xq_get_le32(fr);
  }
}

static void flip(int index, long off) {
  char games[400], path[500];
  snprintf(games, sizeof games, "%s/camp/games", g_dir);
  xq_seg_path(path, sizeof path, games, index);
  FILE *f = fopen(path, "r+b");
  assert_non_null(f);
  assert_int_equal(fseek(f, off, SEEK_SET), 0);
  int c = fgetc(f);
  assert_int_equal(fseek(f, off, SEEK_SET), 0);
  fputc(c ^ 0x10, f);
  fclose(f);
}

static void test_flipped_bytes_quarantined(void **state) {
  (void)state;
  fresh_dir();
  g_extra = "--window=100000";
  g_extra2 = "--segment_bytes=4096"; /* a few games a file */
  void *ctx = zmq_ctx_new();
  start_coordinator();
  void *s = connect_dealer(ctx);
  hello(s);
  const int n = 30;
  uint64_t pos[MAX_SEQ] = {0}, last = 0;
  for (int q = 1; q <= n; q++) {
    send_acked(s, (uint64_t)q);
    Xqz__Envelope *r = status(s);
    pos[q] = r->status->positions - last;
    last = r->status->positions;
    xq_wire_free(&r);
  }
  kill_coordinator();
  zmq_close(s);
  int *idx, nseg;
  char games[400];
  snprintf(games, sizeof games, "%s/camp/games", g_dir);
  assert_int_equal(xq_seg_list(games, &idx, &nseg, NULL), 0);
  assert_true(nseg >= 3);
  int newest = idx[nseg - 1];
  free(idx);
  /* A byte inside the payload of record 1 of segment 1 and of the newest segment (which
   * must have a record after it). */
  uint64_t lost_a, lost_b, after;
  long a = record_offset(1, 1, &lost_a), b = record_offset(newest, 0, &lost_b);
  (void)record_offset(newest, 1, &after);
  flip(1, a + 40);
  flip(newest, b + 40);

  /* xqz games on the damaged files: the damage counted, the records after it read. */
  char cmd[1200];
  snprintf(cmd, sizeof cmd, "%s/tools/xqz games %s/camp --json >%s/games.json 2>%s/games.err",
           XQZ_BINARY_DIR, g_dir, g_dir, g_dir);
  assert_int_equal(system(cmd), 0);
  char path[500], text[65536];
  snprintf(path, sizeof path, "%s/games.json", g_dir);
  FILE *f = fopen(path, "r");
  size_t got = fread(text, 1, sizeof text - 1, f);
  fclose(f);
  text[got] = '\0';
  char want[64];
  snprintf(want, sizeof want, "\"games\":%d,", n - 2);
  assert_non_null(strstr(text, want)); /* the total row */
  assert_non_null(strstr(text, "\"damaged_runs\":2,"));

  g_coordinator = SHIPPED;
  start_coordinator();
  s = connect_dealer(ctx);
  hello(s);
  Xqz__Envelope *r = status(s);
  assert_int_equal(r->status->games, n - 2);
  assert_int_equal(r->status->positions, last - pos[lost_a] - pos[lost_b]);
  assert_int_equal(r->status->window_positions, r->status->positions);
  assert_int_equal(r->status->quarantine_files, 2);
  assert_true(r->status->quarantine_bytes > 0);
  xq_wire_free(&r);
  assert_int_equal(quarantined(), 2);
  assert_int_equal(log_count("moved to quarantine"), 2);
  assert_int_equal(log_count("damaged_runs_quarantined=2"), 1);
  kill_coordinator();
  zmq_close(s);
  stored_t st = stored();
  assert_int_equal(st.records, n - 2);
  for (int q = 1; q <= n; q++)
    assert_int_equal(st.count[q], (uint64_t)q == lost_a || (uint64_t)q == lost_b ? 0 : 1);
  assert_int_equal(st.damaged, 0); /* cut out of the files */
  assert_int_equal(st.tail, 0);
  assert_true(st.count[after] == 1);

  /* `xqz games` on the repaired campaign says what the quarantine holds. */
  snprintf(cmd, sizeof cmd, "%s/tools/xqz games %s/camp >%s/games.txt 2>&1", XQZ_BINARY_DIR,
           g_dir, g_dir);
  assert_int_equal(system(cmd), 0);
  snprintf(path, sizeof path, "%s/games.txt", g_dir);
  f = fopen(path, "r");
  got = fread(text, 1, sizeof text - 1, f);
  fclose(f);
  text[got] = '\0';
  assert_non_null(strstr(text, "2 runs of damaged bytes"));

  /* A second restart finds nothing new to repair. */
  start_coordinator();
  s = connect_dealer(ctx);
  hello(s);
  r = status(s);
  assert_int_equal(r->status->games, n - 2);
  xq_wire_free(&r);
  assert_int_equal(log_count("moved to quarantine"), 2);
  g_extra = "--gating=sprt";
  g_extra2 = "--seed=1";
  stop_and_clean(ctx, s);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_teardown(test_full_disk, teardown),
      cmocka_unit_test_teardown(test_fsync_failure_rewrites, teardown),
      cmocka_unit_test_teardown(test_fsync_fails_twice_stops, teardown),
      cmocka_unit_test_teardown(test_rollback_fails_seals, teardown),
      cmocka_unit_test_teardown(test_flipped_bytes_quarantined, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
