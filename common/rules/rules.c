/*
 * rules.c: deciding whether a game is over, who won, and why. Repetition is read from
 * the position's own history stack: the current key is compared with the keys of the
 * earlier positions with the same side to move since the last capture (a capture can
 * never be undone, so older positions cannot repeat).
 */
#include "rules/movegen.h"
#include "rules/rules.h"

/* Checks for threefold repetition. On a repetition, returns true and sets *out. */
static bool repetition(const xq_pos_t *pos, xq_outcome_t *out) {
  int ply = pos->ply, oldest = ply - pos->rule60, seen = 0, first = -1;
  if (oldest < 0) oldest = 0;
  for (int i = ply - 2; i >= oldest; i -= 2)
    if (pos->hist[i].key == pos->key && ++seen == 2) {
      first = i;
      break;
    }
  if (first < 0) return false;
  /* The cycle is every move from the first of the three occurrences to now. A side that
   * gave check with each of its moves in it is perpetually checking. */
  bool all_check[2] = {true, true};
  for (int j = first; j < ply; j++) {
    int mover = pos->side ^ ((ply - j) & 1);
    if (!pos->hist[j].check) all_check[mover] = false;
  }
  out->reason = XQ_REASON_REPETITION;
  out->result = XQ_RESULT_DRAW;
  if (all_check[XQ_RED] != all_check[XQ_BLACK]) {
    out->reason = XQ_REASON_PERPETUAL_CHECK;
    out->result = all_check[XQ_RED] ? XQ_RESULT_BLACK_WIN : XQ_RESULT_RED_WIN;
  }
  return true;
}

static bool has_attackers(const xq_pos_t *pos) {
  for (int c = 0; c < 2; c++)
    for (int t = XQ_HORSE; t <= XQ_PAWN; t++)
      if (pos->count[xq_pc_make(c, t)]) return true;
  return false;
}

xq_outcome_t xq_adjudicate(xq_pos_t *pos, int max_plies) {
  xq_outcome_t out = {XQ_RESULT_NONE, XQ_REASON_NONE};
  xq_move_t moves[XQ_MAX_MOVES];
  if (xq_gen_legal(pos, moves) == 0) {
    out.result = pos->side == XQ_RED ? XQ_RESULT_BLACK_WIN : XQ_RESULT_RED_WIN;
    out.reason = pos->in_check ? XQ_REASON_CHECKMATE : XQ_REASON_STALEMATE;
    return out;
  }
  if (repetition(pos, &out)) return out;
  out.result = XQ_RESULT_DRAW;
  /* The length cap comes last: it is a setting, not a rule, so a game that the rules end
   * on the same ply is reported as the rules end it (the coordinator's ingest check
   * adjudicates without the cap, which a record does not carry). */
  if (pos->rule60 >= XQ_NO_CAPTURE_LIMIT) out.reason = XQ_REASON_NO_CAPTURE;
  else if (!has_attackers(pos)) out.reason = XQ_REASON_NO_ATTACKERS;
  else if (max_plies > 0 && pos->ply >= max_plies) out.reason = XQ_REASON_LENGTH_CAP;
  else out.result = XQ_RESULT_NONE;
  return out;
}

const char *xq_result_name(xq_result_t r) {
  switch (r) {
    case XQ_RESULT_RED_WIN: return "1-0";
    case XQ_RESULT_BLACK_WIN: return "0-1";
    case XQ_RESULT_DRAW: return "1/2-1/2";
    default: return "*";
  }
}

const char *xq_reason_name(xq_reason_t r) {
  static const char *names[] = {"none", "checkmate", "stalemate", "repetition",
                                "perpetual-check", "no-capture", "length-cap",
                                "no-attackers", "resign"};
  return (unsigned)r < sizeof names / sizeof names[0] ? names[r] : "unknown";
}
