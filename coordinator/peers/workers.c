/*
 * workers.c: per-worker statistics (see workers.h). Entries live in one array of at most
 * XQC_WORKERS_MAX; a hash map (support/hmap.h) from the id's hash to the entry index finds
 * them by id. Eviction reuses the evicted slot and moves its index entry, which is rare
 * (only when more than XQC_WORKERS_MAX ids have been seen).
 */
#include "workers.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "support/log.h"
#include "xqz.pb-c.h"

#define COMP "workers"

static int64_t wall_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int xqc_workers_init(xqc_workers_t *ws) {
  memset(ws, 0, sizeof *ws);
  xq_hmap_init(&ws->index, true);
  return 0;
}

void xqc_workers_close(xqc_workers_t *ws) {
  free(ws->w);
  xq_hmap_free(&ws->index);
  memset(ws, 0, sizeof *ws);
}

/* The slot of id's entry in the index, or XQ_HMAP_NONE. */
static size_t slot_of(const xqc_workers_t *ws, const char *id) {
  uint64_t k = xq_hmap_str_key(id);
  for (size_t i = xq_hmap_find(&ws->index, k, XQ_HMAP_NONE); i != XQ_HMAP_NONE;
       i = xq_hmap_find(&ws->index, k, i))
    if (strcmp(ws->w[xq_hmap_value(&ws->index, i)].id, id) == 0) return i;
  return XQ_HMAP_NONE;
}

xqc_worker_t *xqc_workers_find(const xqc_workers_t *ws, const char *id) {
  if (!ws->index.values || !id || !id[0]) return NULL; /* not initialised, or no id */
  size_t s = slot_of(ws, id);
  return s == XQ_HMAP_NONE ? NULL : &ws->w[xq_hmap_value(&ws->index, s)];
}

bool xqc_worker_alive(const xqc_worker_t *w, uint64_t now_mono_ms, uint64_t timeout_ms) {
  return w->seen_mono_ms && now_mono_ms - w->seen_mono_ms <= timeout_ms;
}

uint64_t xqc_worker_ago_ms(const xqc_worker_t *w, uint64_t now_mono_ms) {
  if (w->seen_mono_ms) return now_mono_ms - w->seen_mono_ms;
  int64_t d = wall_ms() - w->last_seen_unix_ms;
  return d > 0 ? (uint64_t)d : 0;
}

/* The entry to evict: not alive, seen longest ago; -1 when every entry is alive. */
static int victim(const xqc_workers_t *ws, uint64_t now_mono_ms, uint64_t timeout_ms) {
  int best = -1;
  int64_t oldest = INT64_MAX;
  for (int e = 0; e < ws->n; e++) {
    const xqc_worker_t *w = &ws->w[e];
    if (xqc_worker_alive(w, now_mono_ms, timeout_ms) || w->banned) continue;
    if (w->last_seen_unix_ms < oldest) {
      oldest = w->last_seen_unix_ms;
      best = e;
    }
  }
  return best;
}

