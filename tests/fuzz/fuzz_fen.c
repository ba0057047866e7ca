/*
 * fuzz_fen.c: libFuzzer target for xq_fen_parse. The input is copied into a heap buffer
 * of exactly its size plus a NUL, so ASan catches any read past the terminator.
 *
 * Properties (abort on violation): a rejection is XQ_EFEN with a non-empty message; an
 * accepted position is self-consistent (counts, kings, key, check flag), prints to a FEN
 * that parses back to the same position and prints identically, and every legal move
 * makes and unmakes back to the same key and board with a correct incremental key.
 * Run: see docs/testing.md.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rules/board.h"
#include "rules/fen.h"
#include "rules/movegen.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                                  \
  do {                                                                               \
    if (!(cond)) {                                                                   \
      fprintf(stderr, "fuzz_fen: %s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
      abort();                                                                       \
    }                                                                                \
  } while (0)

static xq_pos_t pos, pos2; /* large (history stack): static, not on the stack */

static void check_position(void) {
  uint8_t count[16] = {0};
  for (int sq = 0; sq < XQ_SQUARES; sq++) {
    int pc = pos.board[sq];
    count[pc]++;
    if (pc && xq_pc_type(pc) == XQ_KING) CHECK(pos.king[xq_pc_colour(pc)] == sq);
  }
  CHECK(memcmp(count + 1, pos.count + 1, 15) == 0);
  CHECK(count[xq_pc_make(XQ_RED, XQ_KING)] == 1 && count[xq_pc_make(XQ_BLACK, XQ_KING)] == 1);
  CHECK(pos.key == xq_pos_compute_key(&pos));
  CHECK(pos.in_check == xq_in_check(&pos));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *fen = malloc(size + 1);
  if (!fen) return 0;
  memcpy(fen, data, size);
  fen[size] = 0;
  xq_errbuf_t eb;
  eb.msg[0] = 0;
  int rc = xq_fen_parse(&pos, fen, &eb);
  if (rc) {
    CHECK(rc == XQ_EFEN);
    CHECK(eb.msg[0] != 0);
    static const uint8_t empty[XQ_SQUARES];
    CHECK(memcmp(pos.board, empty, sizeof empty) == 0 && pos.key == 0); /* left cleared */
    free(fen);
    return 0;
  }
  check_position();

  char *printed = malloc(XQ_FEN_MAX), again[XQ_FEN_MAX];
  CHECK(printed);
  xq_fen_print(&pos, printed);
  CHECK(xq_fen_parse(&pos2, printed, &eb) == 0);
  CHECK(pos2.key == pos.key && memcmp(pos2.board, pos.board, sizeof pos.board) == 0);
  CHECK(pos2.side == pos.side && pos2.rule60 == pos.rule60);
  CHECK(xq_pos_fullmove(&pos2) == xq_pos_fullmove(&pos));
  xq_fen_print(&pos2, again);
  CHECK(strcmp(again, printed) == 0);

  xq_move_t moves[XQ_MAX_MOVES];
  int n = xq_gen_legal(&pos, moves);
  uint64_t key = pos.key;
  for (int i = 0; i < n; i++) {
    CHECK(xq_move_is_legal(&pos, moves[i]));
    xq_pos_make(&pos, moves[i]);
    CHECK(pos.key == xq_pos_compute_key(&pos));
    CHECK(!xq_attacked(&pos, pos.king[pos.side ^ 1], pos.side));
    CHECK(pos.in_check == xq_in_check(&pos));
    xq_pos_unmake(&pos);
    CHECK(pos.key == key);
    CHECK(memcmp(pos.board, pos2.board, sizeof pos.board) == 0);
  }
  free(printed);
  free(fen);
  return 0;
}
