/*
 * population_round.c: a population's rounds on the coordinator (population_round.h): when
 * one opens, its pairs handed out and scored through promote.c, its restart, and its
 * decision (ratings, exploit and explore, records, the best member to gating).
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "coord.h"
#include "members_wire.h"
#include "population/events.h"
#include "storage/campaign.h"
#include "storage/match_store.h"
#include "support/log.h"

#define COMP "coordinator"
#define KIND "round"

/* Logs a failed write of the open round: it goes on, a restart would replay the unsaved part. */
static void stored(int rc, const char *what) {
  if (rc < 0)
    XQ_LOGW(COMP, "population round not saved in campaign.db; it goes on, but a restart would"
            " play the unsaved part again (check the campaign disk) what=%s", what);
}

/* net's training step as campaign.db knows it, else fallback. */
static int64_t net_step(xqc_t *c, uint64_t net, int64_t fallback) {
  char state[16];
  int64_t step = 0;
  if (xqc_db_net_state(c->db, net, state, sizeof state, &step) < 0 || !state[0]) return fallback;
  return step;
}

/* Members with a net: how many, and the smallest of their steps into *min_step. */
static int members_with_net(const xqc_members_t *t, int64_t *min_step) {
  int n = 0;
  *min_step = INT64_MAX;
  for (int s = 0; s < t->k; s++)
    if (t->slot[s].last_net) {
      n++;
      if (t->slot[s].last_step < *min_step) *min_step = t->slot[s].last_step;
    }
  return n;
}

/* Whether the next round is due (population_round.h), and the slowest live member's step
 * into *open_step: two members have a net, and every member with a net whose trainer is
 * live (holds its slot) has trained pbt_interval_steps beyond its round_step, one at least.
 * A member whose trainer died still plays its last net but holds no round back; one that
 * comes back far behind counts from its own step, not the others'. */
static bool round_due(const xqc_t *c, int64_t *open_step) {
  const xqc_members_t *t = &c->members;
  int64_t min_step;
  if (members_with_net(t, &min_step) < 2) return false;
  int live = 0;
  *open_step = INT64_MAX;
  for (int s = 0; s < t->k; s++) {
    const xqc_member_t *m = &t->slot[s];
    if (!m->held || !m->last_net) continue;
    if (m->last_step < m->round_step + c->cfg.pbt_interval_steps) return false;
    live++;
    if (m->last_step < *open_step) *open_step = m->last_step;
  }
  return live > 0;
}

/* Every member's interval counts from its present step (a round opened, a restart). */
static void set_round_steps(xqc_members_t *t) {
  for (int s = 0; s < t->k; s++) t->slot[s].round_step = t->slot[s].last_step;
}

/* Closes every pairing's stored match (a decided or abandoned round). */
static void close_rows(xqc_t *c) {
  for (int k = 0; k < c->round.npairings; k++)
    stored(xqc_store_match_closed(c->db, c->round.pairing[k].gate.match_id), "round closed");
}

/* Opens the next round at open_step among the members with a net and the best net. */
static void open_round(xqc_t *c, int64_t open_step) {
  xqc_round_player_t pl[XQC_ROUND_PLAYERS];
  int n = 0;
  bool best_plays = false;
  for (int s = 0; s < c->members.k; s++) {
    const xqc_member_t *m = &c->members.slot[s];
    if (!m->last_net) continue;
    pl[n++] = (xqc_round_player_t){s, m->last_net, net_step(c, m->last_net, m->last_step)};
    best_plays |= m->last_net == c->best;
  }
  if (c->best && !best_plays) pl[n++] = (xqc_round_player_t){-1, c->best, net_step(c, c->best, 0)};
  xqc_round_t *r = &c->round;
  xq_errbuf_t eb;
  uint64_t number = c->members.round + 1;
  int np = xqc_round_open(r, number, open_step, pl, n, (int)c->cfg.pbt_round_games,
                          c->next_match_id, &eb);
  if (np < 0) {
    XQ_LOGE(COMP, "cannot open population round round=%" PRIu64 " reason=\"%s\"", number, eb.msg);
    return;
  }
  xqc_match_ids_take(c, (uint64_t)np);
  set_round_steps(&c->members);
  for (int k = 0; k < np; k++) {
    const xqc_round_pairing_t *p = &r->pairing[k];
    xqc_open_match_t row = {p->gate.match_id, p->gate.cand, p->gate.best, (uint64_t)open_step,
                            p->gate.cand_step, p->gate.npairs, KIND, ""};
    xqc_round_anchor_text(row.anchor, sizeof row.anchor, number, r->player[p->a].slot,
                          r->player[p->b].slot);
    stored(xqc_store_match_open(c->db, &row), "pairing");
  }
  XQ_LOGI(COMP, "population round opened round=%" PRIu64 " players=%d pairings=%d games=%lld"
          " step=%lld", number, n, np, (long long)(np * c->cfg.pbt_round_games),
          (long long)open_step);
}