xqc_worker_t *xqc_workers_get(xqc_workers_t *ws, const char *id, uint64_t now_mono_ms,
                              uint64_t timeout_ms) {
  if (!ws->index.values || !id || !id[0] || strlen(id) >= XQC_WORKER_ID_MAX) return NULL;
  size_t s = slot_of(ws, id);
  if (s != XQ_HMAP_NONE) return &ws->w[xq_hmap_value(&ws->index, s)];
  int e;
  bool reuse = ws->n == XQC_WORKERS_MAX;
  if (!reuse) {
    if (ws->n == ws->cap) {
      int ncap = ws->cap ? ws->cap * 2 : 16;
      if (ncap > XQC_WORKERS_MAX) ncap = XQC_WORKERS_MAX;
      xqc_worker_t *nw = realloc(ws->w, (size_t)ncap * sizeof *nw);
      if (!nw) return NULL;
      ws->w = nw;
      ws->cap = ncap;
    }
    if (xq_hmap_add(&ws->index, xq_hmap_str_key(id), (uint64_t)ws->n) < 0) return NULL;
    e = ws->n++;
  } else {
    /* Banned entries are kept too: forgetting them would let a banned id start afresh. */
    e = victim(ws, now_mono_ms, timeout_ms);
    if (e < 0) return NULL;
    /* The evicted id's index entry goes first: the new one then needs no growth. */
    xq_hmap_del_at(&ws->index, slot_of(ws, ws->w[e].id));
    if (xq_hmap_add(&ws->index, xq_hmap_str_key(id), (uint64_t)e) < 0) return NULL;
    if (!ws->warned)
      XQ_LOGW(COMP, "worker table full; forgetting the workers seen longest ago (their rows"
              " stay in the database) max=%d", XQC_WORKERS_MAX);
    ws->evicted = ws->warned = true;
  }
  xqc_worker_t *w = &ws->w[e];
  memset(w, 0, sizeof *w);
  snprintf(w->id, sizeof w->id, "%s", id);
  w->last_seen_unix_ms = wall_ms();
  w->seen_mono_ms = now_mono_ms;
  w->dirty = true;
  return w;
}

void xqc_worker_touch(xqc_worker_t *w, uint64_t now_mono_ms) {
  w->seen_mono_ms = now_mono_ms ? now_mono_ms : 1;
  w->last_seen_unix_ms = wall_ms();
  w->dirty = true;
}

void xqc_worker_game(xqc_worker_t *w, int result, int reason, int plies, int positions) {
  w->games++;
  w->positions += (uint64_t)positions;
  w->plies += (uint64_t)plies;
  if (result == XQ_RESULT_RED_WIN) w->red_wins++;
  else if (result == XQ_RESULT_BLACK_WIN) w->black_wins++;
  else if (result == XQ_RESULT_DRAW) w->draws++;
  if (reason >= 0 && reason < XQC_REASONS) w->by_reason[reason]++;
  int64_t now = wall_ms();
  int64_t hour = now / 3600000;
  int slot = (int)(hour % XQC_WORKER_HOURS);
  if (w->hour_of[slot] != hour) {
    w->hour_of[slot] = hour;
    w->hour_games[slot] = 0;
  }
  w->hour_games[slot]++;
  w->last_game_unix_ms = now;
  w->dirty = true;
}

uint64_t xqc_worker_games_day(const xqc_worker_t *w, int64_t now_unix_ms) {
  int64_t hour = now_unix_ms / 3600000;
  uint64_t n = 0;
  for (int i = 0; i < XQC_WORKER_HOURS; i++)
    if (w->hour_of[i] > hour - XQC_WORKER_HOURS && w->hour_of[i] <= hour) n += w->hour_games[i];
  return n;
}

const char *xqc_worker_state(const xqc_worker_t *w, uint64_t now_mono_ms, uint64_t timeout_ms,
                             int64_t now_unix_ms) {
  if (w->banned) return "banned";
  if (!xqc_worker_alive(w, now_mono_ms, timeout_ms)) return "gone";
  if (w->paused) return "paused";
  bool recent = w->last_game_unix_ms &&
                now_unix_ms - w->last_game_unix_ms <= XQC_WORKER_PLAYING_MS;
  return recent ? "playing" : "idle";
}

uint32_t xqc_workers_alive(const xqc_workers_t *ws, int role, uint64_t now_mono_ms,
                           uint64_t timeout_ms) {
  uint32_t n = 0;
  for (int e = 0; e < ws->n; e++)
    if (ws->w[e].role == role && !ws->w[e].banned &&
        xqc_worker_alive(&ws->w[e], now_mono_ms, timeout_ms))
      n++;
  return n;
}

/* by_reason as text ("3,0,1,..."): one column that survives a new reason code. */
static void reasons_text(const uint64_t *r, char *buf, size_t n) {
  size_t k = 0;
  buf[0] = '\0';
  for (int i = 0; i < XQC_REASONS && k < n; i++)
    k += (size_t)snprintf(buf + k, n - k, i ? ",%llu" : "%llu", (unsigned long long)r[i]);
}

