/*
 * test_coordinator_round.c: a population's rounds (issue 48). The round robin alone
 * (population/round.h: pairings, the hand-out across them, results into ratings), then
 * whole rounds on a coordinator's state with a campaign directory and campaign.db
 * (population_round.h): the decision (ratings, a copy order, members.txt, population.log,
 * the best member to gating), restarts mid-round and after the decision was saved, the
 * pbt_round_games setting, and the round's share of the arena jobs.
 * Replies to peers go nowhere: this file stands in for reply.c.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "coord.h"
#include "members_wire.h"
#include "population/round.h"
#include "rules/fen.h"
#include "storage/match_store.h"
#include "support/log.h"

static int g_acks; /* replies sent (the acks of arena results) */

void xqc_reply(xqc_t *c, const uint8_t *rid, size_t rid_len, Xqz__Envelope *env) {
  (void)c, (void)rid, (void)rid_len, (void)env;
  g_acks++;
}

void xqc_reply_error(xqc_t *c, const uint8_t *rid, size_t rid_len, uint64_t request_id,
                     unsigned code, const char *msg) {
  (void)c, (void)rid, (void)rid_len, (void)request_id, (void)code, (void)msg;
}

void xqc_reply_wait(xqc_t *c, const uint8_t *rid, size_t rid_len, uint64_t request_id,
                    uint32_t ms, const char *why) {
  (void)c, (void)rid, (void)rid_len, (void)request_id, (void)ms, (void)why;
}

/* ---- the round robin alone ---- */

static const xqc_round_player_t PLAYERS[4] = {
    {0, 0xa0, 100}, {1, 0xa1, 110}, {2, 0xa2, 120}, {-1, 0xbe, 50}};

static void test_pairings(void **state) {
  (void)state;
  xqc_round_t r = {0};
  xq_errbuf_t eb;
  assert_int_equal(xqc_round_open(&r, 3, 2000, PLAYERS, 4, 8, 100, &eb), 6);
  assert_true(r.open);
  assert_int_equal(r.number, 3);
  assert_int_equal(r.open_step, 2000);
  uint64_t id = 100;
  for (int a = 0; a < 4; a++)
    for (int b = a + 1; b < 4; b++) {
      int k = xqc_round_find(&r, id);
      assert_true(k >= 0);
      const xqc_round_pairing_t *p = &r.pairing[k];
      assert_int_equal(p->a, a);
      assert_int_equal(p->b, b);
      assert_int_equal(p->gate.npairs, 4); /* 8 games, in pairs */
      assert_true(p->gate.cand == PLAYERS[a].net && p->gate.best == PLAYERS[b].net);
      id++;
    }
  assert_int_equal(xqc_round_find(&r, 106), -1);
  assert_int_equal(xqc_round_player_of(&r, -1), 3);
  assert_int_equal(xqc_round_player_of(&r, 5), -1);
  int64_t games, max;
  xqc_round_games(&r, &games, &max);
  assert_true(games == 0 && max == 48);
  assert_false(xqc_round_done(&r));
  xqc_round_close(&r);
  assert_false(r.open);
  assert_int_equal(r.open_step, 2000); /* kept for the next round's rule */
  /* Refused: odd games, one player, a slot twice, net 0. */
  assert_true(xqc_round_open(&r, 1, 0, PLAYERS, 4, 7, 1, &eb) < 0);
  assert_true(xqc_round_open(&r, 1, 0, PLAYERS, 1, 8, 1, &eb) < 0);
  const xqc_round_player_t twice[2] = {{0, 1, 0}, {0, 2, 0}}, zero[2] = {{0, 1, 0}, {1, 0, 0}};
  assert_true(xqc_round_open(&r, 1, 0, twice, 2, 8, 1, &eb) < 0);
  assert_non_null(strstr(eb.msg, "a player already"));
  assert_true(xqc_round_open(&r, 1, 0, zero, 2, 8, 1, &eb) < 0);
  assert_false(r.open);
}

