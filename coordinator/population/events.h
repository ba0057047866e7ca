/*
 * events.h: what a population decided, kept (issue 48): every exploit-and-explore step as
 * a row of campaign.db (table population_events) and a JSON line of the campaign's
 * population.log, and every member's rating of each round as a row of population_ratings.
 * Bottom floor: takes the database and the campaign directory, never the coordinator.
 */
#ifndef XQC_EVENTS_H
#define XQC_EVENTS_H

#include <stddef.h>
#include <stdint.h>

#include "population/members.h"
#include "storage/campaign_db.h"

#define XQC_EVENTS_HISTORY 200 /* events in a Status, the newest */

/* One exploit-and-explore step: member (0-based slot) copied donor in round. */
typedef struct {
  uint64_t round;
  int member, donor;        /* 0-based slots */
  int generation;           /* the member's, after the copy */
  uint64_t donor_net;       /* the net whose checkpoint it continues from */
  double before[XQC_MS_COUNT], after[XQC_MS_COUNT]; /* settings, members.h order */
  double member_elo, donor_elo;
  int64_t time;             /* Unix seconds */
} xqc_pop_event_t;

/* One member's rating in a round (the best net at 0). */
typedef struct {
  uint64_t round;
  int member;               /* 0-based slot; -1 for the best net */
  uint64_t net;
  int64_t step;
  double elo, lo, hi;
  double settings[XQC_MS_COUNT];
  int generation, parent;
  int64_t time;
} xqc_pop_rating_t;

/* Records an event (a row; the same round and member again replaces it). 0 or XQ_EIO. */
int xqc_pop_event_add(xqc_db_t *db, const xqc_pop_event_t *e);
/* Records a rating (the same round and member again replaces it). 0 or XQ_EIO. */
int xqc_pop_rating_add(xqc_db_t *db, const xqc_pop_rating_t *r);
/* The newest max events, oldest first; *rows malloc'd (the caller frees). */
int xqc_pop_event_history(xqc_db_t *db, int max, xqc_pop_event_t **rows, int *n);
/* The event as one JSON line (no newline) into buf (n bytes): {"type":"exploit","round":..,
 * "member":..,"donor":..,"generation":..,"donor_net":"hex","before":{"lr_scale":..,...},
 * "after":{...},"member_elo":..,"donor_elo":..,"time":..}; slots 1-based as users see them.
 * Returns the length, or -1 when it does not fit. */
int xqc_pop_event_json(const xqc_pop_event_t *e, char *buf, size_t n);
/* A rating as one JSON line, {"type":"rating",...}, the same way. */
int xqc_pop_rating_json(const xqc_pop_rating_t *r, char *buf, size_t n);

#endif
