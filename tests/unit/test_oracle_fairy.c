/*
 * test_oracle_fairy.c: differential test of the rules core against an independent engine,
 * Debian's fairy-stockfish (/usr/games/fairy-stockfish, installed by scripts/bootstrap.sh).
 *
 * One engine process lives for the whole test, driven over two pipes with UCI. With
 * "Protocol ucci" it prints moves in ICCS coordinates (ranks 0..9 from Red's side), the
 * same as ours; engine_start checks that by asking for the start position's moves.
 * "go perft N" prints one "move: count" line per legal move, then "Nodes searched: N".
 *
 * Checks:
 *   - seeded random games: at every ply our legal-move set equals the engine's;
 *   - perft(3), move by move, on hand-picked endgame and special-rule positions and on
 *     positions sampled from those games.
 * The engine reads any side letter but 'w' as Black and never rejects illegal positions,
 * so it only ever sees FENs our parser accepted, reprinted by xq_fen_print ('w' or 'b').
 * A missing binary is a failure, never a skip: the test must run wherever CI runs.
 */
#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "rules/board.h"
#include "rules/fen.h"
#include "rules/movegen.h"
#include "rules/notation.h"

#define FAIRY_PATH "/usr/games/fairy-stockfish"
#define ENGINE_TIMEOUT_MS 20000 /* per line; perft 3 takes milliseconds */

#define N_GAMES 300
#define MAX_PLIES 150
#define SAMPLE_EVERY_GAMES 5 /* perft(3) on plies 30, 90, 140 of every 5th game */

/* ---- a tiny seeded RNG (splitmix64), local so the test depends on nothing else ---- */

static uint64_t rng_next(uint64_t *s) {
  uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/* ---- the engine process ---- */

typedef struct {
  pid_t pid;
  int to_fd;   /* engine's stdin */
  int from_fd; /* engine's stdout */
  char buf[1 << 16];
  size_t len; /* bytes buffered in buf */
} engine_t;

static engine_t eng = {.pid = -1, .to_fd = -1, .from_fd = -1};

static void engine_send(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void engine_send(const char *fmt, ...) {
  char line[512];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  assert_true(n > 0 && (size_t)n < sizeof line);
  for (int off = 0; off < n;) {
    ssize_t w = write(eng.to_fd, line + off, (size_t)(n - off));
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) fail_msg("writing to fairy-stockfish failed: %s", strerror(errno));
    off += (int)w;
  }
}

/* Reads one line (without its newline) into out; fails the test on EOF or timeout. */
static void engine_read_line(char *out, size_t cap) {
  for (;;) {
    char *nl = memchr(eng.buf, '\n', eng.len);
    if (nl) {
      size_t n = (size_t)(nl - eng.buf);
      if (n && eng.buf[n - 1] == '\r') n--;
      if (n >= cap) n = cap - 1;
      memcpy(out, eng.buf, n);
      out[n] = 0;
      size_t used = (size_t)(nl - eng.buf) + 1;
      memmove(eng.buf, eng.buf + used, eng.len - used);
      eng.len -= used;
      return;
    }
    if (eng.len == sizeof eng.buf) fail_msg("fairy-stockfish printed an overlong line");
    struct pollfd pfd = {.fd = eng.from_fd, .events = POLLIN};
    int pr = poll(&pfd, 1, ENGINE_TIMEOUT_MS);
    if (pr < 0 && errno == EINTR) continue;
    if (pr == 0) fail_msg("fairy-stockfish did not answer within %d ms", ENGINE_TIMEOUT_MS);
    ssize_t r = read(eng.from_fd, eng.buf + eng.len, sizeof eng.buf - eng.len);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) fail_msg("fairy-stockfish closed its output (did it crash?)");
    eng.len += (size_t)r;
  }
}

static void engine_wait_for(const char *token) {
  char line[4096];
  do engine_read_line(line, sizeof line);
  while (strcmp(line, token) != 0);
}

/* One line of a perft divide: a move and its node count. */
typedef struct {
  xq_move_t move;
  uint64_t count;
} divide_t;

/* Runs "go perft depth" on fen; fills out (sorted by move) and returns the number of root
 * moves; *total gets the engine's node count. */