static void test_hand_out_in_turn(void **state) {
  (void)state;
  xqc_round_t r = {0};
  xq_errbuf_t eb;
  assert_int_equal(xqc_round_open(&r, 1, 0, PLAYERS, 3, 4, 10, &eb), 3); /* 2 pairs each */
  int seen[3] = {0}, order[6];
  for (int i = 0; i < 6; i++) {
    int k = -1, pair = xqc_round_next(&r, 1000, 5000, &k);
    assert_true(pair >= 0 && k >= 0 && k < 3);
    order[i] = k;
    seen[k]++;
    xqc_gate_issue(&r.pairing[k].gate, pair, "w", 1000);
  }
  /* Each pairing in turn: 0, 1, 2, 0, 1, 2. */
  for (int i = 0; i < 6; i++) assert_int_equal(order[i], i % 3);
  assert_true(seen[0] == 2 && seen[1] == 2 && seen[2] == 2);
  int k;
  assert_int_equal(xqc_round_next(&r, 2000, 5000, &k), -1);  /* all out */
  assert_true(xqc_round_next(&r, 7000, 5000, &k) >= 0);      /* timed out: again */
  for (int i = 0; i < 3; i++)
    for (int p = 0; p < 2; p++) assert_int_equal(xqc_gate_result(&r.pairing[i].gate, p, 1, 0), 0);
  assert_true(xqc_round_done(&r));
  xqc_round_close(&r);
}

static void test_results_to_ratings(void **state) {
  (void)state;
  xqc_round_t r = {0};
  xq_errbuf_t eb;
  /* Slot 0 against the best net: A wins 3 games of 4, draws 1 */
  assert_int_equal(xqc_round_open(&r, 1, 0, (const xqc_round_player_t[]){PLAYERS[3], PLAYERS[0],
                                  PLAYERS[1]}, 3, 4, 1, &eb), 3);
  /* Players: 0 = best, 1 = slot 0, 2 = slot 1. Pairings (0,1), (0,2), (1,2). */
  xqc_gate_t *g01 = &r.pairing[0].gate, *g02 = &r.pairing[1].gate, *g12 = &r.pairing[2].gate;
  assert_int_equal(xqc_gate_result(g01, 0, -1, -1), 0); /* slot 0 beats the best twice */
  assert_int_equal(xqc_gate_result(g01, 1, -1, 0), 0);
  assert_int_equal(xqc_gate_result(g02, 0, 1, -1), 0);  /* best and slot 1 even */
  assert_int_equal(xqc_gate_result(g02, 1, 0, 0), 0);
  assert_int_equal(xqc_gate_result(g12, 0, 1, -1), 0);  /* slot 0 and slot 1: 2-1-1 */
  assert_int_equal(xqc_gate_result(g12, 1, 1, 0), 0);
  xq_ratings_result_t res[XQC_ROUND_PAIRINGS];
  assert_int_equal(xqc_round_results(&r, res), 3);
  assert_true(res[0].a == 0 && res[0].b == 1 && res[0].wins == 0 && res[0].draws == 1 &&
              res[0].losses == 3);
  assert_true(res[2].a == 1 && res[2].b == 2 && res[2].wins == 2 && res[2].draws == 1 &&
              res[2].losses == 1);
  xq_ratings_t rt;
  bool prior = true;
  assert_int_equal(xqc_round_fit(&r, 0xbe, &rt, &prior, &eb), 0);
  assert_false(prior);
  assert_true(rt.elo[0] == 0 && rt.elo[1] > rt.elo[2] && rt.elo[1] > 0); /* the best at 0 */
  /* Slot 1's net promoted since: it is the anchor. */
  assert_int_equal(xqc_round_fit(&r, 0xa1, &rt, &prior, &eb), 0);
  assert_true(rt.elo[2] == 0 && rt.elo[1] > 0 && rt.elo[0] < rt.elo[1]);
  /* Slot 0 wins every game: the bare fit refuses, the prior rates it. */
  xqc_round_close(&r);
  assert_int_equal(xqc_round_open(&r, 1, 0, PLAYERS, 2, 2, 1, &eb), 1);
  assert_int_equal(xqc_gate_result(&r.pairing[0].gate, 0, 1, 1), 0);
  assert_int_equal(xqc_round_fit(&r, 0xbe, &rt, &prior, &eb), 0);
  assert_true(prior);
  assert_true(rt.elo[0] == 0 && rt.elo[1] < 0); /* no best net: player 0 is the anchor */
  xqc_round_close(&r);
}

