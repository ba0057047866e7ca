/*
 * spool.h: the games a worker has finished but the coordinator has not acknowledged.
 * Each is kept in memory and in a file "<seq as 16 hex digits>.xqs" in the spool
 * directory (written atomically before it is first sent), so neither a coordinator
 * outage nor a worker restart loses a game. A file holds magic "XQZS", version u32,
 * CRC-32 of the rest u32, then worker id length u32 + bytes, seq u64, record length u32 +
 * the game record payload (little-endian). Entries keep the worker id they were made
 * under, so games spooled by an earlier process are resent under their own (id, seq).
 *
 * The spool is bounded (max_games); xq_spool_full tells the player to pause. All
 * functions are thread-safe (the search thread adds, the link thread sends and acks).
 */
#ifndef XQ_WORKER_SPOOL_H
#define XQ_WORKER_SPOOL_H

#include <stddef.h>
#include <stdint.h>

#include "support/error.h"

typedef struct xq_spool xq_spool_t;

/* Opens (creating) dir, locks it (support/dirlock.h: XQ_EBUSY naming the worker that holds
 * it) and loads every valid spooled game; invalid files are renamed to
 * "*.bad" and logged. next_seq continues after the highest loaded seq and the clock. */
int xq_spool_open(xq_spool_t **out, const char *dir, size_t max_games, xq_errbuf_t *eb);
void xq_spool_free(xq_spool_t **sp);

/* Takes a copy of the record, gives it the next seq (returned in *seq), writes it to disk. */
int xq_spool_add(xq_spool_t *sp, const char *worker_id, const void *rec, size_t len,
                 uint64_t *seq, xq_errbuf_t *eb);
/* Drops (worker_id, seq) from memory and disk; 1 if it was there, else 0. */
int xq_spool_ack(xq_spool_t *sp, const char *worker_id, uint64_t seq);
size_t xq_spool_count(xq_spool_t *sp);
int xq_spool_full(xq_spool_t *sp);

/* Calls fn for up to max entries whose last send is older than resend_ms, in spool order,
 * marking them sent at now_ms, while fewer than max_in_flight entries were sent within the
 * last resend_ms (flow control: a coordinator that stops acknowledging, e.g. on a full
 * disk, gets the same max_in_flight games again every resend_ms, not the whole spool).
 * fn gets the entry's fields; its return is ignored. Returns the number visited. */
typedef void (*xq_spool_send_fn)(void *ctx, const char *worker_id, uint64_t seq,
                                 const void *rec, size_t len);
int xq_spool_due(xq_spool_t *sp, int64_t now_ms, int64_t resend_ms, int max, int max_in_flight,
                 xq_spool_send_fn fn, void *ctx);
/* Marks every entry as never sent (after a reconnect). */
void xq_spool_reset_sent(xq_spool_t *sp);

#endif
