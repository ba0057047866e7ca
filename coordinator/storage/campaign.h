/*
 * campaign.h: the campaign directory: campaign.ini, campaign.db, nets/, games/,
 * promotions.log, anchors.log. xqc_campaign_prepare creates what is missing (writing campaign.ini with
 * the defaults and net 1 with the configured size) or resumes from what is there.
 */
#ifndef XQC_CAMPAIGN_H
#define XQC_CAMPAIGN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "campaign_db.h"
#include "config.h"
#include "support/error.h"

/* Path of net id's file: DIR/nets/<id as 16 hex digits>.xqzn */
void xqc_net_path(char *out, size_t n, const char *dir, uint64_t id);
/* Makes DIR and DIR/campaign.ini (defaults) when absent. */
int xqc_campaign_init_dir(const char *dir, xq_errbuf_t *eb);
/* Records in dir/campaign.ini the endpoints the coordinator listens on (router, pub,
 * http), when the command line gave others: a client reading the campaign's file
 * (xqz status --campaign DIR) then finds this coordinator, and the next start without the
 * options listens on the same ones. Failure is logged, not fatal. */
void xqc_campaign_record_endpoints(const char *dir, const xqc_config_t *cfg);
/* Refuses to start (XQ_EIO, naming the file, the cause and the fix) on a campaign this
 * process cannot write: the directory, games/, nets/, campaign.db and its -wal/-shm,
 * promotions.log and anchors.log; and campaign.ini when ini_must_change (the command line
 * gives endpoints it must record). Else the coordinator would listen and fail each write. */
int xqc_campaign_check_writable(const char *dir, bool ini_must_change, xq_errbuf_t *eb);
/* The settings in force at the last start, in the campaign directory (campaign.ini form). */
#define XQC_CAMPAIGN_LAST_START "last-start.ini"
/* Logs (WARN) each setting of now that differs from the last start's (XQC_CAMPAIGN_LAST_START),
 * with its source: campaign.ini when file (campaign.ini alone) holds it, else the command
 * line; then records now's. A restart with other options no longer changes them silently.
 * Failures are logged, not fatal. */
void xqc_campaign_settings_changes(const char *dir, const xqc_config_t *now,
                                   const xqc_config_t *file);
/* Opens the db (migrating its layout); reads the campaign id, making one when the
 * campaign has none; creates net 1 (recording the id) when there is no best net yet. */
int xqc_campaign_open(const char *dir, const xqc_config_t *cfg, xqc_db_t **db,
                      uint64_t *campaign_id, uint64_t *best, double *best_elo,
                      int64_t *promotions, xq_errbuf_t *eb);
/* The device and inode of dir/campaign.db: 0, or XQ_EIO when there is no such file. */
int xqc_campaign_db_id(const char *dir, uint64_t *dev, uint64_t *ino);
/* Appends one line to DIR/name (promotions.log, anchors.log) and fsyncs it, through
 * xqc_seg_io (segments.h). The line is whole or absent: a short write (a full disk) is
 * cut off again, and a torn tail from before is ended first; XQ_EIO when not written. */
int xqc_campaign_log_line(const char *dir, const char *name, const char *line,
                          xq_errbuf_t *eb);

#endif
