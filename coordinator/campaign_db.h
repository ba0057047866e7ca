/*
 * campaign_db.h: the campaign's SQLite database: nets, matches, promotions, workers.
 * The best net is the net of the latest promotions row (net 1 gets a row with no match).
 * Ownership: xqc_db_open returns a handle the caller closes with xqc_db_close.
 */
#ifndef XQC_CAMPAIGN_DB_H
#define XQC_CAMPAIGN_DB_H

#include <stdint.h>

#include "support/error.h"

typedef struct sqlite3 xqc_db_t;

typedef struct {
  uint64_t match_id, net_a, net_b;
  int64_t wins, draws, losses;
  double score, elo;
  const char *decision; /* "promoted", "rejected" */
} xqc_match_row_t;

int xqc_db_open(xqc_db_t **db, const char *path, xq_errbuf_t *eb);
void xqc_db_close(xqc_db_t **db);
/* Best net id and its Elo (0 / 0 when there is none yet). */
int xqc_db_best(xqc_db_t *db, uint64_t *net_id, double *elo, int64_t *promotions);
int xqc_db_add_net(xqc_db_t *db, uint64_t id, uint64_t parent, int64_t step, const char *state);
int xqc_db_set_net_state(xqc_db_t *db, uint64_t id, const char *state, double elo);
int xqc_db_add_match(xqc_db_t *db, const xqc_match_row_t *m);
int xqc_db_add_promotion(xqc_db_t *db, uint64_t id, uint64_t parent, int64_t step,
                         uint64_t match_id, double score, double elo);
/* The newest net still in state "candidate" (its match was cut short by a restart):
 * 0 when none. */
int xqc_db_pending_candidate(xqc_db_t *db, uint64_t *id, int64_t *step);
int xqc_db_worker_seen(xqc_db_t *db, const char *worker_id, const char *host, int threads,
                       int role);

#endif
