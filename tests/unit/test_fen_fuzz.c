/*
 * test_fen_fuzz.c: seeded mutation fuzzing of the FEN parser and the move parsers, run
 * under AddressSanitizer in scripts/test.sh.
 *
 * Every input lives in a heap buffer of exactly strlen + 1 bytes, so a read past the NUL
 * is an ASan error. For every input:
 *   - xq_fen_parse returns 0 or XQ_EFEN and never crashes; a rejection carries a
 *     non-empty message;
 *   - an accepted position is self-consistent (piece counts, king squares, cached check
 *     flag, incremental key = recomputed key), prints to a FEN of at most XQ_FEN_MAX
 *     bytes that parses back to the same board, side, counters and key;
 *   - every legal move of it makes and unmakes back to the same key and board, and the
 *     key after the move equals the recomputed key;
 *   - xq_move_parse / xq_move_parse_legal on mutated move strings agree with a plain
 *     reference reading of the string and with the legal move list.
 * The libFuzzer targets in tests/fuzz/ check the same properties without a time limit.
 */
#include <ctype.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "rules/board.h"
#include "rules/fen.h"
#include "rules/movegen.h"
#include "rules/notation.h"
#include "ref_move_parse.h"

#define N_FEN_MUTANTS 200000
#define N_MOVE_MUTANTS 100000
#define MAX_INPUT 8192

