/*
 * player_impl.h: internals shared by players.c, uci_player.c and net_player.c; not part
 * of the public interface (include search/players.h instead).
 */
#ifndef XQ_PLAYER_IMPL_H
#define XQ_PLAYER_IMPL_H

#include <stdbool.h>
#include <sys/types.h>

#include "search/mcts.h"
#include "search/players.h"
#include "support/rng.h"

typedef enum {
  XQ_PLAYER_RANDOM,
  XQ_PLAYER_GREEDY,
  XQ_PLAYER_ALPHABETA,
  XQ_PLAYER_UCI,
  XQ_PLAYER_NET,
} xq_player_kind_t;

struct xq_player {
  xq_player_kind_t kind;
  char *name;          /* the spec, owned */
  xq_rng_t rng;
  int depth;           /* alphabeta */
  xq_pos_t *scratch;   /* a position copy for uci (history replay), owned */
  struct {
    pid_t pid;          /* engine process, -1 when none */
    int to_fd, from_fd; /* our ends of its stdin and stdout pipes */
    char limit[32];     /* "depth 5", "nodes 1000", "movetime 100" */
    long long movetime_ms;
    char buf[4096];     /* bytes read but not yet returned as lines */
    size_t len;
    bool eof;           /* the engine closed its output (exited) */
  } uci;
  struct {
    void *ev;           /* xq_evaluator_t * */
    void *mcts;         /* xq_mcts_t * */
    long long sims;
    atomic_int *stop;   /* xq_player_set_stop (NULL: none) */
    int pin;            /* 0: the process's precision; 1: fp32; 2: bf16 (xq_player_new_pinned) */
  } net;
};

bool xq_player_parse_int(const char *s, long long lo, long long hi, long long *out);

int xq_uci_player_start(xq_player_t *p, const char *args, xq_errbuf_t *eb);
void xq_uci_player_stop(xq_player_t *p);
int xq_uci_player_new_game(xq_player_t *p, xq_errbuf_t *eb);
int xq_uci_player_move(xq_player_t *p, xq_pos_t *pos, xq_move_t *move, xq_errbuf_t *eb);

/* search: PUCT (net:), a Gumbel root (gnet:) or a Gumbel root and the deterministic
 * selection below it (gtnet:). */
int xq_net_player_start(xq_player_t *p, const char *args, uint64_t seed,
                        xq_search_kind_t search, xq_errbuf_t *eb);
void xq_net_player_stop(xq_player_t *p);
int xq_net_player_new_game(xq_player_t *p, xq_errbuf_t *eb);
int xq_net_player_move(xq_player_t *p, xq_pos_t *pos, xq_move_t *move, xq_errbuf_t *eb);

#endif
