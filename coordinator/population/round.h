/*
 * round.h: one round of a population (issue 48): a round robin that rates the members'
 * last nets and the best net against each other. Every pair of players is a pairing,
 * played as an arena match (gating.h) of games / 2 pairs (paired openings, colours
 * swapped); the pairings' pairs are handed out in turn, one pairing after the other, so
 * that every pairing advances together. When every pair is scored, the W/D/L of each
 * pairing is the input of xq_ratings_fit (ratings.h), with the best net as the anchor.
 * Bottom floor: no coordinator, no I/O; population_round.c carries it on the coordinator
 * (storage, hand-out, the decision).
 */
#ifndef XQC_ROUND_H
#define XQC_ROUND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gating.h"
#include "population/members.h"
#include "search/ratings.h"
#include "support/error.h"

#define XQC_ROUND_PLAYERS (XQC_MEMBERS_MAX + 1) /* every member and the best net */
#define XQC_ROUND_PAIRINGS (XQC_ROUND_PLAYERS * (XQC_ROUND_PLAYERS - 1) / 2)
/* The prior (Elo standard deviation, ratings.h) of the retry when a group of players won
 * every decisive game and the bare fit has no finite maximum. */
#define XQC_ROUND_PRIOR_ELO 400.0
/* The longest anchor text of a round's match row ("round=R a=SLOT b=SLOT"). */
#define XQC_ROUND_ANCHOR_MAX 64

typedef struct {
  int slot;     /* 0-based member slot; -1 for the best net */
  uint64_t net; /* never 0 */
  int64_t step; /* its training step */
} xqc_round_player_t;

typedef struct {
  int a, b;         /* player indices, a < b in an opened round */
  xqc_gate_t gate;  /* its match: A = player a's net, B = player b's */
} xqc_round_pairing_t;

typedef struct {
  bool open;
  uint64_t number;   /* the round's number: the members' decided rounds + 1 */
  int64_t open_step; /* the slowest member's step when it opened; kept after it closes */
  int nplayers, npairings;
  xqc_round_player_t player[XQC_ROUND_PLAYERS];
  xqc_round_pairing_t pairing[XQC_ROUND_PAIRINGS];
  int next;          /* the pairing whose turn it is to hand out a pair */
} xqc_round_t;

/* Starts round number (no players, no pairings yet) that opened at open_step; a round
 * still open is closed first. */
void xqc_round_begin(xqc_round_t *r, uint64_t number, int64_t open_step);
/* Adds a player (net != 0, a slot or net not among the players yet); returns its index,
 * or XQ_EINVAL / XQ_ERANGE naming what is wrong. */
int xqc_round_add_player(xqc_round_t *r, int slot, uint64_t net, int64_t step,
                         xq_errbuf_t *eb);
/* Adds the pairing of players a and b (indices) as match match_id of npairs pairs. */
int xqc_round_add_pairing(xqc_round_t *r, int a, int b, uint64_t match_id, int npairs,
                          xq_errbuf_t *eb);
/* Opens round number among n players (2..XQC_ROUND_PLAYERS): every pair of players a
 * pairing of games / 2 pairs (games even, >= 2), match ids first_match_id, +1, ... in the
 * order (0,1), (0,2), ..., (1,2), ...; returns the number of pairings (n (n - 1) / 2). */
int xqc_round_open(xqc_round_t *r, uint64_t number, int64_t open_step,
                   const xqc_round_player_t *players, int n, int games,
                   uint64_t first_match_id, xq_errbuf_t *eb);
/* Frees the pairings' matches; the round is no longer open (number and open_step stay). */
void xqc_round_close(xqc_round_t *r);

/* The pairing of match match_id, or -1. */
int xqc_round_find(const xqc_round_t *r, uint64_t match_id);
/* The index of the player of slot (-1: the best net), or -1. */
int xqc_round_player_of(const xqc_round_t *r, int slot);
/* The next pair to hand out, across the pairings in turn (gating.h's rule in each: free,
 * or issued longer than timeout_ms ago); *pairing gets its pairing. -1 when none is due. */
int xqc_round_next(xqc_round_t *r, uint64_t now_ms, uint64_t timeout_ms, int *pairing);
/* Whether every pair of every pairing is scored (false for a round with no pairing). */
bool xqc_round_done(const xqc_round_t *r);
/* Games scored so far and games of the whole round. */
void xqc_round_games(const xqc_round_t *r, int64_t *games, int64_t *games_max);

/* The pairings' W/D/L as ratings.h's results (player indices, from a's side) into res
 * (XQC_ROUND_PAIRINGS); pairings without a game are left out. Returns how many. */
int xqc_round_results(const xqc_round_t *r, xq_ratings_result_t *res);
/* Rates the players from the results (player index order in out): the anchor at 0 is the
 * player of net best (a member's net once it was promoted), else the best net's player
 * (slot -1), else player 0. A fit the bare likelihood refuses (a group won every decisive
 * game) is done again with XQC_ROUND_PRIOR_ELO, and *prior says so. */
int xqc_round_fit(const xqc_round_t *r, uint64_t best, xq_ratings_t *out, bool *prior,
                  xq_errbuf_t *eb);

/* A round match's anchor text, "round=R a=SLOT b=SLOT" (slots 0-based, -1 the best net). */
void xqc_round_anchor_text(char *buf, size_t n, uint64_t number, int slot_a, int slot_b);
/* Reads it back; false when text is not one. */
bool xqc_round_anchor_parse(const char *text, uint64_t *number, int *slot_a, int *slot_b);

#endif
