/*
 * targets.c: the training targets of a game: the record replayed with the rules (the
 * coordinator's ingest check: legal moves, visits only on legal moves, a result the rules
 * give), one sample per full-search position with its visit distribution, and z from the
 * result (or, for a game stopped by the length cap, from the material on the final
 * board), and the survival target: each piece is followed through the moves by an
 * identity, so a sample's bit for a square says whether the piece there is still on the
 * final board; and the reply target: the squares of the next ply's move (the opponent's
 * answer), checked legal with every other move of the record.
 */
#include "records/targets.h"

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
  /* Piece identities: id[sq] names the piece on sq (1.. in start-position order, 0 =
   * empty); a move carries its piece's id, a capture overwrites the victim's. ids[k]
   * holds sample k's map until the end of the game says which ids survived. */
  int most = cap < rec->nplies ? cap : rec->nplies; /* samples this call can keep */
  size_t ncap = most > 0 ? (size_t)most : 0;
  uint8_t id[XQ_SQUARES], (*ids)[XQ_SQUARES] = malloc((ncap + 1) * sizeof *ids);
  if (!ids) {
    free(pos);
    return xq_err_set(eb, XQ_ENOMEM, "record: out of memory");
  }
  int rc = xq_fen_parse(pos, rec->start_fen, eb);
  if (rc) goto out;
  int nid = 0;
  for (int sq = 0; sq < XQ_SQUARES; sq++) id[sq] = pos->board[sq] ? (uint8_t)++nid : 0;
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
        memcpy(ids[n], id, XQ_SQUARES);
        s->has_reply = i + 1 < rec->nplies; /* the loop checks that move when it gets there */
        s->reply_from = s->has_reply ? (uint8_t)xq_mv_from(rec->plies[i + 1].move) : 0;
        s->reply_to = s->has_reply ? (uint8_t)xq_mv_to(rec->plies[i + 1].move) : 0;
      }
      n++;
    }
    if (!xq_move_is_legal(pos, pl->move)) {
      rc = xq_err_set(eb, XQ_EMOVE, "record: ply %d move %#x is illegal", i, pl->move);
      goto out;
    }
    if (pos->ply + 1 >= XQ_MAX_HISTORY) xq_pos_reset_history(pos);
    xq_pos_make(pos, pl->move);
    id[xq_mv_to(pl->move)] = id[xq_mv_from(pl->move)];
    id[xq_mv_from(pl->move)] = 0;
  }
  rc = check_result(rec, pos, eb);
  if (rc) goto out;
  int m = n < cap ? n : cap;
  xq_result_t result = rec->result;
  if (rec->reason == XQ_REASON_LENGTH_CAP) result = xq_material_result(pos->board, material_pawns);
  bool alive[XQ_SQUARES + 1] = {false}; /* by id: on the final board */
  for (int sq = 0; sq < XQ_SQUARES; sq++) alive[id[sq]] = id[sq] != 0;
  for (int k = 0; k < m; k++) {
    out[k].z = result_z(result, out[k].side);
    out[k].has_survive = true;
    memset(out[k].survive, 0, sizeof out[k].survive);
    for (int sq = 0; sq < XQ_SQUARES; sq++)
      if (ids[k][sq]) xq_sample_set_survives(&out[k], sq, alive[ids[k][sq]]);
  }
  rc = m;
out:
  free(ids);
  free(pos);
  return rc;
}
