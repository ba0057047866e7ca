/*
 * segments.c: append-only, CRC-framed game segment files (see segments.h).
 */
#define _DEFAULT_SOURCE
#include "segments.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "search/game_record.h"
#include "support/crc32.h"
#include "support/le.h"
#include "support/log.h"

int xqc_seg_open(xqc_segments_t *s, const char *dir, uint64_t roll_bytes,
                 xq_seg_visit_fn visit, void *user, xq_errbuf_t *eb) {
  memset(s, 0, sizeof *s);
  snprintf(s->dir, sizeof s->dir, "%s", dir);
  s->roll_bytes = roll_bytes;
  int *idx = NULL, n = 0;
  int rc = xq_seg_list(dir, &idx, &n, eb);
  if (rc < 0) return rc;
  for (int i = 0; i < n && rc == 0; i++) {
    char path[600];
    xq_seg_path(path, sizeof path, dir, idx[i]);
    uint64_t good = 0;
    int torn = 0;
    rc = xq_seg_scan_file(path, visit, user, &good, &torn, eb);
    if (rc < 0) break;
    if (torn) {
      if (i != n - 1) {
        /* Only the last file can be torn by a crash; damage elsewhere is reported. */
        XQ_LOGE("segments", "damaged record in the middle of the history; later records of"
                " this file skipped file=%s offset=%llu", path, (unsigned long long)good);
      } else {
        XQ_LOGW("segments", "torn last record dropped file=%s offset=%llu", path,
                (unsigned long long)good);
        if (truncate(path, (off_t)good) != 0)
          rc = xq_err_set(eb, XQ_EIO, "%s: cannot truncate torn tail", path);
      }
    }
    s->index = idx[i];
    s->size = good;
  }
  free(idx);
  if (rc < 0) return rc;
  if (n) {
    /* Continue the last file, or start the next one when it is full. */
    char path[600];
    xq_seg_path(path, sizeof path, dir, s->index);
    if (s->size < XQ_SEG_HEADER_SIZE) {
      s->size = 0; /* header torn by a crash: the file is started again (no records) */
    } else if (s->size >= s->roll_bytes) {
      s->index++;
      s->size = 0;
    } else {
      s->f = fopen(path, "ab");
      if (!s->f) return xq_err_set(eb, XQ_EIO, "%s: cannot open for append", path);
    }
  } else {
    s->index = 1;
  }
  return 0;
}

static int fsync_dir(const char *dir) {
  int fd = open(dir, O_RDONLY);
  if (fd < 0) return XQ_EIO;
  int rc = fsync(fd);
  close(fd);
  return rc == 0 ? 0 : XQ_EIO;
}

static int start_file(xqc_segments_t *s, xq_errbuf_t *eb) {
  char path[600];
  xq_seg_path(path, sizeof path, s->dir, s->index);
  s->f = fopen(path, "wb");
  if (!s->f) return xq_err_set(eb, XQ_EIO, "%s: cannot create", path);
  unsigned char hdr[XQ_SEG_HEADER_SIZE];
  memcpy(hdr, XQ_SEG_MAGIC, 8);
  xq_put_le32(hdr + 8, XQ_SEG_VERSION);
  if (fwrite(hdr, 1, XQ_SEG_HEADER_SIZE, s->f) != XQ_SEG_HEADER_SIZE)
    return xq_err_set(eb, XQ_EIO, "%s: write", path);
  s->size = XQ_SEG_HEADER_SIZE;
  s->dirty = 1;
  if (fsync_dir(s->dir) < 0) return xq_err_set(eb, XQ_EIO, "%s: fsync directory", s->dir);
  return 0;
}

int xqc_seg_append(xqc_segments_t *s, const char *worker_id, uint64_t seq,
                   const unsigned char *rec, size_t len, xq_errbuf_t *eb) {
  size_t idlen = strlen(worker_id);
  if (idlen > 255 || len > XQ_RECORD_MAX_PAYLOAD) return xq_err_set(eb, XQ_ERANGE, "record too large");
  if (s->f && s->size >= s->roll_bytes) {
    int rc = xqc_seg_sync(s, eb);
    if (rc < 0) return rc;
    fclose(s->f);
    s->f = NULL;
    s->index++;
  }
  if (!s->f) {
    int rc = start_file(s, eb);
    if (rc < 0) return rc;
  }
  size_t plen = 2 + idlen + 8 + len;
  unsigned char *p = malloc(8 + plen);
  if (!p) return XQ_ENOMEM;
  unsigned char *q = p + 8;
  q[0] = (unsigned char)idlen;
  q[1] = (unsigned char)(idlen >> 8);
  memcpy(q + 2, worker_id, idlen);
  xq_put_le64(q + 2 + idlen, seq);
  memcpy(q + 10 + idlen, rec, len);
  xq_put_le32(p, (uint32_t)plen);
  xq_put_le32(p + 4, xq_crc32(0, q, plen));
  size_t w = fwrite(p, 1, 8 + plen, s->f);
  free(p);
  if (w != 8 + plen) return xq_err_set(eb, XQ_EIO, "segment write failed");
  s->size += 8 + plen;
  s->dirty = 1;
  return 0;
}

int xqc_seg_sync(xqc_segments_t *s, xq_errbuf_t *eb) {
  if (!s->f || !s->dirty) return 0;
  if (fflush(s->f) != 0 || fsync(fileno(s->f)) != 0)
    return xq_err_set(eb, XQ_EIO, "segment fsync failed");
  s->dirty = 0;
  return 0;
}

void xqc_seg_close(xqc_segments_t *s) {
  if (s->f) {
    xqc_seg_sync(s, NULL);
    fclose(s->f);
    s->f = NULL;
  }
}