static void reasons_parse(const char *s, uint64_t *r) {
  for (int i = 0; i < XQC_REASONS && s && *s; i++) {
    char *end;
    r[i] = strtoull(s, &end, 10);
    if (*end != ',') break;
    s = end + 1;
  }
}

static const char *COLUMNS = "worker_id, host, threads, role, version, net_id, games,"
                             " positions, plies, red_wins, black_wins, draws, by_reason,"
                             " rejected, faults, last_seen_ms, key, banned, last_game_ms,"
                             " hour_games";

/* hour_games as text: "hour:count" of the non-empty slots, comma separated. */
static void hours_text(const xqc_worker_t *w, char *buf, size_t n) {
  size_t k = 0;
  buf[0] = '\0';
  for (int i = 0; i < XQC_WORKER_HOURS && k < n; i++)
    if (w->hour_games[i])
      k += (size_t)snprintf(buf + k, n - k, "%s%lld:%u", k ? "," : "",
                            (long long)w->hour_of[i], w->hour_games[i]);
}

/* The inverse; a malformed entry ends the parse (what came before it stays). */
static void hours_parse(const char *s, xqc_worker_t *w) {
  while (s && *s) {
    char *end;
    long long hour = strtoll(s, &end, 10);
    if (*end != ':' || hour < 0) return;
    unsigned long cnt = strtoul(end + 1, &end, 10);
    if ((*end != ',' && *end) || cnt > UINT32_MAX) return;
    int slot = (int)(hour % XQC_WORKER_HOURS);
    w->hour_of[slot] = hour;
    w->hour_games[slot] = (uint32_t)cnt;
    s = *end ? end + 1 : end;
  }
}

