/*
 * campaign_db.c: SQLite tables of a campaign. Net ids are 64-bit; they are stored as
 * SQLite INTEGER (the same 64 bits, signed) and as 16-digit hex text for people reading
 * the database with the sqlite3 shell.
 */
#include "campaign_db.h"

#include <sqlite3.h>
#include <stdio.h>
#include <time.h>

#include "support/log.h"

static const char *SCHEMA =
    "PRAGMA journal_mode=WAL;"
    "PRAGMA synchronous=FULL;"
    "CREATE TABLE IF NOT EXISTS nets(id INTEGER PRIMARY KEY, hex TEXT, parent INTEGER,"
    " step INTEGER, state TEXT, elo REAL, created INTEGER);"
    "CREATE TABLE IF NOT EXISTS matches(id INTEGER PRIMARY KEY, net_a INTEGER, net_b INTEGER,"
    " wins INTEGER, draws INTEGER, losses INTEGER, score REAL, elo REAL, decision TEXT,"
    " time INTEGER);"
    "CREATE TABLE IF NOT EXISTS promotions(seq INTEGER PRIMARY KEY AUTOINCREMENT,"
    " net INTEGER, parent INTEGER, step INTEGER, match INTEGER, score REAL, elo REAL,"
    " time INTEGER);"
    "CREATE TABLE IF NOT EXISTS workers(worker_id TEXT PRIMARY KEY, host TEXT,"
    " threads INTEGER, role INTEGER, first_seen INTEGER, last_seen INTEGER);";

int xqc_db_open(xqc_db_t **db, const char *path, xq_errbuf_t *eb) {
  sqlite3 *h = NULL;
  if (sqlite3_open(path, &h) != SQLITE_OK) {
    xq_err_set(eb, XQ_EIO, "%s: %s", path, h ? sqlite3_errmsg(h) : "cannot open");
    sqlite3_close(h);
    return XQ_EIO;
  }
  char *err = NULL;
  if (sqlite3_exec(h, SCHEMA, NULL, NULL, &err) != SQLITE_OK) {
    xq_err_set(eb, XQ_EIO, "%s: schema: %s", path, err ? err : "?");
    sqlite3_free(err);
    sqlite3_close(h);
    return XQ_EIO;
  }
  sqlite3_busy_timeout(h, 2000);
  *db = h;
  return 0;
}

void xqc_db_close(xqc_db_t **db) {
  if (!db || !*db) return;
  sqlite3_close(*db);
  *db = NULL;
}

static int step_done(sqlite3 *db, sqlite3_stmt *st) {
  int rc = sqlite3_step(st);
  if (rc != SQLITE_DONE) XQ_LOGE("db", "sqlite error: %s", sqlite3_errmsg(db));
  sqlite3_finalize(st);
  return rc == SQLITE_DONE ? 0 : XQ_EIO;
}

static sqlite3_stmt *prep(sqlite3 *db, const char *sql) {
  sqlite3_stmt *st = NULL;
  if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
    XQ_LOGE("db", "sqlite prepare failed: %s sql=\"%s\"", sqlite3_errmsg(db), sql);
    return NULL;
  }
  return st;
}

int xqc_db_best(xqc_db_t *db, uint64_t *net_id, double *elo, int64_t *promotions) {
  *net_id = 0;
  *elo = 0;
  *promotions = 0;
  sqlite3_stmt *st = prep(db, "SELECT net, elo, (SELECT COUNT(*) FROM promotions)"
                              " FROM promotions ORDER BY seq DESC LIMIT 1");
  if (!st) return XQ_EIO;
  if (sqlite3_step(st) == SQLITE_ROW) {
    *net_id = (uint64_t)sqlite3_column_int64(st, 0);
    *elo = sqlite3_column_double(st, 1);
    *promotions = sqlite3_column_int64(st, 2);
  }
  sqlite3_finalize(st);
  return 0;
}

int xqc_db_add_net(xqc_db_t *db, uint64_t id, uint64_t parent, int64_t step, const char *state) {
  sqlite3_stmt *st = prep(db, "INSERT OR REPLACE INTO nets(id, hex, parent, step, state, elo,"
                              " created) VALUES(?,?,?,?,?,NULL,?)");
  if (!st) return XQ_EIO;
  char hex[17];
  snprintf(hex, sizeof hex, "%016llx", (unsigned long long)id);
  sqlite3_bind_int64(st, 1, (sqlite3_int64)id);
  sqlite3_bind_text(st, 2, hex, -1, SQLITE_TRANSIENT);
  sqlite3_bind_int64(st, 3, (sqlite3_int64)parent);
  sqlite3_bind_int64(st, 4, step);
  sqlite3_bind_text(st, 5, state, -1, SQLITE_TRANSIENT);
  sqlite3_bind_int64(st, 6, (sqlite3_int64)time(NULL));
  return step_done(db, st);
}

