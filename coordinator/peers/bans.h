/*
 * bans.h: the operator's bans (AdminRequest ACTION_BAN / ACTION_UNBAN, `xqz ban`). A ban
 * names a target, a worker id or a CURVE public key (Z85); a sender matches when its
 * worker id or its key is banned. The list lives in memory and in the campaign database
 * (table bans), reloaded at start, so a ban survives restarts.
 *
 * Ownership: the caller owns the struct; xqc_bans_close frees the list.
 */
#ifndef XQC_BANS_H
#define XQC_BANS_H

#include <stdbool.h>
#include <stdint.h>

#include "storage/campaign_db.h"
#include "support/error.h"

typedef struct {
  char target[128];
  char reason[200];
  int64_t time; /* unix seconds */
} xqc_ban_t;

typedef struct {
  xqc_ban_t *v; /* (n) */
  int n, cap;
} xqc_bans_t;

int xqc_bans_load(xqc_bans_t *b, xqc_db_t *db, xq_errbuf_t *eb);
void xqc_bans_close(xqc_bans_t *b);
/* A usable target: 1..127 printable ASCII characters, no spaces. */
bool xqc_bans_target_valid(const char *target);
/* true when worker_id or key (either may be NULL or empty) is banned. */
bool xqc_bans_match(const xqc_bans_t *b, const char *worker_id, const char *key);
/* Adds (or updates the reason of) a ban and stores it. 0, XQ_EINVAL, XQ_ENOMEM or XQ_EIO. */
int xqc_bans_add(xqc_bans_t *b, xqc_db_t *db, const char *target, const char *reason,
                 xq_errbuf_t *eb);
/* Lifts a ban: 1 lifted, 0 there was none, or XQ_EIO. */
int xqc_bans_remove(xqc_bans_t *b, xqc_db_t *db, const char *target, xq_errbuf_t *eb);

#endif
