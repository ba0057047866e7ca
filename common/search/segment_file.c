/*
 * segment_file.c: read-only scanning of game segment files (see segment_file.h).
 */
#define _DEFAULT_SOURCE
#include "search/segment_file.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "search/game_record.h"
#include "support/crc32.h"
#include "support/le.h"

/* Worker id, seq and a game record: nothing larger is ever written. */
#define MAX_PAYLOAD (XQ_RECORD_MAX_PAYLOAD + 512u)

void xq_seg_path(char *out, size_t n, const char *dir, int index) {
  snprintf(out, n, "%s/seg-%06d.bin", dir, index);
}

int xq_seg_number(const char *name) {
  if (strncmp(name, "seg-", 4) != 0 || strcmp(name + 10, ".bin") != 0 || strlen(name) != 14)
    return -1;
  int k = 0;
  for (int i = 4; i < 10; i++) {
    if (name[i] < '0' || name[i] > '9') return -1;
    k = k * 10 + (name[i] - '0');
  }
  return k;
}

static int cmp_int(const void *a, const void *b) {
  int x = *(const int *)a, y = *(const int *)b;
  return (x > y) - (x < y);
}

int xq_seg_list(const char *dir, int **idx, int *n, xq_errbuf_t *eb) {
  *idx = NULL;
  *n = 0;
  DIR *d = opendir(dir);
  if (!d) return xq_err_set(eb, XQ_EIO, "%s: cannot open directory", dir);
  int *v = NULL, cnt = 0, cap = 0;
  struct dirent *e;
  while ((e = readdir(d))) {
    int k = xq_seg_number(e->d_name);
    if (k >= 0) {
      if (cnt == cap) {
        cap = cap ? cap * 2 : 16;
        int *nv = realloc(v, (size_t)cap * sizeof *nv);
        if (!nv) {
          free(v);
          closedir(d);
          return XQ_ENOMEM;
        }
        v = nv;
      }
      v[cnt++] = k;
    }
  }
  closedir(d);
  if (cnt) qsort(v, (size_t)cnt, sizeof *v, cmp_int);
  *idx = v;
  *n = cnt;
  return 0;
}

int xq_seg_scan_file(const char *path, xq_seg_visit_fn visit, void *user, uint64_t *good_end,
                     int *torn, xq_errbuf_t *eb) {
  FILE *f = fopen(path, "rb");
  if (!f) return xq_err_set(eb, XQ_EIO, "%s: cannot open", path);
  unsigned char hdr[XQ_SEG_HEADER_SIZE];
  *torn = 0;
  *good_end = 0;
  size_t got = fread(hdr, 1, XQ_SEG_HEADER_SIZE, f);
  if (got < XQ_SEG_HEADER_SIZE) { /* a file created but never completed: treat as empty */
    fclose(f);
    *torn = got > 0;
    return 0;
  }
  if (memcmp(hdr, XQ_SEG_MAGIC, 8) != 0 || xq_get_le32(hdr + 8) != XQ_SEG_VERSION) {
    fclose(f);
    return xq_err_set(eb, XQ_EFORMAT, "%s: not a segment file (magic/version)", path);
  }
  uint64_t pos = XQ_SEG_HEADER_SIZE;
  *good_end = pos;
  unsigned char *buf = NULL;
  int rc = 0;
  for (;;) {
    unsigned char fr[8];
    size_t n = fread(fr, 1, 8, f);
    if (n == 0) break;
    if (n < 8) { *torn = 1; break; }
    uint32_t len = xq_get_le32(fr), crc = xq_get_le32(fr + 4);
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
    uint64_t seq = xq_get_le64(buf + 2 + idlen);
    pos += 8 + len;
    *good_end = pos;
    if (visit && visit(user, wid, seq, buf + 10 + idlen, len - 10 - idlen)) break;
  }
  free(buf);
  fclose(f);
  return rc;
}
