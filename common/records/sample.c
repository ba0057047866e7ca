/*
 * sample.c: compact training samples: mirrored, colour-swapped, encoded to input planes
 * through the one encoding function (nn_encode_board), their survival and reply targets
 * laid out in the planes' frame, and turned back into a position (checked by the rules).
 */
#include "records/sample.h"

#include <assert.h>
#include <string.h>

#include "nn/encode.h"
#include "rules/fen.h"
#include "rules/policy_index.h"

/* Moves the survival bits of every square sq to square to(sq), as the board moves, and
 * the reply's squares with them. */
static void permute_squares(xq_sample_t *s, int (*to)(int)) {
  xq_sample_t t;
  memset(t.survive, 0, sizeof t.survive);
  for (int sq = 0; sq < XQ_SQUARES; sq++)
    if (xq_sample_survives(s, sq)) xq_sample_set_survives(&t, to(sq), true);
  memcpy(s->survive, t.survive, sizeof s->survive);
  if (s->has_reply) {
    s->reply_from = (uint8_t)to(s->reply_from);
    s->reply_to = (uint8_t)to(s->reply_to);
  }
}

void xq_sample_mirror(xq_sample_t *s) {
  uint8_t b[XQ_SQUARES];
  for (int sq = 0; sq < XQ_SQUARES; sq++) b[xq_sq_mirror(sq)] = s->board[sq];
  memcpy(s->board, b, XQ_SQUARES);
  for (int k = 0; k < s->npi; k++) s->pi_index[k] = (uint16_t)xq_policy_mirror(s->pi_index[k]);
  permute_squares(s, xq_sq_mirror);
}

void xq_sample_colour_swap(xq_sample_t *s) {
  uint8_t b[XQ_SQUARES];
  for (int sq = 0; sq < XQ_SQUARES; sq++) {
    int pc = s->board[sq];
    b[xq_sq_flip(sq)] = pc ? (uint8_t)xq_pc_make(!xq_pc_colour(pc), xq_pc_type(pc)) : 0;
  }
  memcpy(s->board, b, XQ_SQUARES);
  s->side = s->side == XQ_RED ? XQ_BLACK : XQ_RED;
  permute_squares(s, xq_sq_flip);
}

/* The planes' frame: nn_encode_board's square as the side to move sees it. */
static int planes_square(const xq_sample_t *s, int sq) {
  return s->side == XQ_RED ? sq : xq_sq_flip(sq);
}

int xq_sample_survival(uint8_t *mask, uint8_t *target, const xq_sample_t *s) {
  memset(mask, 0, XQ_SQUARES);
  memset(target, 0, XQ_SQUARES);
  if (!s->has_survive) return 0;
  int k = 0;
  for (int sq = 0; sq < XQ_SQUARES; sq++) {
    int pc = s->board[sq];
    if (!pc || xq_pc_type(pc) == XQ_KING) continue;
    int vsq = planes_square(s, sq);
    mask[vsq] = 1;
    target[vsq] = xq_sample_survives(s, sq);
    k++;
  }
  return k;
}

bool xq_sample_reply(int16_t sq[2], const xq_sample_t *s) {
  sq[0] = sq[1] = -1;
  if (!s->has_reply) return false;
  sq[0] = (int16_t)planes_square(s, s->reply_from);
  sq[1] = (int16_t)planes_square(s, s->reply_to);
  return true;
}

void xq_sample_encode(float *planes, const xq_sample_t *s, int nplanes) {
  nn_encode_board(planes, s->board, s->side, s->rule60, s->repeated, nplanes);
}

int xq_sample_board_position(xq_pos_t *pos, const uint8_t *board, int side, int rule60,
                             xq_errbuf_t *eb) {
  /* Set up square by square and checked by the rules (xq_pos_setup_done), as a FEN of the
   * board would be parsed, without printing or parsing text: this runs for every sample of
   * every training step. */
  assert(side == XQ_RED || side == XQ_BLACK);
  xq_pos_clear(pos);
  if (rule60 < 0 || rule60 > XQ_FEN_RULE60_MAX)
    return xq_err_set(eb, XQ_EFEN, "no-capture counter %d is out of range", rule60);
  for (int sq = 0; sq < XQ_SQUARES; sq++)
    if (board[sq]) {
      assert(board[sq] <= 15 && xq_pc_type(board[sq]) != 0);
      xq_pos_put(pos, sq, board[sq]);
    }
  pos->rule60 = (uint16_t)rule60;
  return xq_pos_setup_done(pos, side, eb);
}

void xq_sample_position(xq_pos_t *pos, const xq_sample_t *s) {
  int rc = xq_sample_board_position(pos, s->board, s->side, s->rule60, NULL);
  assert(rc == 0);
  (void)rc;
}
