/*
 * campaign_db.c: SQLite tables of a campaign. Net ids are 64-bit; they are stored as
 * SQLite INTEGER (the same 64 bits, signed) and as 16-digit hex text for people reading
 * the database with the sqlite3 shell.
 *
 * The loop thread never waits on the database: once open, the busy timeout is a few
 * milliseconds (XQC_DB_BUSY_MS), so a write that meets another program's lock (an
 * operator's sqlite3 shell inside BEGIN IMMEDIATE) fails at once with SQLITE_BUSY and its
 * caller decides: a gating decision waits and is retried from the timer (promote.c), other
 * rows are logged and retried by their own next write.
 */
#include "campaign_db.h"

#include <assert.h>
#include <errno.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "schema.h"
#include "support/atomic_file.h"
#include "support/log.h"

int xqc_db_open(xqc_db_t **db, const char *path, xq_errbuf_t *eb) {
  sqlite3 *h = NULL;
  *db = NULL;
  if (sqlite3_open(path, &h) != SQLITE_OK) {
    xq_err_set(eb, XQ_EIO, "%s: %s", path, h ? sqlite3_errmsg(h) : "cannot open");
    sqlite3_close(h);
    return XQ_EIO;
  }
  /* SQLite falls back to read-only when it may not write the file; the coordinator would
   * then listen and fail every write (campaign.c checks first; this is the last guard). */
  if (sqlite3_db_readonly(h, "main") == 1) {
    xq_err_set(eb, XQ_EIO, "%s: opened read-only (it, its -wal/-shm or its directory is"
               " not writable): make them writable or run as their owner", path);
    sqlite3_close(h);
    return XQ_EIO;
  }
  /* Start-up may wait for a lock (the migration); the loop never does (see the top). */
  sqlite3_busy_timeout(h, 2000);
  char *err = NULL;
  /* journal_mode cannot change inside a transaction: before the migration. */
  if (sqlite3_exec(h, "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;", NULL, NULL,
                   &err) != SQLITE_OK) {
    xq_err_set(eb, XQ_EIO, "%s: %s", path, err ? err : "?");
    sqlite3_free(err);
    sqlite3_close(h);
    return XQ_EIO;
  }
  int rc = xqc_schema_migrate(h, path, eb);
  if (rc < 0) {
    sqlite3_close(h);
    return rc;
  }
  sqlite3_busy_timeout(h, XQC_DB_BUSY_MS);
  *db = h;
  return 0;
}

int xqc_db_begin(xqc_db_t *db) {
  return sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL) == SQLITE_OK ? 0 : XQ_EIO;
}

int xqc_db_commit(xqc_db_t *db) {
  if (sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) == SQLITE_OK) return 0;
  return XQ_EIO;
}

void xqc_db_rollback(xqc_db_t *db) {
  /* A failed COMMIT may have rolled back already (SQLITE_FULL, SQLITE_IOERR): only an open
   * transaction is rolled back, so the real cause stays in sqlite3_errmsg. */
  if (!sqlite3_get_autocommit(db)) sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
}

void xqc_db_cause(xqc_db_t *db, char *buf, size_t n) {
  int ext = sqlite3_extended_errcode(db);
  snprintf(buf, n, "%s (%s)", sqlite3_errmsg(db), sqlite3_errstr(ext));
}

