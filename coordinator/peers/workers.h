/*
 * workers.h: statistics per worker id over the whole campaign (hello, heartbeat, games,
 * rejections, faults, last seen), kept in memory for Status and persisted in the
 * campaign database's worker_stats table (written when dirty, reloaded at start).
 *
 * Bounded: a hostile peer that invents worker ids cannot grow memory without bound. The
 * table holds at most XQC_WORKERS_MAX entries; a new id then evicts the entry seen longest
 * ago among those not alive (its row stays in the database), and when every entry is
 * alive the new id is not tracked (lookups return NULL; callers skip the counting).
 *
 * Ownership: the caller owns the xqc_workers_t (init/close); entry pointers stay valid
 * until the next xqc_workers_get that creates an entry (it may evict and reuse a slot).
 */
#ifndef XQC_WORKERS_H
#define XQC_WORKERS_H

#include <stdbool.h>
#include <stdint.h>

#include "storage/campaign_db.h"
#include "support/hmap.h"
#include "rules/rules.h"

#define XQC_WORKERS_MAX 4096
#define XQC_REASONS (XQ_REASON_RESIGN + 1) /* by_reason slots, index = xq_reason_t */
#define XQC_WORKER_ID_MAX 128              /* bytes with the NUL, as xqc_peer_t */
#define XQC_WORKER_HOURS 24                /* games a day: counted by the hour */
#define XQC_WORKER_PLAYING_MS 600000       /* "playing": a game accepted this recently */

typedef struct {
  char id[XQC_WORKER_ID_MAX];
  char host[64];
  char version[64];       /* Hello.software_version */
  char precision[8];      /* Hello.precision: its self-play arithmetic ("" unknown) */
  char key[41];           /* CURVE public key (Z85), empty without CURVE: filled by security */
  bool banned;            /* filled by security */
  int role;               /* Xqz__Role */
  uint32_t threads;
  uint64_t net_id;        /* from the latest heartbeat */
  bool paused;            /* from the latest heartbeat: its machine's owner paused it */
  char pause_reason[16];  /* "signal", "schedule", "busy", "memory" while paused */
  uint64_t games, positions, plies, red_wins, black_wins, draws;
  uint64_t by_reason[XQC_REASONS];
  uint64_t rejected;      /* records rejected by the rules replay */
  uint64_t faults;        /* malformed or unexpected messages */
  int64_t last_seen_unix_ms; /* wall clock, persisted */
  int64_t last_game_unix_ms; /* wall clock of the last accepted game (0: none), persisted */
  /* Games accepted per wall-clock hour over the last day, persisted: slot h % 24 counts
   * hour h (unix seconds / 3600) when hour_of[slot] == h. */
  uint32_t hour_games[XQC_WORKER_HOURS];
  int64_t hour_of[XQC_WORKER_HOURS];
  uint64_t seen_mono_ms;     /* monotonic, 0 = not seen since this coordinator started */
  bool dirty;
} xqc_worker_t;

typedef struct {
  xqc_worker_t *w;   /* (cap) entries, n used */
  int n, cap;
  xq_hmap_t index;   /* id's hash -> entry index (several when hashes collide) */
  bool evicted;      /* an entry was evicted since the last save (prune the table) */
  bool warned;       /* the "table full" warning was logged (once per run) */
} xqc_workers_t;

int xqc_workers_init(xqc_workers_t *ws);
void xqc_workers_close(xqc_workers_t *ws);
/* The entry of id, created when missing (NULL when id is empty, too long, or the table
 * is full of alive workers). now_mono_ms and timeout_ms decide who is alive. */
xqc_worker_t *xqc_workers_get(xqc_workers_t *ws, const char *id, uint64_t now_mono_ms,
                              uint64_t timeout_ms);
/* The entry of id, or NULL (never creates). */
xqc_worker_t *xqc_workers_find(const xqc_workers_t *ws, const char *id);
/* Marks w seen now. */
void xqc_worker_touch(xqc_worker_t *w, uint64_t now_mono_ms);
/* Counts one accepted game (result is xq_result_t, reason xq_reason_t). */
void xqc_worker_game(xqc_worker_t *w, int result, int reason, int plies, int positions);
/* Games w had accepted in the last 24 hours (the current hour and the 23 before it) at
 * wall-clock time now_unix_ms. */
uint64_t xqc_worker_games_day(const xqc_worker_t *w, int64_t now_unix_ms);
/* One word for what w does now: "banned", "gone", "paused", "playing" (a game accepted
 * within XQC_WORKER_PLAYING_MS) or "idle". */
const char *xqc_worker_state(const xqc_worker_t *w, uint64_t now_mono_ms, uint64_t timeout_ms,
                             int64_t now_unix_ms);
/* Milliseconds since w was last seen (from the wall clock for entries not seen since
 * this start). */
uint64_t xqc_worker_ago_ms(const xqc_worker_t *w, uint64_t now_mono_ms);
bool xqc_worker_alive(const xqc_worker_t *w, uint64_t now_mono_ms, uint64_t timeout_ms);
/* Alive, not banned entries of the given role. */
uint32_t xqc_workers_alive(const xqc_workers_t *ws, int role, uint64_t now_mono_ms,
                           uint64_t timeout_ms);

/* Writes the dirty entries (one transaction) and, after an eviction, trims the table to
 * the XQC_WORKERS_MAX most recently seen rows. */
int xqc_workers_save(xqc_workers_t *ws, xqc_db_t *db);
/* Loads the XQC_WORKERS_MAX most recently seen rows. */
int xqc_workers_load(xqc_workers_t *ws, xqc_db_t *db);

#endif