int xqc_db_set_net_state(xqc_db_t *db, uint64_t id, const char *state, double elo) {
  sqlite3_stmt *st = prep(db, "UPDATE nets SET state=?, elo=? WHERE id=?");
  if (!st) return XQ_EIO;
  sqlite3_bind_text(st, 1, state, -1, SQLITE_TRANSIENT);
  sqlite3_bind_double(st, 2, elo);
  sqlite3_bind_int64(st, 3, (sqlite3_int64)id);
  return step_done(db, st);
}

int xqc_db_add_match(xqc_db_t *db, const xqc_match_row_t *m) {
  sqlite3_stmt *st = prep(db, "INSERT OR REPLACE INTO matches VALUES(?,?,?,?,?,?,?,?,?,?)");
  if (!st) return XQ_EIO;
  sqlite3_bind_int64(st, 1, (sqlite3_int64)m->match_id);
  sqlite3_bind_int64(st, 2, (sqlite3_int64)m->net_a);
  sqlite3_bind_int64(st, 3, (sqlite3_int64)m->net_b);
  sqlite3_bind_int64(st, 4, m->wins);
  sqlite3_bind_int64(st, 5, m->draws);
  sqlite3_bind_int64(st, 6, m->losses);
  sqlite3_bind_double(st, 7, m->score);
  sqlite3_bind_double(st, 8, m->elo);
  sqlite3_bind_text(st, 9, m->decision, -1, SQLITE_TRANSIENT);
  sqlite3_bind_int64(st, 10, (sqlite3_int64)time(NULL));
  return step_done(db, st);
}

int xqc_db_add_promotion(xqc_db_t *db, uint64_t id, uint64_t parent, int64_t step,
                         uint64_t match_id, double score, double elo) {
  sqlite3_stmt *st = prep(db, "INSERT INTO promotions(net, parent, step, match, score, elo,"
                              " time) VALUES(?,?,?,?,?,?,?)");
  if (!st) return XQ_EIO;
  sqlite3_bind_int64(st, 1, (sqlite3_int64)id);
  sqlite3_bind_int64(st, 2, (sqlite3_int64)parent);
  sqlite3_bind_int64(st, 3, step);
  sqlite3_bind_int64(st, 4, (sqlite3_int64)match_id);
  sqlite3_bind_double(st, 5, score);
  sqlite3_bind_double(st, 6, elo);
  sqlite3_bind_int64(st, 7, (sqlite3_int64)time(NULL));
  return step_done(db, st);
}

int xqc_db_worker_seen(xqc_db_t *db, const char *worker_id, const char *host, int threads,
                       int role) {
  sqlite3_stmt *st = prep(db, "INSERT INTO workers VALUES(?,?,?,?,?,?) ON CONFLICT(worker_id)"
                              " DO UPDATE SET host=excluded.host, threads=excluded.threads,"
                              " last_seen=excluded.last_seen");
  if (!st) return XQ_EIO;
  sqlite3_int64 now = (sqlite3_int64)time(NULL);
  sqlite3_bind_text(st, 1, worker_id, -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(st, 2, host, -1, SQLITE_TRANSIENT);
  sqlite3_bind_int(st, 3, threads);
  sqlite3_bind_int(st, 4, role);
  sqlite3_bind_int64(st, 5, now);
  sqlite3_bind_int64(st, 6, now);
  return step_done(db, st);
}

int xqc_db_pending_candidate(xqc_db_t *db, uint64_t *id, int64_t *step) {
  *id = 0;
  *step = 0;
  sqlite3_stmt *st = prep(db, "SELECT id, step FROM nets WHERE state='candidate'"
                              " ORDER BY created DESC, rowid DESC LIMIT 1");
  if (!st) return XQ_EIO;
  if (sqlite3_step(st) == SQLITE_ROW) {
    *id = (uint64_t)sqlite3_column_int64(st, 0);
    *step = sqlite3_column_int64(st, 1);
  }
  sqlite3_finalize(st);
  return 0;
}
