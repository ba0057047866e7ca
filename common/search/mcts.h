/*
 * mcts.h: PUCT Monte Carlo tree search over one game at a time, the interface players,
 * the UCI/UCCI engine and `xqz play` call. (Batched self-play over many concurrent games
 * is in selfplay.h and shares the tree code.)
 *
 * A search owns its tree (nodes from a pool, no allocation per simulation) and reuses the
 * subtree of the move played when the next position follows the last one searched.
 * Randomness (Dirichlet noise, temperature) comes from the seed given at creation, so a
 * search is deterministic for a fixed seed, evaluator and configuration.
 */
#ifndef XQ_MCTS_H
#define XQ_MCTS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rules/board.h"
#include "search/evaluator.h"
#include "support/error.h"

/* How the simulations are spent; the values are the wire's (SelfplaySettings.search). */
typedef enum {
  XQ_SEARCH_PUCT,        /* PUCT everywhere; the move is the most visited */
  XQ_SEARCH_GUMBEL,      /* Gumbel AlphaZero's sequential halving at the root (gumbel.h),
                          * PUCT below; needs a simulation limit, else the root is PUCT */
  XQ_SEARCH_GUMBEL_TREE, /* the same root, and below it the paper's deterministic
                          * selection toward each node's improved policy (gumbel.h) */
} xq_search_kind_t;

typedef struct {
  float cpuct_init;      /* PUCT constant at low visit counts (1.25) */
  float cpuct_base;      /* c grows as log((N + base + 1) / base) (19652) */
  float fpu_reduction;   /* first-play urgency: parent Q minus this for unvisited (0.25) */
  float dirichlet_alpha; /* root noise (0.3) */
  float noise_frac;      /* share of noise in the root priors; 0 = none (0 for play) */
  int batch;             /* leaves gathered per evaluator call, with virtual loss (8) */
  int max_plies;         /* game-length cap used to score draws in the tree (400) */
  int node_budget;       /* tree nodes the pool holds (1 << 20); xq_mcts_nodes_for_bytes
                          * sizes it from a memory budget */
  bool mate_probe;       /* a new leaf whose side to move can mate (or stalemate) in one
                          * is a proven win, scored without the net (false; measured in
                          * docs/experiments/12-mate-probe-fixed-nets.md) */
  xq_search_kind_t search; /* how simulations are spent (XQ_SEARCH_PUCT) */
  int gumbel_actions;      /* Gumbel: actions considered at the root, m (16) */
  float gumbel_c_visit;    /* Gumbel: sigma(q) = (c_visit + max N) * c_scale * q (50) */
  float gumbel_c_scale;    /* (0.1) */
} xq_mcts_config_t;

/* Defaults for playing strength (no noise). */
void xq_mcts_config_default(xq_mcts_config_t *cfg);

typedef struct {
  int64_t nodes;          /* stop after this many simulations (0 = no limit) */
  int64_t movetime_ms;    /* stop after this long (0 = no limit) */
  int depth;              /* stop when the principal variation reaches this depth (0 = none) */
  atomic_int *stop;       /* stop as soon as *stop != 0 (NULL = none) */
  const xq_move_t *searchmoves; /* (nsearchmoves) only these root moves are searched and
                                 * played (UCI's go searchmoves; NULL = all) */
  int nsearchmoves;
} xq_mcts_limits_t;

typedef struct {
  xq_move_t best;         /* most visited root move (0 if the game is over) */
  float value;            /* root value, side to move's view, in [-1, 1] */
  int64_t simulations;    /* done by this call */
  int64_t elapsed_ms;
  int depth;              /* length of the principal variation */
  int nmoves;             /* root children */
  xq_move_t moves[XQ_MAX_MOVES];
  int visits[XQ_MAX_MOVES];
  float q[XQ_MAX_MOVES];  /* mean value of each root move, side to move's view (0 unvisited) */
  xq_move_t pv[64];
  int pv_len;
  bool pool_full;         /* the search stopped because the pool cannot hold one more
                           * expansion: searching this root again adds nothing */
  int64_t nodes_used, node_cap; /* the pool's nodes in use and its size */
} xq_mcts_result_t;

typedef struct xq_mcts xq_mcts_t;

/* ev is borrowed and must outlive the search. */
int xq_mcts_new(xq_mcts_t **out, const xq_mcts_config_t *cfg, xq_evaluator_t *ev, uint64_t seed,
                xq_errbuf_t *eb);
/* A search whose simulations run on nev threads at once, one per evaluator (each borrowed,
 * each used by its own thread only): the threads share one tree, hold a lock to descend
 * and to back up, and evaluate their batches in parallel (virtual loss keeps them on
 * different leaves). nev == 1 is xq_mcts_new. */
#define XQ_MCTS_MAX_THREADS 64
int xq_mcts_new_parallel(xq_mcts_t **out, const xq_mcts_config_t *cfg, xq_evaluator_t *const *evs,
                         int nev, uint64_t seed, xq_errbuf_t *eb);
void xq_mcts_free(xq_mcts_t **s);
/* The pool size (nodes) that bytes of memory hold, at least the smallest pool a search
 * can use (XQ_MAX_MOVES + 1 nodes). */
int xq_mcts_nodes_for_bytes(size_t bytes);
/* Searches pos (with its history) within lim. Goes on in the same tree if pos is the last
 * searched position itself (same history), and reuses the subtree if it is that position
 * followed by one or two moves. Returns 0, or XQ_EINVAL if pos has no legal
 * move. A position the rules call finished that still has moves (a threefold repetition,
 * no attackers left) is searched: a GUI or referee that adjudicates by other rules may
 * let the game go on, and then a move is owed.
 * The pool is never outgrown: before each descent the search checks that one more
 * expansion fits (XQ_MAX_MOVES nodes), and when it does not, the search stops there with
 * res->pool_full set and answers from the tree it has. It never evaluates leaves it cannot
 * expand (which made long searches play worse before). The next move frees what is not
 * under the new root (tree reuse compacts the pool in place). */
int xq_mcts_search(xq_mcts_t *s, xq_pos_t *pos, const xq_mcts_limits_t *lim,
                   xq_mcts_result_t *res);
/* Forgets the tree (new game). */
void xq_mcts_clear(xq_mcts_t *s);

#endif
