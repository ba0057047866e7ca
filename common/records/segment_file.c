/*
 * segment_file.c: read-only scanning of game segment files (see segment_file.h): a window
 * of the file in memory (a megabyte, or one record when larger), records checked in place,
 * and a byte-by-byte resync after a bad one.
 */
#define _DEFAULT_SOURCE
#include "records/segment_file.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "records/game_record.h"
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

/* xq_seg_scan_dir's visit: remembers a non-zero return, which ends the whole walk. */
typedef struct {
  xq_seg_visit_fn visit;
  void *user;
  int stop;
} dir_walk_t;

static int dir_visit(void *user, const char *worker_id, uint64_t seq, const unsigned char *rec,
                     size_t len) {
  dir_walk_t *w = user;
  w->stop = w->visit(w->user, worker_id, seq, rec, len);
  return w->stop;
}

int xq_seg_scan_dir(const char *dir, xq_seg_visit_fn visit, void *user, char *games, size_t n,
                    xq_errbuf_t *eb) {
  char where[4096];
  int *idx = NULL, nseg = 0;
  snprintf(where, sizeof where, "%s/games", dir);
  if (xq_seg_list(where, &idx, &nseg, eb) != 0 || nseg == 0) {
    free(idx);
    idx = NULL;
    snprintf(where, sizeof where, "%s", dir);
    if (xq_seg_list(where, &idx, &nseg, eb) != 0 || nseg == 0) {
      free(idx);
      return xq_err_set(eb, XQ_EIO, "no segment files (seg-NNNNNN.bin) in %s or in %s/games;"
                        " give a campaign directory", dir, dir);
    }
  }
  if (eb) eb->msg[0] = 0; /* the first listing's failure is no error when the second found files */
  if (games) snprintf(games, n, "%s", where);
  dir_walk_t w = {visit, user, 0};
  int rc = 0;
  for (int i = 0; i < nseg && rc == 0 && w.stop == 0; i++) {
    char path[4200];
    xq_seg_path(path, sizeof path, where, idx[i]);
    xq_seg_scan_t st;
    rc = xq_seg_scan(path, dir_visit, NULL, &w, &st, eb);
  }
  free(idx);
  return rc ? rc : w.stop;
}

/* A window on the file: bytes [off, off + len) of it are in buf. */
typedef struct {
  int fd;
  uint64_t size, off;
  unsigned char *buf;
  size_t len, cap;
} reader_t;

#define READ_CHUNK (1u << 20)

/* Points *p at bytes [pos, pos + n) of the file. 1; 0 when the file ends first; XQ_EIO or
 * XQ_ENOMEM. A pointer from an earlier call is invalid after this one. */
static int view(reader_t *r, uint64_t pos, size_t n, const unsigned char **p) {
  if (pos > r->size || n > r->size - pos) return 0;
  if (pos >= r->off && pos + n <= r->off + r->len) {
    *p = r->buf + (pos - r->off);
    return 1;
  }
  size_t want = n > READ_CHUNK ? n : READ_CHUNK;
  if (want > r->size - pos) want = (size_t)(r->size - pos);
  if (want > r->cap) {
    unsigned char *nb = realloc(r->buf, want);
    if (!nb) return XQ_ENOMEM;
    r->buf = nb;
    r->cap = want;
  }
  size_t got = 0;
  while (got < want) {
    ssize_t k = pread(r->fd, r->buf + got, want - got, (off_t)(pos + got));
    if (k < 0 && errno == EINTR) continue;
    if (k < 0) return XQ_EIO;
    if (k == 0) break; /* the file shrank while being read */
    got += (size_t)k;
  }
  r->off = pos;
  r->len = got;
  if (got < n) return 0;
  *p = r->buf;
  return 1;
}

/* A valid record at pos: 1 with its payload in *payload (*len bytes); 0 when there is
 * none; XQ_EIO or XQ_ENOMEM. */
static int record_at(reader_t *r, uint64_t pos, const unsigned char **payload, uint32_t *len) {
  const unsigned char *fr;
  int rc = view(r, pos, 8, &fr);
  if (rc <= 0) return rc;
  uint32_t n = xq_get_le32(fr), crc = xq_get_le32(fr + 4);
  if (n < 10 || n > MAX_PAYLOAD) return 0;
  const unsigned char *p;
  if ((rc = view(r, pos + 8, n, &p)) <= 0) return rc;
  size_t idlen = (size_t)p[0] | (size_t)p[1] << 8;
  if (idlen > 255 || 2 + idlen + 8 > n || xq_crc32(0, p, n) != crc) return 0;
  *payload = p;
  *len = n;
  return 1;
}

