/*
 * test_worker_replay.c: a worker whose self-play is a recorded campaign's games
 * (worker/replay.h, `xqz-worker --replay DIR --replay-minutes M`).
 *  - The source reads a campaign directory's games/ (or a games directory itself), every
 *    segment file in order; a record that does not decode is skipped and counted, a game
 *    without a full-search ply is left out, a record stored twice (same worker id and seq)
 *    is loaded once; the games are due at an even pace in positions, handed out once each,
 *    in order (one taken back is handed out again), then the source says it is done; a
 *    memory cap stops the load after the games that fit.
 *  - A directory without segment files, or with no usable game, is refused naming it.
 *  - The xqz-worker binary with --replay sends exactly the recorded games, byte for byte
 *    and in order, as its own (its worker id, new seqs), no faster than the pace; and it
 *    refuses a --replay DIR that holds no games, or --replay-minutes without --replay.
 */
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
#include <unistd.h>

#include "nn/encode.h"
#include "records/game_record.h"
#include "records/segment_file.h"
#include "replay.h"
#include "rules/board.h"
#include "rules/rules.h"
#include "support/crc32.h"
#include "wire/messages.h"
#include "wire/wire.h"

#include "fake_coord.h"

#define GAMES 8

static char g_dir[256];
static unsigned char *g_rec[GAMES];
static size_t g_len[GAMES];
static int g_full[GAMES];

static uint32_t xorshift(uint64_t *s) {
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return (uint32_t)(*s >> 11);
}

/* A random legal game of `plies` plies, every other one a full search; the encoded payload
 * in *buf (the caller frees it) and its full-search plies in *full. */
static void random_game(uint64_t seed, int plies, bool any_full, unsigned char **buf,
                        size_t *len, int *full) {
  xq_pos_t *pos = malloc(sizeof *pos);
  assert_non_null(pos);
  xq_game_record_t r;
  xq_record_init(&r);
  xq_pos_startpos(pos);
  xq_record_reset(&r, XQ_START_FEN, 0x77aa00 + seed);
  uint64_t rs = seed * 2654435761u + 1;
  *full = 0;
  for (int p = 0; p < plies; p++) {
    xq_move_t mv[XQ_MAX_MOVES];
    int idx[XQ_MAX_MOVES];
    int k = nn_encode_legal(pos, NULL, idx, mv);
    assert_true(k > 0);
    int pick = (int)(xorshift(&rs) % (uint32_t)k);
    bool f = any_full && p % 2 == 0;
    xq_visit_t vis[1] = {{(uint16_t)idx[pick], 10}};
    assert_int_equal(xq_record_add(&r, mv[pick], f, 0.0f, vis, 1), 0);
    *full += f;
    xq_pos_make(pos, mv[pick]);
  }
  r.result = XQ_RESULT_DRAW;
  r.reason = XQ_REASON_LENGTH_CAP;
  assert_int_equal(xq_record_encode(&r, buf, len), 0);
  xq_record_free(&r);
  free(pos);
}

static void put_u32(FILE *f, uint32_t v) {
  unsigned char b[4] = {(unsigned char)v, (unsigned char)(v >> 8), (unsigned char)(v >> 16),
                        (unsigned char)(v >> 24)};
  fwrite(b, 1, 4, f);
}

/* Appends one segment record (worker id "rec-w", seq) holding payload rec. */
static void put_record(FILE *f, uint64_t seq, const unsigned char *rec, size_t len) {
  const char *wid = "rec-w";
  size_t n = 2 + strlen(wid) + 8 + len;
  unsigned char *p = malloc(n);
  assert_non_null(p);
  p[0] = (unsigned char)strlen(wid);
  p[1] = 0;
  memcpy(p + 2, wid, strlen(wid));
  for (int i = 0; i < 8; i++) p[2 + strlen(wid) + i] = (unsigned char)(seq >> (8 * i));
  memcpy(p + 2 + strlen(wid) + 8, rec, len);
  put_u32(f, (uint32_t)n);
  put_u32(f, xq_crc32(0, p, n));
  fwrite(p, 1, n, f);
  free(p);
}

static FILE *new_segment(const char *games, int index) {
  char path[400];
  xq_seg_path(path, sizeof path, games, index);
  FILE *f = fopen(path, "wb");
  assert_non_null(f);
  fwrite(XQ_SEG_MAGIC, 1, 8, f);
  put_u32(f, XQ_SEG_VERSION);
  return f;
}

