/*
 * sample.c: compact training samples: mirrored, colour-swapped, encoded to input planes
 * through the one encoding function (nn_encode_board), their survival target laid out in
 * the planes' frame, and turned back into a position.
 */
#include "train/sample.h"

#include <assert.h>
#include <string.h>

#include "nn/encode.h"
#include "rules/fen.h"
#include "rules/policy_index.h"

/* Moves the survival bits of every square sq to square to(sq), as the board moves. */
static void permute_survive(xq_sample_t *s, int (*to)(int)) {
  xq_sample_t t;
  memset(t.survive, 0, sizeof t.survive);
  for (int sq = 0; sq < XQ_SQUARES; sq++)
    if (xq_sample_survives(s, sq)) xq_sample_set_survives(&t, to(sq), true);
  memcpy(s->survive, t.survive, sizeof s->survive);
}

void xq_sample_mirror(xq_sample_t *s) {
  uint8_t b[XQ_SQUARES];
  for (int sq = 0; sq < XQ_SQUARES; sq++) b[xq_sq_mirror(sq)] = s->board[sq];
  memcpy(s->board, b, XQ_SQUARES);
  for (int k = 0; k < s->npi; k++) s->pi_index[k] = (uint16_t)xq_policy_mirror(s->pi_index[k]);
  permute_survive(s, xq_sq_mirror);
}

void xq_sample_colour_swap(xq_sample_t *s) {
  uint8_t b[XQ_SQUARES];
  for (int sq = 0; sq < XQ_SQUARES; sq++) {
    int pc = s->board[sq];
    b[xq_sq_flip(sq)] = pc ? (uint8_t)xq_pc_make(!xq_pc_colour(pc), xq_pc_type(pc)) : 0;
  }
  memcpy(s->board, b, XQ_SQUARES);
  s->side = s->side == XQ_RED ? XQ_BLACK : XQ_RED;
  permute_survive(s, xq_sq_flip);
}

int xq_sample_survival(uint8_t *mask, uint8_t *target, const xq_sample_t *s) {
  memset(mask, 0, XQ_SQUARES);
  memset(target, 0, XQ_SQUARES);
  if (!s->has_survive) return 0;
  int k = 0;
  for (int sq = 0; sq < XQ_SQUARES; sq++) {
    int pc = s->board[sq];
    if (!pc || xq_pc_type(pc) == XQ_KING) continue;
    /* The planes' frame: nn_encode_board's square as the side to move sees it. */
    int vsq = s->side == XQ_RED ? sq : xq_sq_flip(sq);
    mask[vsq] = 1;
    target[vsq] = xq_sample_survives(s, sq);
    k++;
  }
  return k;
}

void xq_sample_encode(float *planes, const xq_sample_t *s, int nplanes) {
  nn_encode_board(planes, s->board, s->side, s->rule60, s->repeated, nplanes);
}

int xq_sample_board_position(xq_pos_t *pos, const uint8_t *board, int side, int rule60,
                             xq_errbuf_t *eb) {
  char fen[XQ_FEN_MAX];
  xq_pos_clear(pos);
  for (int sq = 0; sq < XQ_SQUARES; sq++)
    if (board[sq]) xq_pos_put(pos, sq, board[sq]);
  pos->rule60 = (uint16_t)rule60;
  xq_fen_print(pos, fen);
  char *w = strchr(fen, ' ');
  if (w && side == XQ_BLACK) w[1] = 'b';
  return xq_fen_parse(pos, fen, eb);
}

void xq_sample_position(xq_pos_t *pos, const xq_sample_t *s) {
  int rc = xq_sample_board_position(pos, s->board, s->side, s->rule60, NULL);
  assert(rc == 0);
  (void)rc;
}