int xq_seg_scan(const char *path, xq_seg_visit_fn visit, xq_seg_damage_fn damage, void *user,
                xq_seg_scan_t *st, xq_errbuf_t *eb) {
  memset(st, 0, sizeof *st);
  reader_t r = {.fd = open(path, O_RDONLY | O_CLOEXEC)};
  if (r.fd < 0) return xq_err_set(eb, XQ_EIO, "%s: cannot open: %s", path, strerror(errno));
  struct stat sb;
  if (fstat(r.fd, &sb) != 0) {
    close(r.fd);
    return xq_err_set(eb, XQ_EIO, "%s: cannot stat: %s", path, strerror(errno));
  }
  r.size = st->size = (uint64_t)sb.st_size;
  const unsigned char *hdr;
  int rc = view(&r, 0, XQ_SEG_HEADER_SIZE, &hdr);
  if (rc == 0) { /* a file created but never completed: treat as empty */
    st->tail = st->size;
  } else if (rc > 0 && memcmp(hdr, XQ_SEG_MAGIC, 8) != 0) {
    rc = xq_err_set(eb, XQ_EFORMAT, "%s: not a segment file (its first 8 bytes are not the"
                    " segment magic); move it out of games/", path);
  } else if (rc > 0 && xq_get_le32(hdr + 8) != XQ_SEG_VERSION) {
    rc = xq_err_set(eb, XQ_EFORMAT, "%s: segment format version %u, this build reads version"
                    " %d: run the xqzero that wrote it, or move the file out of games/", path,
                    (unsigned)xq_get_le32(hdr + 8), XQ_SEG_VERSION);
  } else if (rc > 0) {
    rc = 0;
    uint64_t pos = XQ_SEG_HEADER_SIZE;
    st->end = pos;
    while (pos < r.size) {
      const unsigned char *p;
      uint32_t len;
      int got = record_at(&r, pos, &p, &len);
      if (got < 0) {
        rc = xq_err_set(eb, got, "%s: read failed at offset %llu", path, (unsigned long long)pos);
        break;
      }
      if (got == 0) { /* resync: the next offset where a valid record starts */
        uint64_t q = pos + 1;
        while (q < r.size && (got = record_at(&r, q, &p, &len)) == 0) q++;
        if (got < 0) {
          rc = xq_err_set(eb, got, "%s: read failed at offset %llu", path, (unsigned long long)q);
          break;
        }
        if (q >= r.size) break; /* nothing valid follows: the tail */
        st->damaged += q - pos;
        st->regions++;
        if (damage) damage(user, pos, q - pos);
        pos = q;
      }
      size_t idlen = (size_t)p[0] | (size_t)p[1] << 8;
      char wid[256];
      memcpy(wid, p + 2, idlen);
      wid[idlen] = '\0';
      uint64_t seq = xq_get_le64(p + 2 + idlen);
      pos += 8 + (uint64_t)len;
      st->end = pos;
      st->records++;
      if (visit && visit(user, wid, seq, p + 10 + idlen, len - 10 - idlen)) break;
    }
    st->tail = r.size - st->end;
  }
  free(r.buf);
  close(r.fd);
  return rc;
}

void xq_seg_quarantine_path(char *out, size_t n, const char *qdir, int index, uint64_t offset) {
  snprintf(out, n, "%s/seg-%06d-at-%012llu.bad", qdir, index, (unsigned long long)offset);
}

void xq_seg_quarantine_count(const char *qdir, uint64_t *files, uint64_t *bytes) {
  *files = *bytes = 0;
  DIR *d = opendir(qdir);
  if (!d) return;
  struct dirent *e;
  while ((e = readdir(d))) {
    size_t n = strlen(e->d_name);
    if (n < 5 || strcmp(e->d_name + n - 4, ".bad") != 0) continue;
    char path[4400];
    struct stat st;
    snprintf(path, sizeof path, "%s/%s", qdir, e->d_name);
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) continue;
    (*files)++;
    *bytes += (uint64_t)st.st_size;
  }
  closedir(d);
}