void xqc_round_candidate(xqc_t *c, int slot) {
  if (c->cfg.population <= 0 || c->round.open || slot < 0 || slot >= c->members.k) return;
  int64_t open_step;
  if (round_due(c, &open_step)) open_round(c, open_step);
}

/* Hands out the open round's next pair to p. */
static bool hand_out(xqc_t *c, const xqc_peer_t *p, Xqz__ArenaJob *aj, char *fen) {
  int k = 0;
  int pair = xqc_round_next(&c->round, xqc_now_ms(), xqc_promote_pair_deadline_ms(c), &k);
  return pair >= 0 && xqc_promote_issue_pair(c, p, &c->round.pairing[k].gate, pair, aj, fen);
}

bool xqc_round_arena_job(xqc_t *c, const xqc_peer_t *p, Xqz__ArenaJob *aj, char *fen) {
  if (!c->round.open) return false;
  c->round_credit += c->cfg.pbt_share;
  if (c->round_credit < 1) return false;
  if (!hand_out(c, p, aj, fen)) {
    c->round_credit = 1; /* owed, but not saved up into a burst */
    return false;
  }
  c->round_credit -= 1;
  return true;
}

bool xqc_round_arena_spare(xqc_t *c, const xqc_peer_t *p, Xqz__ArenaJob *aj, char *fen) {
  return c->round.open && hand_out(c, p, aj, fen);
}

/* ---- the decision ---- */

/* What a member was before the round's orders changed it (the ratings' records). */
typedef struct {
  double settings[XQC_MS_COUNT];
  int generation, parent;
} member_before_t;

/* Sets each member's rating from rt (players' order); members that did not play are
 * unrated. */
static void set_ratings(xqc_t *c, const xq_ratings_t *rt) {
  for (int s = 0; s < c->members.k; s++) {
    xqc_member_t *m = &c->members.slot[s];
    int i = xqc_round_player_of(&c->round, s);
    m->rated = i >= 0;
    m->elo = i >= 0 ? rt->elo[i] : 0;
    m->elo_lo = i >= 0 ? rt->lo[i] : 0;
    m->elo_hi = i >= 0 ? rt->hi[i] : 0;
  }
}

/* Exploit and explore over the rated members: the orders (slots) into o; returns how many. */
static int make_orders(xqc_t *c, xqc_pbt_order_t *o) {
  int idx[XQC_MEMBERS_MAX], n = 0, control = -1;
  double elo[XQC_MEMBERS_MAX], set[XQC_MEMBERS_MAX][XQC_PBT_MAX_SETTINGS];
  for (int s = 0; s < c->members.k; s++) {
    const xqc_member_t *m = &c->members.slot[s];
    if (!m->rated || !m->last_net) continue;
    if (s == c->members.control) control = n;
    idx[n] = s;
    elo[n] = m->elo;
    memcpy(set[n++], m->settings, sizeof set[0]);
  }
  xqc_pbt_rule_t rule;
  xqc_pbt_rule_default(&rule);
  rule.quantile = c->cfg.pbt_quantile;
  rule.resample_p = c->cfg.pbt_resample_p;
  int no = n < 2 ? 0
                 : xqc_pbt_round(n, elo, (const double (*)[XQC_PBT_MAX_SETTINGS])set,
                                 XQC_MS_COUNT, xqc_members_ranges(), control, &rule, &c->rng, o);
  for (int k = 0; k < no; k++) {
    o[k].member = idx[o[k].member];
    o[k].donor = idx[o[k].donor];
  }
  return no;
}

/* Appends line to population.log (logged when it cannot be). */
static void log_line(xqc_t *c, const char *line) {
  xq_errbuf_t eb;
  if (xqc_campaign_log_line(c->dir, "population.log", line, &eb) < 0)
    XQ_LOGE(COMP, "population.log not written; campaign.db holds the round's rows"
            " reason=\"%s\"", eb.msg);
}

