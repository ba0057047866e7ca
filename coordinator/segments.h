/*
 * segments.h: append-only game segment files games/seg-NNNNNN.bin. A file is
 *
 *   magic "XQZS\r\n\x1a\n" (8 bytes), version u32 (1), then records
 *   record  = payload length u32, CRC-32 of the payload u32, payload
 *   payload = worker-id length u16, worker id, seq u64, game-record payload
 *
 * all little-endian. Appends are buffered by stdio and made durable by xqc_seg_sync
 * (fflush + fsync), which the coordinator calls on a timer before acknowledging. A new
 * file is started when the current one passes the roll-over size. On startup
 * xqc_seg_scan reads every record of every file in order; a torn tail (a short or
 * CRC-failing last record of the last file) is truncated away, nothing else is dropped.
 */
#ifndef XQC_SEGMENTS_H
#define XQC_SEGMENTS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "support/error.h"

#define XQC_SEG_MAGIC "XQZS\r\n\x1a\n"
#define XQC_SEG_VERSION 1

typedef struct {
  char dir[512];       /* games/ directory */
  FILE *f;             /* current file, NULL until the first append */
  int index;           /* number of the current file */
  uint64_t size;       /* bytes in the current file */
  uint64_t roll_bytes;
  int dirty;           /* appended since the last sync */
} xqc_segments_t;

/* Called for each stored record; return non-zero to stop. */
typedef int (*xqc_seg_visit_fn)(void *user, const char *worker_id, uint64_t seq,
                                const unsigned char *rec, size_t len);

/* Scans dir's segments in order (visit may be NULL), truncating a torn tail of the last
 * file, then readies s for appending. */
int xqc_seg_open(xqc_segments_t *s, const char *dir, uint64_t roll_bytes,
                 xqc_seg_visit_fn visit, void *user, xq_errbuf_t *eb);
int xqc_seg_append(xqc_segments_t *s, const char *worker_id, uint64_t seq,
                   const unsigned char *rec, size_t len, xq_errbuf_t *eb);
/* fflush + fsync when dirty. */
int xqc_seg_sync(xqc_segments_t *s, xq_errbuf_t *eb);
void xqc_seg_close(xqc_segments_t *s);

#endif
