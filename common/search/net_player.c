/*
 * net_player.c: the `net:FILE[:SIMS]` player. Until the MCTS module is linked this
 * reports that the player is not available.
 */
#include "search/player_impl.h"

int xq_net_player_start(xq_player_t *p, const char *args, uint64_t seed, xq_errbuf_t *eb) {
  (void)p;
  (void)seed;
  return xq_err_set(eb, XQ_EINVAL, "net:%s: the net player is not available in this build",
                    args);
}
void xq_net_player_stop(xq_player_t *p) { (void)p; }
int xq_net_player_new_game(xq_player_t *p, xq_errbuf_t *eb) {
  (void)p;
  (void)eb;
  return 0;
}
int xq_net_player_move(xq_player_t *p, xq_pos_t *pos, xq_move_t *move, xq_errbuf_t *eb) {
  (void)pos;
  (void)move;
  return xq_err_set(eb, XQ_EINVAL, "%s: not available", p->name);
}
