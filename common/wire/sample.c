/*
 * sample.c: compact training samples to and from the wire, every field of a peer's
 * message validated (records/sample.h is the sample itself).
 */
#include "wire/sample.h"

#include <math.h>
#include <string.h>

#include "rules/fen.h"
#include "rules/policy_index.h"
#include "rules/rules.h"

void xq_sample_to_proto(Xqz__Sample *msg, const xq_sample_t *s, uint32_t *idx_scratch,
                        float *prob_scratch) {
  xqz__sample__init(msg);
  msg->board.data = (uint8_t *)s->board;
  msg->board.len = XQ_SQUARES;
  msg->side = s->side;
  msg->rule60 = s->rule60;
  msg->repeated = s->repeated;
  for (int k = 0; k < s->npi; k++) {
    idx_scratch[k] = s->pi_index[k];
    prob_scratch[k] = s->pi_prob[k];
  }
  msg->n_pi_index = (size_t)s->npi;
  msg->pi_index = idx_scratch;
  msg->n_pi_prob = (size_t)s->npi;
  msg->pi_prob = prob_scratch;
  msg->z = s->z;
  if (s->has_survive) {
    msg->survive.data = (uint8_t *)s->survive;
    msg->survive.len = XQ_SURVIVE_BYTES;
  }
  if (s->has_reply) msg->reply = 1u + (uint32_t)s->reply_from * XQ_SQUARES + s->reply_to;
}

/* The survive field: absent (no target) or XQ_SURVIVE_BYTES bytes whose bits lie on the
 * sample's pieces only (s->board already taken from the message). */
static int survive_from_proto(xq_sample_t *s, const Xqz__Sample *msg, xq_errbuf_t *eb) {
  s->has_survive = false;
  memset(s->survive, 0, sizeof s->survive);
  if (msg->survive.len == 0) return 0;
  if (msg->survive.len != XQ_SURVIVE_BYTES || !msg->survive.data)
    return xq_err_set(eb, XQ_EFORMAT, "sample: survive field has %zu bytes, expected %d (one "
                      "bit per square) or none (no survival target)", msg->survive.len,
                      XQ_SURVIVE_BYTES);
  memcpy(s->survive, msg->survive.data, XQ_SURVIVE_BYTES);
  for (int sq = 0; sq < 8 * XQ_SURVIVE_BYTES; sq++)
    if (xq_sample_survives(s, sq) && (sq >= XQ_SQUARES || !s->board[sq]))
      return xq_err_set(eb, XQ_EFORMAT, "sample: survive bit %d set on %s", sq,
                        sq >= XQ_SQUARES ? "no square (the board has 90)" : "an empty square");
  s->has_survive = true;
  return 0;
}

/* The reply field: 0 (no target) or 1 + 90 * from + to, from holding a piece of the side
 * not to move (s->board already taken from the message), to another square. */
static int reply_from_proto(xq_sample_t *s, const Xqz__Sample *msg, xq_errbuf_t *eb) {
  s->has_reply = false;
  s->reply_from = s->reply_to = 0;
  if (msg->reply == 0) return 0;
  if (msg->reply > (uint32_t)XQ_SQUARES * XQ_SQUARES)
    return xq_err_set(eb, XQ_EFORMAT, "sample: reply %u, expected 0 (none) or 1 + 90 * from "
                      "+ to (at most %d)", msg->reply, XQ_SQUARES * XQ_SQUARES);
  int from = (int)(msg->reply - 1) / XQ_SQUARES, to = (int)(msg->reply - 1) % XQ_SQUARES;
  int pc = s->board[from];
  if (!pc || xq_pc_colour(pc) == (int)msg->side)
    return xq_err_set(eb, XQ_EFORMAT, "sample: reply from square %d, which holds %s", from,
                      pc ? "a piece of the side to move" : "no piece");
  if (to == from) return xq_err_set(eb, XQ_EFORMAT, "sample: reply from square %d to itself", from);
  s->has_reply = true;
  s->reply_from = (uint8_t)from;
  s->reply_to = (uint8_t)to;
  return 0;
}

int xq_sample_from_proto(xq_sample_t *s, xq_pos_t *pos, const Xqz__Sample *msg,
                         xq_errbuf_t *eb) {
  if (msg->board.len != XQ_SQUARES || !msg->board.data)
    return xq_err_set(eb, XQ_EFORMAT, "sample: board has %zu squares", msg->board.len);
  int kings[2] = {0, 0};
  for (int sq = 0; sq < XQ_SQUARES; sq++) {
    int pc = msg->board.data[sq];
    if (pc && (pc > 15 || xq_pc_type(pc) == 0))
      return xq_err_set(eb, XQ_EFORMAT, "sample: piece code %d on square %d", pc, sq);
    if (pc && xq_pc_type(pc) == XQ_KING) kings[xq_pc_colour(pc)]++;
    s->board[sq] = (uint8_t)pc;
  }
  if (kings[0] != 1 || kings[1] != 1)
    return xq_err_set(eb, XQ_EFORMAT, "sample: %d red and %d black kings", kings[0], kings[1]);
  if (msg->side > 1) return xq_err_set(eb, XQ_EFORMAT, "sample: side %u", msg->side);
  if (msg->rule60 > XQ_NO_CAPTURE_LIMIT)
    return xq_err_set(eb, XQ_EFORMAT, "sample: no-capture counter %u", msg->rule60);
  if (msg->n_pi_index != msg->n_pi_prob || msg->n_pi_index < 1 ||
      msg->n_pi_index > XQ_MAX_MOVES)
    return xq_err_set(eb, XQ_EFORMAT, "sample: %zu policy indices, %zu probabilities",
                      msg->n_pi_index, msg->n_pi_prob);
  double sum = 0.0;
  for (size_t k = 0; k < msg->n_pi_index; k++) {
    if (msg->pi_index[k] >= XQ_POLICY_SIZE)
      return xq_err_set(eb, XQ_EFORMAT, "sample: policy index %u", msg->pi_index[k]);
    float p = msg->pi_prob[k];
    if (!isfinite(p) || p < 0.0f || p > 1.0f)
      return xq_err_set(eb, XQ_EFORMAT, "sample: probability %g", (double)p);
    s->pi_index[k] = (uint16_t)msg->pi_index[k];
    s->pi_prob[k] = p;
    sum += p;
  }
  if (fabs(sum - 1.0) > 1e-3)
    return xq_err_set(eb, XQ_EFORMAT, "sample: probabilities sum to %g", sum);
  if (!(msg->z >= -1.0f && msg->z <= 1.0f))
    return xq_err_set(eb, XQ_EFORMAT, "sample: z %g", (double)msg->z);
  xq_errbuf_t feb = {{0}};
  int rc = xq_sample_board_position(pos, s->board, (int)msg->side, (int)msg->rule60, &feb);
  if (rc) return xq_err_set(eb, XQ_EFORMAT, "sample: impossible position: %s", feb.msg);
  if ((rc = survive_from_proto(s, msg, eb))) return rc;
  if ((rc = reply_from_proto(s, msg, eb))) return rc;
  s->side = (uint8_t)msg->side;
  s->rule60 = (uint16_t)msg->rule60;
  s->repeated = msg->repeated;
  s->npi = (int)msg->n_pi_index;
  s->z = msg->z;
  return 0;
}
