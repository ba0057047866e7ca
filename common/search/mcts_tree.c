/*
 * mcts_tree.c: the PUCT tree shared by mcts.c and selfplay.c (see mcts_tree.h).
 */
#include "search/mcts_tree.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nn/encode.h"
#include "rules/movegen.h"
#include "rules/rules.h"

int xqt_init(xqt_tree_t *t, const xq_mcts_config_t *cfg) {
  memset(t, 0, sizeof *t);
  t->cfg = *cfg;
  t->cap = cfg->node_budget < XQ_MAX_MOVES + 1 ? XQ_MAX_MOVES + 1 : cfg->node_budget;
  size_t words = ((size_t)t->cap + 63) / 64;
  t->nodes = malloc((size_t)t->cap * sizeof *t->nodes);
  t->live = malloc(words * sizeof *t->live);
  t->live_base = malloc(words * sizeof *t->live_base);
  if (!t->nodes || !t->live || !t->live_base) {
    xqt_free(t);
    return XQ_ENOMEM;
  }
  xqt_clear(t);
  return 0;
}

void xqt_free(xqt_tree_t *t) {
  free(t->nodes);
  free(t->live);
  free(t->live_base);
  t->nodes = NULL;
  t->live = NULL;
  t->live_base = NULL;
}

size_t xqt_bytes_per_node(void) {
  /* The node, and its share of the live bitmap and of the per-word counts. */
  return sizeof(xqt_node_t) + 1;
}

void xqt_clear(xqt_tree_t *t) {
  memset(&t->nodes[0], 0, sizeof t->nodes[0]);
  t->used = 1;
  t->has_root = false;
  t->gumbel.active = false;
  t->root_masked = false;
}

static inline void live_set(uint64_t *live, int32_t i) { live[i >> 6] |= 1ull << (i & 63); }
static inline bool live_get(const uint64_t *live, int32_t i) { return (live[i >> 6] >> (i & 63)) & 1; }

/* The new index of live node i (i > 0): 1 + the live nodes below it. */
static inline int32_t live_index(const xqt_tree_t *t, int32_t i) {
  uint64_t below = t->live[i >> 6] & ((1ull << (i & 63)) - 1);
  return t->live_base[i >> 6] + (int32_t)__builtin_popcountll(below);
}

/* Makes node c (c > 0, expanded) the root and drops every node not under it, in place.
 * A child block is always allocated after its parent node (at the pool's top when the
 * parent is expanded), and the compaction keeps the order of what it keeps, so one pass
 * upward marks the subtree and a second slides each live node down to 1 + the live nodes
 * below it: a node only ever moves to a lower index, over nodes already moved. No second
 * pool is needed, so the memory is the nodes and a bitmap (Lc0 frees the old tree on
 * each move; this is the same result without an allocator). */
static void compact(xqt_tree_t *t, int32_t c) {
  int32_t used = t->used;
  size_t words = ((size_t)used + 63) / 64;
  memset(t->live, 0, words * sizeof *t->live);
  xqt_node_t root = t->nodes[c];
  for (int i = 0; i < root.nchild; i++) live_set(t->live, root.first + i);
  for (int32_t i = root.first; i < used; i++) {
    if (!live_get(t->live, i)) continue;
    xqt_node_t *d = &t->nodes[i];
    if (d->flags & XQT_EXPANDED) {
      for (int k = 0; k < d->nchild; k++) live_set(t->live, d->first + k);
    } else {
      d->nchild = 0; /* a selection never finished: expanded again when reached */
      d->flags &= (uint8_t)~XQT_PENDING;
    }
  }
  int32_t base = 1;
  for (size_t w = 0; w < words; w++) {
    t->live_base[w] = base;
    base += (int32_t)__builtin_popcountll(t->live[w]);
  }
  for (int32_t i = root.first; i < used; i++) {
    if (!live_get(t->live, i)) continue;
    int32_t j = live_index(t, i);
    t->nodes[j] = t->nodes[i];
    if ((t->nodes[j].flags & XQT_EXPANDED) && t->nodes[j].nchild)
      t->nodes[j].first = live_index(t, t->nodes[j].first);
  }
  if (root.nchild) root.first = live_index(t, root.first);
  t->nodes[0] = root;
  t->used = base;
}

static int32_t find_child(const xqt_tree_t *t, int32_t node, xq_move_t m) {
  const xqt_node_t *p = &t->nodes[node];
  if (!(p->flags & XQT_EXPANDED)) return -1;
  for (int i = 0; i < p->nchild; i++)
    if (t->nodes[p->first + i].move == m) return p->first + i;
  return -1;
}

