/*
 * sample.c: compact training samples: made from a replayed game record (the
 * coordinator's ingest check), mirrored, encoded to input planes through the one
 * encoding function (nn_encode_board), and converted to and from the wire with every
 * field of a peer's message validated.
 */
#include "wire/sample.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nn/encode.h"
#include "rules/fen.h"
#include "rules/material.h"
#include "rules/movegen.h"
#include "rules/policy_index.h"
#include "rules/rules.h"

/* z for `side` given the game result. */
static float result_z(xq_result_t r, int side) {
  if (r == XQ_RESULT_DRAW) return 0.0f;
  int winner = r == XQ_RESULT_RED_WIN ? XQ_RED : XQ_BLACK;
  return winner == side ? 1.0f : -1.0f;
}

/* Checks the recorded end of the game against the rules on the final position. */
static int check_result(const xq_game_record_t *rec, xq_pos_t *pos, xq_errbuf_t *eb) {
  if (rec->result == XQ_RESULT_NONE)
    return xq_err_set(eb, XQ_EFORMAT, "record: game has no result");
  xq_outcome_t o = xq_adjudicate(pos, 0);
  if (rec->reason == XQ_REASON_RESIGN) {
    xq_result_t loss = pos->side == XQ_RED ? XQ_RESULT_BLACK_WIN : XQ_RESULT_RED_WIN;
    if (o.result != XQ_RESULT_NONE)
      return xq_err_set(eb, XQ_EFORMAT, "record: resignation in a finished game (%s, %s)",
                        xq_result_name(o.result), xq_reason_name(o.reason));
    if (rec->result != loss)
      return xq_err_set(eb, XQ_EFORMAT, "record: resignation by %s recorded as %s",
                        pos->side == XQ_RED ? "red" : "black", xq_result_name(rec->result));
    return 0;
  }
  if (rec->reason == XQ_REASON_LENGTH_CAP) {
    /* The cap is a setting the record does not carry: the game must simply not have
     * ended otherwise, and a capped game is a draw. */
    if (o.result != XQ_RESULT_NONE)
      return xq_err_set(eb, XQ_EFORMAT, "record: length cap claimed but the rules give %s (%s)",
                        xq_result_name(o.result), xq_reason_name(o.reason));
    if (rec->result != XQ_RESULT_DRAW)
      return xq_err_set(eb, XQ_EFORMAT, "record: length cap recorded as %s",
                        xq_result_name(rec->result));
    return 0;
  }
  if (o.result != rec->result || o.reason != rec->reason)
    return xq_err_set(eb, XQ_EFORMAT, "record: recorded %s (%s) but the rules give %s (%s)",
                      xq_result_name(rec->result), xq_reason_name(rec->reason),
                      xq_result_name(o.result), xq_reason_name(o.reason));
  return 0;
}

int xq_samples_from_record(const xq_game_record_t *rec, xq_sample_t *out, int cap,
                           xq_errbuf_t *eb) {
  return xq_samples_from_record_adjudicated(rec, out, cap, 0.0, eb);
}

