/*
 * mcts_tree.h (internal to common/search): the PUCT tree shared by the single-game search
 * (mcts.c) and batched self-play (selfplay.c). Prefix xqt_.
 *
 * Nodes live in one pool (node 0 is the root); the children of a node are one contiguous
 * block allocated when the node is first reached. A node's w is the sum of values from the
 * view of the player who made the move into it, so a parent picks the child with the best
 * w / n directly. A simulation is: xqt_select (descends from the root, making the moves on
 * a slot position that starts equal to the root position, adding virtual loss), then either
 * the leaf is final (terminal, repeated, the pool is full, or, with cfg.mate_probe, a
 * non-root leaf whose side to move can leave the opponent without a legal move) and already
 * backed up, or the caller evaluates the slot position and calls xqt_expand_backup;
 * xqt_unwind then takes the moves back so the slot is at the root again.
 */
#ifndef XQ_MCTS_TREE_H
#define XQ_MCTS_TREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rules/board.h"
#include "search/gumbel.h"
#include "search/mcts.h"
#include "support/rng.h"

#define XQT_MAX_DEPTH 256

enum { XQT_EXPANDED = 1, XQT_TERMINAL = 2, XQT_PENDING = 4 };

typedef struct {
  float prior;
  float w;        /* sum of backed-up values, view of the player who moved into the node */
  int32_t n;      /* visits (including virtual ones in flight) */
  int32_t first;  /* first child in the pool, when expanded */
  xq_move_t move; /* move into this node */
  uint8_t nchild;
  uint8_t flags;
  float tvalue;   /* terminal (or proven) value, or for an expanded node the value its
                   * evaluation gave; view of the side to move at the node */
} xqt_node_t;

typedef struct xqt_tree {
  xqt_node_t *nodes;   /* (cap) */
  uint64_t *live;      /* (cap / 64) bitmap: nodes kept by a compaction on reuse */
  int32_t *live_base;  /* (cap / 64) 1 + the live nodes below each bitmap word */
  int32_t cap, used;
  xq_pos_t root_pos;   /* the root position with its game history */
  bool has_root;
  xq_mcts_config_t cfg;
  xqg_state_t gumbel;  /* the Gumbel root search under way (gumbel.h), if active */
  bool root_masked;    /* only the root children with root_allowed[i] set are searched */
  uint8_t root_allowed[XQ_MAX_MOVES]; /* (root nchild) (go searchmoves) */
} xqt_tree_t;

typedef enum { XQT_LEAF_EVAL, XQT_LEAF_DONE, XQT_LEAF_COLLISION } xqt_leaf_kind_t;

/* One simulation in flight. */
typedef struct {
  int32_t path[XQT_MAX_DEPTH + 1]; /* node indices, path[0] = root */
  int len;                         /* nodes on the path (moves made = len - 1) */
  int nmoves;                      /* children to create at the leaf */
  int index[XQ_MAX_MOVES];         /* their policy indices (side to move's view) */
} xqt_leaf_t;

int xqt_init(xqt_tree_t *t, const xq_mcts_config_t *cfg);
void xqt_free(xqt_tree_t *t);
/* Bytes of memory one node of the pool costs (to size a pool from a memory budget). */
size_t xqt_bytes_per_node(void);
/* Drops every node. */
void xqt_clear(xqt_tree_t *t);
/* Makes pos the root, keeping the subtree when pos follows the old root by 1 or 2 moves.
 * Returns true when a subtree was kept. */
bool xqt_set_root(xqt_tree_t *t, const xq_pos_t *pos);
/* One descent; slot must equal the root position (with history). */
xqt_leaf_kind_t xqt_select(xqt_tree_t *t, xq_pos_t *slot, xqt_leaf_t *leaf);
/* Creates the leaf's children with priors (one per child, in leaf->index order; NULL for
 * a dense (XQ_POLICY_SIZE) array in dense) and backs value (side to move at the leaf) up. */
void xqt_expand_backup(xqt_tree_t *t, const xqt_leaf_t *leaf, const float *child_priors,
                       const float *dense, float value);
/* Takes back a collided selection's virtual loss (and its Gumbel root visit). */
void xqt_cancel(xqt_tree_t *t, const xqt_leaf_t *leaf);
/* Undoes the leaf's moves on slot. */
void xqt_unwind(xq_pos_t *slot, const xqt_leaf_t *leaf);
/* Mixes Dirichlet(alpha) noise into the root children's priors with weight frac. */
void xqt_add_noise(xqt_tree_t *t, xq_rng_t *rng, float alpha, float frac);
/* Samples Gamma(alpha, 1). */
double xqt_gamma(xq_rng_t *rng, double alpha);
/* Root value, side to move's view (0 when unvisited). */
float xqt_root_value(const xqt_tree_t *t);
/* Most visited child of node (ties by prior; at a masked root, among the allowed), or -1. */
int32_t xqt_best_child(const xqt_tree_t *t, int32_t node);
/* Fills res's moves, visits, best, value, pv, depth. */
void xqt_fill_result(const xqt_tree_t *t, xq_mcts_result_t *res);

#endif