static void test_anchor_text(void **state) {
  (void)state;
  char t[XQC_ROUND_ANCHOR_MAX];
  xqc_round_anchor_text(t, sizeof t, 12, 3, -1);
  assert_string_equal(t, "round=12 a=3 b=-1");
  uint64_t n;
  int a, b;
  assert_true(xqc_round_anchor_parse(t, &n, &a, &b));
  assert_true(n == 12 && a == 3 && b == -1);
  assert_false(xqc_round_anchor_parse("round=1 a=1 b=1", &n, &a, &b));
  assert_false(xqc_round_anchor_parse("round=1 a=1 b=99", &n, &a, &b));
  assert_false(xqc_round_anchor_parse("round=1 a=1 b=2 x", &n, &a, &b));
  assert_false(xqc_round_anchor_parse("greedy", &n, &a, &b));
}

static void test_round_games_setting(void **state) {
  (void)state;
  xqc_config_t cfg;
  xqc_config_defaults(&cfg);
  assert_int_equal(cfg.pbt_round_games, 8);
  xq_errbuf_t eb;
  assert_int_equal(xqc_config_check(&cfg, &eb), 0);
  assert_true(xqc_config_set(&cfg, "pbt_round_games", "1", &eb) < 0);
  assert_true(xqc_config_set(&cfg, "pbt_round_games", "202", &eb) < 0);
  assert_int_equal(xqc_config_set(&cfg, "pbt_round_games", "7", &eb), 0);
  assert_true(xqc_config_check(&cfg, &eb) < 0);
  assert_non_null(strstr(eb.msg, "pbt_round_games: 7 is odd"));
  assert_int_equal(xqc_config_set(&cfg, "pbt_round_games", "200", &eb), 0);
  assert_int_equal(xqc_config_check(&cfg, &eb), 0);
}

/* ---- rounds on a coordinator's state ---- */

#define BEST 0xbe57000000000001ull
static const uint64_t NET[3] = {0xa000000000000001ull, 0xa100000000000001ull,
                                0xa200000000000001ull};

typedef struct {
  char dir[256];
  xqc_t *c;
  xqc_peer_t peer;
} fx_t;

/* A coordinator's state on a fresh campaign: 3 members (control off), each with a net at
 * step 1000 (pbt_interval_steps), the best net. */
static xqc_t *state_new(const char *dir) {
  xqc_t *c = calloc(1, sizeof *c);
  assert_non_null(c);
  snprintf(c->dir, sizeof c->dir, "%s", dir);
  xqc_config_defaults(&c->cfg);
  c->cfg.population = 3;
  c->cfg.population_control = 0;
  c->cfg.pbt_interval_steps = 1000;
  c->cfg.pbt_quantile = 0.5; /* 3 members: one at the bottom copies one at the top */
  c->cfg.pbt_resample_p = 0;
  c->cfg.pbt_round_games = 4;
  char path[512];
  snprintf(path, sizeof path, "%s/campaign.db", dir);
  xq_errbuf_t eb;
  assert_int_equal(xqc_db_open(&c->db, path, &eb), 0);
  xq_rng_seed(&c->rng, 7);
  c->best = BEST;
  c->next_match_id = 1;
  xqc_members_init(&c->members, 3, false, 0x1234, "2x16a", 256);
  return c;
}

static void state_free(xqc_t *c) {
  xqc_round_close(&c->round);
  xqc_gate_close(&c->gate);
  xqc_db_close(&c->db);
  free(c);
}

static int setup(void **state) {
  fx_t *f = calloc(1, sizeof *f);
  snprintf(f->dir, sizeof f->dir, "/tmp/xqz-round-XXXXXX");
  assert_non_null(mkdtemp(f->dir));
  f->c = state_new(f->dir);
  xqc_t *c = f->c;
  assert_int_equal(xqc_db_add_net(c->db, BEST, 0, 500, "best"), 0);
  for (int s = 0; s < 3; s++) {
    assert_int_equal(xqc_db_add_net(c->db, NET[s], BEST, 1000 + s, "candidate"), 0);
    xqc_members_seen(&c->members, s, 1, 1000 + s, NET[s]);
    c->members.slot[s].held = true; /* a live trainer */
  }
  snprintf(f->peer.worker_id, sizeof f->peer.worker_id, "w1");
  f->peer.hello = true; /* arena pairs go only to a connection that said Hello */
  f->peer.features = XQ_FEATURE_ANCHOR_JOBS | XQ_FEATURE_ARENA_PRECISION | XQ_FEATURE_BF16;
  *state = f;
  return 0;
}