static int engine_perft(const char *fen, int depth, divide_t *out, uint64_t *total) {
  char line[4096];
  int n = 0;
  engine_send("position fen %s\ngo perft %d\n", fen, depth);
  for (;;) {
    engine_read_line(line, sizeof line);
    unsigned long long v;
    if (sscanf(line, "Nodes searched: %llu", &v) == 1) {
      *total = v;
      break;
    }
    char mv[16];
    if (sscanf(line, "%15[a-i0-9]: %llu", mv, &v) != 2) continue; /* info lines etc. */
    xq_move_t m;
    xq_errbuf_t eb;
    if (strlen(mv) != 4 || xq_move_parse(mv, &m, &eb))
      fail_msg("fairy-stockfish printed a move we cannot read: '%s' (FEN %s)", line, fen);
    assert_true(n < XQ_MAX_MOVES);
    out[n].move = m;
    out[n].count = v;
    n++;
  }
  return n;
}

static void engine_start(void) {
  if (access(FAIRY_PATH, X_OK) != 0)
    fail_msg("%s is missing (%s). The oracle test needs Debian's fairy-stockfish; "
             "scripts/bootstrap.sh installs it (apt-get install fairy-stockfish).",
             FAIRY_PATH, strerror(errno));
  int to[2], from[2];
  assert_int_equal(pipe(to), 0);
  assert_int_equal(pipe(from), 0);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    dup2(to[0], STDIN_FILENO);
    dup2(from[1], STDOUT_FILENO);
    close(to[0]), close(to[1]), close(from[0]), close(from[1]);
    execl(FAIRY_PATH, FAIRY_PATH, (char *)NULL);
    _exit(127);
  }
  close(to[0]);
  close(from[1]);
  eng.pid = pid;
  eng.to_fd = to[1];
  eng.from_fd = from[0];
  eng.len = 0;
  signal(SIGPIPE, SIG_IGN); /* a dead engine must fail the test, not kill it */
  engine_send("uci\n");
  engine_wait_for("uciok");
  engine_send("setoption name UCI_Variant value xiangqi\n"
              "setoption name Threads value 1\n"
              "setoption name Protocol value ucci\n"
              "isready\n");
  engine_wait_for("readyok");

  /* Verify the coordinate convention: Red's rook a0 must be able to go to a1. */
  divide_t d[XQ_MAX_MOVES];
  uint64_t total;
  int n = engine_perft(XQ_START_FEN, 1, d, &total);
  assert_int_equal(n, 44);
  assert_int_equal(total, 44);
  bool found = false;
  for (int i = 0; i < n; i++)
    if (d[i].move == xq_mv_make(xq_sq(0, 0), xq_sq(0, 1))) found = true;
  if (!found)
    fail_msg("fairy-stockfish does not print ICCS ranks 0-9 (no a0a1 in the start "
             "position); has the meaning of 'Protocol ucci' changed?");
}

static void engine_stop(void) {
  if (eng.pid < 0) return;
  engine_send("quit\n");
  close(eng.to_fd);
  close(eng.from_fd);
  int status;
  waitpid(eng.pid, &status, 0);
  eng.pid = -1;
}

/* ---- our side ---- */

static int cmp_divide(const void *a, const void *b) {
  const divide_t *x = a, *y = b;
  return (int)x->move - (int)y->move;
}

static int our_divide(xq_pos_t *pos, int depth, divide_t *out) {
  xq_move_t moves[XQ_MAX_MOVES];
  int n = xq_gen_legal(pos, moves);
  for (int i = 0; i < n; i++) {
    out[i].move = moves[i];
    xq_pos_make(pos, moves[i]);
    out[i].count = xq_perft(pos, depth - 1);
    xq_pos_unmake(pos);
  }
  return n;
}

/* The FEN the engine gets: ours, with the counters reset so that no move-count rule of
 * the engine can end the game inside the perft tree. */
static void oracle_fen(const xq_pos_t *pos, char *buf) {
  xq_fen_print(pos, buf);
  char *sp = strchr(buf, ' ');
  assert_non_null(sp);
  snprintf(sp, XQ_FEN_MAX - (size_t)(sp - buf), " %c - - 0 1", pos->side == XQ_RED ? 'w' : 'b');
}

