/*
 * segments.h: append-only game segment files games/seg-NNNNNN.bin (the format and the
 * read-only scanner are in common/search/segment_file.h).
 *
 * Writing. Each record goes to the current file with write(2) (no stdio buffer that could
 * hide a short write). A failed or short write rolls the file back to its last good size
 * with ftruncate, as Valkey's AOF does; if even that fails, the file is sealed (never
 * written again) and the next record starts a new one. The records written since the last
 * good fsync are also kept in memory (`pend`): they are the ones whose acks wait. A failed
 * fsync is never retried on the same file (after one, the kernel may have dropped the dirty
 * pages and a second fsync can succeed without them: PostgreSQL's "fsyncgate"): the file is
 * sealed, the pending records are written again from memory into a new file and that one
 * is fsynced. If that fsync fails too, the writer gives up for good (xqc_seg_failed) and the
 * coordinator stops; nothing unacknowledged was lost, since workers keep their games.
 * Because a sealed file may hold copies of rewritten records, readers drop repeated
 * (worker id, seq) pairs. A new file is started when the current one passes the roll-over
 * size (the old one fsynced first).
 *
 * Recovery (xqc_seg_open). Every record of every file is read in order. Bad bytes at the
 * end of the newest file are a record torn by a crash and are truncated away. Any other
 * run of bad bytes (damage in the middle, or at the end of an older file) is copied to
 * QUARANTINE/seg-NNNNNN-at-OFFSET.bad and cut out of its file, keeping every valid record
 * around it.
 */
#ifndef XQC_SEGMENTS_H
#define XQC_SEGMENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "records/segment_file.h"
#include "support/error.h"

/* The system calls of the writer, and of the campaign's log lines (campaign.h). The real
 * ones by default; a test build of the coordinator (tests/fault/seg_fault_io.c) and the
 * unit tests replace them to make them fail. */
typedef struct {
  ssize_t (*write)(int fd, const void *buf, size_t n);
  int (*fsync)(int fd);
  int (*ftruncate)(int fd, off_t len);
} xqc_seg_io_t;
extern xqc_seg_io_t xqc_seg_io;

typedef struct {
  char dir[512];            /* games/ directory */
  char quarantine[512];     /* where damaged bytes go */
  int fd;                   /* current file, -1 until the first append */
  int index;                /* number of the current (or next) file */
  uint64_t size;            /* good bytes in the current file */
  uint64_t synced;          /* of them, covered by a good fsync */
  uint64_t roll_bytes;
  unsigned char *pend;      /* (pend_len) records written since the last good fsync */
  size_t pend_len, pend_cap;
  uint64_t pend_records;
  bool rewrite;             /* pend must go into a new file before anything else */
  bool failed;              /* a rewrite could not be made durable: nothing more is trusted */
  /* Counts for the status and the log. */
  uint64_t write_errors, fsync_errors;
  char error[200];          /* the last failure ("" after a success) */
  uint64_t repaired_regions, repaired_bytes, torn_bytes; /* found by this start's recovery */
  uint64_t repeated_records;  /* copies of a (worker id, seq) already read (ingest.c) */
  uint64_t quarantine_files, quarantine_bytes;          /* QUARANTINE/ as a whole */
  /* Storage trouble as ingest.c tracks it: since when games cannot be stored (0: they can),
   * when it was last logged, and how many games were not stored since. */
  uint64_t blocked_since_ms, blocked_logged_ms, blocked_games;
} xqc_segments_t;

/* Scans dir's segments in order (visit may be NULL), repairing them as described above
 * (damaged bytes go into the directory `quarantine`, created when needed), then readies s
 * for appending. */
int xqc_seg_open(xqc_segments_t *s, const char *dir, const char *quarantine,
                 uint64_t roll_bytes, xq_seg_visit_fn visit, void *user, xq_errbuf_t *eb);
/* Writes one record. 0 once its bytes are written in full (not yet durable); else
 * XQ_ENOSPC (the disk is full) or XQ_EIO, with the file rolled back (or sealed) so that no
 * part of the record is left in it. */
int xqc_seg_append(xqc_segments_t *s, const char *worker_id, uint64_t seq,
                   const unsigned char *rec, size_t len, xq_errbuf_t *eb);
/* Makes every record appended so far durable (fsync, or the rewrite of the pending records
 * after a failed one). 0 when they all are; XQ_ENOSPC or XQ_EIO when not yet (tried again
 * at the next call); XQ_EIO with xqc_seg_failed true when they never will be. */
int xqc_seg_sync(xqc_segments_t *s, xq_errbuf_t *eb);
/* true after a rewrite's fsync failed: the coordinator must stop. */
bool xqc_seg_failed(const xqc_segments_t *s);
/* true when records are written but not yet durable. */
bool xqc_seg_dirty(const xqc_segments_t *s);
/* Syncs (unless failed) and closes. */
void xqc_seg_close(xqc_segments_t *s);

#endif
