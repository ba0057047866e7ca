/*
 * segments.h: append-only game segment files games/seg-NNNNNN.bin (the format and the
 * read-only scanner are in common/search/segment_file.h). Appends are buffered by stdio
 * and made durable by xqc_seg_sync (fflush + fsync), which the coordinator calls on a
 * timer before acknowledging. A new file is started when the current one passes the
 * roll-over size. On startup xqc_seg_open reads every record of every file in order; a
 * torn tail (a short or CRC-failing last record of the last file) is truncated away, and
 * damage anywhere else is logged as an error (that file's later records are skipped).
 */
#ifndef XQC_SEGMENTS_H
#define XQC_SEGMENTS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "search/segment_file.h"
#include "support/error.h"

typedef struct {
  char dir[512];       /* games/ directory */
  FILE *f;             /* current file, NULL until the first append */
  int index;           /* number of the current file */
  uint64_t size;       /* bytes in the current file */
  uint64_t roll_bytes;
  int dirty;           /* appended since the last sync */
} xqc_segments_t;

/* Scans dir's segments in order (visit may be NULL), truncating a torn tail of the last
 * file, then readies s for appending. */
int xqc_seg_open(xqc_segments_t *s, const char *dir, uint64_t roll_bytes,
                 xq_seg_visit_fn visit, void *user, xq_errbuf_t *eb);
int xqc_seg_append(xqc_segments_t *s, const char *worker_id, uint64_t seq,
                   const unsigned char *rec, size_t len, xq_errbuf_t *eb);
/* fflush + fsync when dirty. */
int xqc_seg_sync(xqc_segments_t *s, xq_errbuf_t *eb);
void xqc_seg_close(xqc_segments_t *s);

#endif
