/*
 * events.c: a population's decisions kept (events.h): the population_events and
 * population_ratings tables of campaign.db (schema.c, layout 6) and their JSON lines.
 * Settings are columns by name, so the tables answer SQL without decoding; a non-finite
 * Elo (an interval open on one side) is stored as SQLite keeps it (NaN as NULL) and read
 * back as it was, and written as null in JSON.
 */
#include "population/events.h"

#include <math.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int xqc_pop_event_add(xqc_db_t *db, const xqc_pop_event_t *e) {
  sqlite3_stmt *st = xqc_db_prep(
      db, "INSERT OR REPLACE INTO population_events(round, member, donor, generation,"
          " donor_net, before_lr_scale, before_l2, before_value_weight, before_batch,"
          " after_lr_scale, after_l2, after_value_weight, after_batch, member_elo, donor_elo,"
          " time) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
  if (!st) return XQ_EIO;
  sqlite3_bind_int64(st, 1, (sqlite3_int64)e->round);
  sqlite3_bind_int(st, 2, e->member);
  sqlite3_bind_int(st, 3, e->donor);
  sqlite3_bind_int(st, 4, e->generation);
  sqlite3_bind_int64(st, 5, (sqlite3_int64)e->donor_net);
  for (int i = 0; i < XQC_MS_COUNT; i++) {
    sqlite3_bind_double(st, 6 + i, e->before[i]);
    sqlite3_bind_double(st, 6 + XQC_MS_COUNT + i, e->after[i]);
  }
  sqlite3_bind_double(st, 14, e->member_elo);
  sqlite3_bind_double(st, 15, e->donor_elo);
  sqlite3_bind_int64(st, 16, e->time);
  return xqc_db_step_done(db, st);
}