static int teardown(void **state) {
  fx_t *f = *state;
  if (f->c) state_free(f->c);
  char cmd[400];
  snprintf(cmd, sizeof cmd, "rm -rf %s", f->dir);
  assert_int_equal(system(cmd), 0);
  free(f);
  return 0;
}

/* Player index of slot s in the round (slot -1: the best). */
static int slot_of_net(uint64_t net) {
  for (int s = 0; s < 3; s++)
    if (NET[s] == net) return s;
  return -1;
}

/* Slot 2 wins every game, slot 0 loses every game, the others draw. From A's side. */
static int a_result(uint64_t net_a, uint64_t net_b) {
  int a = slot_of_net(net_a), b = slot_of_net(net_b);
  if (a == 2 || b == 0) return 1;
  if (b == 2 || a == 0) return -1;
  return 0;
}

/* The peer's result of a round pair (a_result), acknowledged. */
static void answer(fx_t *f, const Xqz__ArenaJob *aj) {
  Xqz__ArenaResult r;
  xqz__arena_result__init(&r);
  r.match_id = aj->match_id;
  r.pair_index = aj->pair_index;
  r.result_a_red = r.result_a_black = a_result(aj->net_a, aj->net_b);
  int acks = g_acks;
  assert_true(xqc_round_arena_result(f->c, &f->peer, 1, &r));
  assert_int_equal(g_acks, acks + 1);
}

/* Hands out a round pair (a spare arena slot) into *out and, when asked, answers it;
 * false when none is due. */
static bool play(fx_t *f, bool answered, Xqz__ArenaJob *out) {
  char fen[XQ_FEN_MAX];
  if (!xqc_round_arena_spare(f->c, &f->peer, out, fen)) return false;
  assert_non_null(out->opening_fen);
  out->opening_fen = NULL; /* fen is gone */
  if (answered) answer(f, out);
  return true;
}

static bool play_one(fx_t *f, bool answered) {
  Xqz__ArenaJob aj;
  return play(f, answered, &aj);
}

static int count_lines(const char *dir, const char *name) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *fp = fopen(path, "r");
  if (!fp) return 0;
  int n = 0, ch;
  while ((ch = fgetc(fp)) != EOF) n += ch == '\n';
  fclose(fp);
  return n;
}

static int open_round_rows(xqc_t *c) {
  static xqc_open_match_t rows[XQC_ROUND_PAIRINGS];
  int n = -1;
  assert_int_equal(xqc_store_matches_of(c->db, "round", rows, XQC_ROUND_PAIRINGS, &n), 0);
  return n;
}

/* The restart: a new state on the same campaign, with the members as members.txt keeps
 * them (rounds: the decided rounds it counts), and the round resumed. */
static xqc_t *restart(fx_t *f, uint64_t rounds) {
  xqc_t *c2 = state_new(f->dir);
  c2->members = f->c->members;
  c2->members.round = rounds;
  state_free(f->c);
  f->c = c2;
  xqc_round_resume(c2);
  return c2;
}

static void test_round_opens_when_due(void **state) {
  fx_t *f = *state;
  xqc_t *c = f->c;
  c->members.slot[1].last_net = c->members.slot[2].last_net = 0; /* one member with a net */
  xqc_round_candidate(c, 0);
  assert_false(c->round.open);
  c->members.slot[1].last_net = NET[1];
  c->members.slot[2].last_net = NET[2];
  c->members.slot[1].last_step = 999; /* the slowest below pbt_interval_steps */
  xqc_round_candidate(c, 1);
  assert_false(c->round.open);
  xqc_members_seen(&c->members, 1, 1, 1000, 0);
  xqc_round_candidate(c, 1);
  assert_true(c->round.open);
  assert_int_equal(c->round.number, 1);
  assert_int_equal(c->round.open_step, 1000);
  assert_int_equal(c->round.nplayers, 4); /* 3 members and the best net */
  assert_int_equal(c->round.npairings, 6);
  assert_int_equal(open_round_rows(c), 6);
  assert_int_equal(c->next_match_id, 7);
  xqc_round_candidate(c, 0); /* one round at a time */
  assert_int_equal(c->next_match_id, 7);
}