static uint64_t rng_next(uint64_t *s) {
  uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
static size_t below(uint64_t *s, size_t n) { return n ? (size_t)(rng_next(s) % n) : 0; }

/* A copy of s in a heap buffer of exactly the string's size. */
static char *exact_copy(const char *s, size_t len) {
  char *p = malloc(len + 1);
  assert_non_null(p);
  memcpy(p, s, len);
  p[len] = 0;
  return p;
}

/* Valid seed positions: hand-picked ones plus positions of seeded random games. */
#define MAX_SEEDS 160
static char seeds[MAX_SEEDS][XQ_FEN_MAX];
static int n_seeds;

static const char *const hand_seeds[] = {
    XQ_START_FEN,
    "3ak4/4a4/9/9/9/9/9/2C3C2/9/4K4 w - - 0 1",
    "4k4/9/4c4/9/2p6/6P2/9/4C4/9/3K5 b - - 12 40",
    "3k1P3/4P4/9/9/9/9/9/9/9/4K4 b - - 0 1",
    "r3ka3/9/3N5/9/4P4/9/9/4C4/9/3K5 b - - 0 1",
    "2bakab2/9/2n1c1n2/p3p3p/2p3p2/2P3P2/P3P3P/2N1C1N2/4A4/2B1KAB2 w - - 0 1",
    "rheakaehr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RHEAKAEHR r",
    "4k4/9/9/9/9/9/9/9/9/3K5 w - - 119 200",
};

static void make_seeds(void) {
  static xq_pos_t pos;
  xq_errbuf_t eb;
  n_seeds = 0;
  for (size_t i = 0; i < sizeof hand_seeds / sizeof hand_seeds[0]; i++) {
    if (xq_fen_parse(&pos, hand_seeds[i], &eb)) fail_msg("seed %zu rejected: %s", i, eb.msg);
    snprintf(seeds[n_seeds++], XQ_FEN_MAX, "%s", hand_seeds[i]);
  }
  uint64_t rng = 7;
  while (n_seeds < MAX_SEEDS) {
    xq_pos_startpos(&pos);
    int plies = 10 + (int)below(&rng, 140);
    for (int p = 0; p < plies; p++) {
      xq_move_t moves[XQ_MAX_MOVES];
      int n = xq_gen_legal(&pos, moves);
      if (!n) break;
      xq_pos_make(&pos, moves[below(&rng, (size_t)n)]);
    }
    xq_fen_print(&pos, seeds[n_seeds++]);
  }
}

/* ---- FEN mutation ---- */

static const char fen_alphabet[] = "KABNRCPEHkabnrcpeh0123456789/ -wrbWRB\t\n+#.";

static char rand_fen_char(uint64_t *rng) {
  if (below(rng, 4)) return fen_alphabet[below(rng, sizeof fen_alphabet - 1)];
  return (char)(1 + below(rng, 255)); /* any byte but NUL */
}

/* Applies one random mutation to buf (length *len, capacity MAX_INPUT - 1). */
static void mutate(char *buf, size_t *len, uint64_t *rng, const char *alphabet) {
  size_t n = *len;
  switch (below(rng, 12)) {
    case 0: /* flip a bit */
      if (n) {
        size_t i = below(rng, n);
        buf[i] ^= (char)(1 << below(rng, 8));
        if (!buf[i]) buf[i] = '?';
      }
      break;
    case 1: /* replace a byte */
      if (n) buf[below(rng, n)] = alphabet ? alphabet[below(rng, strlen(alphabet))] : rand_fen_char(rng);
      break;
    case 2: /* insert bytes */
    {
      size_t k = 1 + below(rng, 4), at = below(rng, n + 1);
      if (n + k >= MAX_INPUT) break;
      memmove(buf + at + k, buf + at, n - at);
      for (size_t i = 0; i < k; i++)
        buf[at + i] = alphabet ? alphabet[below(rng, strlen(alphabet))] : rand_fen_char(rng);
      n += k;
      break;
    }
    case 3: /* delete a range */
      if (n) {
        size_t at = below(rng, n), k = 1 + below(rng, n - at < 6 ? n - at : 6);
        memmove(buf + at, buf + at + k, n - at - k);
        n -= k;
      }
      break;
    case 4: /* truncate */
      n = below(rng, n + 1);
      break;
    case 5: /* change a digit */
    {
      size_t start = below(rng, n + 1);
      for (size_t i = 0; i < n; i++) {
        size_t j = (start + i) % n;
        if (isdigit((unsigned char)buf[j])) {
          buf[j] = (char)('0' + below(rng, 10));
          break;
        }
      }
      break;
    }
    case 6: /* swap two bytes */
      if (n > 1) {
        size_t i = below(rng, n), j = below(rng, n);
        char t = buf[i];
        buf[i] = buf[j];
        buf[j] = t;
      }
      break;
    case 7: /* duplicate a chunk somewhere */
      if (n) {
        size_t from = below(rng, n), k = 1 + below(rng, n - from), at = below(rng, n + 1);
        if (n + k >= MAX_INPUT) break;
        char tmp[MAX_INPUT];
        memcpy(tmp, buf + from, k);
        memmove(buf + at + k, buf + at, n - at);
        memcpy(buf + at, tmp, k);
        n += k;
      }
      break;
    case 8: /* replace a piece letter by another piece letter (counts, squares) */
    {
      static const char pieces[] = "KABNRCPkabnrcp";
      for (int tries = 0; tries < 8 && n; tries++) {
        size_t i = below(rng, n);
        if (strchr(pieces, buf[i]) && buf[i]) {
          buf[i] = pieces[below(rng, sizeof pieces - 1)];
          break;
        }
      }
      break;
    }
    case 9: /* a long run of one character or a long number */
    {
      size_t k = 1 + below(rng, 3000), at = below(rng, n + 1);
      if (n + k >= MAX_INPUT) k = MAX_INPUT - 1 - n;
      char c = below(rng, 2) ? (char)('0' + below(rng, 10)) : rand_fen_char(rng);
      memmove(buf + at + k, buf + at, n - at);
      memset(buf + at, c, k);
      n += k;
      break;
    }
    case 10: /* pure garbage */
    {
      n = below(rng, below(rng, 2) ? 40 : 600);
      for (size_t i = 0; i < n; i++)
        buf[i] = alphabet ? alphabet[below(rng, strlen(alphabet))] : rand_fen_char(rng);
      break;
    }
    default: /* append a field */
    {
      static const char *const tails[] = {" w", " b", " - - 0 1", " 0", " 99999999999999999999",
                                          " 1000 65535", " 1001 1", " 0 0", " x", "  ", " -"};
      const char *t = tails[below(rng, sizeof tails / sizeof tails[0])];
      size_t k = strlen(t);
      if (n + k < MAX_INPUT) memcpy(buf + n, t, k), n += k;
      break;
    }
  }
  *len = n;
}

/* ---- properties of an accepted position ---- */

static void check_consistent(const xq_pos_t *pos, const char *what) {
  uint8_t count[16] = {0};
  for (int sq = 0; sq < XQ_SQUARES; sq++) {
    int pc = pos->board[sq];
    assert_true(pc == 0 || (xq_pc_type(pc) >= XQ_KING && xq_pc_type(pc) <= XQ_PAWN));
    count[pc]++;
    if (pc && xq_pc_type(pc) == XQ_KING) assert_int_equal(pos->king[xq_pc_colour(pc)], sq);
  }
  for (int pc = 1; pc < 16; pc++)
    if (pos->count[pc] != count[pc])
      fail_msg("%s: count[%d] is %d, board has %d", what, pc, pos->count[pc], count[pc]);
  assert_int_equal(count[xq_pc_make(XQ_RED, XQ_KING)], 1);
  assert_int_equal(count[xq_pc_make(XQ_BLACK, XQ_KING)], 1);
  if (pos->key != xq_pos_compute_key(pos)) fail_msg("%s: incremental key differs from recomputed", what);
  assert_int_equal(pos->in_check, xq_in_check(pos));
}

/* Every legal move makes and unmakes back to the same position. */
static void check_moves(xq_pos_t *pos, const char *fen) {
  xq_move_t moves[XQ_MAX_MOVES];
  int n = xq_gen_legal(pos, moves);
  uint8_t board[XQ_SQUARES];
  memcpy(board, pos->board, sizeof board);
  uint64_t key = pos->key;
  int side = pos->side, rule60 = pos->rule60;
  for (int i = 0; i < n; i++) {
    assert_true(xq_move_is_legal(pos, moves[i]));
    xq_pos_make(pos, moves[i]);
    if (pos->key != xq_pos_compute_key(pos)) {
      char mv[5];
      xq_move_print(moves[i], mv);
      fail_msg("key after %s differs from recomputed key (FEN %s)", mv, fen);
    }
    /* The mover's king is safe, as xq_attacked (a separate code path) sees it. */
    if (xq_attacked(pos, pos->king[pos->side ^ 1], pos->side)) {
      char mv[5];
      xq_move_print(moves[i], mv);
      fail_msg("legal move %s leaves its own king attacked (FEN %s)", mv, fen);
    }
    assert_int_equal(pos->in_check, xq_in_check(pos));
    xq_pos_unmake(pos);
    if (pos->key != key || memcmp(board, pos->board, sizeof board) || pos->side != side ||
        pos->rule60 != rule60) {
      char mv[5];
      xq_move_print(moves[i], mv);
      fail_msg("make/unmake of %s did not restore the position (FEN %s)", mv, fen);
    }
  }
}

/* Parses one input; on success checks every property above. Returns 1 if accepted. */
static int fuzz_one_fen(const char *input, size_t len) {
  static xq_pos_t pos, pos2;
  char *fen = exact_copy(input, len);
  xq_errbuf_t eb;
  eb.msg[0] = 0;
  int rc = xq_fen_parse(&pos, fen, &eb);
  if (rc) {
    if (rc != XQ_EFEN) fail_msg("xq_fen_parse returned %d, not XQ_EFEN, for '%s'", rc, fen);
    if (!eb.msg[0]) fail_msg("rejected FEN without a message: '%s'", fen);
    assert_true(strlen(eb.msg) < sizeof eb.msg);
    /* fen.h promises a cleared position after an error. */
    static const uint8_t empty[XQ_SQUARES];
    if (memcmp(pos.board, empty, sizeof empty) || pos.key != 0 || pos.ply != 0)
      fail_msg("rejected FEN '%s' left a non-empty position behind", fen);
    /* A NULL error buffer must be accepted too. */
    assert_int_equal(xq_fen_parse(&pos, fen, NULL), XQ_EFEN);
    free(fen);
    return 0;
  }
  check_consistent(&pos, fen);
  char *printed = malloc(XQ_FEN_MAX); /* exactly the documented size: ASan checks it */
  assert_non_null(printed);
  xq_fen_print(&pos, printed);
  if (xq_fen_parse(&pos2, printed, &eb))
    fail_msg("printed FEN '%s' of accepted '%s' is rejected: %s", printed, fen, eb.msg);
  if (pos2.key != pos.key || memcmp(pos2.board, pos.board, sizeof pos.board) ||
      pos2.side != pos.side || pos2.rule60 != pos.rule60 ||
      xq_pos_fullmove(&pos2) != xq_pos_fullmove(&pos))
    fail_msg("FEN '%s' printed as '%s' does not parse back to the same position", fen, printed);
  char again[XQ_FEN_MAX];
  xq_fen_print(&pos2, again);
  assert_string_equal(again, printed);
  check_moves(&pos, fen);
  free(printed);
  free(fen);
  return 1;
}

static void test_fen_mutants(void **state) {
  (void)state;
  static char buf[MAX_INPUT];
  uint64_t rng = 0xF00DF00Dull;
  int accepted = 0;
  for (int i = 0; i < n_seeds; i++) accepted += fuzz_one_fen(seeds[i], strlen(seeds[i]));
  assert_int_equal(accepted, n_seeds);
  accepted = 0;
  for (int it = 0; it < N_FEN_MUTANTS; it++) {
    const char *seed = seeds[below(&rng, (size_t)n_seeds)];
    size_t len = strlen(seed);
    memcpy(buf, seed, len);
    int k = 1 + (int)below(&rng, below(&rng, 2) ? 2 : 6);
    for (int j = 0; j < k; j++) mutate(buf, &len, &rng, NULL);
    accepted += fuzz_one_fen(buf, len);
  }
  fprintf(stderr, "FEN fuzz: %d mutants, %d accepted, %d rejected\n", N_FEN_MUTANTS, accepted,
          N_FEN_MUTANTS - accepted);
  /* The mutants must exercise both paths, or the test proves little. */
  assert_true(accepted > N_FEN_MUTANTS / 50);
  assert_true(accepted < N_FEN_MUTANTS / 2);
}

/* Edge cases no mutation is likely to produce. */
static void test_fen_edges(void **state) {
  (void)state;
  static const char *const bad[] = {
      "", " ", "/", "9", "9/9/9/9/9/9/9/9/9/9 w", "4k4/9/9/9/9/9/9/9/9/4K4 w",
      "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR",
      "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR x",
      "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR/ w",
      "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR9 w",
      "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - -1 1",
      "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 0",
      "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1 extra",
      "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR ww",
      "3k5/9/9/9/9/9/9/9/9/3K5 w", /* kings facing: the side not to move is in check */
      "4k4/9/9/9/4R4/9/9/9/9/3K5 w", /* Black, not to move, in check */
      "4k4/9/9/9/9/9/9/9/9/3K4P w", /* a pawn behind its own lines */
      "4k4/9/9/9/9/9/9/9/4A4/4K4 w", /* advisor off its diagonals? e1 is fine: see below */
  };
  static xq_pos_t pos;
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    char *fen = exact_copy(bad[i], strlen(bad[i]));
    xq_errbuf_t eb = {{0}};
    int rc = xq_fen_parse(&pos, fen, &eb);
    if (i + 1 == sizeof bad / sizeof bad[0]) {
      /* e1 is an advisor square: this one must be accepted. */
      if (rc) fail_msg("'%s' rejected: %s", fen, eb.msg);
    } else {
      if (rc != XQ_EFEN) fail_msg("'%s' accepted, or wrong code %d", fen, rc);
      assert_true(eb.msg[0] != 0);
    }
    free(fen);
  }
  /* A very long FEN, and one without any terminator inside the first page. */
  size_t n = 1 << 20;
  char *big = malloc(n + 1);
  assert_non_null(big);
  for (size_t i = 0; i < n; i++) big[i] = "9/"[i & 1];
  big[n] = 0;
  assert_int_equal(xq_fen_parse(&pos, big, NULL), XQ_EFEN);
  memset(big, '1', n);
  assert_int_equal(xq_fen_parse(&pos, big, NULL), XQ_EFEN);
  memcpy(big, XQ_START_FEN, strlen(XQ_START_FEN));
  assert_int_equal(xq_fen_parse(&pos, big, NULL), XQ_EFEN);
  free(big);
  assert_int_equal(xq_fen_parse(&pos, NULL, NULL), XQ_EFEN);
}