/* g_dir/camp/games: games 0-4 in segment 1; in segment 2 a record that does not decode,
 * game 2 again under its (worker id, seq), games 5-7 and a game without a full-search
 * ply. */
static int setup(void **state) {
  (void)state;
  snprintf(g_dir, sizeof g_dir, "/tmp/xqz-replay-XXXXXX");
  assert_non_null(mkdtemp(g_dir));
  char camp[300], games[320];
  snprintf(camp, sizeof camp, "%s/camp", g_dir);
  snprintf(games, sizeof games, "%s/games", camp);
  assert_int_equal(mkdir(camp, 0700), 0);
  assert_int_equal(mkdir(games, 0700), 0);
  for (int i = 0; i < GAMES; i++) random_game((uint64_t)i + 1, 6 + 3 * i, true, &g_rec[i], &g_len[i], &g_full[i]);
  FILE *f = new_segment(games, 1);
  for (int i = 0; i < 5; i++) put_record(f, (uint64_t)i + 1, g_rec[i], g_len[i]);
  fclose(f);
  f = new_segment(games, 2);
  const unsigned char junk[] = "not a game record at all";
  put_record(f, 100, junk, sizeof junk);
  put_record(f, 3, g_rec[2], g_len[2]); /* a rewritten record's copy (segments.h) */
  for (int i = 5; i < GAMES; i++) put_record(f, (uint64_t)i + 1, g_rec[i], g_len[i]);
  unsigned char *fast;
  size_t fast_len;
  int none;
  random_game(99, 10, false, &fast, &fast_len, &none);
  assert_int_equal(none, 0);
  put_record(f, 200, fast, fast_len);
  free(fast);
  fclose(f);
  return 0;
}

static int teardown(void **state) {
  (void)state;
  for (int i = 0; i < GAMES; i++) free(g_rec[i]);
  char cmd[400];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
  return system(cmd) == 0 ? 0 : -1;
}

static void test_source(void **state) {
  (void)state;
  char camp[300];
  snprintf(camp, sizeof camp, "%s/camp", g_dir);
  xq_replay_t *r = NULL;
  xq_errbuf_t eb = {{0}};
  if (xq_replay_open(&r, camp, 0.5, UINT64_MAX, &eb)) fail_msg("%s", eb.msg);
  uint64_t total = 0;
  for (int i = 0; i < GAMES; i++) total += (uint64_t)g_full[i];
  assert_int_equal(xq_replay_games(r), GAMES);
  assert_int_equal(xq_replay_positions(r), total);
  assert_int_equal(xq_replay_skipped(r), 1);
  assert_int_equal(xq_replay_repeats(r), 1);
  assert_false(xq_replay_left_out(r));
  /* Even in positions: game i is due when the positions before it have had their time. */
  uint64_t before = 0;
  for (int i = 0; i < GAMES; i++) {
    int64_t want = (int64_t)((double)before * 30000.0 / (double)total);
    int64_t got = xq_replay_due_ms(r, (size_t)i);
    if (got < want - 1 || got > want + 1) fail_msg("game %d due at %lld ms, want %lld", i, (long long)got, (long long)want);
    before += (uint64_t)g_full[i];
  }
  /* Handed out in order, each when due, once. */
  const int64_t t0 = 5000;
  for (int i = 0; i < GAMES; i++) {
    const unsigned char *rec = NULL;
    size_t len = 0;
    uint64_t pos = 0;
    int64_t wait = 0, due = t0 + xq_replay_due_ms(r, (size_t)i);
    if (i > 0) {
      assert_int_equal(xq_replay_next(r, due - 1, &rec, &len, &pos, &wait), 0);
      assert_int_equal(wait, 1);
    }
    assert_int_equal(xq_replay_next(r, due, &rec, &len, &pos, &wait), 1);
    assert_int_equal(len, g_len[i]);
    assert_memory_equal(rec, g_rec[i], len);
    assert_int_equal(pos, (uint64_t)g_full[i]);
    assert_int_equal(xq_replay_sent(r), (size_t)i + 1);
    if (i == 4) { /* not spooled: taken back, handed out again */
      xq_replay_unread(r);
      assert_int_equal(xq_replay_next(r, due, &rec, &len, &pos, &wait), 1);
      assert_memory_equal(rec, g_rec[i], len);
    }
  }
  const unsigned char *rec;
  size_t len;
  uint64_t pos;
  int64_t wait;
  assert_int_equal(xq_replay_next(r, t0 + 60000, &rec, &len, &pos, &wait), -1);
  xq_replay_free(&r);
  assert_null(r);

  /* The games directory itself; no pace: every game is due at once. */
  char games[320];
  snprintf(games, sizeof games, "%s/games", camp);
  if (xq_replay_open(&r, games, 0, UINT64_MAX, &eb)) fail_msg("%s", eb.msg);
  assert_int_equal(xq_replay_games(r), GAMES);
  for (int i = 0; i < GAMES; i++) {
    assert_int_equal(xq_replay_due_ms(r, (size_t)i), 0);
    assert_int_equal(xq_replay_next(r, 0, &rec, &len, &pos, &wait), 1);
  }
  xq_replay_free(&r);

  /* A memory cap: the first games that fit are loaded, in order; the rest are counted. */
  uint64_t cap = (uint64_t)(g_len[0] + g_len[1] + g_len[2]);
  if (xq_replay_open(&r, games, 0, cap, &eb)) fail_msg("%s", eb.msg);
  assert_int_equal(xq_replay_games(r), 3);
  assert_int_equal(xq_replay_positions(r), (uint64_t)(g_full[0] + g_full[1] + g_full[2]));
  assert_true(xq_replay_left_out(r));
  for (int i = 0; i < 3; i++) {
    assert_int_equal(xq_replay_next(r, 0, &rec, &len, &pos, &wait), 1);
    assert_memory_equal(rec, g_rec[i], len);
  }
  assert_int_equal(xq_replay_next(r, 0, &rec, &len, &pos, &wait), -1);
  xq_replay_free(&r);
}

