/*
 * campaign_db.h: the campaign's SQLite database: the campaign id, nets, matches,
 * promotions, losses, bans (and worker_stats, written by workers.c). Campaigns made before
 * worker_stats also have a `workers` table, no longer written. Opening migrates an older
 * layout forward and refuses a newer one (schema.h).
 * The best net is the net of the latest promotions row (net 1 gets a row with no match).
 * Ownership: xqc_db_open returns a handle the caller closes with xqc_db_close.
 */
#ifndef XQC_CAMPAIGN_DB_H
#define XQC_CAMPAIGN_DB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "support/error.h"

typedef struct sqlite3 xqc_db_t;
struct sqlite3_stmt;

/* For the other stores of campaign.db (match_store.c): a prepared statement (NULL on
 * error, logged), and stepping a statement that returns no rows, finalizing it (0 or
 * XQ_EIO, logged). */
struct sqlite3_stmt *xqc_db_prep(xqc_db_t *db, const char *sql);
int xqc_db_step_done(xqc_db_t *db, struct sqlite3_stmt *st);

typedef struct {
  uint64_t match_id, net_a, net_b;
  int64_t wins, draws, losses;
  double score, elo;
  const char *decision; /* "promoted", "rejected" */
} xqc_match_row_t;

/* A decided match as the views show it (status.c turns it into a MatchStatus). */
typedef struct {
  uint64_t match_id, net_a, net_b;
  int64_t step, wins, draws, losses, time;
  double score, elo, best_elo;
  char decision[16];
} xqc_match_info_t;

/* One point of the trainer's loss curve. */
typedef struct {
  uint64_t step;
  int64_t time; /* unix seconds */
  double loss, policy, value;
} xqc_loss_row_t;

/* The busy timeout of campaign.db once open: the loop thread waits at most this long for
 * another program's lock, then the write fails with SQLITE_BUSY (campaign_db.c). */
#define XQC_DB_BUSY_MS 5

/* Opens path, migrating its layout to XQC_SCHEMA_VERSION (schema.h). XQ_EVERSION: the
 * database is of a newer version (both named in eb). */
int xqc_db_open(xqc_db_t **db, const char *path, xq_errbuf_t *eb);
/* The campaign id (0 while none is stored: a new campaign, or one made before ids). */
int xqc_db_campaign_id(xqc_db_t *db, uint64_t *id);
/* Stores the campaign id (non-zero) unless one is stored already. */
int xqc_db_campaign_id_set(xqc_db_t *db, uint64_t id);
void xqc_db_close(xqc_db_t **db);
/* A write transaction (BEGIN IMMEDIATE): 0, or XQ_EIO when another program holds the
 * write lock (or the disk fails); then nothing is open. */
int xqc_db_begin(xqc_db_t *db);
/* COMMIT: 0 when the transaction is durable (synchronous=FULL), else XQ_EIO and the caller
 * calls xqc_db_rollback. */
int xqc_db_commit(xqc_db_t *db);
/* Rolls back the open transaction, if one is still open. */
void xqc_db_rollback(xqc_db_t *db);
/* The last error of db, "database is locked (database is locked)", into buf (n bytes). */
void xqc_db_cause(xqc_db_t *db, char *buf, size_t n);
/* Writes a consistent copy of db to path (through path.tmp, fsynced, renamed): the rescue
 * copy of a database deleted under the running coordinator. */
int xqc_db_backup(xqc_db_t *db, const char *path, xq_errbuf_t *eb);
/* The next match id: one above every match id campaign.db holds, and at least the floor
 * xqc_db_match_ids_used recorded (1 for a new campaign). */
int xqc_db_next_match_id(xqc_db_t *db, uint64_t *id);
/* Records that match ids below next are taken (the floor only rises). */
int xqc_db_match_ids_used(xqc_db_t *db, uint64_t next);
/* Best net id and its Elo (0 / 0 when there is none yet). */
int xqc_db_best(xqc_db_t *db, uint64_t *net_id, double *elo, int64_t *promotions);
int xqc_db_add_net(xqc_db_t *db, uint64_t id, uint64_t parent, int64_t step, const char *state);
int xqc_db_set_net_state(xqc_db_t *db, uint64_t id, const char *state, double elo);
/* A decided match; a row of the same id is never replaced (XQ_EIO, logged). */
int xqc_db_add_match(xqc_db_t *db, const xqc_match_row_t *m);
int xqc_db_add_promotion(xqc_db_t *db, uint64_t id, uint64_t parent, int64_t step,
                         uint64_t match_id, double score, double elo);
/* The newest net still in state "candidate" (its match was cut short by a restart):
 * 0 when none. */
int xqc_db_pending_candidate(xqc_db_t *db, uint64_t *id, int64_t *step);

/* The state of net id ("candidate", "best", "retired", "rejected"; "" when unknown) into
 * state (n bytes), and its training step into *step (0 when unknown; step may be NULL). */
int xqc_db_net_state(xqc_db_t *db, uint64_t id, char *state, size_t n, int64_t *step);

/* The trainer's newest step the campaign knows of: the largest step of a stored loss
 * point or net (0 when none), so a restarted coordinator does not show step 0. */
int xqc_db_trainer_step(xqc_db_t *db, int64_t *step);

/* The campaign's counters at a time (the throughput table). */
typedef struct {
  int64_t time; /* unix seconds */
  uint64_t games, positions;
} xqc_throughput_row_t;
int xqc_db_add_throughput(xqc_db_t *db, const xqc_throughput_row_t *r);
/* The throughput rows thinned to at most max_points (>= 2), oldest first, ending with the
 * newest; *rows malloc'd (caller frees). */
int xqc_db_throughput(xqc_db_t *db, int max_points, xqc_throughput_row_t **rows, int *n);

int xqc_db_add_loss(xqc_db_t *db, const xqc_loss_row_t *l);
/* The newest loss point (*found false when there is none). */
int xqc_db_last_loss(xqc_db_t *db, xqc_loss_row_t *l, bool *found);
/* The loss curve thinned to at most max_points (>= 2) rows, oldest first, always ending
 * with the newest; *rows is malloc'd (caller frees). */
int xqc_db_losses(xqc_db_t *db, int max_points, xqc_loss_row_t **rows, int *n);
/* Decided matches with id > after_id, oldest first: the `newest` last ones when newest
 * > 0, else the first max_rows. *rows is malloc'd (caller frees). */
int xqc_db_matches(xqc_db_t *db, uint64_t after_id, int newest, int max_rows,
                   xqc_match_info_t **rows, int *n);

/* Bans (see bans.h): target = worker id or CURVE key. ban_set replaces an existing row. */
int xqc_db_ban_set(xqc_db_t *db, const char *target, const char *reason);
int xqc_db_ban_remove(xqc_db_t *db, const char *target);
/* Calls each per stored ban, oldest first; a non-zero return stops and is returned. */
int xqc_db_bans_load(xqc_db_t *db, int (*each)(const char *target, const char *reason,
                                               int64_t time, void *user), void *user);
/* The CURVE key last seen sending games for worker_id (see window/sources.h). */
int xqc_db_worker_key_set(xqc_db_t *db, const char *worker_id, const char *key);
int xqc_db_worker_keys_load(xqc_db_t *db, int (*each)(const char *worker_id, const char *key,
                                                      int64_t unused, void *user), void *user);

#endif