int xqc_db_backup(xqc_db_t *db, const char *path, xq_errbuf_t *eb) {
  char tmp[1100];
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  unlink(tmp);
  sqlite3 *dst = NULL;
  if (sqlite3_open(tmp, &dst) != SQLITE_OK) {
    int rc = xq_err_set(eb, XQ_EIO, "%s: %s", tmp, dst ? sqlite3_errmsg(dst) : "cannot open");
    sqlite3_close(dst);
    return rc;
  }
  /* synchronous=FULL (the default) in rollback mode: durable when the copy's step ends. */
  sqlite3_backup *b = sqlite3_backup_init(dst, "main", db, "main");
  int rc = b ? sqlite3_backup_step(b, -1) : SQLITE_ERROR;
  if (b) sqlite3_backup_finish(b);
  if (rc != SQLITE_DONE) {
    xq_err_set(eb, XQ_EIO, "%s: backup failed: %s", tmp, sqlite3_errmsg(dst));
    sqlite3_close(dst);
    unlink(tmp);
    return XQ_EIO;
  }
  sqlite3_close(dst);
  if (rename(tmp, path) != 0)
    return xq_err_set(eb, XQ_EIO, "%s: rename to %s failed: %s", tmp, path, strerror(errno));
  char dir[1100];
  snprintf(dir, sizeof dir, "%s", path);
  char *slash = strrchr(dir, '/');
  if (slash) *slash = 0;
  if (xq_fsync_dir(slash ? dir : ".") != 0)
    return xq_err_set(eb, XQ_EIO, "%s: fsync of its directory failed", path);
  return 0;
}

int xqc_db_next_match_id(xqc_db_t *db, uint64_t *id) {
  /* Every id a match ever had: decided, open, anchor results, and the match a promotion
   * names. Ids come from this counter, never the clock, so a clock step cannot reorder
   * them (campaigns made before kept their clock-made ids: the counter goes on above). */
  *id = 1;
  sqlite3_stmt *st = xqc_db_prep(db, "SELECT MAX(COALESCE((SELECT MAX(id) FROM matches), 0),"
                                     " COALESCE((SELECT MAX(id) FROM open_matches), 0),"
                                     " COALESCE((SELECT MAX(id) FROM anchor_results), 0),"
                                     " COALESCE((SELECT MAX(match) FROM promotions), 0),"
                                     " COALESCE((SELECT MAX(next) - 1 FROM match_id_floor), 0))");
  if (!st) return XQ_EIO;
  int rc = sqlite3_step(st);
  if (rc == SQLITE_ROW) {
    sqlite3_int64 max = sqlite3_column_int64(st, 0);
    *id = max > 0 ? (uint64_t)max + 1 : 1;
  }
  sqlite3_finalize(st);
  return rc == SQLITE_ROW ? 0 : XQ_EIO;
}

int xqc_db_match_ids_used(xqc_db_t *db, uint64_t next) {
  sqlite3_stmt *st = xqc_db_prep(db, "INSERT INTO match_id_floor(id, next) VALUES(1, ?)"
                                     " ON CONFLICT(id) DO UPDATE SET"
                                     " next = MAX(next, excluded.next)");
  if (!st) return XQ_EIO;
  sqlite3_bind_int64(st, 1, (sqlite3_int64)next);
  return xqc_db_step_done(db, st);
}

void xqc_db_close(xqc_db_t **db) {
  if (!db || !*db) return;
  sqlite3_close(*db);
  *db = NULL;
}

int xqc_db_step_done(xqc_db_t *db, sqlite3_stmt *st) {
  int rc = sqlite3_step(st);
  if (rc != SQLITE_DONE) XQ_LOGE("db", "sqlite error: %s", sqlite3_errmsg(db));
  sqlite3_finalize(st);
  return rc == SQLITE_DONE ? 0 : XQ_EIO;
}

