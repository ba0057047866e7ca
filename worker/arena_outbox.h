/*
 * arena_outbox.h: a worker's arena results until the coordinator answers them. A result is
 * sent once when its pair ends, but the message can be lost with a coordinator that dies,
 * or reach a restarted one before this worker's Hello does (it sat in the socket's queue),
 * and that coordinator cannot score it for a connection it does not know. So each result
 * is kept here until an Ack answers its request id (accepted, or refused for good), and
 * sent again after every Welcome. A full outbox drops its oldest result (a coordinator that
 * answers nothing for eight pairs has re-issued them long since).
 */
#ifndef XQ_WORKER_ARENA_OUTBOX_H
#define XQ_WORKER_ARENA_OUTBOX_H

#include <stdbool.h>
#include <stdint.h>

#define XQ_OUTBOX_MAX 8 /* with a queued and a playing pair, within XQ_HOLDING_MAX */

typedef struct {
  uint64_t match_id;
  uint32_t pair_index;
  int32_t result_a_red, result_a_black;
  uint32_t reason_a_red, reason_a_black;
  uint64_t request_id; /* of its last sending (0: not sent yet) */
} xq_outbox_entry_t;

typedef struct {
  xq_outbox_entry_t e[XQ_OUTBOX_MAX]; /* in arrival order, the oldest first */
  int n;
} xq_outbox_t;

/* Keeps a copy of r; when full, the oldest result is dropped first and *dropped (may be
 * NULL) says so. Returns the kept entry. */
xq_outbox_entry_t *xq_outbox_add(xq_outbox_t *o, const xq_outbox_entry_t *r, bool *dropped);
/* Removes the entry last sent as request_id; false when none was. */
bool xq_outbox_answered(xq_outbox_t *o, uint64_t request_id, xq_outbox_entry_t *out);

#endif
