/*
 * events_stub.c: replaced by events.c at merge. Minimal stand-ins for events.h so that the
 * rounds (population_round.c) build and their tests run before events.c exists: nothing is
 * stored, the JSON lines name the round and the member only.
 */
#include "population/events.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

int xqc_pop_event_add(xqc_db_t *db, const xqc_pop_event_t *e) {
  (void)db;
  (void)e;
  return 0;
}

int xqc_pop_rating_add(xqc_db_t *db, const xqc_pop_rating_t *r) {
  (void)db;
  (void)r;
  return 0;
}

int xqc_pop_event_history(xqc_db_t *db, int max, xqc_pop_event_t **rows, int *n) {
  (void)db;
  (void)max;
  *rows = NULL;
  *n = 0;
  return 0;
}

int xqc_pop_event_json(const xqc_pop_event_t *e, char *buf, size_t n) {
  int k = snprintf(buf, n, "{\"type\":\"exploit\",\"round\":%" PRIu64 ",\"member\":%d,"
                   "\"donor\":%d}", e->round, e->member + 1, e->donor + 1);
  return k < 0 || (size_t)k >= n ? -1 : k;
}

int xqc_pop_rating_json(const xqc_pop_rating_t *r, char *buf, size_t n) {
  int k = snprintf(buf, n, "{\"type\":\"rating\",\"round\":%" PRIu64 ",\"member\":%d,"
                   "\"elo\":%.1f}", r->round, r->member < 0 ? 0 : r->member + 1, r->elo);
  return k < 0 || (size_t)k >= n ? -1 : k;
}