/* The rows and population.log lines of the decided round: each player's rating, each
 * order's event. */
static void record(xqc_t *c, const xq_ratings_t *rt, const member_before_t *before,
                   const xqc_pbt_order_t *o, int no) {
  const xqc_round_t *r = &c->round;
  int64_t now = (int64_t)time(NULL);
  char line[2048];
  for (int i = 0; i < r->nplayers; i++) {
    const xqc_round_player_t *pl = &r->player[i];
    xqc_pop_rating_t row = {.round = r->number, .member = pl->slot, .net = pl->net,
                            .step = pl->step, .elo = rt->elo[i], .lo = rt->lo[i],
                            .hi = rt->hi[i], .parent = -1, .time = now};
    if (pl->slot >= 0) {
      memcpy(row.settings, before[pl->slot].settings, sizeof row.settings);
      row.generation = before[pl->slot].generation;
      row.parent = before[pl->slot].parent;
    }
    stored(xqc_pop_rating_add(c->db, &row), "rating");
    if (xqc_pop_rating_json(&row, line, sizeof line) >= 0) log_line(c, line);
  }
  for (int k = 0; k < no; k++) {
    const xqc_member_t *m = &c->members.slot[o[k].member];
    const xqc_member_t *d = &c->members.slot[o[k].donor];
    xqc_pop_event_t e = {.round = r->number, .member = o[k].member, .donor = o[k].donor,
                         .generation = m->generation, .donor_net = m->copy_net,
                         .member_elo = m->elo, .donor_elo = d->elo, .time = now};
    memcpy(e.before, before[o[k].member].settings, sizeof e.before);
    memcpy(e.after, m->settings, sizeof e.after);
    stored(xqc_pop_event_add(c->db, &e), "event");
    if (xqc_pop_event_json(&e, line, sizeof line) >= 0) log_line(c, line);
  }
}

/* Logs the decided round's ratings, 1-based slots ("best" for the best net). */
static void log_decided(const xqc_t *c, const xq_ratings_t *rt, bool prior) {
  const xqc_round_t *r = &c->round;
  char buf[2048];
  size_t used = 0;
  buf[0] = 0;
  for (int i = 0; i < r->nplayers && used < sizeof buf; i++) {
    char who[16];
    if (r->player[i].slot < 0) snprintf(who, sizeof who, "best");
    else snprintf(who, sizeof who, "%d", r->player[i].slot + 1);
    int k = snprintf(buf + used, sizeof buf - used, "%s%s:%+.0f[%+.0f,%+.0f]", i ? "," : "",
                     who, rt->elo[i], rt->lo[i], rt->hi[i]);
    if (k < 0) break;
    used += (size_t)k;
  }
  int64_t games, max;
  xqc_round_games(r, &games, &max);
  XQ_LOGI(COMP, "population round decided round=%" PRIu64 " games=%lld prior=%s ratings=%s",
          r->number, (long long)games, prior ? "yes" : "no", buf);
}

int xqc_round_leader(const xqc_t *c) {
  int top = -1;
  for (int s = 0; s < c->members.k; s++) {
    const xqc_member_t *m = &c->members.slot[s];
    if (m->rated && m->last_net && (top < 0 || m->elo > c->members.slot[top].elo)) top = s;
  }
  return top;
}

/* The best-rated member's net goes to gating, unless it is the best net or was decided. */
static void best_to_gating(xqc_t *c) {
  int top = xqc_round_leader(c);
  if (top < 0 || c->members.slot[top].last_net == c->best) return;
  uint64_t net = c->members.slot[top].last_net;
  char state[16] = "";
  int64_t step = 0;
  if (xqc_db_net_state(c->db, net, state, sizeof state, &step) < 0 || strcmp(state, "candidate")) {
    XQ_LOGI(COMP, "population round's best member not sent to gating: its net is not an"
            " undecided candidate member=%d net=%016" PRIx64 " state=%s", top + 1, net,
            state[0] ? state : "unknown");
    return;
  }
  XQ_LOGI(COMP, "population round's best member goes to gating member=%d net=%016" PRIx64
          " elo=%+.1f", top + 1, net, c->members.slot[top].elo);
  xqc_promote_gate_net(c, net, step);
}

