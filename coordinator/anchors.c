/*
 * anchors.c: anchor matches (anchors.h): which net plays which anchor when, the open
 * anchor match's end, and the anchor_results table. Handing out the pairs and taking the
 * results is promote.c's, with the same holder check as gating pairs.
 */
#include "anchors.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "storage/campaign.h"
#include "coord.h"
#include "storage/match_store.h"
#include "search/players.h"
#include "support/log.h"

#define COMP "coordinator"

int xqc_anchor_db_add(xqc_db_t *db, const xqc_anchor_row_t *r) {
  sqlite3_stmt *st = xqc_db_prep(db, "INSERT OR REPLACE INTO anchor_results(id, net, hex,"
                                     " anchor, promotion, step, wins, draws, losses, score,"
                                     " time) VALUES(?,?,?,?,?,?,?,?,?,?,?)");
  if (!st) return XQ_EIO;
  char hex[17];
  snprintf(hex, sizeof hex, "%016llx", (unsigned long long)r->net);
  sqlite3_bind_int64(st, 1, (sqlite3_int64)r->match_id);
  sqlite3_bind_int64(st, 2, (sqlite3_int64)r->net);
  sqlite3_bind_text(st, 3, hex, -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(st, 4, r->anchor, -1, SQLITE_TRANSIENT);
  sqlite3_bind_int64(st, 5, r->promotion);
  sqlite3_bind_int64(st, 6, r->step);
  sqlite3_bind_int64(st, 7, r->wins);
  sqlite3_bind_int64(st, 8, r->draws);
  sqlite3_bind_int64(st, 9, r->losses);
  sqlite3_bind_double(st, 10, r->score);
  sqlite3_bind_int64(st, 11, r->time);
  return xqc_db_step_done(db, st);
}

int xqc_anchor_db_has(xqc_db_t *db, uint64_t net, const char *anchor) {
  sqlite3_stmt *st = xqc_db_prep(db, "SELECT 1 FROM anchor_results WHERE net=? AND anchor=?");
  if (!st) return -1;
  sqlite3_bind_int64(st, 1, (sqlite3_int64)net);
  sqlite3_bind_text(st, 2, anchor, -1, SQLITE_TRANSIENT);
  int rc = sqlite3_step(st);
  sqlite3_finalize(st);
  return rc == SQLITE_ROW ? 1 : rc == SQLITE_DONE ? 0 : -1;
}

int xqc_anchor_db_history(xqc_db_t *db, int max, xqc_anchor_row_t **rows, int *n) {
  *rows = NULL;
  *n = 0;
  sqlite3_stmt *st = xqc_db_prep(db, "SELECT id, net, anchor, promotion, step, wins, draws,"
                                     " losses, score, time FROM (SELECT * FROM anchor_results"
                                     " ORDER BY time DESC, id DESC LIMIT ?) ORDER BY time, id");
  if (!st) return XQ_EIO;
  sqlite3_bind_int(st, 1, max);
  xqc_anchor_row_t *r = calloc((size_t)(max > 0 ? max : 1), sizeof *r);
  if (!r) {
    sqlite3_finalize(st);
    return XQ_ENOMEM;
  }
  int m = 0;
  while (m < max && sqlite3_step(st) == SQLITE_ROW) {
    xqc_anchor_row_t *x = &r[m++];
    x->match_id = (uint64_t)sqlite3_column_int64(st, 0);
    x->net = (uint64_t)sqlite3_column_int64(st, 1);
    const unsigned char *a = sqlite3_column_text(st, 2);
    snprintf(x->anchor, sizeof x->anchor, "%s", a ? (const char *)a : "");
    x->promotion = sqlite3_column_int64(st, 3);
    x->step = sqlite3_column_int64(st, 4);
    x->wins = sqlite3_column_int64(st, 5);
    x->draws = sqlite3_column_int64(st, 6);
    x->losses = sqlite3_column_int64(st, 7);
    x->score = sqlite3_column_double(st, 8);
    x->time = sqlite3_column_int64(st, 9);
  }
  sqlite3_finalize(st);
  *rows = r;
  *n = m;
  return 0;
}

static void stored(int rc, const char *what) {
  if (rc < 0)
    XQ_LOGW(COMP, "anchor match not saved in campaign.db; it goes on, but a restart would"
            " play the unsaved part again (check the campaign disk) what=%s", what);
}

/* Opens the anchor match of net (promotion number, training step) against spec. */
static void open_anchor(xqc_t *c, uint64_t net, int64_t promotion, int64_t step,
                        const char *spec) {
  xqc_anchor_t *a = &c->anchor;
  xq_errbuf_t eb;
  uint64_t mid = xqc_match_ids_take(c, 1);
  int npairs = (int)((c->cfg.anchor_games + 1) / 2);
  if (xqc_gate_open_pairs(&a->gate, npairs, mid, net, 0, 0, step, &eb) < 0) {
    XQ_LOGE(COMP, "cannot open an anchor match reason=\"%s\"", eb.msg);
    return;
  }
  snprintf(a->spec, sizeof a->spec, "%.*s", XQC_ANCHOR_SPEC_MAX - 1, spec);
  a->promotion = promotion;
  a->step = step;
  xqc_open_match_t row = {mid, net, 0, (uint64_t)promotion, step, npairs, "anchor", ""};
  snprintf(row.anchor, sizeof row.anchor, "%.*s", XQC_ANCHOR_SPEC_MAX - 1, spec);
  stored(xqc_store_match_open(c->db, &row), "match");
  XQ_LOGI(COMP, "anchor match opened match=%llu net=%016llx anchor=%s games=%d promotion=%lld",
          (unsigned long long)mid, (unsigned long long)net, spec, npairs * 2,
          (long long)promotion);
}

/* Opens net's match against the first anchor it has not played; false when none is left. */
static bool schedule_net(xqc_t *c, uint64_t net, int64_t promotion, int64_t step) {
  char specs[XQC_ANCHORS_MAX][XQC_ANCHOR_SPEC_MAX];
  int n = 0;
  xq_errbuf_t eb;
  if (xqc_anchor_list(c->cfg.anchors, specs, &n, &eb) < 0) return false; /* checked at start */
  for (int i = 0; i < n; i++)
    if (xqc_anchor_db_has(c->db, net, specs[i]) == 0) {
      open_anchor(c, net, promotion, step, specs[i]);
      return c->anchor.gate.open;
    }
  return false;
}

void xqc_anchor_schedule(xqc_t *c) {
  if (c->anchor.gate.open || c->cfg.anchor_games <= 0 || !c->best) return;
  /* Net 1 is promotion 1; then every anchor_every-th promoted net. */
  if ((c->promotions - 1) % c->cfg.anchor_every != 0) return;
  int64_t step = 0;
  char state[16];
  xqc_db_net_state(c->db, c->best, state, sizeof state, &step);
  schedule_net(c, c->best, c->promotions, step);
}

void xqc_anchor_resume(xqc_t *c) {
  xqc_open_match_t m;
  bool found = false;
  if (xqc_store_match_find(c->db, "anchor", &m, &found) < 0 || !found) {
    xqc_anchor_schedule(c);
    return;
  }
  xqc_anchor_t *a = &c->anchor;
  xq_errbuf_t eb;
  int scored = 0, out = 0;
  if (m.npairs <= 0 || strlen(m.anchor) >= sizeof a->spec || !xq_player_is_builtin(m.anchor) ||
      xqc_gate_open_pairs(&a->gate, m.npairs, m.match_id, m.net_a, 0, 0, m.step, &eb) < 0 ||
      xqc_store_pairs_restore(c->db, &a->gate, xqc_now_ms(), &scored, &out) < 0) {
    xqc_gate_close(&a->gate);
    stored(xqc_store_match_closed(c->db, m.match_id), "stale match");
    xqc_anchor_schedule(c);
    return;
  }
  snprintf(a->spec, sizeof a->spec, "%.*s", (int)sizeof a->spec - 1, m.anchor);
  a->promotion = (int64_t)m.parent; /* the row keeps the promotion number there */
  a->step = m.step;
  if (c->next_match_id <= m.match_id) c->next_match_id = m.match_id + 1;
  XQ_LOGI(COMP, "anchor match resumed after the restart match=%llu net=%016llx anchor=%s"
          " scored=%d out=%d", (unsigned long long)m.match_id, (unsigned long long)m.net_a,
          m.anchor, scored, out);
  xqc_anchor_scored(c);
}

void xqc_anchor_scored(xqc_t *c) {
  xqc_anchor_t *a = &c->anchor;
  if (!a->gate.open || !xqc_gate_done(&a->gate)) return;
  xqc_gate_t *g = &a->gate;
  int64_t games = g->w + g->d + g->l;
  xqc_anchor_row_t row = {g->match_id, g->cand, "", a->promotion, a->step, g->w, g->d, g->l,
                          (int64_t)time(NULL), games ? (g->w + 0.5 * g->d) / games : 0.0};
  snprintf(row.anchor, sizeof row.anchor, "%s", a->spec);
  stored(xqc_anchor_db_add(c->db, &row), "result");
  stored(xqc_store_match_closed(c->db, g->match_id), "match decided");
  char line[400];
  snprintf(line, sizeof line,
           "{\"net\":\"%016llx\",\"anchor\":\"%s\",\"promotion\":%lld,\"step\":%lld,"
           "\"match\":%llu,\"w\":%lld,\"d\":%lld,\"l\":%lld,\"score\":%.4f,\"time\":%lld}",
           (unsigned long long)row.net, row.anchor, (long long)row.promotion,
           (long long)row.step, (unsigned long long)row.match_id, (long long)row.wins,
           (long long)row.draws, (long long)row.losses, row.score, (long long)row.time);
  xq_errbuf_t eb;
  if (xqc_campaign_log_line(c->dir, "anchors.log", line, &eb) < 0)
    XQ_LOGE(COMP, "anchors.log not written reason=\"%s\"", eb.msg);
  XQ_LOGI(COMP, "anchor match decided net=%016llx anchor=%s w=%lld d=%lld l=%lld score=%.3f",
          (unsigned long long)row.net, row.anchor, (long long)row.wins, (long long)row.draws,
          (long long)row.losses, row.score);
  xqc_gate_close(g);
  memset(a, 0, sizeof *a);
  /* The same net against its next anchor first, so each measured net gets every anchor
   * even when promotions come faster than measurements; then the best net's turn. */
  if (c->cfg.anchor_games > 0 && schedule_net(c, row.net, row.promotion, row.step)) return;
  xqc_anchor_schedule(c);
}

int xqc_anchor_summary(xqc_t *c, char *buf, size_t n) {
  buf[0] = 0;
  xqc_anchor_row_t *rows = NULL;
  int nr = 0;
  int rc = xqc_anchor_db_history(c->db, XQC_ANCHOR_HISTORY, &rows, &nr);
  if (rc < 0) return rc;
  /* The newest result per anchor, in the order of the setting. */
  char specs[XQC_ANCHORS_MAX][XQC_ANCHOR_SPEC_MAX];
  int ns = 0;
  xq_errbuf_t eb;
  if (xqc_anchor_list(c->cfg.anchors, specs, &ns, &eb) < 0) ns = 0;
  size_t used = 0;
  for (int i = 0; i < ns; i++) {
    const xqc_anchor_row_t *last = NULL;
    for (int k = 0; k < nr; k++)
      if (!strcmp(rows[k].anchor, specs[i])) last = &rows[k];
    if (!last) continue;
    int k = snprintf(buf + used, n - used, "%s%.0f%% vs %s", used ? ", " : "",
                     100.0 * last->score, last->anchor);
    if (k < 0 || (size_t)k >= n - used) break;
    used += (size_t)k;
  }
  free(rows);
  return 0;
}
