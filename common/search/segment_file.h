/*
 * segment_file.h: reading the coordinator's game segment files, games/seg-NNNNNN.bin.
 * A file is
 *
 *   magic "XQZS\r\n\x1a\n" (8 bytes), version u32 (1), then records
 *   record  = payload length u32, CRC-32 of the payload u32, payload
 *   payload = worker-id length u16, worker id, seq u64, game-record payload
 *
 * all little-endian. This side only reads and never changes a file: the coordinator
 * (coordinator/segments.c) writes them and truncates a torn tail on startup; `xqz games`
 * reads a running campaign's files with it.
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

/* Calls visit for each good record of one file, in order. *good_end is the offset after
 * the last good record; *torn is set when the scan stopped before the end of the file: at
 * a short, CRC-failing or badly framed record (a torn tail, or damage earlier in the
 * file) or a short header. 0, or a negative error for a file that cannot be opened or is
 * not a segment file. */
int xq_seg_scan_file(const char *path, xq_seg_visit_fn visit, void *user, uint64_t *good_end,
                     int *torn, xq_errbuf_t *eb);

#endif