/* The counters survive a parse and print unchanged, at the limits the parser accepts. */
static void test_fen_counters_round_trip(void **state) {
  (void)state;
  static const long fullmoves[] = {1, 2, 999, 9999, 65535, 65536, 70000, 99999, 100000};
  static const long halfmoves[] = {0, 1, 119, 120, 999, 1000};
  static xq_pos_t pos;
  for (size_t i = 0; i < sizeof fullmoves / sizeof fullmoves[0]; i++)
    for (size_t j = 0; j < sizeof halfmoves / sizeof halfmoves[0]; j++) {
      char fen[XQ_FEN_MAX + 32], printed[XQ_FEN_MAX];
      snprintf(fen, sizeof fen, "4k4/9/9/9/9/9/9/9/9/3K5 b - - %ld %ld", halfmoves[j],
               fullmoves[i]);
      if (xq_fen_parse(&pos, fen, NULL)) continue; /* rejecting is fine; changing is not */
      xq_fen_print(&pos, printed);
      if (strcmp(fen, printed) != 0)
        fail_msg("FEN '%s' was accepted but prints as '%s'", fen, printed);
    }
}

/* ---- move strings ---- */


static const char move_alphabet[] = "abcdefghijABCDEFGHIJ0123456789 \t-x+=";

static void test_move_mutants(void **state) {
  (void)state;
  static xq_pos_t pos;
  static char buf[MAX_INPUT];
  uint64_t rng = 0xBADC0FFEEull;
  int parsed = 0, legal = 0;
  for (int it = 0; it < N_MOVE_MUTANTS; it++) {
    const char *seed_fen = seeds[below(&rng, (size_t)n_seeds)];
    assert_int_equal(xq_fen_parse(&pos, seed_fen, NULL), 0);
    xq_move_t moves[XQ_MAX_MOVES];
    int n = xq_gen_legal(&pos, moves);
    size_t len;
    if (n && below(&rng, 4)) {
      xq_move_print(moves[below(&rng, (size_t)n)], buf);
      len = 4;
    } else { /* four random squares' worth of characters */
      len = 4;
      for (int k = 0; k < 4; k++) buf[k] = move_alphabet[below(&rng, sizeof move_alphabet - 1)];
    }
    int k = (int)below(&rng, 3);
    for (int j = 0; j < k; j++)
      mutate(buf, &len, &rng, below(&rng, 3) ? move_alphabet : NULL);
    char *s = exact_copy(buf, len);

    xq_move_t m = 0, ref = ref_move_parse(s);
    xq_errbuf_t eb;
    eb.msg[0] = 0;
    int rc = xq_move_parse(s, &m, &eb);
    if (rc) {
      if (rc != XQ_EMOVE) fail_msg("xq_move_parse returned %d for '%s'", rc, s);
      if (!eb.msg[0]) fail_msg("rejected move '%s' without a message", s);
      if (ref) fail_msg("move '%s' rejected (%s) but reads as a move", s, eb.msg);
    } else {
      parsed++;
      if (m != ref) fail_msg("move '%s' parsed as %d, reference reads %d", s, m, ref);
    }

    uint64_t key = pos.key;
    uint8_t board[XQ_SQUARES];
    memcpy(board, pos.board, sizeof board);
    bool in_list = false;
    for (int i = 0; i < n && ref; i++) in_list |= moves[i] == ref;
    eb.msg[0] = 0;
    m = 0;
    rc = xq_move_parse_legal(&pos, s, &m, &eb);
    if (rc) {
      if (rc != XQ_EMOVE) fail_msg("xq_move_parse_legal returned %d for '%s'", rc, s);
      if (!eb.msg[0]) fail_msg("rejected move '%s' without a message", s);
      if (in_list) fail_msg("legal move '%s' rejected: %s (FEN %s)", s, eb.msg, seed_fen);
    } else {
      legal++;
      if (!in_list || m != ref) fail_msg("'%s' accepted as legal but is not (FEN %s)", s, seed_fen);
    }
    if (pos.key != key || memcmp(board, pos.board, sizeof board))
      fail_msg("xq_move_parse_legal changed the position");
    free(s);
  }
  fprintf(stderr, "move fuzz: %d strings, %d parsed, %d legal\n", N_MOVE_MUTANTS, parsed, legal);
  assert_true(parsed > N_MOVE_MUTANTS / 10);
  assert_true(legal > N_MOVE_MUTANTS / 20);
}