static void test_whole_round(void **state) {
  fx_t *f = *state;
  xqc_t *c = f->c;
  xqc_round_candidate(c, 2);
  assert_true(c->round.open);
  int handed = 0;
  while (play_one(f, true)) handed++;
  assert_int_equal(handed, 12); /* 6 pairings of 2 pairs */
  assert_false(c->round.open);  /* decided */
  int64_t games, max;
  xqc_round_progress(c, &games, &max);
  assert_true(games == 0 && max == 0);
  /* Ratings: slot 2 above the best net (0) above slot 0; slot 1 drew the best. */
  const xqc_member_t *m = c->members.slot;
  assert_true(m[0].rated && m[1].rated && m[2].rated);
  assert_true(m[2].elo > m[1].elo && m[1].elo > m[0].elo);
  assert_true(m[2].elo > 0 && m[0].elo < 0);
  assert_true(m[2].elo_lo < m[2].elo && m[2].elo < m[2].elo_hi);
  /* The bottom member copies the top one. */
  assert_int_equal(m[0].order, 1);
  assert_int_equal(m[0].generation, 1);
  assert_int_equal(m[0].parent, 2);
  assert_true(m[0].copy_net == NET[2]);
  assert_int_equal(m[1].generation, 0);
  assert_int_equal(c->members.round, 1);
  /* members.txt holds the decision. */
  char path[512];
  snprintf(path, sizeof path, "%s/members.txt", f->dir);
  xqc_members_t back;
  xq_errbuf_t eb;
  assert_int_equal(xqc_members_load(&back, path, &eb), 0);
  assert_int_equal(back.round, 1);
  assert_int_equal(back.slot[0].order, 1);
  /* Lines: 4 ratings and 1 copy; the matches closed. */
  assert_int_equal(count_lines(f->dir, "population.log"), 5);
  assert_int_equal(open_round_rows(c), 0);
  /* The best member's net plays gating against the best net. */
  assert_true(c->gate.open);
  assert_true(c->gate.cand == NET[2] && c->gate.best == BEST);
  /* A late result of the decided round is not the round's. */
  Xqz__ArenaResult r;
  xqz__arena_result__init(&r);
  r.match_id = 1;
  assert_false(xqc_round_arena_result(c, &f->peer, 1, &r));
  /* The next round waits until each member has trained pbt_interval_steps more than its
   * step when the round opened (1000, 1001, 1002). */
  for (int s = 0; s < 3; s++) xqc_members_seen(&c->members, s, 2, 2000 + s, 0);
  xqc_members_seen(&c->members, 2, 2, 2001, 0);
  xqc_round_candidate(c, 0);
  assert_false(c->round.open);
  xqc_members_seen(&c->members, 2, 2, 2002, 0);
  xqc_round_candidate(c, 0);
  assert_true(c->round.open);
  assert_int_equal(c->round.number, 2);
  assert_int_equal(c->round.open_step, 2000); /* the slowest live member's */
}

/* Plays the open round to its decision. */
static void decide_round(fx_t *f) {
  assert_true(f->c->round.open);
  while (play_one(f, true)) {}
  assert_false(f->c->round.open);
}

/* A decided round's pairing matches leave no row in campaign.db: the next start must still
 * count their ids as taken, or a worker's late result for an old pair would name a new
 * match (seen in the chaos soak: an honest result refused as forged). */
static void test_match_ids_survive_the_round(void **state) {
  fx_t *f = *state;
  xqc_t *c = f->c;
  xqc_round_candidate(c, 2);
  uint64_t last = 0;
  for (int k = 0; k < c->round.npairings; k++)
    if (c->round.pairing[k].gate.match_id > last) last = c->round.pairing[k].gate.match_id;
  assert_true(last > 0);
  decide_round(f);
  assert_true(c->gate.open); /* the best member's gating match: close it as stale */
  if (c->gate.match_id > last) last = c->gate.match_id;
  assert_int_equal(xqc_store_match_closed(c->db, c->gate.match_id), 0);
  assert_int_equal(open_round_rows(c), 0);
  uint64_t next = 0;
  assert_int_equal(xqc_db_next_match_id(c->db, &next), 0);
  assert_true(next > last);
}

