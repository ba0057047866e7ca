/*
 * round.c: a population's round robin (round.h): its players, its pairings' matches, the
 * hand-out of their pairs in turn, and the rating of the players from their results.
 */
#include "population/round.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

void xqc_round_close(xqc_round_t *r) {
  for (int k = 0; k < r->npairings; k++) xqc_gate_close(&r->pairing[k].gate);
  r->open = false;
  r->nplayers = r->npairings = r->next = 0;
}

void xqc_round_begin(xqc_round_t *r, uint64_t number, int64_t open_step) {
  xqc_round_close(r);
  r->open = true;
  r->number = number;
  r->open_step = open_step;
}

int xqc_round_add_player(xqc_round_t *r, int slot, uint64_t net, int64_t step,
                         xq_errbuf_t *eb) {
  if (slot < -1 || slot >= XQC_MEMBERS_MAX || net == 0)
    return xq_err_set(eb, XQ_EINVAL, "round %" PRIu64 ": player of slot %d with net %016" PRIx64
                      ": the slot must be -1 (the best net) or 0 to %d, the net not 0",
                      r->number, slot, net, XQC_MEMBERS_MAX - 1);
  if (r->nplayers >= XQC_ROUND_PLAYERS)
    return xq_err_set(eb, XQ_ERANGE, "round %" PRIu64 ": more than %d players", r->number,
                      XQC_ROUND_PLAYERS);
  for (int i = 0; i < r->nplayers; i++)
    if (r->player[i].slot == slot || r->player[i].net == net)
      return xq_err_set(eb, XQ_EINVAL, "round %" PRIu64 ": slot %d or net %016" PRIx64
                        " is a player already", r->number, slot, net);
  r->player[r->nplayers] = (xqc_round_player_t){slot, net, step};
  return r->nplayers++;
}

int xqc_round_add_pairing(xqc_round_t *r, int a, int b, uint64_t match_id, int npairs,
                          xq_errbuf_t *eb) {
  if (a < 0 || b < 0 || a >= r->nplayers || b >= r->nplayers || a == b)
    return xq_err_set(eb, XQ_EINVAL, "round %" PRIu64 ": pairing of players %d and %d, of %d",
                      r->number, a, b, r->nplayers);
  if (npairs <= 0)
    return xq_err_set(eb, XQ_EINVAL, "round %" PRIu64 ": a pairing of %d pairs", r->number,
                      npairs);
  if (r->npairings >= XQC_ROUND_PAIRINGS)
    return xq_err_set(eb, XQ_ERANGE, "round %" PRIu64 ": more than %d pairings", r->number,
                      XQC_ROUND_PAIRINGS);
  xqc_round_pairing_t *p = &r->pairing[r->npairings];
  const xqc_round_player_t *pa = &r->player[a], *pb = &r->player[b];
  int rc = xqc_gate_open_pairs(&p->gate, npairs, match_id, pa->net, pb->net, 0, pa->step, eb);
  if (rc < 0) return rc;
  p->a = a;
  p->b = b;
  r->npairings++;
  return 0;
}

int xqc_round_open(xqc_round_t *r, uint64_t number, int64_t open_step,
                   const xqc_round_player_t *players, int n, int games,
                   uint64_t first_match_id, xq_errbuf_t *eb) {
  if (n < 2 || n > XQC_ROUND_PLAYERS || games < 2 || games % 2)
    return xq_err_set(eb, XQ_EINVAL, "round %" PRIu64 ": %d players and %d games a pairing:"
                      " it takes 2 to %d players and an even number of games", number, n,
                      games, XQC_ROUND_PLAYERS);
  xqc_round_begin(r, number, open_step);
  int rc = 0;
  for (int i = 0; i < n && rc >= 0; i++)
    rc = xqc_round_add_player(r, players[i].slot, players[i].net, players[i].step, eb);
  uint64_t id = first_match_id;
  for (int a = 0; a < n && rc >= 0; a++)
    for (int b = a + 1; b < n && rc >= 0; b++)
      rc = xqc_round_add_pairing(r, a, b, id++, games / 2, eb);
  if (rc < 0) {
    xqc_round_close(r);
    return rc;
  }
  return r->npairings;
}