/* Every pair is scored: the round is decided (population_round.h, the order matters). */
static void decide(xqc_t *c) {
  xqc_round_t *r = &c->round;
  xq_ratings_t rt;
  bool prior = false;
  xq_errbuf_t eb;
  if (xqc_round_fit(r, c->best, &rt, &prior, &eb) < 0) {
    XQ_LOGE(COMP, "population round cannot be rated; it is dropped, the members keep their"
            " settings round=%" PRIu64 " reason=\"%s\"", r->number, eb.msg);
    close_rows(c);
    xqc_round_close(r);
    return;
  }
  if (prior)
    XQ_LOGW(COMP, "population round rated with a prior (sd %.0f Elo): a group of players won"
            " every decisive game, which the bare fit cannot rate round=%" PRIu64,
            XQC_ROUND_PRIOR_ELO, r->number);
  member_before_t before[XQC_MEMBERS_MAX];
  for (int s = 0; s < c->members.k; s++) {
    memcpy(before[s].settings, c->members.slot[s].settings, sizeof before[s].settings);
    before[s].generation = c->members.slot[s].generation;
    before[s].parent = c->members.slot[s].parent;
  }
  set_ratings(c, &rt);
  xqc_pbt_order_t o[XQC_MEMBERS_MAX];
  int no = make_orders(c, o), done = 0;
  for (int k = 0; k < no; k++) {
    char why[200];
    if (xqc_members_apply(&c->members, &o[k], why, sizeof why) < 0) {
      XQ_LOGE(COMP, "population copy order not applied reason=\"%s\"", why);
      continue;
    }
    o[done++] = o[k];
  }
  c->members.round++;
  char path[1024];
  snprintf(path, sizeof path, "%s/members.txt", c->dir);
  bool saved = xqc_members_save(&c->members, path, &eb) == 0;
  if (!saved)
    XQ_LOGE(COMP, "members.txt not saved after the round: its matches stay in campaign.db, so"
            " a restart before the next save decides the round again round=%" PRIu64
            " reason=\"%s\"", r->number, eb.msg);
  record(c, &rt, before, o, done);
  log_decided(c, &rt, prior);
  for (int k = 0; k < done; k++)
    XQ_LOGI(COMP, "member copies member=%d donor=%d round=%" PRIu64 " generation=%d order=%"
            PRIu64 " net=%016" PRIx64, o[k].member + 1, o[k].donor + 1, r->number,
            c->members.slot[o[k].member].generation, c->members.slot[o[k].member].order,
            c->members.slot[o[k].member].copy_net);
  if (saved) close_rows(c);
  xqc_round_close(r);
  best_to_gating(c);
}

bool xqc_round_arena_result(xqc_t *c, xqc_peer_t *p, uint64_t rq, const Xqz__ArenaResult *r) {
  int k = c->round.open ? xqc_round_find(&c->round, r->match_id) : -1;
  if (k < 0) return false;
  if (xqc_promote_score_pair(c, p, rq, &c->round.pairing[k].gate, r) &&
      xqc_round_done(&c->round))
    decide(c);
  return true;
}

/* ---- restart ---- */

/* The index of the player of slot with net (added when new); -1 when the slot plays
 * another net in the round (a damaged round). */
static int resume_player(xqc_t *c, int slot, uint64_t net, int64_t step) {
  xqc_round_t *r = &c->round;
  int i = xqc_round_player_of(r, slot);
  if (i >= 0) return r->player[i].net == net ? i : -1;
  xq_errbuf_t eb;
  return xqc_round_add_player(r, slot, net, step, &eb);
}

/* Adds stored pairing m (of round number, slots a and b) with its pairs; false when it
 * does not fit the round. */
static bool resume_pairing(xqc_t *c, const xqc_open_match_t *m, int sa, int sb) {
  xqc_round_t *r = &c->round;
  int a = resume_player(c, sa, m->net_a, m->step);
  int b = a < 0 ? -1 : resume_player(c, sb, m->net_b, net_step(c, m->net_b, 0));
  xq_errbuf_t eb;
  if (b < 0 || xqc_round_add_pairing(r, a, b, m->match_id, m->npairs, &eb) < 0) return false;
  int scored = 0, out = 0;
  return xqc_store_pairs_restore(c->db, &r->pairing[r->npairings - 1].gate, xqc_now_ms(),
                                 &scored, &out) == 0;
}

