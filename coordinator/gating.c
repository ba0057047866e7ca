/*
 * gating.c: bookkeeping and decisions of a gating match (see gating.h).
 */
#include "gating.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rules/fen.h"
#include "search/elo.h"

int xqc_gate_pairs_for(const xqc_config_t *cfg) {
  int64_t games = cfg->gating_max_games;
  if (cfg->gating != XQC_GATING_SPRT && cfg->threshold_games < games)
    games = cfg->threshold_games;
  return (int)((games + 1) / 2);
}

int xqc_gate_open(xqc_gate_t *g, const xqc_config_t *cfg, uint64_t match_id, uint64_t cand,
                  uint64_t best, uint64_t cand_parent, int64_t cand_step, xq_errbuf_t *eb) {
  return xqc_gate_open_pairs(g, xqc_gate_pairs_for(cfg), match_id, cand, best, cand_parent,
                             cand_step, eb);
}

int xqc_gate_open_pairs(xqc_gate_t *g, int npairs, uint64_t match_id, uint64_t cand,
                        uint64_t best, uint64_t cand_parent, int64_t cand_step,
                        xq_errbuf_t *eb) {
  assert(npairs > 0);
  memset(g, 0, sizeof *g);
  int rc = xq_openings_load(&g->openings, NULL, eb);
  if (rc < 0) return rc;
  g->npairs = npairs;
  g->state = calloc((size_t)g->npairs, 1);
  g->issued_ms = calloc((size_t)g->npairs, sizeof *g->issued_ms);
  g->holders = calloc((size_t)g->npairs, sizeof *g->holders);
  if (!g->state || !g->issued_ms || !g->holders) {
    xqc_gate_close(g);
    return XQ_ENOMEM;
  }
  g->open = true;
  g->match_id = match_id;
  g->cand = cand;
  g->best = best;
  g->cand_parent = cand_parent;
  g->cand_step = cand_step;
  return 0;
}

void xqc_gate_close(xqc_gate_t *g) {
  free(g->state);
  free(g->issued_ms);
  free(g->holders);
  xq_openings_close(&g->openings);
  memset(g, 0, sizeof *g);
}

int xqc_gate_next_pair(xqc_gate_t *g, uint64_t now_ms, uint64_t timeout_ms) {
  if (!g->open) return -1;
  for (int i = 0; i < g->npairs; i++)
    if (g->state[i] == 0) return i;
  for (int i = 0; i < g->npairs; i++)
    if (g->state[i] == 1 && now_ms - g->issued_ms[i] > timeout_ms) return i;
  return -1;
}

void xqc_gate_issue(xqc_gate_t *g, int pair, const char *who, uint64_t now_ms) {
  assert(g->open && pair >= 0 && pair < g->npairs);
  assert(g->state[pair] != 2); /* a scored pair is never handed out again */
  xqc_gate_holders_t *h = &g->holders[pair];
  snprintf(h->who[h->nwho % XQC_GATE_HOLDERS], XQC_GATE_WHO_MAX, "%s", who);
  h->nwho++;
  g->state[pair] = 1;
  g->issued_ms[pair] = now_ms;
}

int xqc_gate_release(xqc_gate_t *g, const char *who, xqc_gate_held_fn held, void *arg) {
  int n = 0;
  for (int i = 0; g->open && i < g->npairs; i++) {
    const xqc_gate_holders_t *h = &g->holders[i];
    if (g->state[i] != 1 || !h->nwho || strcmp(h->who[(h->nwho - 1) % XQC_GATE_HOLDERS], who) ||
        held(g->match_id, i, arg))
      continue;
    g->issued_ms[i] = 0; /* past any deadline: xqc_gate_next_pair hands it out; a late
                            result of `who` is stale, not forged */
    n++;
  }
  return n;
}

xqc_gate_check_t xqc_gate_check(const xqc_gate_t *g, int pair, const char *who,
                                uint64_t now_ms, uint64_t deadline_ms) {
  if (!g->open || pair < 0 || pair >= g->npairs) return XQC_GATE_FORGED;
  const xqc_gate_holders_t *h = &g->holders[pair];
  int kept = h->nwho < XQC_GATE_HOLDERS ? h->nwho : XQC_GATE_HOLDERS;
  int found = -1; /* 0: the holder now, k: the k-th holder before it */
  for (int k = 0; k < kept && found < 0; k++)
    if (!strcmp(h->who[(h->nwho - 1 - k) % XQC_GATE_HOLDERS], who)) found = k;
  if (found < 0) return h->restored ? XQC_GATE_STALE : XQC_GATE_FORGED;
  if (found > 0 || g->state[pair] != 1) return XQC_GATE_STALE;
  return now_ms - g->issued_ms[pair] <= deadline_ms ? XQC_GATE_TAKE : XQC_GATE_STALE;
}