int xqc_pop_rating_add(xqc_db_t *db, const xqc_pop_rating_t *r) {
  sqlite3_stmt *st = xqc_db_prep(
      db, "INSERT OR REPLACE INTO population_ratings(round, member, net, step, elo, lo, hi,"
          " lr_scale, l2, value_weight, batch, generation, parent, time)"
          " VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
  if (!st) return XQ_EIO;
  sqlite3_bind_int64(st, 1, (sqlite3_int64)r->round);
  sqlite3_bind_int(st, 2, r->member);
  sqlite3_bind_int64(st, 3, (sqlite3_int64)r->net);
  sqlite3_bind_int64(st, 4, r->step);
  sqlite3_bind_double(st, 5, r->elo);
  sqlite3_bind_double(st, 6, r->lo);
  sqlite3_bind_double(st, 7, r->hi);
  for (int i = 0; i < XQC_MS_COUNT; i++) sqlite3_bind_double(st, 8 + i, r->settings[i]);
  sqlite3_bind_int(st, 12, r->generation);
  sqlite3_bind_int(st, 13, r->parent);
  sqlite3_bind_int64(st, 14, r->time);
  return xqc_db_step_done(db, st);
}

/* A REAL column as stored: NULL (SQLite's NaN) reads back as NaN. */
static double column_real(sqlite3_stmt *st, int i) {
  return sqlite3_column_type(st, i) == SQLITE_NULL ? NAN : sqlite3_column_double(st, i);
}

int xqc_pop_event_history(xqc_db_t *db, int max, xqc_pop_event_t **rows, int *n) {
  *rows = NULL;
  *n = 0;
  if (max <= 0) return 0;
  sqlite3_stmt *st = xqc_db_prep(
      db, "SELECT round, member, donor, generation, donor_net, before_lr_scale, before_l2,"
          " before_value_weight, before_batch, after_lr_scale, after_l2, after_value_weight,"
          " after_batch, member_elo, donor_elo, time FROM (SELECT * FROM population_events"
          " ORDER BY round DESC, member DESC LIMIT ?) ORDER BY round, member");
  if (!st) return XQ_EIO;
  sqlite3_bind_int(st, 1, max);
  xqc_pop_event_t *r = calloc((size_t)max, sizeof *r);
  if (!r) {
    sqlite3_finalize(st);
    return XQ_ENOMEM;
  }
  int m = 0, rc;
  while (m < max && (rc = sqlite3_step(st)) == SQLITE_ROW) {
    xqc_pop_event_t *e = &r[m++];
    e->round = (uint64_t)sqlite3_column_int64(st, 0);
    e->member = sqlite3_column_int(st, 1);
    e->donor = sqlite3_column_int(st, 2);
    e->generation = sqlite3_column_int(st, 3);
    e->donor_net = (uint64_t)sqlite3_column_int64(st, 4);
    for (int i = 0; i < XQC_MS_COUNT; i++) {
      e->before[i] = column_real(st, 5 + i);
      e->after[i] = column_real(st, 5 + XQC_MS_COUNT + i);
    }
    e->member_elo = column_real(st, 13);
    e->donor_elo = column_real(st, 14);
    e->time = sqlite3_column_int64(st, 15);
  }
  sqlite3_finalize(st);
  *rows = r;
  *n = m;
  return 0;
}

/* A JSON line being written into a caller's buffer; `over` once it does not fit. */
typedef struct {
  char *buf;
  size_t n, len;
  bool over;
} line_t;

static void put(line_t *l, const char *fmt, ...) {
  if (l->over) return;
  va_list ap;
  va_start(ap, fmt);
  int k = vsnprintf(l->buf + l->len, l->n - l->len, fmt, ap);
  va_end(ap);
  if (k < 0 || (size_t)k >= l->n - l->len) l->over = true;
  else l->len += (size_t)k;
}

/* sep"key":number, the number with the fewest digits that read back as the same double
 * (15, else 17); a non-finite one is null. */
static void put_key_num(line_t *l, const char *sep, const char *key, double v) {
  char t[40] = "null";
  if (isfinite(v)) {
    snprintf(t, sizeof t, "%.15g", v);
    if (strtod(t, NULL) != v) snprintf(t, sizeof t, "%.17g", v);
  }
  put(l, "%s\"%s\":%s", sep, key, t);
}

static void put_num(line_t *l, const char *key, double v) { put_key_num(l, ",", key, v); }

/* "key":{"lr_scale":..,"l2":..,"value_weight":..,"batch":..} (members.h names). */
static void put_settings(line_t *l, const char *key, const double *s) {
  const xqc_pbt_range_t *names = xqc_members_ranges();
  put(l, ",\"%s\":{", key);
  for (int i = 0; i < XQC_MS_COUNT; i++) put_key_num(l, i ? "," : "", names[i].name, s[i]);
  put(l, "}");
}

static int done(line_t *l) { return l->over ? -1 : (int)l->len; }

int xqc_pop_event_json(const xqc_pop_event_t *e, char *buf, size_t n) {
  line_t l = {buf, n, 0, n == 0};
  put(&l, "{\"type\":\"exploit\",\"round\":%llu,\"member\":%d,\"donor\":%d,\"generation\":%d,"
          "\"donor_net\":\"%016llx\"", (unsigned long long)e->round, e->member + 1,
      e->donor + 1, e->generation, (unsigned long long)e->donor_net);
  put_settings(&l, "before", e->before);
  put_settings(&l, "after", e->after);
  put_num(&l, "member_elo", e->member_elo);
  put_num(&l, "donor_elo", e->donor_elo);
  put(&l, ",\"time\":%lld}", (long long)e->time);
  return done(&l);
}

int xqc_pop_rating_json(const xqc_pop_rating_t *r, char *buf, size_t n) {
  line_t l = {buf, n, 0, n == 0};
  /* Slots 1-based; the best net is member 0, and parent 0 is none, as on the wire. */
  put(&l, "{\"type\":\"rating\",\"round\":%llu,\"member\":%d,\"net\":\"%016llx\",\"step\":%lld",
      (unsigned long long)r->round, r->member + 1, (unsigned long long)r->net,
      (long long)r->step);
  put_num(&l, "elo", r->elo);
  put_num(&l, "lo", r->lo);
  put_num(&l, "hi", r->hi);
  put_settings(&l, "settings", r->settings);
  put(&l, ",\"generation\":%d,\"parent\":%d,\"time\":%lld}", r->generation, r->parent + 1,
      (long long)r->time);
  return done(&l);
}
