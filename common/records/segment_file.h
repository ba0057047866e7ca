/*
 * segment_file.h: reading the coordinator's game segment files, games/seg-NNNNNN.bin.
 * A file is
 *
 *   magic "XQZS\r\n\x1a\n" (8 bytes), version u32 (1), then records
 *   record  = payload length u32, CRC-32 of the payload u32, payload
 *   payload = worker-id length u16, worker id, seq u64, game-record payload
 *
 * all little-endian. There is no marker between records: after damage the reader finds the
 * next record by trying each offset in turn (length in range, CRC), and a false match has a
 * chance of 2^-32 per offset tried. This side only reads and never changes a file: the
 * coordinator (coordinator/storage/segments.c) writes them and repairs them on startup (a torn
 * tail truncated, damage moved to quarantine); `xqz games` reads a running campaign's files
 * with it.
 */
#ifndef XQ_SEGMENT_FILE_H
#define XQ_SEGMENT_FILE_H

#include <stddef.h>
#include <stdint.h>

#include "support/error.h"

#define XQ_SEG_MAGIC "XQZS\r\n\x1a\n"
#define XQ_SEG_VERSION 1
#define XQ_SEG_HEADER_SIZE 12

/* Called for each stored record; return non-zero to stop the scan. */
typedef int (*xq_seg_visit_fn)(void *user, const char *worker_id, uint64_t seq,
                               const unsigned char *rec, size_t len);

/* dir/seg-NNNNNN.bin for number index. */
void xq_seg_path(char *out, size_t n, const char *dir, int index);

/* The number of a file named seg-NNNNNN.bin (exactly six digits), else -1: a backup
 * copy such as seg-000001.bin~ or seg-01.bin is not segment 1. */
int xq_seg_number(const char *name);

/* The numbers of dir's segment files (seg-, six digits, .bin), ascending, in a malloc'd
 * array (*idx, NULL when there are none) the caller frees. 0, XQ_EIO (no such
 * directory) or XQ_ENOMEM. */
int xq_seg_list(const char *dir, int **idx, int *n, xq_errbuf_t *eb);

/* What one scan of a file found. A record is valid when its length is in range, the file
 * holds all of it, its CRC matches and its worker id fits in it. Bad bytes followed by a
 * valid record are damage in the middle (a flipped byte, a bad sector): the scan resyncs on
 * the next offset where a valid record starts and goes on. Bad bytes with no valid record
 * after them are the tail (a record torn by a crash, or damage at the very end). */
typedef struct {
  uint64_t size;     /* bytes in the file when the scan began */
  uint64_t records;  /* valid records */
  uint64_t end;      /* offset after the last valid record (the header's end when none) */
  uint64_t tail;     /* bytes from `end` to the end of the file (0: nothing torn) */
  uint64_t damaged;  /* bad bytes before `end` (valid records follow them) */
  uint64_t regions;  /* runs of such bytes */
} xq_seg_scan_t;

/* Called for each run of bad bytes [offset, offset + len) that valid records follow. */
typedef void (*xq_seg_damage_fn)(void *user, uint64_t offset, uint64_t len);

/* Calls visit for each valid record of one file in order (a non-zero return stops the
 * scan, and the bytes not read count as the tail) and damage (may be NULL) for each damaged
 * run, then fills *st. A file shorter than its header counts as empty (its bytes as the
 * tail). 0, or a negative error for a file
 * that cannot be read or is not a segment file (magic/version). */
int xq_seg_scan(const char *path, xq_seg_visit_fn visit, xq_seg_damage_fn damage, void *user,
                xq_seg_scan_t *st, xq_errbuf_t *eb);

/* Calls visit for each valid record of every segment file of dir, in file order, skipping
 * damaged runs; a non-zero return of visit ends the walk and is returned. dir is a campaign
 * directory (its games/ is read) or a directory of segment files itself. games (may be
 * NULL, n bytes) gets the directory read. 0, visit's non-zero return, XQ_EIO when neither
 * dir nor dir/games holds a segment file (eb names both), or a file's scan error. */
int xq_seg_scan_dir(const char *dir, xq_seg_visit_fn visit, void *user, char *games, size_t n,
                    xq_errbuf_t *eb);

/* Damaged bytes cut out of segments are kept in a campaign's quarantine directory, one file
 * per run: QDIR/seg-NNNNNN-at-OFFSET.bad (OFFSET: where the run was in that segment, 12
 * digits), holding the bytes as they were. */
void xq_seg_quarantine_path(char *out, size_t n, const char *qdir, int index, uint64_t offset);
/* The number of such files in qdir and their bytes (0 and 0 when qdir does not exist). */
void xq_seg_quarantine_count(const char *qdir, uint64_t *files, uint64_t *bytes);

#endif
