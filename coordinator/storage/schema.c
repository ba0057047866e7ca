/*
 * schema.c: campaign.db's layout versions and the steps between them (schema.h).
 *
 * A step's SQL is frozen once released: layout 1 below is what every later step starts
 * from, whatever the current code writes. Step 1 runs on user_version 0, which covers a
 * new database and every layout made before versioning (tables added over time: workers,
 * then worker_stats and losses, then bans and worker_keys); CREATE TABLE IF NOT EXISTS
 * adds the missing tables, and add_missing_columns adds any column an old or hand-made
 * table lacks (a worker_stats without `version` once left the coordinator half-loaded).
 */
#include "schema.h"

#include <sqlite3.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "support/log.h"

/* Layout 1: the tables of the last unversioned build, plus `campaign` (its id). */
static const char LAYOUT_1[] =
    "CREATE TABLE IF NOT EXISTS nets(id INTEGER PRIMARY KEY, hex TEXT, parent INTEGER,"
    " step INTEGER, state TEXT, elo REAL, created INTEGER);"
    "CREATE TABLE IF NOT EXISTS matches(id INTEGER PRIMARY KEY, net_a INTEGER, net_b INTEGER,"
    " wins INTEGER, draws INTEGER, losses INTEGER, score REAL, elo REAL, decision TEXT,"
    " time INTEGER);"
    "CREATE TABLE IF NOT EXISTS promotions(seq INTEGER PRIMARY KEY AUTOINCREMENT,"
    " net INTEGER, parent INTEGER, step INTEGER, match INTEGER, score REAL, elo REAL,"
    " time INTEGER);"
    "CREATE TABLE IF NOT EXISTS worker_stats(worker_id TEXT PRIMARY KEY, host TEXT,"
    " threads INTEGER, role INTEGER, version TEXT, net_id INTEGER, games INTEGER,"
    " positions INTEGER, plies INTEGER, red_wins INTEGER, black_wins INTEGER, draws INTEGER,"
    " by_reason TEXT, rejected INTEGER, faults INTEGER, last_seen_ms INTEGER, key TEXT,"
    " banned INTEGER);"
    "CREATE TABLE IF NOT EXISTS losses(step INTEGER, time INTEGER, loss REAL, policy REAL,"
    " value REAL);"
    "CREATE TABLE IF NOT EXISTS bans(target TEXT PRIMARY KEY, reason TEXT NOT NULL,"
    " time INTEGER NOT NULL);"
    "CREATE TABLE IF NOT EXISTS worker_keys(worker_id TEXT PRIMARY KEY, key TEXT NOT NULL);"
    /* One row: the campaign's random id (campaign_db.h), as integer and as hex text. */
    "CREATE TABLE IF NOT EXISTS campaign(id INTEGER NOT NULL, hex TEXT NOT NULL,"
    " created INTEGER NOT NULL);";

static int add_missing_columns(sqlite3 *db, xq_errbuf_t *eb);

/* Layout 2: the open matches (match_store.h), so that a restart resumes one with its games
 * so far: a row per open match (kind "gating", or "anchor" with the anchor player's spec
 * in `anchor`) and a row per pair handed out (its holder's identity; the results once in). */
static const char LAYOUT_2[] =
    "CREATE TABLE IF NOT EXISTS open_matches(id INTEGER PRIMARY KEY, kind TEXT NOT NULL,"
    " net_a INTEGER NOT NULL, net_b INTEGER NOT NULL, anchor TEXT NOT NULL,"
    " parent INTEGER NOT NULL, step INTEGER NOT NULL, npairs INTEGER NOT NULL,"
    " opened INTEGER NOT NULL);"
    "CREATE TABLE IF NOT EXISTS match_pairs(match INTEGER NOT NULL, pair INTEGER NOT NULL,"
    " holder TEXT NOT NULL, a_red INTEGER, a_black INTEGER, PRIMARY KEY(match, pair));";

typedef struct {
  int version;        /* user_version after this step */
  const char *what;   /* for the log */
  const char *sql;    /* run first (may be NULL) */
  int (*fn)(sqlite3 *db, xq_errbuf_t *eb); /* then this (may be NULL) */
} step_t;

