/*
 * arena.h: matches between two players. Games are played in pairs on one opening with
 * colours swapped, every result is judged by our rules (xq_adjudicate), and the totals
 * feed Elo, its 95% interval and an optional GSPRT early stop (elo.h).
 *
 * Openings: one per line, "FEN", "FEN m1 m2 ..." (ICCS moves, an optional "moves" word
 * before them) or "startpos [moves]"; blank lines and lines starting with '#' are
 * skipped. Every line is checked (FEN and move legality) when the set is loaded.
 */
#ifndef XQ_ARENA_H
#define XQ_ARENA_H

#include <stdbool.h>
#include <stdint.h>

#include "rules/rules.h"
#include "search/elo.h"
#include "search/players.h"
#include "support/error.h"

#define XQ_ARENA_MAX_PLIES 1000 /* a game must fit in xq_pos_t's history */

typedef struct {
  char **lines; /* (n) opening lines, owned */
  int n;
} xq_openings_t;

/* Loads the openings of path, or the built-in set when path is NULL. The caller closes. */
int xq_openings_load(xq_openings_t *o, const char *path, xq_errbuf_t *eb);
void xq_openings_close(xq_openings_t *o);
/* Sets pos to an opening line (its moves become the start of pos's history). */
int xq_opening_setup(xq_pos_t *pos, const char *line, xq_errbuf_t *eb);

typedef struct {
  int64_t games, wins, draws, losses;      /* from A's point of view */
  int64_t pairs[5];                        /* complete pairs scoring k/2 points for A */
  int64_t reasons[XQ_REASON_RESIGN + 1];   /* finished games by reason */
  int64_t plies;                           /* total plies played (openings excluded) */
  double llr;                              /* pentanomial GSPRT LLR (when sprt is on) */
  xq_sprt_t sprt;
} xq_arena_stats_t;

typedef struct {
  int games;        /* games to play; an odd last game counts in W/D/L but not in pairs */
  int max_plies;    /* game-length cap counted from the opening FEN (1..XQ_ARENA_MAX_PLIES) */
  uint64_t seed;    /* picks the order of openings */
  bool sprt;        /* stop early on a GSPRT decision */
  double elo0, elo1, alpha, beta;
  /* Called after every game (NULL = silent): game index from 0, whether A had Red, the
   * outcome, the game's plies, and the totals so far. */
  void (*on_game)(void *ctx, int64_t game, bool a_red, xq_outcome_t out, int plies,
                  const xq_arena_stats_t *st);
  void *ctx;
} xq_arena_config_t;

/* Plays one game from opening; *out is the adjudicated outcome, *plies the game's plies.
 * material_pawns > 0 scores a game stopped by the length cap by material (material.h):
 * the side that many pawns ahead wins, out->reason stays XQ_REASON_LENGTH_CAP. */
int xq_arena_game(xq_player_t *red, xq_player_t *black, const char *opening, int max_plies,
                  double material_pawns, xq_outcome_t *out, int *plies, xq_errbuf_t *eb);
/* Plays the match; st holds the totals (also on error, for the games finished). */
int xq_arena_run(const xq_arena_config_t *cfg, xq_player_t *a, xq_player_t *b,
                 const xq_openings_t *openings, xq_arena_stats_t *st, xq_errbuf_t *eb);

#endif