/* xq_move_is_legal accepts any 16-bit value and agrees with the legal move list. */
static void test_move_is_legal_all_values(void **state) {
  (void)state;
  static xq_pos_t pos;
  for (int s = 0; s < n_seeds; s += 8) {
    assert_int_equal(xq_fen_parse(&pos, seeds[s], NULL), 0);
    xq_move_t moves[XQ_MAX_MOVES];
    int n = xq_gen_legal(&pos, moves);
    static uint8_t is_listed[1 << 16];
    memset(is_listed, 0, sizeof is_listed);
    for (int i = 0; i < n; i++) is_listed[moves[i]] = 1;
    for (uint32_t v = 0; v < (1u << 16); v++)
      if (xq_move_is_legal(&pos, (xq_move_t)v) != (bool)is_listed[v])
        fail_msg("xq_move_is_legal(%u) disagrees with the legal list (FEN %s)", v, seeds[s]);
  }
}

static int setup(void **state) {
  (void)state;
  make_seeds();
  return 0;
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_fen_mutants),
      cmocka_unit_test(test_fen_edges),
      cmocka_unit_test(test_fen_counters_round_trip),
      cmocka_unit_test(test_move_mutants),
      cmocka_unit_test(test_move_is_legal_all_values),
  };
  return cmocka_run_group_tests(tests, setup, NULL);
}