bool xqt_set_root(xqt_tree_t *t, const xq_pos_t *pos) {
  bool kept = false;
  const xq_pos_t *r = &t->root_pos;
  int k = (int)pos->ply - (int)r->ply;
  if (t->has_root && (k == 1 || k == 2) && pos->hist[r->ply].key == r->key) {
    bool same = true;
    for (int i = 0; i < r->ply && same; i++)
      same = pos->hist[i].key == r->hist[i].key && pos->hist[i].move == r->hist[i].move;
    int32_t node = 0;
    for (int j = 0; j < k && same && node >= 0; j++)
      node = find_child(t, node, pos->hist[r->ply + j].move);
    if (same && node > 0 && (t->nodes[node].flags & XQT_EXPANDED)) {
      compact(t, node);
      kept = true;
    }
  }
  if (!kept) xqt_clear(t);
  t->gumbel.active = false;
  t->root_masked = false;
  memcpy(&t->root_pos, pos, sizeof *pos);
  t->has_root = true;
  return kept;
}

static void backup(xqt_tree_t *t, const xqt_leaf_t *leaf, float v) {
  float x = -v; /* view of the player who moved into the leaf */
  for (int i = leaf->len - 1; i >= 0; i--) {
    t->nodes[leaf->path[i]].w += 1.0f + x; /* + 1 removes the virtual loss */
    x = -x;
  }
}

void xqt_cancel(xqt_tree_t *t, const xqt_leaf_t *leaf) {
  if (leaf->len >= 2) xqg_cancel(t, leaf->path[1] - t->nodes[0].first);
  for (int i = 0; i < leaf->len; i++) {
    t->nodes[leaf->path[i]].n -= 1;
    t->nodes[leaf->path[i]].w += 1.0f;
  }
}

void xqt_unwind(xq_pos_t *slot, const xqt_leaf_t *leaf) {
  for (int i = 1; i < leaf->len; i++) xq_pos_unmake(slot);
}

/* Value for the side to move of a finished position, or 2 when the game goes on. Scores
 * the first repetition of a position on the path (or in the game) as the rules score a
 * threefold one: a draw, unless one side checked on every move of the cycle (it loses). */
static float terminal_value(xqt_tree_t *t, xq_pos_t *pos) {
  xq_outcome_t o = xq_adjudicate(pos, t->cfg.max_plies);
  if (o.result == XQ_RESULT_DRAW) return 0.0f;
  if (o.result == XQ_RESULT_RED_WIN) return pos->side == XQ_RED ? 1.0f : -1.0f;
  if (o.result == XQ_RESULT_BLACK_WIN) return pos->side == XQ_BLACK ? 1.0f : -1.0f;
  int ply = pos->ply;
  int lo = ply - pos->rule60;
  if (lo < 0) lo = 0;
  for (int j = ply - 4; j >= lo; j -= 2) {
    if (pos->hist[j].key != pos->key) continue;
    bool stm_checks = true, opp_checks = true;
    for (int k = j; k < ply; k++) {
      bool by_opp = (ply - k) & 1;
      if (!pos->hist[k].check) {
        if (by_opp) opp_checks = false;
        else stm_checks = false;
      }
    }
    if (opp_checks && !stm_checks) return 1.0f;
    if (stm_checks && !opp_checks) return -1.0f;
    return 0.0f;
  }
  return 2.0f;
}

/* Below this many pieces (king included), the probe also looks for stalemating moves. */
#define PROBE_STALEMATE_PIECES 4

/* True when one of the side to move's moves leaves the opponent no legal move: checkmate,
 * or stalemate, which also loses in Xiangqi. The position is then won, whatever the net
 * would say. Without check, a side runs out of moves only with few pieces, so a move that
 * gives no check is tried only against an opponent with at most PROBE_STALEMATE_PIECES. */
static bool can_win_in_one(xq_pos_t *pos, const xq_move_t *moves, int n) {
  if (pos->ply + 1 >= XQ_MAX_HISTORY) return false;
  int opp = pos->side ^ 1, pieces = 0;
  for (int type = XQ_KING; type <= XQ_PAWN; type++) pieces += pos->count[xq_pc_make(opp, type)];
  bool stalemates = pieces <= PROBE_STALEMATE_PIECES;
  xq_move_t replies[XQ_MAX_MOVES];
  for (int i = 0; i < n; i++) {
    xq_pos_make(pos, moves[i]);
    bool won = (pos->in_check || stalemates) && xq_gen_legal(pos, replies) == 0;
    xq_pos_unmake(pos);
    if (won) return true;
  }
  return false;
}

