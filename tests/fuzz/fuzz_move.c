/*
 * fuzz_move.c: libFuzzer target for xq_move_parse and xq_move_parse_legal. The first
 * input byte picks one of a few positions; the rest, copied into a heap buffer of exactly
 * its size plus a NUL, is the move string.
 *
 * Properties (abort on violation): rejections are XQ_EMOVE with a non-empty message;
 * xq_move_parse agrees with a plain reference reading of the string; parse_legal accepts
 * exactly the strings naming a move of the legal list and never changes the position.
 * Run: see docs/testing.md.
 */
#include <ctype.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rules/board.h"
#include "rules/fen.h"
#include "rules/movegen.h"
#include "rules/notation.h"
#include "../support/ref_move_parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                                   \
  do {                                                                                \
    if (!(cond)) {                                                                    \
      fprintf(stderr, "fuzz_move: %s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
      abort();                                                                        \
    }                                                                                 \
  } while (0)

static const char *const fens[] = {
    XQ_START_FEN,
    "r3ka3/9/3N5/9/4P4/9/9/4C4/9/3K5 b - - 0 1",
    "3k1P3/4P4/9/9/9/9/9/9/9/4K4 b - - 0 1",
    "2bakab2/9/2n1c1n2/p3p3p/2p3p2/2P3P2/P3P3P/2N1C1N2/4A4/2B1KAB2 w - - 0 1",
};
#define N_FENS (sizeof fens / sizeof fens[0])

static xq_pos_t pos[N_FENS];
static int ready;


int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!ready) {
    for (size_t i = 0; i < N_FENS; i++) CHECK(xq_fen_parse(&pos[i], fens[i], NULL) == 0);
    ready = 1;
  }
  if (size == 0) return 0;
  xq_pos_t *p = &pos[data[0] % N_FENS];
  char *s = malloc(size);
  if (!s) return 0;
  memcpy(s, data + 1, size - 1);
  s[size - 1] = 0;

  xq_errbuf_t eb;
  xq_move_t m = 0, ref = ref_move_parse(s);
  eb.msg[0] = 0;
  int rc = xq_move_parse(s, &m, &eb);
  if (rc) CHECK(rc == XQ_EMOVE && eb.msg[0] && !ref);
  else CHECK(m == ref);

  xq_move_t moves[XQ_MAX_MOVES];
  int n = xq_gen_legal(p, moves);
  int in_list = 0;
  for (int i = 0; i < n && ref; i++) in_list |= moves[i] == ref;
  uint64_t key = p->key;
  eb.msg[0] = 0;
  rc = xq_move_parse_legal(p, s, &m, &eb);
  if (rc) CHECK(rc == XQ_EMOVE && eb.msg[0] && !in_list);
  else CHECK(in_list && m == ref);
  CHECK(p->key == key && p->ply == 0);
  free(s);
  return 0;
}
