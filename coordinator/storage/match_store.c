/*
 * match_store.c: the open_matches and match_pairs tables of campaign.db (match_store.h).
 * Each call is one statement, so each change is durable when it returns (the database runs
 * with synchronous=FULL); arena pairs are minutes apart, so the writes cost nothing.
 */
#include "match_store.h"

#include <sqlite3.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "support/log.h"

int xqc_store_match_open(xqc_db_t *db, const xqc_open_match_t *m) {
  /* Plain INSERT: match ids come from a counter (campaign_db.h), a repeat is a bug. */
  sqlite3_stmt *st = xqc_db_prep(db, "INSERT INTO open_matches(id, kind, net_a,"
                                     " net_b, anchor, parent, step, npairs, opened)"
                                     " VALUES(?,?,?,?,?,?,?,?,?)");
  if (!st) return XQ_EIO;
  sqlite3_bind_int64(st, 1, (sqlite3_int64)m->match_id);
  sqlite3_bind_text(st, 2, m->kind, -1, SQLITE_TRANSIENT);
  sqlite3_bind_int64(st, 3, (sqlite3_int64)m->net_a);
  sqlite3_bind_int64(st, 4, (sqlite3_int64)m->net_b);
  sqlite3_bind_text(st, 5, m->anchor, -1, SQLITE_TRANSIENT);
  sqlite3_bind_int64(st, 6, (sqlite3_int64)m->parent);
  sqlite3_bind_int64(st, 7, m->step);
  sqlite3_bind_int(st, 8, m->npairs);
  sqlite3_bind_int64(st, 9, (sqlite3_int64)time(NULL));
  return xqc_db_step_done(db, st);
}

int xqc_store_pair_issued(xqc_db_t *db, uint64_t match_id, int pair, const char *holder) {
  sqlite3_stmt *st = xqc_db_prep(db, "INSERT OR REPLACE INTO match_pairs(match, pair, holder,"
                                     " a_red, a_black) VALUES(?,?,?,NULL,NULL)");
  if (!st) return XQ_EIO;
  sqlite3_bind_int64(st, 1, (sqlite3_int64)match_id);
  sqlite3_bind_int(st, 2, pair);
  sqlite3_bind_text(st, 3, holder, -1, SQLITE_TRANSIENT);
  return xqc_db_step_done(db, st);
}

int xqc_store_pair_result(xqc_db_t *db, uint64_t match_id, int pair, int a_red, int a_black) {
  sqlite3_stmt *st = xqc_db_prep(db, "UPDATE match_pairs SET a_red=?, a_black=?"
                                     " WHERE match=? AND pair=?");
  if (!st) return XQ_EIO;
  sqlite3_bind_int(st, 1, a_red);
  sqlite3_bind_int(st, 2, a_black);
  sqlite3_bind_int64(st, 3, (sqlite3_int64)match_id);
  sqlite3_bind_int(st, 4, pair);
  return xqc_db_step_done(db, st);
}

int xqc_store_match_closed(xqc_db_t *db, uint64_t match_id) {
  sqlite3_stmt *st = xqc_db_prep(db, "DELETE FROM match_pairs WHERE match=?");
  if (!st) return XQ_EIO;
  sqlite3_bind_int64(st, 1, (sqlite3_int64)match_id);
  int rc = xqc_db_step_done(db, st);
  st = xqc_db_prep(db, "DELETE FROM open_matches WHERE id=?");
  if (!st) return XQ_EIO;
  sqlite3_bind_int64(st, 1, (sqlite3_int64)match_id);
  int rc2 = xqc_db_step_done(db, st);
  return rc < 0 ? rc : rc2;
}

/* The open match of st's row (id, net_a, net_b, anchor, parent, step, npairs) into m. */
static void read_match(sqlite3_stmt *st, const char *kind, xqc_open_match_t *m) {
  m->match_id = (uint64_t)sqlite3_column_int64(st, 0);
  m->net_a = (uint64_t)sqlite3_column_int64(st, 1);
  m->net_b = (uint64_t)sqlite3_column_int64(st, 2);
  const unsigned char *a = sqlite3_column_text(st, 3);
  snprintf(m->anchor, sizeof m->anchor, "%s", a ? (const char *)a : "");
  m->parent = (uint64_t)sqlite3_column_int64(st, 4);
  m->step = sqlite3_column_int64(st, 5);
  m->npairs = sqlite3_column_int(st, 6);
  snprintf(m->kind, sizeof m->kind, "%s", kind);
}

int xqc_store_match_find(xqc_db_t *db, const char *kind, xqc_open_match_t *m, bool *found) {
  memset(m, 0, sizeof *m);
  *found = false;
  sqlite3_stmt *st = xqc_db_prep(db, "SELECT id, net_a, net_b, anchor, parent, step, npairs"
                                     " FROM open_matches WHERE kind=? ORDER BY opened DESC,"
                                     " id DESC LIMIT 1");
  if (!st) return XQ_EIO;
  sqlite3_bind_text(st, 1, kind, -1, SQLITE_TRANSIENT);
  if (sqlite3_step(st) == SQLITE_ROW) {
    read_match(st, kind, m);
    *found = true;
  }
  sqlite3_finalize(st);
  return 0;
}

int xqc_store_matches_of(xqc_db_t *db, const char *kind, xqc_open_match_t *m, int max, int *n) {
  *n = 0;
  sqlite3_stmt *st = xqc_db_prep(db, "SELECT id, net_a, net_b, anchor, parent, step, npairs"
                                     " FROM open_matches WHERE kind=? ORDER BY id LIMIT ?");
  if (!st) return XQ_EIO;
  sqlite3_bind_text(st, 1, kind, -1, SQLITE_TRANSIENT);
  sqlite3_bind_int(st, 2, max);
  while (*n < max && sqlite3_step(st) == SQLITE_ROW) {
    memset(&m[*n], 0, sizeof m[*n]);
    read_match(st, kind, &m[(*n)++]);
  }
  sqlite3_finalize(st);
  return 0;
}

int xqc_store_pairs_restore(xqc_db_t *db, xqc_gate_t *g, uint64_t now_ms, int *scored, int *out) {
  *scored = *out = 0;
  sqlite3_stmt *st = xqc_db_prep(db, "SELECT pair, holder, a_red IS NOT NULL, a_red, a_black"
                                     " FROM match_pairs WHERE match=? ORDER BY pair");
  if (!st) return XQ_EIO;
  sqlite3_bind_int64(st, 1, (sqlite3_int64)g->match_id);
  while (sqlite3_step(st) == SQLITE_ROW) {
    int pair = sqlite3_column_int(st, 0);
    const unsigned char *holder = sqlite3_column_text(st, 1);
    bool done = sqlite3_column_int(st, 2) != 0;
    if (pair < 0 || pair >= g->npairs || !holder) {
      XQ_LOGW("db", "stored pair of an open match out of range; it is played again"
              " match=%llu pair=%d pairs=%d", (unsigned long long)g->match_id, pair, g->npairs);
      continue;
    }
    xqc_gate_issue(g, pair, (const char *)holder, now_ms);
    g->holders[pair].restored = true; /* its earlier holders were not stored */
    if (!done) {
      (*out)++;
      continue;
    }
    if (xqc_gate_result(g, pair, sqlite3_column_int(st, 3), sqlite3_column_int(st, 4)) < 0) {
      XQ_LOGW("db", "stored result of an open match out of range; the pair is played again"
              " match=%llu pair=%d", (unsigned long long)g->match_id, pair);
      g->state[pair] = 0;
      continue;
    }
    (*scored)++;
  }
  sqlite3_finalize(st);
  return 0;
}
