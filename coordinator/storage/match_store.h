/*
 * match_store.h: the open matches in campaign.db (schema layout 2), so that a coordinator
 * restarted mid-match resumes the match instead of throwing its games away. A match's row
 * is written when it opens, a pair's holder when the pair is handed out, the pair's results
 * when they are scored, and all of it is deleted when the match is decided. On a restart
 * the pairs scored stay scored (their games are counted once), the pairs out stay with
 * their holders (a result that arrives after the restart still counts, from the holder
 * only), and the others are handed out as before.
 */
#ifndef XQC_MATCH_STORE_H
#define XQC_MATCH_STORE_H

#include <stdbool.h>
#include <stdint.h>

#include "campaign_db.h"
#include "gating.h"

typedef struct {
  uint64_t match_id, net_a, net_b; /* net_b: 0 for an anchor match */
  uint64_t parent; /* gating: the candidate's parent; anchor: the net's promotion number;
                    * round: the step the round opened at */
  int64_t step;                            /* net_a's training step */
  int npairs;
  char kind[16];   /* "gating", "anchor" or "round" (a population's round, round.h) */
  char anchor[64]; /* the anchor player's spec (players.h) of an anchor match; a round's
                    * "round=R a=SLOT b=SLOT" (round.h); else "" */
} xqc_open_match_t;

/* Records a match that opens (a row of the same id is refused, never replaced). */
int xqc_store_match_open(xqc_db_t *db, const xqc_open_match_t *m);
/* Records that pair went to holder (a peer identity). */
int xqc_store_pair_issued(xqc_db_t *db, uint64_t match_id, int pair, const char *holder);
/* Records a scored pair's results (A's, -1..1). */
int xqc_store_pair_result(xqc_db_t *db, uint64_t match_id, int pair, int a_red, int a_black);
/* Forgets a decided (or abandoned) match and its pairs. */
int xqc_store_match_closed(xqc_db_t *db, uint64_t match_id);
/* The open match of this kind (the newest one); *found false when there is none. */
int xqc_store_match_find(xqc_db_t *db, const char *kind, xqc_open_match_t *m, bool *found);
/* The open matches of this kind, oldest (lowest id) first: at most max into m, the count
 * into *n (a population's round keeps one match per pairing open at once). */
int xqc_store_matches_of(xqc_db_t *db, const char *kind, xqc_open_match_t *m, int max, int *n);
/* Restores the stored pairs of g's match into g (open, with the stored npairs): scored
 * pairs get their results, pairs out their holder, as issued at now_ms. *scored and *out
 * get the counts. A stored row that does not fit g (a pair index or result out of range)
 * is skipped and logged. */
int xqc_store_pairs_restore(xqc_db_t *db, xqc_gate_t *g, uint64_t now_ms, int *scored, int *out);

#endif