static void test_refusals(void **state) {
  (void)state;
  xq_replay_t *r = NULL;
  xq_errbuf_t eb = {{0}};
  char empty[300];
  snprintf(empty, sizeof empty, "%s/empty", g_dir);
  assert_int_equal(mkdir(empty, 0700), 0);
  assert_int_equal(xq_replay_open(&r, empty, 1, UINT64_MAX, &eb), XQ_EIO);
  assert_null(r);
  if (!strstr(eb.msg, empty) || !strstr(eb.msg, "no segment files"))
    fail_msg("the empty directory is not named: %s", eb.msg);
  /* Segment files holding nothing usable. */
  char junk[300];
  snprintf(junk, sizeof junk, "%s/junk", g_dir);
  assert_int_equal(mkdir(junk, 0700), 0);
  FILE *f = new_segment(junk, 1);
  const unsigned char bad[] = "garbage";
  put_record(f, 1, bad, sizeof bad);
  fclose(f);
  assert_int_equal(xq_replay_open(&r, junk, 1, UINT64_MAX, &eb), XQ_EINVAL);
  assert_null(r);
  if (!strstr(eb.msg, "no stored game") || !strstr(eb.msg, "1 records did not decode"))
    fail_msg("%s", eb.msg);
}

typedef struct {
  fake_coord_t c;
  int n;                  /* games received (first copies) */
  uint64_t seq[64];
  int order[64];          /* recorded game index of each, -1 when it matches none */
  double first_s, last_s; /* arrival of the first and the last */
} fake_t;

static void serve(void *arg) {
  fake_t *f = arg;
  uint8_t rid[256];
  size_t rid_len;
  Xqz__Envelope *in = fake_coord_recv(&f->c, rid, &rid_len);
  if (!in) return;
  Xqz__SelfplaySettings s = XQZ__SELFPLAY_SETTINGS__INIT;
  s.sims = 8;
  s.fast_sims = 4;
  s.full_frac = 0.5f;
  s.max_plies = 60;
  switch (in->body_case) {
  case XQZ__ENVELOPE__BODY_HELLO:
    /* The views' precision column says what the worker's self-play is: the recording. */
    assert_string_equal(in->hello->precision, "replay");
    fake_coord_welcome(&f->c, rid, rid_len, in, 0, &s, 200);
    break;
  case XQZ__ENVELOPE__BODY_JOB_REQUEST:
    fake_coord_selfplay(&f->c, rid, rid_len, in->request_id, 0, &s, 3);
    break;
  case XQZ__ENVELOPE__BODY_GAME: {
    const Xqz__GameRecord *g = in->game;
    assert_string_equal(g->worker_id, "replayer");
    int k = 0;
    while (k < f->n && f->seq[k] != g->seq) k++;
    if (k == f->n && f->n < 64) {
      int match = -1;
      for (int i = 0; i < GAMES; i++)
        if (g->record.len == g_len[i] && !memcmp(g->record.data, g_rec[i], g_len[i])) match = i;
      f->seq[f->n] = g->seq;
      f->order[f->n++] = match;
      if (f->n == 1) f->first_s = fake_now_s();
      f->last_s = fake_now_s();
    }
    fake_coord_ack(&f->c, rid, rid_len, in);
    break;
  }
  default:
    break;
  }
  xq_wire_free(&in);
}

