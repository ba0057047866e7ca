/*
 * spool_campaign.h: the campaign a worker's spooled games belong to, kept beside them as
 * DIR/campaign (16 hex digits and a newline, written atomically). The worker's Hello
 * names it while the spool holds games, so a worker whose spool was filled for another
 * campaign is refused (Error code XQ_ERROR_CAMPAIGN) instead of pouring that campaign's
 * games into this one; with an empty spool the worker says 0 (fresh) and adopts the
 * campaign the coordinator's Welcome names.
 */
#ifndef XQ_WORKER_SPOOL_CAMPAIGN_H
#define XQ_WORKER_SPOOL_CAMPAIGN_H

#include <stdint.h>

#include "support/error.h"

/* The campaign id stored in dir (0 when none is stored: fresh, or an older worker). */
int xq_spool_campaign_load(const char *dir, uint64_t *id, xq_errbuf_t *eb);
/* Stores id (non-zero) in dir. */
int xq_spool_campaign_save(const char *dir, uint64_t id, xq_errbuf_t *eb);

#endif
