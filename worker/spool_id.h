/*
 * spool_id.h: the worker's default id, stable across restarts. It is stored in the spool
 * as DIR/worker_id (one line, written atomically on the first start): "<host>-<8 hex
 * digits>", random once, then read back at every start. The spool is locked by one
 * worker at a time, so two workers on one host (two spools) get two ids, and a restarted
 * worker gets its own back, which the coordinator lets it reclaim (docs/protocol.md,
 * "Worker ids"). --id NAME overrides it and leaves the file alone. Delete the file (with
 * the worker stopped) to get a new id; a spool copied to another machine carries its id.
 */
#ifndef XQ_WORKER_SPOOL_ID_H
#define XQ_WORKER_SPOOL_ID_H

#include <stddef.h>

#include "support/error.h"
#include "support/rng.h"

#define XQ_SPOOL_ID_FILE "worker_id"

/* The id stored in dir (the spool, already open and locked) into out (n bytes), or a new
 * one made from host and rng and stored first. Returns 0, or a negative XQ_E... code: the
 * file is unreadable, holds no valid id (printable, no spaces or quotes, 1..127
 * characters: it names the file and says to delete it), or cannot be written. */
int xq_spool_worker_id(const char *dir, const char *host, xq_rng_t *rng, char *out, size_t n,
                       xq_errbuf_t *eb);

#endif