/* The PUCT choice among p's children; mask (NULL = none) leaves out child i when 0. */
static int32_t select_child(const xqt_tree_t *t, const xqt_node_t *p, const uint8_t *mask) {
  const xq_mcts_config_t *c = &t->cfg;
  float pn = (float)p->n;
  float cp = c->cpuct_init + logf((pn + c->cpuct_base + 1.0f) / c->cpuct_base);
  float sq = sqrtf(pn > 1.0f ? pn : 1.0f);
  float pq = p->n > 0 ? -p->w / pn : 0.0f;
  float fpu = pq - c->fpu_reduction;
  int32_t best = p->first;
  float bs = -1e30f;
  for (int i = 0; i < p->nchild; i++) {
    if (mask && !mask[i]) continue;
    const xqt_node_t *ch = &t->nodes[p->first + i];
    float q = ch->n > 0 ? ch->w / (float)ch->n : fpu;
    float s = q + cp * ch->prior * sq / (1.0f + (float)ch->n);
    if (s > bs) {
      bs = s;
      best = p->first + i;
    }
  }
  return best;
}

xqt_leaf_kind_t xqt_select(xqt_tree_t *t, xq_pos_t *slot, xqt_leaf_t *leaf) {
  int32_t idx = 0;
  leaf->len = 0;
  leaf->nmoves = -1;
  for (;;) {
    xqt_node_t *nd = &t->nodes[idx];
    leaf->path[leaf->len++] = idx;
    nd->n += 1;
    nd->w -= 1.0f; /* virtual loss */
    if (nd->flags & XQT_TERMINAL) {
      backup(t, leaf, nd->tvalue);
      return XQT_LEAF_DONE;
    }
    if (nd->flags & XQT_PENDING) {
      xqt_cancel(t, leaf);
      return XQT_LEAF_COLLISION;
    }
    if (!(nd->flags & XQT_EXPANDED)) {
      if (idx != 0) {
        float tv = terminal_value(t, slot);
        if (tv < 1.5f) {
          nd->flags |= XQT_TERMINAL;
          nd->tvalue = tv;
          backup(t, leaf, tv);
          return XQT_LEAF_DONE;
        }
      }
      xq_move_t moves[XQ_MAX_MOVES];
      int nm = nn_encode_legal(slot, NULL, leaf->index, moves);
      if (idx != 0 && t->cfg.mate_probe && can_win_in_one(slot, moves, nm)) {
        nd->flags |= XQT_TERMINAL;
        nd->tvalue = 1.0f;
        backup(t, leaf, 1.0f);
        return XQT_LEAF_DONE;
      }
      if (nm > 0 && t->used + nm <= t->cap) {
        nd->first = t->used;
        nd->nchild = (uint8_t)nm;
        nd->flags |= XQT_PENDING;
        for (int i = 0; i < nm; i++) {
          xqt_node_t *ch = &t->nodes[t->used + i];
          memset(ch, 0, sizeof *ch);
          ch->move = moves[i];
        }
        t->used += nm;
        leaf->nmoves = nm;
      }
      return XQT_LEAF_EVAL; /* nmoves < 0: evaluate without expanding (pool full) */
    }
    if (leaf->len > XQT_MAX_DEPTH || slot->ply + 1 >= XQ_MAX_HISTORY) {
      leaf->nmoves = -1;
      return XQT_LEAF_EVAL;
    }
    if (idx == 0 && t->gumbel.active) idx = nd->first + xqg_select_root(t);
    else if (idx != 0 && t->cfg.search == XQ_SEARCH_GUMBEL_TREE)
      idx = nd->first + xqg_select_interior(t, idx);
    else idx = select_child(t, nd, idx == 0 && t->root_masked ? t->root_allowed : NULL);
    xq_pos_make(slot, t->nodes[idx].move);
  }
}

void xqt_expand_backup(xqt_tree_t *t, const xqt_leaf_t *leaf, const float *child_priors,
                       const float *dense, float value) {
  xqt_node_t *nd = &t->nodes[leaf->path[leaf->len - 1]];
  if (leaf->nmoves > 0 && (nd->flags & XQT_PENDING)) {
    float sum = 0.0f;
    for (int i = 0; i < leaf->nmoves; i++) {
      float p = child_priors ? child_priors[i] : dense[leaf->index[i]];
      if (!(p >= 0.0f)) p = 0.0f;
      t->nodes[nd->first + i].prior = p;
      sum += p;
    }
    for (int i = 0; i < leaf->nmoves; i++) {
      xqt_node_t *ch = &t->nodes[nd->first + i];
      ch->prior = sum > 0.0f ? ch->prior / sum : 1.0f / (float)leaf->nmoves;
    }
    nd->flags = (uint8_t)((nd->flags & ~XQT_PENDING) | XQT_EXPANDED);
    nd->tvalue = value;
  }
  backup(t, leaf, value);
}

