/*
 * anchors.h: strength against fixed anchors. Self-play Elo is relative (each net against
 * its parent) and drifts; an anchor match measures a net against a built-in player that
 * never changes (players.h: greedy, alphabeta:1...), so its scores over the campaign are
 * an absolute curve ("best net: 71% vs greedy, 3% vs alphabeta:1"). Net 1 and then every
 * anchor_every-th promoted net plays anchor_games games against each player of `anchors`,
 * as arena pairs on the workers (only on workers whose Hello has XQ_FEATURE_ANCHOR_JOBS),
 * one anchor match at a time, after the gating pairs (gating comes first). Results go to
 * campaign.db (table anchor_results, schema step 3) and anchors.log (JSON lines); an open
 * anchor match is kept like a gating match (match_store.h) and resumes after a restart.
 * The functions that take the coordinator are declared in coord.h.
 */
#ifndef XQC_ANCHORS_H
#define XQC_ANCHORS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "anchor_list.h"
#include "storage/campaign_db.h"
#include "gating.h"

#define XQC_ANCHOR_HISTORY 200 /* decided anchor matches in a Status, the newest */

typedef struct {
  xqc_gate_t gate;                /* the open anchor match: A = the net, B = 0 */
  char spec[XQC_ANCHOR_SPEC_MAX]; /* its anchor player */
  int64_t promotion, step;        /* the net's promotion number and training step */
} xqc_anchor_t;

/* One decided anchor match. */
typedef struct {
  uint64_t match_id, net;
  char anchor[XQC_ANCHOR_SPEC_MAX];
  int64_t promotion, step, wins, draws, losses, time;
  double score;
} xqc_anchor_row_t;

int xqc_anchor_db_add(xqc_db_t *db, const xqc_anchor_row_t *r);
/* Whether net has a decided match against anchor (-1 on error). */
int xqc_anchor_db_has(xqc_db_t *db, uint64_t net, const char *anchor);
/* The newest max decided anchor matches, oldest first; *rows malloc'd (caller frees). */
int xqc_anchor_db_history(xqc_db_t *db, int max, xqc_anchor_row_t **rows, int *n);

typedef struct xqc_s xqc_t; /* coord.h */

/* Anchor matches on the coordinator's state: their pairs go out and come back through
 * promote.c, after the gating pairs. */
/* Opens the next anchor match that is due for the best net (none when one is open). */
void xqc_anchor_schedule(xqc_t *c);
/* Resumes the anchor match left open by a restart, else schedules. */
void xqc_anchor_resume(xqc_t *c);
/* After a pair of the anchor match is scored: a complete match is recorded (campaign.db,
 * anchors.log) and the next one scheduled. */
void xqc_anchor_scored(xqc_t *c);
/* The newest score per anchor, "71% vs greedy, 3% vs alphabeta:1", into buf (n bytes;
 * "" when none yet). */
int xqc_anchor_summary(xqc_t *c, char *buf, size_t n);

#endif