static void test_worker_sends_the_recording(void **state) {
  (void)state;
  fake_t f = {0};
  fake_coord_open(&f.c, false);
  char camp[300], wdir[300], logp[340];
  snprintf(camp, sizeof camp, "%s/camp", g_dir);
  snprintf(wdir, sizeof wdir, "%s/w", g_dir);
  snprintf(logp, sizeof logp, "%s/w.log", g_dir);
  assert_int_equal(mkdir(wdir, 0700), 0);
  /* 0.1 minutes: the last game is due 6 s times the share of positions before it. */
  const char *const args[] = {"--replay", camp, "--replay-minutes", "0.1", "--progress", "1", NULL};
  pid_t pid = fake_worker_start(&f.c, wdir, "replayer", logp, NULL, args);
  double t0 = fake_now_s();
  while (f.n < GAMES && fake_now_s() - t0 < 60) serve(&f);
  /* The next task finds the recording spent and says so. */
  while (fake_log_count(logp, "replay finished", NULL) == 0 && fake_now_s() - t0 < 70) serve(&f);
  fake_worker_stop(pid, serve, &f);
  fake_coord_close(&f.c);
  if (f.n != GAMES) fail_msg("the worker sent %d games of the %d recorded", f.n, GAMES);
  for (int i = 0; i < GAMES; i++)
    if (f.order[i] != i) fail_msg("game %d sent is recorded game %d", i, f.order[i]);
  uint64_t total = 0, before_last = 0;
  for (int i = 0; i < GAMES; i++) total += (uint64_t)g_full[i];
  for (int i = 0; i < GAMES - 1; i++) before_last += (uint64_t)g_full[i];
  double due_s = 6.0 * (double)before_last / (double)total;
  /* The first game's send may lag the replay's clock (a slow spool write): a second's slack. */
  if (f.last_s - f.first_s < due_s - 1.0)
    fail_msg("the last game came %.2f s after the first; the pace says %.2f s", f.last_s - f.first_s, due_s);
  assert_int_equal(fake_log_count(logp, "replaying instead of self-play", "games=8"), 1);
  assert_int_equal(fake_log_count(logp, "records stored twice are sent once", "repeats=1"), 1);
  assert_int_equal(fake_log_count(logp, "replay finished", NULL), 1);
}

/* Runs xqz-worker with args (the coordinator unreachable: it must stop before connecting)
 * and checks that it exits 2 saying `said` and `more` (NULL: anything) on one line. */
static void worker_refuses(const char *args, const char *said, const char *more) {
  char cmd[1200], out[300];
  snprintf(out, sizeof out, "%s/refuse.out", g_dir);
  snprintf(cmd, sizeof cmd, "'%s/worker/xqz-worker' %s --coordinator tcp://127.0.0.1:9 >'%s' 2>&1",
           XQZ_BINARY_DIR, args, out);
  int st = system(cmd);
  assert_true(WIFEXITED(st));
  assert_int_equal(WEXITSTATUS(st), 2);
  assert_int_equal(fake_log_count(out, said, more), 1);
}

static void test_worker_refuses_bad_replay(void **state) {
  (void)state;
  char args[400], empty[300];
  snprintf(empty, sizeof empty, "%s/empty2", g_dir);
  assert_int_equal(mkdir(empty, 0700), 0);
  snprintf(args, sizeof args, "--replay '%s'", empty);
  worker_refuses(args, "--replay", "no segment files");
  worker_refuses("--replay-minutes 5", "--replay-minutes needs --replay DIR", NULL);
  /* The memory cap alone, even at its default value, is a mistake said so. */
  worker_refuses("--replay-max-mb 4096", "--replay-max-mb needs --replay DIR", NULL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_source),
      cmocka_unit_test(test_refusals),
      cmocka_unit_test(test_worker_sends_the_recording),
      cmocka_unit_test(test_worker_refuses_bad_replay),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