/* A member whose trainer died (its slot freed) plays its last net in the next round but
 * holds no round back; back, it counts its interval from its own step. */
static void test_dead_member_holds_nothing_back(void **state) {
  fx_t *f = *state;
  xqc_t *c = f->c;
  xqc_round_candidate(c, 0);
  decide_round(f);
  c->members.slot[1].held = false; /* its trainer died at step 1001 */
  xqc_members_seen(&c->members, 0, 2, 2000, 0);
  xqc_members_seen(&c->members, 2, 2, 2002, 0);
  xqc_round_candidate(c, 0);
  assert_true(c->round.open);
  assert_int_equal(c->round.nplayers, 4); /* the three members and the best net */
  assert_true(xqc_round_player_of(&c->round, 1) >= 0);
  decide_round(f);
  /* Member 1 comes back at its step, far behind the others: the next round waits for its
   * own interval, not for it to catch up with them. */
  c->members.slot[1].held = true;
  xqc_members_seen(&c->members, 0, 3, 9000, 0);
  xqc_members_seen(&c->members, 2, 3, 9000, 0);
  xqc_members_seen(&c->members, 1, 3, 2000, 0);
  xqc_round_candidate(c, 0);
  assert_false(c->round.open);
  xqc_members_seen(&c->members, 1, 3, 2001, 0);
  xqc_round_candidate(c, 0);
  assert_true(c->round.open);
}

/* A player's net that cannot be served drops the round, which opens again without it;
 * the member has no net until its next candidate. */
static void test_round_net_lost(void **state) {
  fx_t *f = *state;
  xqc_t *c = f->c;
  xqc_round_candidate(c, 0);
  assert_true(c->round.open);
  assert_true(play_one(f, true));
  uint64_t first = c->next_match_id;
  xqc_round_net_lost(c, 0x9999, "not a player"); /* nothing to do */
  assert_int_equal(c->next_match_id, first);
  xqc_round_net_lost(c, NET[1], "damaged");
  assert_true(c->round.open);
  assert_int_equal(c->round.number, 1);
  assert_int_equal(c->round.nplayers, 3); /* members 0 and 2 and the best net */
  assert_int_equal(xqc_round_player_of(&c->round, 1), -1);
  assert_true(c->members.slot[1].last_net == 0);
  assert_int_equal(open_round_rows(c), 3); /* the dropped round's rows closed */
  assert_true(c->round.pairing[0].gate.match_id >= first);
  decide_round(f);
  assert_int_equal(c->members.round, 1);
  /* Its next candidate brings it back. */
  xqc_members_seen(&c->members, 1, 2, 2001, NET[1]);
  for (int s = 0; s < 3; s++) xqc_members_seen(&c->members, s, 2, 3000, 0);
  xqc_round_candidate(c, 1);
  assert_true(c->round.open);
  assert_true(xqc_round_player_of(&c->round, 1) >= 0);
  /* The best net lost and still the best (no earlier one to fall back to): dropped, and
   * not opened again with the same net. */
  xqc_round_net_lost(c, c->best, "damaged");
  assert_false(c->round.open);
  assert_int_equal(open_round_rows(c), 0);
}

/* Between rounds, each new candidate of the member rated best goes to gating as a single
 * trainer's does (pbt_gate_leader), the newest waiting in place of the one before; the
 * other members' candidates wait for the next round. */