/* Layout 3: decided anchor matches (anchors.h), one row per match, from the net's view. */
static const char LAYOUT_3[] =
    "CREATE TABLE IF NOT EXISTS anchor_results(id INTEGER PRIMARY KEY, net INTEGER NOT NULL,"
    " hex TEXT NOT NULL, anchor TEXT NOT NULL, promotion INTEGER NOT NULL,"
    " step INTEGER NOT NULL, wins INTEGER NOT NULL, draws INTEGER NOT NULL,"
    " losses INTEGER NOT NULL, score REAL NOT NULL, time INTEGER NOT NULL);";

/* Layout 4: the campaign's counters over time (status.c), a row every 30 s and at each
 * start and stop, for the games/s and positions/s charts. */
static const char LAYOUT_4[] =
    "CREATE TABLE IF NOT EXISTS throughput(time INTEGER NOT NULL, games INTEGER NOT NULL,"
    " positions INTEGER NOT NULL);";

/* Layout 5: per-worker figures (workers.h): the time of each worker's last accepted game
 * and its games per wall-clock hour over the last day ("hour:count,..."). Added by name
 * only where missing, so a table that has them already is left as it is. */
static int has_column(sqlite3 *db, const char *t, const char *col);

static int add_worker_day(sqlite3 *db, xq_errbuf_t *eb) {
  static const char *const cols[][2] = {{"last_game_ms", "INTEGER"}, {"hour_games", "TEXT"}};
  for (int i = 0; i < 2; i++) {
    int have = has_column(db, "worker_stats", cols[i][0]);
    if (have < 0) return xq_err_set(eb, XQ_EIO, "%s", sqlite3_errmsg(db));
    if (have) continue;
    char alter[160];
    snprintf(alter, sizeof alter, "ALTER TABLE worker_stats ADD COLUMN %s %s", cols[i][0],
             cols[i][1]);
    if (sqlite3_exec(db, alter, NULL, NULL, NULL) != SQLITE_OK)
      return xq_err_set(eb, XQ_EIO, "%s: %s", alter, sqlite3_errmsg(db));
  }
  return 0;
}

/* Layout 6: a population's decisions (population/events.h): every exploit-and-explore step
 * (a member copied a donor in a round: settings before and after, by name) and every
 * player's rating in each round (member -1: the best net), one row per round and member. */
static const char LAYOUT_6[] =
    "CREATE TABLE IF NOT EXISTS population_events(round INTEGER NOT NULL,"
    " member INTEGER NOT NULL, donor INTEGER NOT NULL, generation INTEGER NOT NULL,"
    " donor_net INTEGER NOT NULL, before_lr_scale REAL, before_l2 REAL,"
    " before_value_weight REAL, before_batch REAL, after_lr_scale REAL, after_l2 REAL,"
    " after_value_weight REAL, after_batch REAL, member_elo REAL, donor_elo REAL,"
    " time INTEGER NOT NULL, PRIMARY KEY(round, member));"
    "CREATE TABLE IF NOT EXISTS population_ratings(round INTEGER NOT NULL,"
    " member INTEGER NOT NULL, net INTEGER NOT NULL, step INTEGER NOT NULL, elo REAL, lo REAL,"
    " hi REAL, lr_scale REAL, l2 REAL, value_weight REAL, batch REAL,"
    " generation INTEGER NOT NULL, parent INTEGER NOT NULL, time INTEGER NOT NULL,"
    " PRIMARY KEY(round, member));";

/* Layout 7: the match id counter's floor. A population round's pairing matches leave no
 * row once decided (open_matches forgets them, and only gating and anchor decisions have
 * tables of their own), so a restart counted from the rows alone handed their ids out
 * again, and a worker's late result for an old pair could name a new match. */
static const char LAYOUT_7[] =
    "CREATE TABLE IF NOT EXISTS match_id_floor(id INTEGER PRIMARY KEY CHECK(id = 1),"
    " next INTEGER NOT NULL);";

