/*
 * players.h: everything that can choose a move, behind one interface, named by a spec
 * string as users type it:
 *   net:FILE[:SIMS]      MCTS with a network (default 800 simulations per move)
 *   gnet:FILE[:SIMS]     the same with a Gumbel root (sequential halving, no noise)
 *   random               a uniformly random legal move
 *   greedy               captures the most valuable piece it can, else random
 *   alphabeta:D          material + mobility, depth D, quiescence on captures
 *   uci:COMMAND[:LIMIT]  an external UCI Xiangqi engine, e.g.
 *                        uci:/usr/games/fairy-stockfish:depth=5 (or nodes=N, movetime=MS)
 * Players never decide that a game is over: the caller adjudicates with the rules.
 */
#ifndef XQ_PLAYERS_H
#define XQ_PLAYERS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "rules/board.h"
#include "support/error.h"

typedef struct xq_player xq_player_t;

/* Creates a player from its spec; seed makes its random choices reproducible. On error
 * returns XQ_EINVAL (or the loader's error) with the reason in eb. */
int xq_player_new(xq_player_t **out, const char *spec, uint64_t seed, xq_errbuf_t *eb);
/* As xq_player_new, with a net player's arithmetic pinned instead of the process's
 * precision: bf16 false runs fp32, true bf16 (an error on a CPU without it). Other players
 * have no network and ignore it. The worker's arena pairs (arena_precision). */
int xq_player_new_pinned(xq_player_t **out, const char *spec, uint64_t seed, bool bf16,
                         xq_errbuf_t *eb);
/* NULL-safe; sets *p to NULL (and ends an external engine's process). */
void xq_player_free(xq_player_t **p);
/* Tells the player a new game starts (clears trees, sends ucinewgame). */
int xq_player_new_game(xq_player_t *p, xq_errbuf_t *eb);
/* Chooses a legal move in pos (which is not finished); pos holds the game's history and
 * is returned unchanged. */
int xq_player_move(xq_player_t *p, xq_pos_t *pos, xq_move_t *move, xq_errbuf_t *eb);
/* true when spec names a built-in player (random, greedy, alphabeta:D with a valid D):
 * one that needs no file and no process, so a peer may name it safely (anchor matches). */
bool xq_player_is_builtin(const char *spec);
/* Searches of a net player stop as soon as *stop != 0 (NULL: never), returning the best
 * move found so far; other players ignore it. A daemon's SIGTERM ends a long search so. */
void xq_player_set_stop(xq_player_t *p, atomic_int *stop);
/* The spec it was created from, for reports. */
const char *xq_player_name(const xq_player_t *p);

#endif
