/*
 * players.c: the player specs of players.h behind one struct. The simple players live
 * here; the classical search is in alphabeta.c and the external engine in uci_player.c.
 */
#include "search/players.h"

#include <assert.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "rules/movegen.h"
#include "search/alphabeta.h"
#include "search/player_impl.h"

#define PLAYER_SPECS                                                                   \
  "valid player specs: random | greedy | alphabeta:D (D = 1.." "8) | "                 \
  "uci:COMMAND[:depth=N|nodes=N|movetime=MS] | net:FILE[:SIMS] | gnet:FILE[:SIMS] | "  \
  "gtnet:FILE[:SIMS]"

/* Parses a whole decimal number in [lo, hi]; false otherwise. */
bool xq_player_parse_int(const char *s, long long lo, long long hi, long long *out) {
  if (!s || !*s) return false;
  char *end;
  long long v = strtoll(s, &end, 10);
  if (*end || v < lo || v > hi) return false;
  *out = v;
  return true;
}

bool xq_player_is_builtin(const char *spec) {
  long long v;
  if (!spec) return false;
  if (!strcmp(spec, "random") || !strcmp(spec, "greedy")) return true;
  return !strncmp(spec, "alphabeta:", 10) &&
         xq_player_parse_int(spec + 10, 1, XQ_AB_MAX_DEPTH, &v);
}

/* pin: 0 the process's precision, 1 fp32, 2 bf16 (player_impl.h). */
static int player_new(xq_player_t **out, const char *spec, uint64_t seed, int pin,
                      xq_errbuf_t *eb) {
  *out = NULL;
  if (!spec || !*spec) return xq_err_set(eb, XQ_EINVAL, "empty player spec; " PLAYER_SPECS);
  xq_player_t *p = calloc(1, sizeof *p);
  if (!p) return xq_err_set(eb, XQ_ENOMEM, "out of memory for player '%s'", spec);
  p->name = strdup(spec);
  if (!p->name) {
    free(p);
    return xq_err_set(eb, XQ_ENOMEM, "out of memory for player '%s'", spec);
  }
  p->uci.pid = -1;
  p->net.pin = pin;
  p->uci.to_fd = p->uci.from_fd = -1;
  xq_rng_seed(&p->rng, seed);
  int rc = 0;
  long long v;
  if (!strcmp(spec, "random")) {
    p->kind = XQ_PLAYER_RANDOM;
  } else if (!strcmp(spec, "greedy")) {
    p->kind = XQ_PLAYER_GREEDY;
  } else if (!strncmp(spec, "alphabeta:", 10)) {
    p->kind = XQ_PLAYER_ALPHABETA;
    if (!xq_player_parse_int(spec + 10, 1, XQ_AB_MAX_DEPTH, &v))
      rc = xq_err_set(eb, XQ_EINVAL, "bad depth in '%s' (1..%d); " PLAYER_SPECS, spec,
                      XQ_AB_MAX_DEPTH);
    else
      p->depth = (int)v;
  } else if (!strncmp(spec, "uci:", 4)) {
    p->kind = XQ_PLAYER_UCI;
    rc = xq_uci_player_start(p, spec + 4, eb);
  } else if (!strncmp(spec, "net:", 4)) {
    p->kind = XQ_PLAYER_NET;
    rc = xq_net_player_start(p, spec + 4, seed, XQ_SEARCH_PUCT, eb);
  } else if (!strncmp(spec, "gnet:", 5)) {
    p->kind = XQ_PLAYER_NET;
    rc = xq_net_player_start(p, spec + 5, seed, XQ_SEARCH_GUMBEL, eb);
  } else if (!strncmp(spec, "gtnet:", 6)) {
    p->kind = XQ_PLAYER_NET;
    rc = xq_net_player_start(p, spec + 6, seed, XQ_SEARCH_GUMBEL_TREE, eb);
  } else {
    rc = xq_err_set(eb, XQ_EINVAL, "unknown player '%s'; " PLAYER_SPECS, spec);
  }
  if (rc) {
    xq_player_free(&p);
    return rc;
  }
  *out = p;
  return 0;
}

int xq_player_new(xq_player_t **out, const char *spec, uint64_t seed, xq_errbuf_t *eb) {
  return player_new(out, spec, seed, 0, eb);
}

int xq_player_new_pinned(xq_player_t **out, const char *spec, uint64_t seed, bool bf16,
                         xq_errbuf_t *eb) {
  return player_new(out, spec, seed, bf16 ? 2 : 1, eb);
}

void xq_player_free(xq_player_t **pp) {
  if (!pp || !*pp) return;
  xq_player_t *p = *pp;
  if (p->kind == XQ_PLAYER_UCI) xq_uci_player_stop(p);
  if (p->kind == XQ_PLAYER_NET) xq_net_player_stop(p);
  free(p->scratch);
  free(p->name);
  free(p);
  *pp = NULL;
}

int xq_player_new_game(xq_player_t *p, xq_errbuf_t *eb) {
  assert(p);
  if (p->kind == XQ_PLAYER_UCI) return xq_uci_player_new_game(p, eb);
  if (p->kind == XQ_PLAYER_NET) return xq_net_player_new_game(p, eb);
  return 0;
}

/* The most valuable capture (ties at random), else any legal move at random. */
static xq_move_t greedy_move(xq_player_t *p, const xq_pos_t *pos, const xq_move_t *moves,
                             int n) {
  int best_v = 0, nbest = 0;
  xq_move_t best[XQ_MAX_MOVES];
  for (int i = 0; i < n; i++) {
    int victim = pos->board[xq_mv_to(moves[i])];
    if (!victim) continue;
    int v = xq_ab_piece_value(victim, xq_mv_to(moves[i]));
    if (v > best_v) {
      best_v = v;
      nbest = 0;
    }
    if (v == best_v) best[nbest++] = moves[i];
  }
  if (nbest) return best[xq_rng_below(&p->rng, (uint64_t)nbest)];
  return moves[xq_rng_below(&p->rng, (uint64_t)n)];
}

int xq_player_move(xq_player_t *p, xq_pos_t *pos, xq_move_t *move, xq_errbuf_t *eb) {
  assert(p && pos && move);
  xq_move_t moves[XQ_MAX_MOVES];
  int n = xq_gen_legal(pos, moves);
  if (n == 0) return xq_err_set(eb, XQ_EINVAL, "%s: no legal move (the game is over)", p->name);
  int score;
  switch (p->kind) {
    case XQ_PLAYER_RANDOM:
      *move = moves[xq_rng_below(&p->rng, (uint64_t)n)];
      return 0;
    case XQ_PLAYER_GREEDY:
      *move = greedy_move(p, pos, moves, n);
      return 0;
    case XQ_PLAYER_ALPHABETA:
      xq_ab_search(pos, p->depth, &p->rng, move, &score);
      return 0;
    case XQ_PLAYER_UCI:
      return xq_uci_player_move(p, pos, move, eb);
    case XQ_PLAYER_NET:
      return xq_net_player_move(p, pos, move, eb);
  }
  return xq_err_set(eb, XQ_EINVAL, "%s: unknown player kind", p->name);
}

const char *xq_player_name(const xq_player_t *p) { return p ? p->name : "(none)"; }

void xq_player_set_stop(xq_player_t *p, atomic_int *stop) {
  if (p) p->net.stop = stop;
}
