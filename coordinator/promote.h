/*
 * promote.h: candidates, gating matches, promotions (promote.c).
 * Top floor: the functions take the coordinator's state (coord.h, which includes this
 * header after xqc_t).
 */
#ifndef XQC_PROMOTE_H
#define XQC_PROMOTE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gating.h"
#include "peers/peers.h"
#include "xqz.pb-c.h"

typedef struct xqc_s xqc_t; /* coord.h */

/* Resumes the match left open by a restart with its pairs (match_store.h), or reopens the
 * match of a candidate left undecided from zero games when none was saved. */
void xqc_promote_resume(xqc_t *c);
/* Fills aj with the next pair to hand out, of the open gating match first, else of the
 * open anchor match when p can play anchor jobs (fen, >= XQ_FEN_MAX bytes, backs its
 * opening), and marks it issued to p; false when no arena job is due. Only p's result for
 * that pair, before the pair's deadline, is scored. */
bool xqc_promote_arena_job(xqc_t *c, const xqc_peer_t *p, Xqz__ArenaJob *aj, char *fen);
/* Takes n match ids (gating, anchor, a round's pairings) from c->next_match_id, the first
 * returned, and records the new floor in campaign.db so that a restart never hands them
 * out again (a failed write is logged: until the next one succeeds, a restart may). */
uint64_t xqc_match_ids_take(xqc_t *c, uint64_t n);
/* A worker's Hello with XQ_FEATURE_HOLDING lists the arena pairs it holds: every other
 * pair issued to it (gating, anchor, the open round) is handed out again at once, instead
 * of at its deadline (its Job was lost with a restart of the coordinator or the worker). */
void xqc_promote_hello_holding(xqc_t *c, const xqc_peer_t *p, const Xqz__Hello *h);
void xqc_promote_candidate(xqc_t *c, xqc_peer_t *p, uint64_t rq, const Xqz__CandidateNet *cn);
/* Sends net (at its training step) to gating against the best net: opens its match, or,
 * while a match is open, queues it to open next (the latest queued net wins). */
void xqc_promote_gate_net(xqc_t *c, uint64_t net, int64_t step);
/* How long an arena pair is out before it goes to another worker, and its result is late. */
uint64_t xqc_promote_pair_deadline_ms(const xqc_t *c);
/* Hands pair of match g to p: marks it issued (in g and campaign.db) and fills aj (fen
 * backs its opening, as above); false when pair is -1 or its opening cannot be made. */
bool xqc_promote_issue_pair(xqc_t *c, const xqc_peer_t *p, xqc_gate_t *g, int pair,
                            Xqz__ArenaJob *aj, char *fen);
/* Scores p's result r for a pair of match g: only from the pair's holder, in time (a late
 * or repeated one is refused without a fault, a forged or bad one with a fault); stores
 * it and acknowledges r either way. True when it was scored. */
bool xqc_promote_score_pair(xqc_t *c, xqc_peer_t *p, uint64_t rq, xqc_gate_t *g,
                            const Xqz__ArenaResult *r);
void xqc_promote_arena_result(xqc_t *c, xqc_peer_t *p, uint64_t rq, const Xqz__ArenaResult *r);
/* requests.c found the open match's candidate unservable (file damaged or gone): the match
 * closes with the candidate rejected (why logged), so gating moves on. */
void xqc_promote_candidate_lost(xqc_t *c, const char *why);
/* requests.c found the best net unservable: the previous best net with an intact file becomes
 * the best again (recorded, announced; an open match is replayed against it). */
void xqc_promote_best_lost(xqc_t *c, const char *why);
/* From the timer: checks that campaign.db is still the file opened, and retries storing a
 * gating decision that waits (gating.h), never blocking. */
void xqc_promote_tick(xqc_t *c, uint64_t now_ms);

#endif