static const step_t STEPS[] = {
    {1, "versioned layout with the campaign id", LAYOUT_1, add_missing_columns},
    {2, "open matches and their pairs", LAYOUT_2, NULL},
    {3, "anchor match results", LAYOUT_3, NULL},
    {4, "throughput over time", LAYOUT_4, NULL},
    {5, "per-worker games by the hour", NULL, add_worker_day},
    {6, "population events and ratings", LAYOUT_6, NULL},
    {7, "the match id counter's floor", LAYOUT_7, NULL},
};
#define NSTEPS ((int)(sizeof STEPS / sizeof STEPS[0]))
_Static_assert(sizeof STEPS / sizeof STEPS[0] == XQC_SCHEMA_VERSION,
               "one step per schema version: add a step with the version");

/* Does table t of db have column col? (-1 on error) */
static int has_column(sqlite3 *db, const char *t, const char *col) {
  sqlite3_stmt *st = NULL;
  if (sqlite3_prepare_v2(db, "SELECT 1 FROM pragma_table_info(?) WHERE name = ?", -1, &st,
                         NULL) != SQLITE_OK)
    return -1;
  sqlite3_bind_text(st, 1, t, -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(st, 2, col, -1, SQLITE_TRANSIENT);
  int rc = sqlite3_step(st);
  sqlite3_finalize(st);
  return rc == SQLITE_ROW ? 1 : rc == SQLITE_DONE ? 0 : -1;
}

/* Adds to table t of db the columns of layout 1 (in `want`) it lacks, by name and type;
 * a missing key column cannot be added and is refused by name. */
static int add_columns_of(sqlite3 *db, sqlite3 *want, const char *t, xq_errbuf_t *eb) {
  sqlite3_stmt *st = NULL;
  if (sqlite3_prepare_v2(want, "SELECT name, type, pk FROM pragma_table_info(?)", -1, &st,
                         NULL) != SQLITE_OK)
    return xq_err_set(eb, XQ_EIO, "%s", sqlite3_errmsg(want));
  sqlite3_bind_text(st, 1, t, -1, SQLITE_TRANSIENT);
  int rc = 0;
  while (rc == 0 && sqlite3_step(st) == SQLITE_ROW) {
    const char *col = (const char *)sqlite3_column_text(st, 0);
    const char *type = (const char *)sqlite3_column_text(st, 1);
    int have = has_column(db, t, col);
    if (have < 0) {
      rc = xq_err_set(eb, XQ_EIO, "%s", sqlite3_errmsg(db));
    } else if (!have && sqlite3_column_int(st, 2)) {
      rc = xq_err_set(eb, XQ_EFORMAT, "table %s lacks its key column %s (no xqzero build made"
                      " that layout); restore campaign.db from a backup", t, col);
    } else if (!have) {
      char alter[256];
      snprintf(alter, sizeof alter, "ALTER TABLE \"%s\" ADD COLUMN \"%s\" %s", t, col,
               type ? type : "");
      if (sqlite3_exec(db, alter, NULL, NULL, NULL) != SQLITE_OK)
        rc = xq_err_set(eb, XQ_EIO, "%s: %s", alter, sqlite3_errmsg(db));
      else
        XQ_LOGI("db", "added a missing column table=%s column=%s", t, col);
    }
  }
  sqlite3_finalize(st);
  return rc;
}

/* Builds layout 1 in a private in-memory database and adds to every table of the campaign
 * the columns it lacks (its tables exist: the step's SQL made the missing ones). */
static int add_missing_columns(sqlite3 *db, xq_errbuf_t *eb) {
  sqlite3 *want = NULL;
  if (sqlite3_open(":memory:", &want) != SQLITE_OK ||
      sqlite3_exec(want, LAYOUT_1, NULL, NULL, NULL) != SQLITE_OK) {
    int rc = xq_err_set(eb, XQ_EIO, "layout 1 in memory: %s",
                        want ? sqlite3_errmsg(want) : "cannot open");
    sqlite3_close(want);
    return rc;
  }
  sqlite3_stmt *st = NULL;
  int rc = 0;
  if (sqlite3_prepare_v2(want, "SELECT name FROM sqlite_master WHERE type = 'table' AND"
                         " name NOT LIKE 'sqlite_%'", -1, &st, NULL) != SQLITE_OK)
    rc = xq_err_set(eb, XQ_EIO, "%s", sqlite3_errmsg(want));
  while (rc == 0 && sqlite3_step(st) == SQLITE_ROW)
    rc = add_columns_of(db, want, (const char *)sqlite3_column_text(st, 0), eb);
  sqlite3_finalize(st);
  sqlite3_close(want);
  return rc;
}

static int user_version(sqlite3 *db, int *v) {
  sqlite3_stmt *st = NULL;
  if (sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &st, NULL) != SQLITE_OK) return XQ_EIO;
  int rc = sqlite3_step(st) == SQLITE_ROW ? 0 : XQ_EIO;
  *v = sqlite3_column_int(st, 0);
  sqlite3_finalize(st);
  return rc;
}