int xq_samples_from_record_adjudicated(const xq_game_record_t *rec, xq_sample_t *out, int cap,
                                       double material_pawns, xq_errbuf_t *eb) {
  if (rec->nplies < 0 || rec->nplies > XQ_MAX_HISTORY)
    return xq_err_set(eb, XQ_EFORMAT, "record: %d plies", rec->nplies);
  xq_pos_t *pos = malloc(sizeof *pos);
  if (!pos) return xq_err_set(eb, XQ_ENOMEM, "record: out of memory");
  int rc = xq_fen_parse(pos, rec->start_fen, eb);
  if (rc) goto out;
  int n = 0;
  for (int i = 0; i < rec->nplies; i++) {
    const xq_record_ply_t *pl = &rec->plies[i];
    if (pl->full) {
      if (pl->nvisits < 1 || pl->nvisits > XQ_MAX_MOVES || pl->visit_off < 0 ||
          pl->visit_off > rec->nvisits - pl->nvisits) {
        rc = xq_err_set(eb, XQ_EFORMAT, "record: ply %d has %d visit entries", i, pl->nvisits);
        goto out;
      }
      uint8_t mask[XQ_POLICY_SIZE];
      nn_encode_legal(pos, mask, NULL, NULL);
      xq_sample_t *s = n < cap ? &out[n] : NULL;
      double total = 0.0;
      for (int k = 0; k < pl->nvisits; k++) {
        const xq_visit_t *v = &rec->visits[pl->visit_off + k];
        if (v->index >= XQ_POLICY_SIZE || !mask[v->index]) {
          rc = xq_err_set(eb, XQ_EFORMAT, "record: ply %d: visits on policy index %u, "
                          "not a legal move", i, v->index);
          goto out;
        }
        total += v->count;
      }
      if (total <= 0.0) {
        rc = xq_err_set(eb, XQ_EFORMAT, "record: ply %d: no visits", i);
        goto out;
      }
      if (s) {
        memcpy(s->board, pos->board, XQ_SQUARES);
        s->side = pos->side;
        s->rule60 = pos->rule60;
        s->repeated = nn_encode_is_repetition(pos);
        s->npi = pl->nvisits;
        for (int k = 0; k < pl->nvisits; k++) {
          const xq_visit_t *v = &rec->visits[pl->visit_off + k];
          s->pi_index[k] = v->index;
          s->pi_prob[k] = (float)(v->count / total);
        }
        s->z = 0.0f;
        /* The worker's root value is a training target only when mixed in; a hostile
         * value is bounded like any target. */
        float q = pl->value;
        s->q = q >= -1.0f && q <= 1.0f ? q : q > 1.0f ? 1.0f : q < -1.0f ? -1.0f : 0.0f;
      }
      n++;
    }
    if (!xq_move_is_legal(pos, pl->move)) {
      rc = xq_err_set(eb, XQ_EMOVE, "record: ply %d move %#x is illegal", i, pl->move);
      goto out;
    }
    if (pos->ply + 1 >= XQ_MAX_HISTORY) xq_pos_reset_history(pos);
    xq_pos_make(pos, pl->move);
  }
  rc = check_result(rec, pos, eb);
  if (rc) goto out;
  int m = n < cap ? n : cap;
  xq_result_t result = rec->result;
  if (rec->reason == XQ_REASON_LENGTH_CAP) result = xq_material_result(pos->board, material_pawns);
  for (int k = 0; k < m; k++) out[k].z = result_z(result, out[k].side);
  rc = m;
out:
  free(pos);
  return rc;
}

void xq_sample_mirror(xq_sample_t *s) {
  uint8_t b[XQ_SQUARES];
  for (int sq = 0; sq < XQ_SQUARES; sq++) b[xq_sq_mirror(sq)] = s->board[sq];
  memcpy(s->board, b, XQ_SQUARES);
  for (int k = 0; k < s->npi; k++) s->pi_index[k] = (uint16_t)xq_policy_mirror(s->pi_index[k]);
}

void xq_sample_colour_swap(xq_sample_t *s) {
  uint8_t b[XQ_SQUARES];
  for (int sq = 0; sq < XQ_SQUARES; sq++) {
    int pc = s->board[sq];
    b[xq_sq_flip(sq)] = pc ? (uint8_t)xq_pc_make(!xq_pc_colour(pc), xq_pc_type(pc)) : 0;
  }
  memcpy(s->board, b, XQ_SQUARES);
  s->side = s->side == XQ_RED ? XQ_BLACK : XQ_RED;
}

void xq_sample_encode(float *planes, const xq_sample_t *s) {
  nn_encode_board(planes, s->board, s->side, s->rule60, s->repeated);
}

/* Sets pos from a board through FEN, so the rules' own validation (kings, piece counts,
 * reachable squares, the side not to move not in check) applies and the key, side and
 * check flag are set the one way the rules set them. */
static int board_position(xq_pos_t *pos, const uint8_t *board, int side, int rule60,
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
  int rc = board_position(pos, s->board, s->side, s->rule60, NULL);
  assert(rc == 0);
  (void)rc;
}

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
}

int xq_sample_from_proto(xq_sample_t *s, const Xqz__Sample *msg, xq_errbuf_t *eb) {
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
  xq_pos_t *pos = malloc(sizeof *pos);
  if (!pos) return xq_err_set(eb, XQ_ENOMEM, "sample: out of memory");
  xq_errbuf_t feb = {{0}};
  int rc = board_position(pos, s->board, (int)msg->side, (int)msg->rule60, &feb);
  free(pos);
  if (rc) return xq_err_set(eb, XQ_EFORMAT, "sample: impossible position: %s", feb.msg);
  s->side = (uint8_t)msg->side;
  s->rule60 = (uint16_t)msg->rule60;
  s->repeated = msg->repeated;
  s->npi = (int)msg->n_pi_index;
  s->z = msg->z;
  return 0;
}