static void test_leader_gated_between_rounds(void **state) {
  fx_t *f = *state;
  xqc_t *c = f->c;
  assert_int_equal(c->cfg.pbt_gate_leader, 1); /* the default */
  assert_int_equal(xqc_round_leader(c), -1);   /* no round decided yet */
  xqc_round_candidate(c, 2);
  decide_round(f);
  assert_int_equal(xqc_round_leader(c), 2);
  assert_true(c->gate.open && c->gate.cand == NET[2]); /* the round's own choice */
  const uint64_t next2 = 0xa200000000000002ull, next2b = 0xa200000000000003ull,
                 next1 = 0xa100000000000002ull;
  assert_int_equal(xqc_db_add_net(c->db, next2, BEST, 1100, "candidate"), 0);
  xqc_members_candidate_stored(c, 2, next2, 1100);
  assert_true(c->queued_cand == next2); /* waits for the open match */
  assert_int_equal(xqc_db_add_net(c->db, next1, BEST, 1100, "candidate"), 0);
  xqc_members_candidate_stored(c, 1, next1, 1100);
  assert_true(c->queued_cand == next2); /* not the leader's: the round rates it */
  assert_int_equal(xqc_db_add_net(c->db, next2b, BEST, 1200, "candidate"), 0);
  xqc_members_candidate_stored(c, 2, next2b, 1200);
  assert_true(c->queued_cand == next2b);
  char state_[16] = "";
  assert_int_equal(xqc_db_net_state(c->db, next2, state_, sizeof state_, NULL), 0);
  assert_string_equal(state_, "superseded"); /* replaced while it waited: retired */

  /* Off: only the round's choice is gated. */
  xqc_gate_close(&c->gate);
  c->queued_cand = 0;
  c->cfg.pbt_gate_leader = 0;
  const uint64_t next2c = 0xa200000000000004ull;
  assert_int_equal(xqc_db_add_net(c->db, next2c, BEST, 1300, "candidate"), 0);
  xqc_members_candidate_stored(c, 2, next2c, 1300);
  assert_false(c->gate.open);
  assert_true(c->queued_cand == 0);
}

static void test_best_member_rejected_not_gated(void **state) {
  fx_t *f = *state;
  xqc_t *c = f->c;
  assert_int_equal(xqc_db_set_net_state(c->db, NET[2], "rejected", 0), 0);
  xqc_round_candidate(c, 2);
  while (play_one(f, true)) {}
  assert_int_equal(c->members.round, 1);
  assert_false(c->gate.open);
}

static void test_best_is_a_member(void **state) {
  fx_t *f = *state;
  xqc_t *c = f->c;
  c->best = NET[2]; /* member 2's net was promoted: it plays once, as the anchor */
  xqc_round_candidate(c, 2);
  assert_int_equal(c->round.nplayers, 3);
  assert_int_equal(xqc_round_player_of(&c->round, -1), -1);
  while (play_one(f, true)) {}
  assert_int_equal(c->members.round, 1);
  assert_true(c->members.slot[2].elo == 0 && c->members.slot[0].elo < 0);
  assert_false(c->gate.open); /* the top member's net is the best net already */
}

static void test_restart_mid_round(void **state) {
  fx_t *f = *state;
  xqc_t *c = f->c;
  xqc_round_candidate(c, 2);
  for (int i = 0; i < 5; i++) assert_true(play_one(f, true));
  Xqz__ArenaJob out;
  assert_true(play(f, false, &out)); /* out, no answer yet */
  int64_t games, max;
  xqc_round_progress(c, &games, &max);
  assert_true(games == 10 && max == 24);
  uint64_t next = c->next_match_id;
  xqc_t *c2 = restart(f, 0);
  assert_true(c2->round.open);
  assert_int_equal(c2->round.number, 1);
  assert_int_equal(c2->round.open_step, 1000);
  assert_int_equal(c2->round.nplayers, 4);
  assert_int_equal(c2->round.npairings, 6);
  assert_true(c2->next_match_id >= next);
  xqc_round_progress(c2, &games, &max);
  assert_true(games == 10 && max == 24);
  /* The rest of the round; the pair that was out stays with its holder, who answers. */
  int handed = 0;
  while (play_one(f, true)) handed++;
  assert_int_equal(handed, 6);
  assert_true(c2->round.open);
  answer(f, &out);
  assert_false(c2->round.open);
  assert_int_equal(c2->members.round, 1);
  assert_int_equal(c2->members.slot[0].order, 1);
}

static void test_restart_after_decision_saved(void **state) {
  fx_t *f = *state;
  xqc_t *c = f->c;
  xqc_round_candidate(c, 2);
  while (c->round.open) {
    /* Every pair but the last: the round stays open in campaign.db. */
    int64_t games, max;
    xqc_round_progress(c, &games, &max);
    if (games == max - 2) break;
    assert_true(play_one(f, true));
  }
  assert_int_equal(open_round_rows(c), 6);
  /* members.txt already counts round 1 (saved, then the process died). */
  xqc_t *c2 = restart(f, 1);
  assert_false(c2->round.open);
  assert_int_equal(open_round_rows(c2), 0);
  assert_int_equal(c2->members.round, 1); /* not decided again */
  assert_int_equal(c2->members.slot[0].order, 0);
  assert_int_equal(count_lines(f->dir, "population.log"), 0);
  assert_false(c2->gate.open);
}