int xqc_gate_opening_fen(const xqc_gate_t *g, int pair, char *buf, xq_errbuf_t *eb) {
  if (g->openings.n <= 0) {
    snprintf(buf, 128, "%s", XQ_START_FEN);
    return 0;
  }
  xq_pos_t *pos = malloc(sizeof *pos);
  if (!pos) return XQ_ENOMEM;
  /* Consecutive openings from a start that moves with the match id: as many pairs as the
   * set has lines never share an opening, and matches do not all start alike. */
  uint64_t k = (g->match_id + (uint64_t)pair) % (uint64_t)g->openings.n;
  int rc = xq_opening_setup(pos, g->openings.lines[k], eb);
  if (rc == 0) xq_fen_print(pos, buf);
  free(pos);
  return rc;
}

/* The match's invariants (Debug and sanitizer builds): every scored pair is one entry of
 * the pentanomial and two games of the W/D/L, nothing else is. */
static void gate_check(const xqc_gate_t *g) {
  int64_t done = 0, penta = 0;
  for (int i = 0; i < g->npairs; i++) done += g->state[i] == 2;
  for (int k = 0; k < 5; k++) penta += g->penta[k];
  assert(penta == done && g->w + g->d + g->l == 2 * done);
  (void)done, (void)penta;
}

int xqc_gate_result(xqc_gate_t *g, int pair, int a_red, int a_black) {
  if (!g->open || pair < 0 || pair >= g->npairs || g->state[pair] == 2) return XQ_EINVAL;
  if (a_red < -1 || a_red > 1 || a_black < -1 || a_black > 1) return XQ_EINVAL;
  g->state[pair] = 2;
  int r[2] = {a_red, a_black};
  for (int i = 0; i < 2; i++) {
    if (r[i] > 0) g->w++;
    else if (r[i] == 0) g->d++;
    else g->l++;
  }
  g->penta[a_red + a_black + 2]++;
  gate_check(g);
  return 0;
}

void xqc_gate_score(const xqc_gate_t *g, double *score, double *elo) {
  xq_elo_est_t e;
  xq_elo_trinomial(g->w, g->d, g->l, &e);
  *score = e.score;
  double x = e.elo;
  if (!isfinite(x)) x = x > 0 ? 800 : -800;
  if (x > 800) x = 800;
  if (x < -800) x = -800;
  *elo = x;
}

bool xqc_gate_done(const xqc_gate_t *g) {
  for (int i = 0; i < g->npairs; i++)
    if (g->state[i] != 2) return false;
  return true;
}

xqc_gate_decision_t xqc_gate_decide(const xqc_gate_t *g, const xqc_config_t *cfg) {
  int64_t games = g->w + g->d + g->l;
  bool done_all = xqc_gate_done(g);
  double score, elo;
  xqc_gate_score(g, &score, &elo);
  if (cfg->gating == XQC_GATING_SPRT) {
    double llr = xq_sprt_llr_pentanomial(g->penta, cfg->sprt_elo0, cfg->sprt_elo1);
    xq_sprt_t d = xq_sprt_decide(llr, cfg->sprt_alpha, cfg->sprt_beta);
    if (d == XQ_SPRT_ACCEPT) return XQC_GATE_PROMOTE;
    if (d == XQ_SPRT_REJECT) return XQC_GATE_REJECT;
    if (!done_all && games < cfg->gating_max_games) return XQC_GATE_OPEN;
    /* The cap, undecided: a truncated SPRT takes the hypothesis the evidence leans to, so
     * a candidate that scored clearly above its parent is not thrown away for want of
     * games (a 59% score over 100 games was, in a measured run), and an even one is not
     * promoted (LLR <= 0). */
    return llr > 0.0 ? XQC_GATE_PROMOTE : XQC_GATE_REJECT;
  }
  if (!done_all) return XQC_GATE_OPEN;
  if (cfg->gating == XQC_GATING_NONE) return XQC_GATE_PROMOTE;
  return score >= cfg->threshold_score ? XQC_GATE_PROMOTE : XQC_GATE_REJECT;
}