/* Compares our perft divide with the engine's; prints every difference. Returns the
 * number of differences (0 = agree). */
static int compare_divide(xq_pos_t *pos, int depth, const char *label) {
  char fen[XQ_FEN_MAX];
  oracle_fen(pos, fen);
  divide_t ours[XQ_MAX_MOVES], theirs[XQ_MAX_MOVES];
  uint64_t their_total, our_total = 0;
  int n_ours = our_divide(pos, depth, ours);
  int n_theirs = engine_perft(fen, depth, theirs, &their_total);
  for (int i = 0; i < n_ours; i++) our_total += ours[i].count;
  qsort(ours, (size_t)n_ours, sizeof *ours, cmp_divide);
  qsort(theirs, (size_t)n_theirs, sizeof *theirs, cmp_divide);
  int diffs = 0, i = 0, j = 0;
  char mv[5];
  while (i < n_ours || j < n_theirs) {
    if (j == n_theirs || (i < n_ours && ours[i].move < theirs[j].move)) {
      xq_move_print(ours[i].move, mv);
      if (!diffs++) fprintf(stderr, "MISMATCH (%s) perft %d of %s\n", label, depth, fen);
      fprintf(stderr, "  %s: ours only (%llu)\n", mv, (unsigned long long)ours[i].count);
      i++;
    } else if (i == n_ours || theirs[j].move < ours[i].move) {
      xq_move_print(theirs[j].move, mv);
      if (!diffs++) fprintf(stderr, "MISMATCH (%s) perft %d of %s\n", label, depth, fen);
      fprintf(stderr, "  %s: fairy-stockfish only (%llu)\n", mv,
              (unsigned long long)theirs[j].count);
      j++;
    } else {
      if (ours[i].count != theirs[j].count) {
        xq_move_print(ours[i].move, mv);
        if (!diffs++) fprintf(stderr, "MISMATCH (%s) perft %d of %s\n", label, depth, fen);
        fprintf(stderr, "  %s: ours %llu, fairy-stockfish %llu\n", mv,
                (unsigned long long)ours[i].count, (unsigned long long)theirs[j].count);
      }
      i++, j++;
    }
  }
  if (!diffs && our_total != their_total) {
    fprintf(stderr, "MISMATCH (%s) perft %d of %s: total ours %llu, fairy-stockfish %llu\n",
            label, depth, fen, (unsigned long long)our_total, (unsigned long long)their_total);
    diffs++;
  }
  return diffs;
}

/* ---- tests ---- */

static int setup(void **state) {
  (void)state;
  engine_start();
  return 0;
}

static int teardown(void **state) {
  (void)state;
  engine_stop();
  return 0;
}

/* Positions sampled from the random games for the perft(3) test. */
#define MAX_SAMPLES 192
static char samples[MAX_SAMPLES][XQ_FEN_MAX];
static int n_samples;

static void test_random_games(void **state) {
  (void)state;
  static xq_pos_t pos;
  uint64_t seed = 20240601;
  long plies = 0, mismatches = 0;
  int ends[2] = {0}; /* mate or stalemate, length cap */
  for (int g = 0; g < N_GAMES; g++) {
    xq_pos_startpos(&pos);
    int ply;
    for (ply = 0; ply < MAX_PLIES; ply++) {
      char label[64];
      snprintf(label, sizeof label, "game %d ply %d", g, ply);
      int d = compare_divide(&pos, 1, label);
      if (d) mismatches++;
      if (mismatches >= 5) fail_msg("too many mismatches, stopping (see above)");
      plies++;
      if (g % SAMPLE_EVERY_GAMES == 0 && (ply == 30 || ply == 90 || ply == 140) && n_samples < MAX_SAMPLES)
        xq_fen_print(&pos, samples[n_samples++]);
      xq_move_t moves[XQ_MAX_MOVES];
      int n = xq_gen_legal(&pos, moves);
      if (n == 0) {
        ends[0]++;
        break;
      }
      /* Prefer captures half the time, so that games reach sparse endgames. */
      xq_move_t caps[XQ_MAX_MOVES];
      int nc = 0;
      for (int i = 0; i < n; i++)
        if (pos.board[xq_mv_to(moves[i])]) caps[nc++] = moves[i];
      uint64_t r = rng_next(&seed);
      xq_move_t m = (nc && (r & 1)) ? caps[(r >> 1) % (uint64_t)nc] : moves[(r >> 1) % (uint64_t)n];
      xq_pos_make(&pos, m);
    }
    if (ply == MAX_PLIES) ends[1]++;
  }
  fprintf(stderr, "random games: %d games, %ld positions compared, %d ended in mate or "
          "stalemate, %d hit the %d-ply cap\n", N_GAMES, plies, ends[0], ends[1], MAX_PLIES);
  assert_int_equal(mismatches, 0);
}

