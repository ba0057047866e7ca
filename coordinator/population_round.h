/*
 * population_round.h: a population's rounds on the coordinator (issue 48; the round robin
 * itself is population/round.h). A round opens when at least two members have a net and
 * every one of them whose trainer is live has trained pbt_interval_steps since the last
 * round opened or since it last copied another member, whichever is later (Ray Tune's
 * per-trial interval; the first round: when each reached pbt_interval_steps). A member
 * whose trainer died plays its last net but holds no round back. Its players are the
 * members' last nets and the best net; every two of them play pbt_round_games games, as
 * arena pairs kept in campaign.db like a gating match (match_store.h, kind "round", anchor
 * text "round=R a=SLOT b=SLOT", parent the step the round opened at), so a restart resumes
 * it. A player's net that cannot be served (damaged, gone) drops the round: its member
 * plays again with its next candidate, and the round opens again at once without it.
 *
 * Its pairs go out in promote.c's arena slots: pbt_share of them (a credit that grows by
 * pbt_share each arena slot and pays 1 for a round pair) before the gating pairs, and any
 * slot that neither gating nor the anchors use.
 *
 * When every pair is scored, the round is decided: the players are rated (the best net at
 * 0), each member's rating set, the exploit-and-explore orders made (pbt.h) and applied to
 * the members' table, its round count raised, and members.txt saved first: it is the
 * truth, and a stored round whose number is not above its round count is stale after a
 * restart and closed, never decided twice. Then the ratings and orders are recorded
 * (events.h: campaign.db rows, population.log lines), the round's matches closed, and the
 * best-rated member's net goes to gating against the best net.
 */
#ifndef XQC_POPULATION_ROUND_H
#define XQC_POPULATION_ROUND_H

#include <stdbool.h>
#include <stdint.h>

#include "peers/peers.h"
#include "xqz.pb-c.h"

typedef struct xqc_s xqc_t; /* coord.h */

/* The slot of the member rated best in the last decided round (of those with a net), or -1
 * before the first round. */
int xqc_round_leader(const xqc_t *c);
/* A candidate of member slot was stored: opens a round when one is due. */
void xqc_round_candidate(xqc_t *c, int slot);
/* The round's turn in an arena slot (promote.c, before the gating pairs): when its credit
 * reaches 1, fills aj with the next pair of the open round (fen backs its opening) and
 * marks it issued to p. False when it is not its turn or no pair is due. */
bool xqc_round_arena_job(xqc_t *c, const xqc_peer_t *p, Xqz__ArenaJob *aj, char *fen);
/* An arena slot that neither gating nor the anchors use: a pair of the open round, if any
 * is due. */
bool xqc_round_arena_spare(xqc_t *c, const xqc_peer_t *p, Xqz__ArenaJob *aj, char *fen);
/* The open round's pairs issued to `who` that held() says it does not hold are handed out
 * again at once (xqc_gate_release); returns how many. */
int xqc_round_release(xqc_t *c, const char *who, xqc_gate_held_fn held, void *arg);
/* An ArenaResult: false when r's match is not a pairing of the open round (nothing done);
 * else it is scored or refused (promote.h's rules, acknowledged) and a complete round is
 * decided. */
bool xqc_round_arena_result(xqc_t *c, xqc_peer_t *p, uint64_t rq, const Xqz__ArenaResult *r);
/* At start (after xqc_promote_resume): resumes the open round's pairings with their stored
 * pairs, or closes them as stale (a round the members' table counts as decided, a row
 * that does not parse); a resumed round already complete is decided. */
void xqc_round_resume(xqc_t *c);
/* Net id cannot be served (requests.c: damaged, quarantined or gone), after promote.c has
 * moved gating or the best net on: a member whose last net it is has none until its next
 * candidate, and an open round it plays in is dropped and opened again at once without it
 * (unless it is still the best net: then the round waits for the next one). */
void xqc_round_net_lost(xqc_t *c, uint64_t net, const char *why);
/* Games of the open round scored so far and in all (0 and 0 when none is open). */
void xqc_round_progress(const xqc_t *c, int64_t *games, int64_t *games_max);

#endif