static void test_restart_complete_round_decided(void **state) {
  fx_t *f = *state;
  xqc_t *c = f->c;
  xqc_round_candidate(c, 2);
  /* Score every pair straight in the gates and campaign.db, as if the process died after
   * the last result was stored and before the decision. */
  for (int k = 0; k < c->round.npairings; k++) {
    xqc_gate_t *g = &c->round.pairing[k].gate;
    int res = a_result(g->cand, g->best);
    for (int p = 0; p < g->npairs; p++) {
      assert_int_equal(xqc_store_pair_issued(c->db, g->match_id, p, "worker:w1"), 0);
      assert_int_equal(xqc_store_pair_result(c->db, g->match_id, p, res, res), 0);
    }
  }
  xqc_t *c2 = restart(f, 0);
  assert_false(c2->round.open);
  assert_int_equal(c2->members.round, 1);
  assert_int_equal(c2->members.slot[0].parent, 2);
  assert_int_equal(open_round_rows(c2), 0);
}

static void test_share_of_arena_jobs(void **state) {
  fx_t *f = *state;
  xqc_t *c = f->c;
  c->cfg.pbt_share = 0.25;
  c->cfg.pbt_round_games = 200; /* more pairs than the jobs below */
  c->cfg.gating = XQC_GATING_SPRT;
  c->cfg.gating_max_games = 1000;
  xqc_round_candidate(c, 2);
  assert_true(c->round.open);
  xqc_promote_gate_net(c, NET[1], 1001);
  assert_true(c->gate.open && c->gate.npairs >= 200);
  int round_jobs = 0, gating_jobs = 0;
  for (int i = 0; i < 400; i++, c->jobs_served++) {
    Xqz__ArenaJob aj;
    char fen[XQ_FEN_MAX];
    if (!xqc_promote_arena_job(c, &f->peer, &aj, fen)) continue;
    if (aj.match_id == c->gate.match_id) gating_jobs++;
    else if (xqc_round_find(&c->round, aj.match_id) >= 0) round_jobs++;
  }
  /* 200 arena slots: a quarter to the round, the rest to gating. */
  assert_int_equal(round_jobs + gating_jobs, 200);
  assert_true(round_jobs >= 45 && round_jobs <= 55);
  /* Without a gating pair, the round takes every arena slot. */
  xqc_gate_close(&c->gate);
  round_jobs = 0;
  for (int i = 0; i < 40; i++, c->jobs_served++) {
    Xqz__ArenaJob aj;
    char fen[XQ_FEN_MAX];
    if (xqc_promote_arena_job(c, &f->peer, &aj, fen)) round_jobs++;
  }
  assert_int_equal(round_jobs, 20);
}

int main(void) {
  xq_log_set_stream(stderr);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_pairings),
      cmocka_unit_test(test_hand_out_in_turn),
      cmocka_unit_test(test_results_to_ratings),
      cmocka_unit_test(test_anchor_text),
      cmocka_unit_test(test_round_games_setting),
      cmocka_unit_test_setup_teardown(test_round_opens_when_due, setup, teardown),
      cmocka_unit_test_setup_teardown(test_whole_round, setup, teardown),
      cmocka_unit_test_setup_teardown(test_dead_member_holds_nothing_back, setup, teardown),
      cmocka_unit_test_setup_teardown(test_round_net_lost, setup, teardown),
      cmocka_unit_test_setup_teardown(test_best_member_rejected_not_gated, setup, teardown),
      cmocka_unit_test_setup_teardown(test_best_is_a_member, setup, teardown),
      cmocka_unit_test_setup_teardown(test_leader_gated_between_rounds, setup, teardown),
      cmocka_unit_test_setup_teardown(test_match_ids_survive_the_round, setup, teardown),
      cmocka_unit_test_setup_teardown(test_restart_mid_round, setup, teardown),
      cmocka_unit_test_setup_teardown(test_restart_after_decision_saved, setup, teardown),
      cmocka_unit_test_setup_teardown(test_restart_complete_round_decided, setup, teardown),
      cmocka_unit_test_setup_teardown(test_share_of_arena_jobs, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