/* Hand-picked positions: endgames and every special rule, each checked to depth 3. */
static const char *const hand_fens[] = {
    /* Start position. */
    XQ_START_FEN,
    /* Cannon endgame: two cannons, the kings' file screened by an advisor. */
    "3ak4/4a4/9/9/9/9/9/2C3C2/9/4K4 w - - 0 1",
    /* Cannon vs cannon, Black in check through its own cannon as the screen. */
    "4k4/9/4c4/9/2p6/6P2/9/4C4/9/3K5 b - - 0 1",
    /* Horse against two advisors. */
    "3k5/4a4/3a5/9/5N3/9/9/9/9/4K4 w - - 0 1",
    /* Kings on open adjacent files: neither may step onto the other's file. */
    "3k5/9/9/9/9/9/9/9/9/4K4 w - - 0 1",
    /* A horse pinned between the two kings (flying general): it may not move. */
    "4k4/9/9/9/4N4/9/9/9/9/4K4 w - - 0 1",
    /* Black in check from a rook on the open file. */
    "4k4/9/9/9/4R4/9/9/9/9/3K5 b - - 0 1",
    /* Pawns across the river moving sideways; Black stalemated by two pawns. */
    "3k1P3/4P4/9/9/9/9/9/9/9/4K4 b - - 0 1",
    /* Pawns across the river on both sides, Red's king in check from a pawn. */
    "3k5/9/9/2P1P1P2/9/9/9/9/4p4/4K4 w - - 0 1",
    /* Double check by horse and cannon. */
    "r3ka3/9/3N5/9/4P4/9/9/4C4/9/3K5 b - - 0 1",
    /* Horse legs and elephant eyes blocked, rook and cannon on the same line. */
    "2bakab2/9/2n1c1n2/p3p3p/2p3p2/2P3P2/P3P3P/2N1C1N2/4A4/2B1KAB2 w - - 0 1",
    /* Rook vs cannon and advisors, kings facing blocked by a single piece. */
    "3aka3/9/9/9/4c4/9/9/9/4R4/3AK4 w - - 0 1",
    /* A cannon checking over a screen that is itself pinned. */
    "4k4/4a4/9/9/9/4C4/9/9/9/3K5 b - - 0 1",
};

static void test_perft3_positions(void **state) {
  (void)state;
  static xq_pos_t pos;
  int failures = 0;
  size_t n_hand = sizeof hand_fens / sizeof hand_fens[0];
  for (size_t i = 0; i < n_hand; i++) {
    xq_errbuf_t eb;
    if (xq_fen_parse(&pos, hand_fens[i], &eb))
      fail_msg("hand-picked FEN %zu rejected: %s (%s)", i, eb.msg, hand_fens[i]);
    char label[32];
    snprintf(label, sizeof label, "hand-picked %zu", i);
    if (compare_divide(&pos, 3, label)) failures++;
  }
  for (int i = 0; i < n_samples; i++) {
    xq_errbuf_t eb;
    if (xq_fen_parse(&pos, samples[i], &eb))
      fail_msg("sampled FEN rejected: %s (%s)", eb.msg, samples[i]);
    char label[32];
    snprintf(label, sizeof label, "sampled %d", i);
    if (compare_divide(&pos, 3, label)) failures++;
  }
  fprintf(stderr, "perft(3): %zu hand-picked and %d sampled positions compared\n", n_hand,
          n_samples);
  assert_int_equal(failures, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_random_games),
      cmocka_unit_test(test_perft3_positions), /* uses positions the games sampled */
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