sqlite3_stmt *xqc_db_prep(xqc_db_t *db, const char *sql) {
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
  sqlite3_stmt *st = xqc_db_prep(db, "SELECT net, elo, (SELECT COUNT(*) FROM promotions)"
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
  sqlite3_stmt *st = xqc_db_prep(db, "INSERT OR REPLACE INTO nets(id, hex, parent, step, state, elo,"
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
  return xqc_db_step_done(db, st);
}

int xqc_db_set_net_state(xqc_db_t *db, uint64_t id, const char *state, double elo) {
  sqlite3_stmt *st = xqc_db_prep(db, "UPDATE nets SET state=?, elo=? WHERE id=?");
  if (!st) return XQ_EIO;
  sqlite3_bind_text(st, 1, state, -1, SQLITE_TRANSIENT);
  sqlite3_bind_double(st, 2, elo);
  sqlite3_bind_int64(st, 3, (sqlite3_int64)id);
  return xqc_db_step_done(db, st);
}

int xqc_db_add_match(xqc_db_t *db, const xqc_match_row_t *m) {
  /* Plain INSERT: a decided match is never overwritten (a repeated id is a bug, refused). */
  sqlite3_stmt *st = xqc_db_prep(db, "INSERT INTO matches VALUES(?,?,?,?,?,?,?,?,?,?)");
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
  return xqc_db_step_done(db, st);
}

int xqc_db_add_promotion(xqc_db_t *db, uint64_t id, uint64_t parent, int64_t step,
                         uint64_t match_id, double score, double elo) {
  sqlite3_stmt *st = xqc_db_prep(db, "INSERT INTO promotions(net, parent, step, match, score, elo,"
                              " time) VALUES(?,?,?,?,?,?,?)");
  if (!st) return XQ_EIO;
  sqlite3_bind_int64(st, 1, (sqlite3_int64)id);
  sqlite3_bind_int64(st, 2, (sqlite3_int64)parent);
  sqlite3_bind_int64(st, 3, step);
  sqlite3_bind_int64(st, 4, (sqlite3_int64)match_id);
  sqlite3_bind_double(st, 5, score);
  sqlite3_bind_double(st, 6, elo);
  sqlite3_bind_int64(st, 7, (sqlite3_int64)time(NULL));
  return xqc_db_step_done(db, st);
}

int xqc_db_pending_candidate(xqc_db_t *db, uint64_t *id, int64_t *step) {
  *id = 0;
  *step = 0;
  sqlite3_stmt *st = xqc_db_prep(db, "SELECT id, step FROM nets WHERE state='candidate'"
                              " ORDER BY created DESC, rowid DESC LIMIT 1");
  if (!st) return XQ_EIO;
  if (sqlite3_step(st) == SQLITE_ROW) {
    *id = (uint64_t)sqlite3_column_int64(st, 0);
    *step = sqlite3_column_int64(st, 1);
  }
  sqlite3_finalize(st);
  return 0;
}

int xqc_db_net_state(xqc_db_t *db, uint64_t id, char *state, size_t n, int64_t *step) {
  assert(n > 0);
  state[0] = 0;
  if (step) *step = 0;
  sqlite3_stmt *st = xqc_db_prep(db, "SELECT state, step FROM nets WHERE id=?");
  if (!st) return XQ_EIO;
  sqlite3_bind_int64(st, 1, (sqlite3_int64)id);
  if (sqlite3_step(st) == SQLITE_ROW) {
    const unsigned char *t = sqlite3_column_text(st, 0);
    snprintf(state, n, "%s", t ? (const char *)t : "");
    if (step) *step = sqlite3_column_int64(st, 1);
  }
  sqlite3_finalize(st);
  return 0;
}

static int thinned(xqc_db_t *db, const char *table, const char *cols, int max_points,
                   sqlite3_stmt **out);

int xqc_db_trainer_step(xqc_db_t *db, int64_t *step) {
  *step = 0;
  sqlite3_stmt *st = xqc_db_prep(db, "SELECT MAX(COALESCE((SELECT MAX(step) FROM losses), 0),"
                                     " COALESCE((SELECT MAX(step) FROM nets), 0))");
  if (!st) return XQ_EIO;
  if (sqlite3_step(st) == SQLITE_ROW) *step = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  return 0;
}

int xqc_db_add_throughput(xqc_db_t *db, const xqc_throughput_row_t *r) {
  sqlite3_stmt *st = xqc_db_prep(db, "INSERT INTO throughput(time, games, positions)"
                                     " VALUES(?,?,?)");
  if (!st) return XQ_EIO;
  sqlite3_bind_int64(st, 1, r->time);
  sqlite3_bind_int64(st, 2, (sqlite3_int64)r->games);
  sqlite3_bind_int64(st, 3, (sqlite3_int64)r->positions);
  return xqc_db_step_done(db, st);
}

int xqc_db_throughput(xqc_db_t *db, int max_points, xqc_throughput_row_t **rows, int *n) {
  *rows = NULL;
  *n = 0;
  sqlite3_stmt *st = NULL;
  int rc = thinned(db, "throughput", "time, games, positions", max_points, &st);
  if (rc < 0 || !st) return rc;
  xqc_throughput_row_t *r = malloc((size_t)max_points * sizeof *r);
  if (!r) {
    sqlite3_finalize(st);
    return XQ_ENOMEM;
  }
  int m = 0;
  while (m < max_points && sqlite3_step(st) == SQLITE_ROW) {
    r[m].time = sqlite3_column_int64(st, 0);
    r[m].games = (uint64_t)sqlite3_column_int64(st, 1);
    r[m].positions = (uint64_t)sqlite3_column_int64(st, 2);
    m++;
  }
  sqlite3_finalize(st);
  *rows = r;
  *n = m;
  return 0;
}

int xqc_db_add_loss(xqc_db_t *db, const xqc_loss_row_t *l) {
  sqlite3_stmt *st = xqc_db_prep(db, "INSERT INTO losses(step, time, loss, policy, value)"
                              " VALUES(?,?,?,?,?)");
  if (!st) return XQ_EIO;
  sqlite3_bind_int64(st, 1, (sqlite3_int64)l->step);
  sqlite3_bind_int64(st, 2, l->time);
  sqlite3_bind_double(st, 3, l->loss);
  sqlite3_bind_double(st, 4, l->policy);
  sqlite3_bind_double(st, 5, l->value);
  return xqc_db_step_done(db, st);
}

static void loss_row(sqlite3_stmt *st, xqc_loss_row_t *l) {
  l->step = (uint64_t)sqlite3_column_int64(st, 0);
  l->time = sqlite3_column_int64(st, 1);
  l->loss = sqlite3_column_double(st, 2);
  l->policy = sqlite3_column_double(st, 3);
  l->value = sqlite3_column_double(st, 4);
}

/* Thinning a growing table (losses, throughput) to at most max_points rows: every k-th
 * row, k chosen so at most max_points - 1 are kept, plus the newest one. Prepares
 * "SELECT cols FROM table WHERE <thinned> ORDER BY rowid" into *st (NULL when the table is
 * empty or max_points < 2). */
static int thinned(xqc_db_t *db, const char *table, const char *cols, int max_points,
                   sqlite3_stmt **out) {
  *out = NULL;
  char sql[300];
  snprintf(sql, sizeof sql, "SELECT COUNT(*), COALESCE(MAX(rowid), 0) FROM %s", table);
  sqlite3_stmt *st = xqc_db_prep(db, sql);
  if (!st) return XQ_EIO;
  int64_t count = 0, last = 0;
  if (sqlite3_step(st) == SQLITE_ROW) {
    count = sqlite3_column_int64(st, 0);
    last = sqlite3_column_int64(st, 1);
  }
  sqlite3_finalize(st);
  if (count == 0 || max_points < 2) return 0;
  int64_t k = (count + max_points - 2) / (max_points - 1);
  snprintf(sql, sizeof sql, "SELECT %s FROM %s WHERE (rowid - 1) %% ? = 0 OR rowid = ?"
           " ORDER BY rowid", cols, table);
  st = xqc_db_prep(db, sql);
  if (!st) return XQ_EIO;
  sqlite3_bind_int64(st, 1, k);
  sqlite3_bind_int64(st, 2, last);
  *out = st;
  return 0;
}

int xqc_db_losses(xqc_db_t *db, int max_points, xqc_loss_row_t **rows, int *n) {
  *rows = NULL;
  *n = 0;
  sqlite3_stmt *st = NULL;
  int rc = thinned(db, "losses", "step, time, loss, policy, value", max_points, &st);
  if (rc < 0 || !st) return rc;
  xqc_loss_row_t *r = malloc((size_t)max_points * sizeof *r);
  if (!r) {
    sqlite3_finalize(st);
    return XQ_ENOMEM;
  }
  int m = 0;
  while (m < max_points && sqlite3_step(st) == SQLITE_ROW) loss_row(st, &r[m++]);
  sqlite3_finalize(st);
  *rows = r;
  *n = m;
  return 0;
}

int xqc_db_last_loss(xqc_db_t *db, xqc_loss_row_t *l, bool *found) {
  *found = false;
  memset(l, 0, sizeof *l);
  sqlite3_stmt *st = xqc_db_prep(db, "SELECT step, time, loss, policy, value FROM losses"
                              " ORDER BY rowid DESC LIMIT 1");
  if (!st) return XQ_EIO;
  if (sqlite3_step(st) == SQLITE_ROW) {
    loss_row(st, l);
    *found = true;
  }
  sqlite3_finalize(st);
  return 0;
}

int xqc_db_matches(xqc_db_t *db, uint64_t after_id, int newest, int max_rows,
                   xqc_match_info_t **rows, int *n) {
  *rows = NULL;
  *n = 0;
  /* best_elo: the Elo of the latest promotion up to this match (the match's own when it
   * promoted; net 1's row has match 0). Match ids grow over restarts (main.c). */
  static const char *COLS =
      "SELECT m.id, m.net_a, m.net_b, COALESCE(n.step, 0), m.wins, m.draws, m.losses,"
      " m.score, m.elo, m.decision, m.time, COALESCE((SELECT p.elo FROM promotions p"
      " WHERE p.match <= m.id ORDER BY p.seq DESC LIMIT 1), 0)"
      " FROM matches m LEFT JOIN nets n ON n.id = m.net_a ";
  char sql[800];
  if (newest > 0)
    snprintf(sql, sizeof sql, "%s WHERE m.id IN (SELECT id FROM matches WHERE id > ?"
             " ORDER BY id DESC LIMIT %d) ORDER BY m.id", COLS, newest);
  else
    snprintf(sql, sizeof sql, "%s WHERE m.id > ? ORDER BY m.id LIMIT %d", COLS, max_rows);
  sqlite3_stmt *st = xqc_db_prep(db, sql);
  if (!st) return XQ_EIO;
  sqlite3_bind_int64(st, 1, (sqlite3_int64)after_id);
  int cap = newest > 0 ? newest : max_rows, m = 0;
  xqc_match_info_t *r = calloc((size_t)(cap > 0 ? cap : 1), sizeof *r);
  if (!r) {
    sqlite3_finalize(st);
    return XQ_ENOMEM;
  }
  while (m < cap && sqlite3_step(st) == SQLITE_ROW) {
    xqc_match_info_t *x = &r[m++];
    x->match_id = (uint64_t)sqlite3_column_int64(st, 0);
    x->net_a = (uint64_t)sqlite3_column_int64(st, 1);
    x->net_b = (uint64_t)sqlite3_column_int64(st, 2);
    x->step = sqlite3_column_int64(st, 3);
    x->wins = sqlite3_column_int64(st, 4);
    x->draws = sqlite3_column_int64(st, 5);
    x->losses = sqlite3_column_int64(st, 6);
    x->score = sqlite3_column_double(st, 7);
    x->elo = sqlite3_column_double(st, 8);
    const unsigned char *d = sqlite3_column_text(st, 9);
    snprintf(x->decision, sizeof x->decision, "%s", d ? (const char *)d : "");
    x->time = sqlite3_column_int64(st, 10);
    x->best_elo = sqlite3_column_double(st, 11);
  }
  sqlite3_finalize(st);
  *rows = r;
  *n = m;
  return 0;
}

int xqc_db_ban_set(xqc_db_t *db, const char *target, const char *reason) {
  sqlite3_stmt *st = xqc_db_prep(db, "INSERT OR REPLACE INTO bans(target, reason, time) VALUES(?,?,?)");
  if (!st) return XQ_EIO;
  sqlite3_bind_text(st, 1, target, -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(st, 2, reason, -1, SQLITE_TRANSIENT);
  sqlite3_bind_int64(st, 3, (sqlite3_int64)time(NULL));
  return xqc_db_step_done(db, st);
}

int xqc_db_ban_remove(xqc_db_t *db, const char *target) {
  sqlite3_stmt *st = xqc_db_prep(db, "DELETE FROM bans WHERE target = ?");
  if (!st) return XQ_EIO;
  sqlite3_bind_text(st, 1, target, -1, SQLITE_TRANSIENT);
  return xqc_db_step_done(db, st);
}

/* Runs a two-text-column query, calling each(col0, col1, int64 col2 or 0, user) per row. */
static int each_row(xqc_db_t *db, const char *sql,
                    int (*each)(const char *, const char *, int64_t, void *), void *user) {
  sqlite3_stmt *st = xqc_db_prep(db, sql);
  if (!st) return XQ_EIO;
  int rc = 0, s;
  while (rc == 0 && (s = sqlite3_step(st)) == SQLITE_ROW) {
    const char *a = (const char *)sqlite3_column_text(st, 0);
    const char *b = (const char *)sqlite3_column_text(st, 1);
    int64_t t = sqlite3_column_count(st) > 2 ? sqlite3_column_int64(st, 2) : 0;
    rc = each(a ? a : "", b ? b : "", t, user);
  }
  sqlite3_finalize(st);
  return rc;
}

int xqc_db_bans_load(xqc_db_t *db, int (*each)(const char *target, const char *reason,
                                               int64_t time, void *user), void *user) {
  return each_row(db, "SELECT target, reason, time FROM bans ORDER BY time", each, user);
}

int xqc_db_worker_key_set(xqc_db_t *db, const char *worker_id, const char *key) {
  sqlite3_stmt *st = xqc_db_prep(db, "INSERT OR REPLACE INTO worker_keys(worker_id, key) VALUES(?,?)");
  if (!st) return XQ_EIO;
  sqlite3_bind_text(st, 1, worker_id, -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(st, 2, key, -1, SQLITE_TRANSIENT);
  return xqc_db_step_done(db, st);
}

int xqc_db_worker_keys_load(xqc_db_t *db, int (*each)(const char *worker_id, const char *key,
                                                      int64_t unused, void *user), void *user) {
  return each_row(db, "SELECT worker_id, key FROM worker_keys", each, user);
}

int xqc_db_campaign_id(xqc_db_t *db, uint64_t *id) {
  *id = 0;
  sqlite3_stmt *st = xqc_db_prep(db, "SELECT id FROM campaign LIMIT 1");
  if (!st) return XQ_EIO;
  if (sqlite3_step(st) == SQLITE_ROW) *id = (uint64_t)sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  return 0;
}

int xqc_db_campaign_id_set(xqc_db_t *db, uint64_t id) {
  assert(id != 0);
  char hex[17];
  snprintf(hex, sizeof hex, "%016llx", (unsigned long long)id);
  sqlite3_stmt *st = xqc_db_prep(db, "INSERT INTO campaign(id, hex, created) SELECT ?, ?, ?"
                              " WHERE NOT EXISTS (SELECT 1 FROM campaign)");
  if (!st) return XQ_EIO;
  sqlite3_bind_int64(st, 1, (sqlite3_int64)id);
  sqlite3_bind_text(st, 2, hex, -1, SQLITE_TRANSIENT);
  sqlite3_bind_int64(st, 3, (sqlite3_int64)time(NULL));
  return xqc_db_step_done(db, st);
}
