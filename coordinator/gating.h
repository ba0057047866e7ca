/*
 * gating.h: one gating match at a time (candidate A vs best B) played as arena pairs
 * spread over the workers, each pair one opening with colours swapped. Results are summed
 * as W/D/L (games, from A's view) and as a pentanomial of pair scores for the GSPRT.
 * The decision depends on the mode: sprt (GSPRT accept/reject, a game cap rejects),
 * threshold (score >= T after N games), none (promote after N games, score recorded).
 * Each pair remembers whom it was issued to (the last XQC_GATE_HOLDERS holders, by peer
 * identity), so a result counts only from the peer holding the pair, before its deadline,
 * and an honest result that comes after the pair went to someone else is told apart from
 * a forged one.
 */
#ifndef XQC_GATING_H
#define XQC_GATING_H

#include <stdbool.h>
#include <stdint.h>

#include "config.h"
#include "search/arena.h"

typedef enum { XQC_GATE_OPEN = 0, XQC_GATE_PROMOTE, XQC_GATE_REJECT } xqc_gate_decision_t;

#define XQC_GATE_HOLDERS 4
#define XQC_GATE_WHO_MAX 160

/* Whose pair this is, newest last: who[(nwho - 1) % XQC_GATE_HOLDERS] holds it now.
 * restored: the list began from campaign.db, which keeps only the holder of the time, so
 * an earlier holder is not known (xqc_gate_check). */
typedef struct {
  char who[XQC_GATE_HOLDERS][XQC_GATE_WHO_MAX];
  int nwho;
  bool restored;
} xqc_gate_holders_t;

/* What a result of `who` for a pair is worth (xqc_gate_check). */
typedef enum {
  XQC_GATE_TAKE = 0, /* the holder, in time: score it */
  XQC_GATE_STALE,    /* an earlier holder, a late holder, or a repeat: drop, no fault */
  XQC_GATE_FORGED,   /* never issued to who, or no such pair: drop, a fault (an unknown who
                      * of a restored pair, which may be an earlier holder, is STALE) */
} xqc_gate_check_t;

typedef struct {
  bool open;
  uint64_t match_id, cand, best, cand_parent;
  int64_t cand_step;
  int npairs;            /* pairs of the game cap */
  uint8_t *state;        /* (npairs) 0 free, 1 issued, 2 done */
  uint64_t *issued_ms;   /* (npairs) */
  xqc_gate_holders_t *holders; /* (npairs) */
  int64_t w, d, l;
  int64_t penta[5];
  xq_openings_t openings;
} xqc_gate_t;

/* A decided gating match on its way to disk (promote.c): durable first, announced second.
 * The decision is kept here, with the match still open in the gate (no pair handed out, no
 * result taken), until one campaign.db transaction holds its matches row, the nets' states
 * and the promotions row; only then is it written to promotions.log, made the best net
 * and announced. A transaction that fails (the database locked by another program, a full
 * disk) is retried from the timer, never waited for on the loop thread. */
typedef struct {
  bool active;          /* a decision waits to be stored */
  bool promote;
  uint64_t match_id, cand, best;
  int64_t step, w, d, l;
  double score, elo, new_elo; /* new_elo: the candidate's Elo if promoted */
  int tries;                  /* failed attempts so far */
  uint64_t next_try_ms, since_ms;
  char cause[1024];           /* why the last attempt failed */
} xqc_gate_verdict_t;

/* Opens a match of as many pairs as the gating mode's game cap (cfg); openings are the
 * built-in arena set. */
int xqc_gate_open(xqc_gate_t *g, const xqc_config_t *cfg, uint64_t match_id, uint64_t cand,
                  uint64_t best, uint64_t cand_parent, int64_t cand_step, xq_errbuf_t *eb);
/* The same with npairs (> 0) pairs: a match resumed after a restart, or an anchor match. */
int xqc_gate_open_pairs(xqc_gate_t *g, int npairs, uint64_t match_id, uint64_t cand,
                        uint64_t best, uint64_t cand_parent, int64_t cand_step,
                        xq_errbuf_t *eb);
/* The pairs of a match under cfg's gating mode. */
int xqc_gate_pairs_for(const xqc_config_t *cfg);
void xqc_gate_close(xqc_gate_t *g);
/* Next pair to hand out (free, or issued longer than timeout_ms ago); -1 when none. */
int xqc_gate_next_pair(xqc_gate_t *g, uint64_t now_ms, uint64_t timeout_ms);
/* FEN of the opening of pair i into buf (>= 128 bytes). */
int xqc_gate_opening_fen(const xqc_gate_t *g, int pair, char *buf, xq_errbuf_t *eb);
/* Hands pair i to `who` (a peer identity) at now_ms. */
void xqc_gate_issue(xqc_gate_t *g, int pair, const char *who, uint64_t now_ms);
/* Whether a result from `who` for pair i at now_ms counts: a pair is due back within
 * deadline_ms of its issue. */
xqc_gate_check_t xqc_gate_check(const xqc_gate_t *g, int pair, const char *who,
                                uint64_t now_ms, uint64_t deadline_ms);
/* Whether a peer holds pair `pair` of match `match_id` (its own list, xqc_gate_release). */
typedef bool (*xqc_gate_held_fn)(uint64_t match_id, int pair, void *arg);
/* Makes every pair issued to `who` (its holder now, not yet scored) that held() says it
 * does not hold due for handing out again at once; returns how many. */
int xqc_gate_release(xqc_gate_t *g, const char *who, xqc_gate_held_fn held, void *arg);
/* Records a pair result (values in -1..1); XQ_EINVAL for a bad or repeated pair. */
int xqc_gate_result(xqc_gate_t *g, int pair, int a_red, int a_black);
/* Whether every pair is scored. */
bool xqc_gate_done(const xqc_gate_t *g);
/* Decision after the results so far. */
xqc_gate_decision_t xqc_gate_decide(const xqc_gate_t *g, const xqc_config_t *cfg);
/* Score and Elo (clipped to +-800) of the match so far, from A's view. */
void xqc_gate_score(const xqc_gate_t *g, double *score, double *elo);

#endif