/* The tables in db (-1 when it cannot be read). */
static int table_count(sqlite3 *db) {
  sqlite3_stmt *st = NULL;
  if (sqlite3_prepare_v2(db, "SELECT COUNT(*) FROM sqlite_master WHERE type='table'", -1, &st,
                         NULL) != SQLITE_OK)
    return -1;
  int n = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int(st, 0) : -1;
  sqlite3_finalize(st);
  return n;
}

int xqc_schema_migrate(sqlite3 *db, const char *path, xq_errbuf_t *eb) {
  int v = 0;
  if (user_version(db, &v) < 0)
    return xq_err_set(eb, XQ_EIO, "%s: cannot read the schema version: %s", path,
                      sqlite3_errmsg(db));
  if (v > XQC_SCHEMA_VERSION)
    return xq_err_set(eb, XQ_EVERSION, "%s: schema version %d found, this build knows versions"
                      " up to %d: a newer xqzero wrote it; run that version (or a newer one)",
                      path, v, XQC_SCHEMA_VERSION);
  if (v < 0)
    return xq_err_set(eb, XQ_EFORMAT, "%s: schema version %d found, expected 0 to %d", path, v,
                      XQC_SCHEMA_VERSION);
  if (v == XQC_SCHEMA_VERSION) return 0;
  /* An empty database is a new campaign's: its log says "created", not "migrated from 0"
   * (a version-0 database with tables is one of the last unversioned build). */
  bool fresh = v == 0 && table_count(db) == 0;
  char *err = NULL;
  if (sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, &err) != SQLITE_OK) {
    xq_err_set(eb, XQ_EIO, "%s: cannot start the migration: %s", path, err ? err : "?");
    sqlite3_free(err);
    return XQ_EIO;
  }
  int rc = 0;
  for (int i = 0; rc == 0 && i < NSTEPS; i++) {
    const step_t *s = &STEPS[i];
    if (s->version <= v) continue;
    xq_errbuf_t why = {{0}};
    if (s->sql && sqlite3_exec(db, s->sql, NULL, NULL, &err) != SQLITE_OK) {
      rc = xq_err_set(&why, XQ_EIO, "%s", err ? err : "?");
      sqlite3_free(err);
      err = NULL;
    }
    if (rc == 0 && s->fn) rc = s->fn(db, &why);
    char pragma[64];
    snprintf(pragma, sizeof pragma, "PRAGMA user_version=%d", s->version);
    if (rc == 0 && sqlite3_exec(db, pragma, NULL, NULL, NULL) != SQLITE_OK)
      rc = xq_err_set(&why, XQ_EIO, "%s", sqlite3_errmsg(db));
    if (rc < 0)
      xq_err_set(eb, rc, "%s: migrating the schema from version %d to %d (%s) failed, nothing"
                 " changed: %s", path, s->version - 1, s->version, s->what, why.msg);
  }
  if (rc == 0 && sqlite3_exec(db, "COMMIT", NULL, NULL, &err) != SQLITE_OK) {
    rc = xq_err_set(eb, XQ_EIO, "%s: migration commit failed: %s", path, err ? err : "?");
    sqlite3_free(err);
  }
  if (rc < 0) {
    sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
    return rc;
  }
  if (fresh) XQ_LOGI("db", "schema created path=%s version=%d", path, XQC_SCHEMA_VERSION);
  else XQ_LOGI("db", "schema migrated path=%s from=%d to=%d", path, v, XQC_SCHEMA_VERSION);
  return 0;
}
