/*
 * segments.c: append-only, CRC-framed game segment files (see segments.h).
 */
#define _DEFAULT_SOURCE
#include "segments.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "search/game_record.h"
#include "support/crc32.h"
#include "support/le.h"
#include "support/log.h"

#define HDR_SIZE 12
#define MAX_PAYLOAD (XQ_RECORD_MAX_PAYLOAD + 512u)

static void seg_path(char *out, size_t n, const char *dir, int index) {
  snprintf(out, n, "%s/seg-%06d.bin", dir, index);
}

static uint32_t rd32(const unsigned char *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static void wr32(unsigned char *p, uint32_t v) {
  for (int i = 0; i < 4; i++) p[i] = (unsigned char)(v >> (8 * i));
}

/* Scans one file; returns the offset after the last good record (for truncation) in
 * *good_end, and 0, or a negative error for a broken header. */
static int scan_file(const char *path, xqc_seg_visit_fn visit, void *user, uint64_t *good_end,
                     int *torn, xq_errbuf_t *eb) {
  FILE *f = fopen(path, "rb");
  if (!f) return xq_err_set(eb, XQ_EIO, "%s: cannot open", path);
  unsigned char hdr[HDR_SIZE];
  *torn = 0;
  *good_end = 0;
  size_t got = fread(hdr, 1, HDR_SIZE, f);
  if (got < HDR_SIZE) { /* a file created but never completed: treat as empty */
    fclose(f);
    *torn = got > 0;
    return 0;
  }
  if (memcmp(hdr, XQC_SEG_MAGIC, 8) != 0 || rd32(hdr + 8) != XQC_SEG_VERSION) {
    fclose(f);
    return xq_err_set(eb, XQ_EFORMAT, "%s: not a segment file (magic/version)", path);
  }
  uint64_t pos = HDR_SIZE;
  *good_end = pos;
  unsigned char *buf = NULL;
  int rc = 0;
  for (;;) {
    unsigned char fr[8];
    size_t n = fread(fr, 1, 8, f);
    if (n == 0) break;
    if (n < 8) { *torn = 1; break; }
    uint32_t len = rd32(fr), crc = rd32(fr + 4);
    if (len < 10 || len > MAX_PAYLOAD) { *torn = 1; break; }
    unsigned char *nb = realloc(buf, len);
    if (!nb) { rc = XQ_ENOMEM; break; }
    buf = nb;
    if (fread(buf, 1, len, f) != len || xq_crc32(0, buf, len) != crc) { *torn = 1; break; }
    size_t idlen = (size_t)buf[0] | (size_t)buf[1] << 8;
    if (2 + idlen + 8 > len || idlen > 255) { *torn = 1; break; }
    char wid[256];
    memcpy(wid, buf + 2, idlen);
    wid[idlen] = '\0';
    uint64_t seq = (uint64_t)rd32(buf + 2 + idlen) | (uint64_t)rd32(buf + 6 + idlen) << 32;
    pos += 8 + len;
    *good_end = pos;
    if (visit && visit(user, wid, seq, buf + 10 + idlen, len - 10 - idlen)) break;
  }
  free(buf);
  fclose(f);
  return rc;
}

static int cmp_int(const void *a, const void *b) {
  int x = *(const int *)a, y = *(const int *)b;
  return (x > y) - (x < y);
}

int xqc_seg_open(xqc_segments_t *s, const char *dir, uint64_t roll_bytes,
                 xqc_seg_visit_fn visit, void *user, xq_errbuf_t *eb) {
  memset(s, 0, sizeof *s);
  snprintf(s->dir, sizeof s->dir, "%s", dir);
  s->roll_bytes = roll_bytes;
  DIR *d = opendir(dir);
  if (!d) return xq_err_set(eb, XQ_EIO, "%s: cannot open directory", dir);
  int *idx = NULL, n = 0, cap = 0;
  struct dirent *e;
  while ((e = readdir(d))) {
    int k;
    char tail;
    if (sscanf(e->d_name, "seg-%d.bi%c", &k, &tail) == 2 && tail == 'n' &&
        strlen(e->d_name) == 14) {
      if (n == cap) {
        cap = cap ? cap * 2 : 16;
        int *ni = realloc(idx, (size_t)cap * sizeof *ni);
        if (!ni) { free(idx); closedir(d); return XQ_ENOMEM; }
        idx = ni;
      }
      idx[n++] = k;
    }
  }
  closedir(d);
  if (n) qsort(idx, (size_t)n, sizeof *idx, cmp_int);
  int rc = 0;
  for (int i = 0; i < n && rc == 0; i++) {
    char path[600];
    seg_path(path, sizeof path, dir, idx[i]);
    uint64_t good = 0;
    int torn = 0;
    rc = scan_file(path, visit, user, &good, &torn, eb);
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
    seg_path(path, sizeof path, dir, s->index);
    if (s->size < HDR_SIZE) {
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
  seg_path(path, sizeof path, s->dir, s->index);
  s->f = fopen(path, "wb");
  if (!s->f) return xq_err_set(eb, XQ_EIO, "%s: cannot create", path);
  unsigned char hdr[HDR_SIZE];
  memcpy(hdr, XQC_SEG_MAGIC, 8);
  wr32(hdr + 8, XQC_SEG_VERSION);
  if (fwrite(hdr, 1, HDR_SIZE, s->f) != HDR_SIZE) return xq_err_set(eb, XQ_EIO, "%s: write", path);
  s->size = HDR_SIZE;
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
  wr32(q + 2 + idlen, (uint32_t)seq);
  wr32(q + 6 + idlen, (uint32_t)(seq >> 32));
  memcpy(q + 10 + idlen, rec, len);
  wr32(p, (uint32_t)plen);
  wr32(p + 4, xq_crc32(0, q, plen));
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
