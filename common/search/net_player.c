/*
 * net_player.c: the `net:FILE[:SIMS]` player: PUCT MCTS (mcts.h) with a network
 * evaluator, SIMS simulations per move (default 800), no root noise, the most visited
 * move; and `gnet:FILE[:SIMS]`, the same with a Gumbel root (gumbel.h) without noise,
 * which plays the sequential halving's survivor; and `gtnet:FILE[:SIMS]`, a Gumbel root
 * with the paper's deterministic selection below it (XQ_SEARCH_GUMBEL_TREE). The tree is
 * kept between moves of one game and cleared by new_game.
 */
#include <stdio.h>
#include <string.h>

#include "rules/movegen.h"
#include "rules/notation.h"
#include "search/evaluator.h"
#include "search/mcts.h"
#include "search/player_impl.h"

#define NET_DEFAULT_SIMS 800
#define NET_MAX_SIMS 10000000

int xq_net_player_start(xq_player_t *p, const char *args, uint64_t seed,
                        xq_search_kind_t search, xq_errbuf_t *eb) {
  char path[1024];
  if (!*args || strlen(args) >= sizeof path) /* p->name is the spec: its prefix names the kind */
    return xq_err_set(eb, XQ_EINVAL, "net player needs a file: %.*s:FILE[:SIMS]",
                      (int)strcspn(p->name, ":"), p->name);
  memcpy(path, args, strlen(args) + 1);
  p->net.sims = NET_DEFAULT_SIMS;
  char *colon = strrchr(path, ':');
  if (colon) {
    long long v;
    if (!xq_player_parse_int(colon + 1, 1, NET_MAX_SIMS, &v))
      return xq_err_set(eb, XQ_EINVAL, "%s: SIMS must be a number from 1 to %d, not '%s'",
                        p->name, NET_MAX_SIMS, colon + 1);
    p->net.sims = v;
    *colon = 0;
  }
  xq_mcts_config_t cfg;
  xq_mcts_config_default(&cfg);
  cfg.noise_frac = 0;
  cfg.search = search;
  xq_evaluator_t *ev = NULL;
  xq_mcts_t *s = NULL;
  xq_errbuf_t why = {{0}};
  int rc = p->net.pin ? xq_evaluator_net_new_pinned(&ev, path, cfg.batch, p->net.pin == 2, &why)
                      : xq_evaluator_net_new(&ev, path, cfg.batch, &why);
  if (rc) return xq_err_set(eb, rc, "%s: %s", p->name, why.msg);
  p->net.ev = ev;
  rc = xq_mcts_new(&s, &cfg, ev, seed, &why);
  if (rc) return xq_err_set(eb, rc, "%s: %s", p->name, why.msg);
  p->net.mcts = s;
  return 0;
}

void xq_net_player_stop(xq_player_t *p) {
  xq_mcts_t *s = p->net.mcts;
  xq_evaluator_t *ev = p->net.ev;
  xq_mcts_free(&s); /* the search borrows the evaluator: free it first */
  xq_evaluator_free(&ev);
  p->net.mcts = NULL;
  p->net.ev = NULL;
}

int xq_net_player_new_game(xq_player_t *p, xq_errbuf_t *eb) {
  (void)eb;
  xq_mcts_clear(p->net.mcts);
  return 0;
}

int xq_net_player_move(xq_player_t *p, xq_pos_t *pos, xq_move_t *move, xq_errbuf_t *eb) {
  xq_mcts_limits_t lim = {.nodes = p->net.sims, .stop = p->net.stop};
  xq_mcts_result_t res;
  int rc = xq_mcts_search(p->net.mcts, pos, &lim, &res);
  if (rc) return xq_err_set(eb, rc, "%s: search failed: %s", p->name, xq_strerror(rc));
  if (!res.best || !xq_move_is_legal(pos, res.best)) {
    char buf[5];
    xq_move_print(res.best, buf);
    return xq_err_set(eb, XQ_EMOVE, "%s: search returned no legal move (%s)", p->name, buf);
  }
  *move = res.best;
  return 0;
}
