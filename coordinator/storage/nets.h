/*
 * nets.h: the net files of the campaign (nets/<id>.xqzn) as the coordinator serves them: a
 * small cache of verified nets (XQC_NETS_CACHE files, least recently used out), so that the
 * chunks of downloads of a few nets at once (the candidate and the best net of a gating
 * match, alternating) cost no re-read and no re-checksum.
 *
 * A file enters the cache only when it verifies against the checksums written into it when
 * it was stored (nn_file_verify: header CRC, payload CRC, exact size) and holds the net id
 * it is named for. Before a cached net is served its file is stat'ed: a file changed on
 * disk since (other inode, size or modification time) is read and verified again, and a
 * file gone is no longer served. So the bytes served are always verified ones, a damaged
 * file is noticed when it is next served, and a request costs one stat().
 *
 * A net that cannot be served (XQ_ENOENT-like missing file: XQ_EIO; damaged: the verify
 * error) is the caller's to handle: the NetRequest handler (requests.c) quarantines a
 * damaged file in nets/damaged/ and, for the open match's candidate or the best net, tells
 * promote.c.
 *
 * Ownership: the caller owns the struct (zeroed); xqc_nets_close frees the cached bytes.
 */
#ifndef XQC_NETS_H
#define XQC_NETS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "campaign_db.h"
#include "support/error.h"

#define XQC_NETS_CACHE 4          /* verified nets kept in memory */
#define XQC_NETS_DAMAGED_DIR "damaged" /* nets/damaged/: files that failed verification */

typedef struct {
  uint64_t id;         /* 0: empty slot */
  unsigned char *data; /* (size) the whole verified file */
  size_t size;
  uint32_t crc;        /* CRC-32 of the file, as NetChunk and NetAnnounce carry it */
  dev_t dev;           /* the file as it was verified: a change means read it again */
  ino_t ino;
  off_t fsize;
  int64_t mtime_ns;
  uint64_t used;       /* LRU stamp */
} xqc_net_entry_t;

typedef struct {
  /* The net made current by the last successful xqc_nets_load (points into the cache). */
  uint64_t id;         /* 0 when none */
  const unsigned char *data;
  size_t size;
  uint32_t crc;
  xqc_net_entry_t cache[XQC_NETS_CACHE];
  uint64_t tick;
  uint64_t reads;      /* files read and verified (for tests and the docs' figures) */
} xqc_nets_t;

/* Makes net `id` of campaign `dir` the current one: from the cache when its file is
 * unchanged, else read and verified. On failure (file missing, unreadable, damaged, or
 * holding another net) returns the error with the cause in eb, *damaged set when the file
 * exists but fails verification (damaged may be NULL), and drops id from the cache. */
int xqc_nets_load(xqc_nets_t *n, const char *dir, uint64_t id, xq_errbuf_t *eb);
int xqc_nets_load_ex(xqc_nets_t *n, const char *dir, uint64_t id, bool *damaged,
                     xq_errbuf_t *eb);
void xqc_nets_close(xqc_nets_t *n);

/* Moves nets/<id>.xqzn to nets/damaged/ (so it is never served or trusted again, and kept
 * for inspection). Logged; a failure to move is logged too. */
void xqc_nets_quarantine(const char *dir, uint64_t id, const char *why);

/* The newest promoted net other than `bad` whose file verifies (the promotions table,
 * newest first): its id and Elo. XQ_EIO when there is none. */
int xqc_nets_previous_best(xqc_db_t *db, const char *dir, uint64_t bad, uint64_t *id,
                           double *elo, xq_errbuf_t *eb);
/* Records a fall back from best net `bad` to `prev` (Elo prev_elo): bad's state becomes
 * "damaged", prev gets a promotions row (so it is the best net after a restart too) and
 * promotions.log a line with "fallback":true. Errors are logged. */
void xqc_nets_record_fallback(xqc_db_t *db, const char *dir, uint64_t bad, uint64_t prev,
                              double prev_elo, const char *why);
/* At start: checks the best net's file; a damaged one is quarantined, and a damaged or
 * missing one is replaced by the previous intact best (recorded as above, *best and *elo
 * updated). XQ_EIO with the remedy in eb when no intact best net is left. */
int xqc_nets_check_best(xqc_db_t *db, const char *dir, uint64_t *best, double *elo,
                        xq_errbuf_t *eb);

#endif