int xqc_round_find(const xqc_round_t *r, uint64_t match_id) {
  for (int k = 0; k < r->npairings; k++)
    if (r->pairing[k].gate.match_id == match_id) return k;
  return -1;
}

int xqc_round_player_of(const xqc_round_t *r, int slot) {
  for (int i = 0; i < r->nplayers; i++)
    if (r->player[i].slot == slot) return i;
  return -1;
}

int xqc_round_next(xqc_round_t *r, uint64_t now_ms, uint64_t timeout_ms, int *pairing) {
  if (!r->open) return -1;
  for (int i = 0; i < r->npairings; i++) {
    int k = (r->next + i) % r->npairings;
    int pair = xqc_gate_next_pair(&r->pairing[k].gate, now_ms, timeout_ms);
    if (pair < 0) continue;
    r->next = (k + 1) % r->npairings;
    *pairing = k;
    return pair;
  }
  return -1;
}

bool xqc_round_done(const xqc_round_t *r) {
  if (!r->open || r->npairings == 0) return false;
  for (int k = 0; k < r->npairings; k++)
    if (!xqc_gate_done(&r->pairing[k].gate)) return false;
  return true;
}

void xqc_round_games(const xqc_round_t *r, int64_t *games, int64_t *games_max) {
  *games = *games_max = 0;
  for (int k = 0; r->open && k < r->npairings; k++) {
    const xqc_gate_t *g = &r->pairing[k].gate;
    *games += g->w + g->d + g->l;
    *games_max += 2 * (int64_t)g->npairs;
  }
}

int xqc_round_results(const xqc_round_t *r, xq_ratings_result_t *res) {
  int n = 0;
  for (int k = 0; k < r->npairings; k++) {
    const xqc_round_pairing_t *p = &r->pairing[k];
    if (p->gate.w + p->gate.d + p->gate.l == 0) continue;
    res[n++] = (xq_ratings_result_t){p->a, p->b, p->gate.w, p->gate.d, p->gate.l};
  }
  return n;
}

int xqc_round_fit(const xqc_round_t *r, uint64_t best, xq_ratings_t *out, bool *prior,
                  xq_errbuf_t *eb) {
  xq_ratings_result_t res[XQC_ROUND_PAIRINGS];
  int nres = xqc_round_results(r, res);
  int anchor = xqc_round_player_of(r, -1);
  for (int i = 0; i < r->nplayers; i++)
    if (best && r->player[i].net == best) anchor = i;
  if (anchor < 0) anchor = 0;
  *prior = false;
  int rc = xq_ratings_fit(r->nplayers, anchor, res, nres, 0, out, eb);
  if (rc != XQ_ERANGE) return rc;
  *prior = true;
  return xq_ratings_fit(r->nplayers, anchor, res, nres, XQC_ROUND_PRIOR_ELO, out, eb);
}

void xqc_round_anchor_text(char *buf, size_t n, uint64_t number, int slot_a, int slot_b) {
  snprintf(buf, n, "round=%" PRIu64 " a=%d b=%d", number, slot_a, slot_b);
}

bool xqc_round_anchor_parse(const char *text, uint64_t *number, int *slot_a, int *slot_b) {
  int used = 0;
  if (sscanf(text, "round=%" SCNu64 " a=%d b=%d%n", number, slot_a, slot_b, &used) != 3 ||
      text[used] != 0)
    return false;
  return *slot_a >= -1 && *slot_a < XQC_MEMBERS_MAX && *slot_b >= -1 &&
         *slot_b < XQC_MEMBERS_MAX && *slot_a != *slot_b;
}