void xqc_round_resume(xqc_t *c) {
  if (c->cfg.population <= 0) return;
  static xqc_open_match_t rows[XQC_ROUND_PAIRINGS * 2];
  int n = 0;
  if (xqc_store_matches_of(c->db, KIND, rows, XQC_ROUND_PAIRINGS * 2, &n) < 0) n = 0;
  /* The newest round stored, if the members' table has not decided it. */
  uint64_t number = 0, rn;
  int sa, sb;
  for (int i = 0; i < n; i++)
    if (xqc_round_anchor_parse(rows[i].anchor, &rn, &sa, &sb) && rn > number) number = rn;
  bool live = number > c->members.round;
  xqc_round_t *r = &c->round;
  bool ok = true;
  for (int i = 0; i < n; i++) {
    const xqc_open_match_t *m = &rows[i];
    if (c->next_match_id <= m->match_id) c->next_match_id = m->match_id + 1;
    bool mine = xqc_round_anchor_parse(m->anchor, &rn, &sa, &sb) && rn == number && live;
    if (mine && !r->open) xqc_round_begin(r, number, (int64_t)m->parent);
    if (mine && ok) ok = resume_pairing(c, m, sa, sb);
    if (!mine) stored(xqc_store_match_closed(c->db, m->match_id), "stale round match");
  }
  if (r->open && !ok) {
    XQ_LOGW(COMP, "stored population round dropped: its matches do not make one round (a"
            " slot with two nets, a bad pairing); the next round opens when one is due"
            " round=%" PRIu64, number);
    for (int i = 0; i < n; i++)
      if (xqc_round_anchor_parse(rows[i].anchor, &rn, &sa, &sb) && rn == number)
        stored(xqc_store_match_closed(c->db, rows[i].match_id), "damaged round match");
    xqc_round_close(r);
  }
  if (!r->open) {
    if (number)
      XQ_LOGI(COMP, "stale population round closed: members.txt counts it as decided"
              " round=%" PRIu64 " decided=%" PRIu64, number, c->members.round);
    /* The steps the last round opened at are not kept once it is decided: each member's
     * interval counts from this start, from its own step. */
    int64_t min_step;
    if (members_with_net(&c->members, &min_step) > 0 && c->members.round > 0) {
      r->open_step = min_step;
      set_round_steps(&c->members);
    }
    return;
  }
  int64_t games, max;
  xqc_round_games(r, &games, &max);
  XQ_LOGI(COMP, "population round resumed after the restart round=%" PRIu64 " players=%d"
          " pairings=%d games=%lld of=%lld", r->number, r->nplayers, r->npairings,
          (long long)games, (long long)max);
  if (xqc_round_done(r)) decide(c);
}

void xqc_round_net_lost(xqc_t *c, uint64_t net, const char *why) {
  if (c->cfg.population <= 0 || !net) return;
  bool member = false;
  for (int s = 0; s < c->members.k; s++)
    if (c->members.slot[s].last_net == net) {
      XQ_LOGW(COMP, "a member's last net cannot be served: it plays in no round until the"
              " member's next candidate member=%d net=%016" PRIx64 " why=\"%s\"", s + 1, net,
              why);
      c->members.slot[s].last_net = 0;
      member = true;
    }
  if (member) xqc_members_persist(c);
  xqc_round_t *r = &c->round;
  bool plays = false;
  for (int i = 0; r->open && i < r->nplayers; i++) plays |= r->player[i].net == net;
  if (!plays) return;
  uint64_t number = r->number;
  int64_t open_step = r->open_step;
  XQ_LOGW(COMP, "population round dropped: one of its nets cannot be served; it opens again"
          " without it round=%" PRIu64 " net=%016" PRIx64 " why=\"%s\"", number, net, why);
  close_rows(c);
  xqc_round_close(r);
  int64_t min_step;
  if (net != c->best && members_with_net(&c->members, &min_step) >= 2) open_round(c, open_step);
}

int xqc_round_release(xqc_t *c, const char *who, xqc_gate_held_fn held, void *arg) {
  int n = 0;
  for (int k = 0; c->round.open && k < c->round.npairings; k++)
    n += xqc_gate_release(&c->round.pairing[k].gate, who, held, arg);
  return n;
}

void xqc_round_progress(const xqc_t *c, int64_t *games, int64_t *games_max) {
  xqc_round_games(&c->round, games, games_max);
}