double xqt_gamma(xq_rng_t *rng, double alpha) {
  if (alpha < 1.0) {
    double u = xq_rng_uniform(rng);
    return xqt_gamma(rng, alpha + 1.0) * pow(u > 0.0 ? u : 1e-300, 1.0 / alpha);
  }
  double d = alpha - 1.0 / 3.0, c = 1.0 / sqrt(9.0 * d);
  for (;;) {
    double x = xq_rng_normal(rng), v = 1.0 + c * x;
    if (v <= 0.0) continue;
    v = v * v * v;
    double u = xq_rng_uniform(rng);
    if (u < 1.0 - 0.0331 * x * x * x * x) return d * v;
    if (u > 0.0 && log(u) < 0.5 * x * x + d * (1.0 - v + log(v))) return d * v;
  }
}

void xqt_add_noise(xqt_tree_t *t, xq_rng_t *rng, float alpha, float frac) {
  xqt_node_t *r = &t->nodes[0];
  if (!(r->flags & XQT_EXPANDED) || frac <= 0.0f || alpha <= 0.0f) return;
  double eta[XQ_MAX_MOVES], sum = 0.0;
  for (int i = 0; i < r->nchild; i++) sum += eta[i] = xqt_gamma(rng, alpha);
  if (!(sum > 0.0)) return;
  for (int i = 0; i < r->nchild; i++) {
    xqt_node_t *ch = &t->nodes[r->first + i];
    ch->prior = (1.0f - frac) * ch->prior + frac * (float)(eta[i] / sum);
  }
}

float xqt_root_value(const xqt_tree_t *t) {
  const xqt_node_t *r = &t->nodes[0];
  return r->n > 0 ? -r->w / (float)r->n : 0.0f;
}

int32_t xqt_best_child(const xqt_tree_t *t, int32_t node) {
  const xqt_node_t *p = &t->nodes[node];
  if (!(p->flags & XQT_EXPANDED) || !p->nchild) return -1;
  const uint8_t *mask = node == 0 && t->root_masked ? t->root_allowed : NULL;
  int32_t best = -1;
  for (int i = 0; i < p->nchild; i++) {
    if (mask && !mask[i]) continue;
    const xqt_node_t *c = &t->nodes[p->first + i];
    const xqt_node_t *b = best >= 0 ? &t->nodes[best] : NULL;
    if (!b || c->n > b->n || (c->n == b->n && c->prior > b->prior)) best = p->first + i;
  }
  return best;
}

void xqt_fill_result(const xqt_tree_t *t, xq_mcts_result_t *res) {
  const xqt_node_t *r = &t->nodes[0];
  res->nmoves = 0;
  res->best = 0;
  res->pv_len = 0;
  res->value = xqt_root_value(t);
  if (r->flags & XQT_EXPANDED) {
    /* At a masked root (go searchmoves) only the allowed moves are reported. */
    int n = 0;
    for (int i = 0; i < r->nchild; i++) {
      if (t->root_masked && !t->root_allowed[i]) continue;
      const xqt_node_t *ch = &t->nodes[r->first + i];
      res->moves[n] = ch->move;
      res->visits[n] = ch->n;
      res->q[n] = ch->n > 0 ? ch->w / (float)ch->n : 0.0f;
      n++;
    }
    res->nmoves = n;
  }
  /* The root's move is the Gumbel search's choice while one is active, else the most
   * visited; the principal variation goes on from it by visits. */
  int gi = xqg_best(t);
  int32_t node = 0;
  while (res->pv_len < (int)(sizeof res->pv / sizeof res->pv[0])) {
    int32_t c = node == 0 && gi >= 0 ? r->first + gi : xqt_best_child(t, node);
    if (c < 0 || t->nodes[c].n == 0) break;
    res->pv[res->pv_len++] = t->nodes[c].move;
    node = c;
  }
  if (res->pv_len) res->best = res->pv[0];
  else if (res->nmoves) res->best = t->nodes[gi >= 0 ? r->first + gi : xqt_best_child(t, 0)].move;
  res->depth = res->pv_len;
}