int xqc_workers_save(xqc_workers_t *ws, xqc_db_t *db) {
  bool any = false;
  for (int e = 0; e < ws->n && !any; e++) any = ws->w[e].dirty;
  if (!any && !ws->evicted) return 0;
  char sql[600];
  snprintf(sql, sizeof sql, "INSERT OR REPLACE INTO worker_stats(%s) VALUES"
           "(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", COLUMNS);
  sqlite3_stmt *st = NULL;
  if (sqlite3_exec(db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK ||
      sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
    XQ_LOGE(COMP, "worker stats not saved err=\"%s\"", sqlite3_errmsg(db));
    sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
    return XQ_EIO;
  }
  int rc = 0;
  for (int e = 0; e < ws->n && rc == 0; e++) {
    xqc_worker_t *w = &ws->w[e];
    if (!w->dirty) continue;
    char reasons[XQC_REASONS * 21 + 1];
    reasons_text(w->by_reason, reasons, sizeof reasons);
    int k = 1;
    sqlite3_bind_text(st, k++, w->id, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, k++, w->host, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, k++, w->threads);
    sqlite3_bind_int(st, k++, w->role);
    sqlite3_bind_text(st, k++, w->version, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, k++, (sqlite3_int64)w->net_id);
    sqlite3_bind_int64(st, k++, (sqlite3_int64)w->games);
    sqlite3_bind_int64(st, k++, (sqlite3_int64)w->positions);
    sqlite3_bind_int64(st, k++, (sqlite3_int64)w->plies);
    sqlite3_bind_int64(st, k++, (sqlite3_int64)w->red_wins);
    sqlite3_bind_int64(st, k++, (sqlite3_int64)w->black_wins);
    sqlite3_bind_int64(st, k++, (sqlite3_int64)w->draws);
    sqlite3_bind_text(st, k++, reasons, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(st, k++, (sqlite3_int64)w->rejected);
    sqlite3_bind_int64(st, k++, (sqlite3_int64)w->faults);
    sqlite3_bind_int64(st, k++, w->last_seen_unix_ms);
    sqlite3_bind_text(st, k++, w->key, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, k++, w->banned);
    char hours[XQC_WORKER_HOURS * 32 + 1];
    hours_text(w, hours, sizeof hours);
    sqlite3_bind_int64(st, k++, w->last_game_unix_ms);
    sqlite3_bind_text(st, k++, hours, -1, SQLITE_TRANSIENT);
    if (sqlite3_step(st) != SQLITE_DONE) rc = XQ_EIO;
    sqlite3_reset(st);
    if (rc == 0) w->dirty = false;
  }
  sqlite3_finalize(st);
  if (rc == 0 && ws->evicted) {
    char trim[300];
    snprintf(trim, sizeof trim, "DELETE FROM worker_stats WHERE worker_id NOT IN (SELECT"
             " worker_id FROM worker_stats ORDER BY banned DESC, last_seen_ms DESC LIMIT %d)",
             XQC_WORKERS_MAX);
    if (sqlite3_exec(db, trim, NULL, NULL, NULL) != SQLITE_OK) rc = XQ_EIO;
    else ws->evicted = false;
  }
  if (rc == 0 && sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) rc = XQ_EIO;
  if (rc < 0) {
    XQ_LOGE(COMP, "worker stats not saved err=\"%s\"", sqlite3_errmsg(db));
    sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
    for (int e = 0; e < ws->n; e++) ws->w[e].dirty = true; /* try again next time */
  }
  return rc;
}

static void text_col(sqlite3_stmt *st, int col, char *dst, size_t n) {
  const unsigned char *t = sqlite3_column_text(st, col);
  snprintf(dst, n, "%s", t ? (const char *)t : "");
}

int xqc_workers_load(xqc_workers_t *ws, xqc_db_t *db) {
  char sql[600];
  snprintf(sql, sizeof sql, "SELECT %s FROM worker_stats ORDER BY banned DESC,"
           " last_seen_ms DESC LIMIT %d", COLUMNS, XQC_WORKERS_MAX);
  sqlite3_stmt *st = NULL;
  if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
    XQ_LOGE(COMP, "worker stats not loaded err=\"%s\"", sqlite3_errmsg(db));
    return XQ_EIO;
  }
  while (sqlite3_step(st) == SQLITE_ROW) {
    const unsigned char *id = sqlite3_column_text(st, 0);
    xqc_worker_t *w = xqc_workers_get(ws, id ? (const char *)id : "", 0, 0);
    if (!w) continue;
    int k = 1;
    text_col(st, k++, w->host, sizeof w->host);
    w->threads = (uint32_t)sqlite3_column_int64(st, k++);
    w->role = sqlite3_column_int(st, k++);
    text_col(st, k++, w->version, sizeof w->version);
    w->net_id = (uint64_t)sqlite3_column_int64(st, k++);
    w->games = (uint64_t)sqlite3_column_int64(st, k++);
    w->positions = (uint64_t)sqlite3_column_int64(st, k++);
    w->plies = (uint64_t)sqlite3_column_int64(st, k++);
    w->red_wins = (uint64_t)sqlite3_column_int64(st, k++);
    w->black_wins = (uint64_t)sqlite3_column_int64(st, k++);
    w->draws = (uint64_t)sqlite3_column_int64(st, k++);
    reasons_parse((const char *)sqlite3_column_text(st, k++), w->by_reason);
    w->rejected = (uint64_t)sqlite3_column_int64(st, k++);
    w->faults = (uint64_t)sqlite3_column_int64(st, k++);
    w->last_seen_unix_ms = sqlite3_column_int64(st, k++);
    text_col(st, k++, w->key, sizeof w->key);
    w->banned = sqlite3_column_int(st, k++) != 0;
    w->last_game_unix_ms = sqlite3_column_int64(st, k++);
    hours_parse((const char *)sqlite3_column_text(st, k++), w);
    w->seen_mono_ms = 0;
    w->dirty = false;
  }
  sqlite3_finalize(st);
  return 0;
}
