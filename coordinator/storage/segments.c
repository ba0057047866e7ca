/*
 * segments.c: append-only, CRC-framed game segment files: writing with roll-back, the
 * rewrite after a failed fsync, and recovery with quarantine (see segments.h).
 */
#define _DEFAULT_SOURCE
#include "segments.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "records/game_record.h"
#include "support/atomic_file.h"
#include "support/crc32.h"
#include "support/le.h"
#include "support/log.h"
#include "support/mkdir_p.h"

#define COMP "segments"

xqc_seg_io_t xqc_seg_io = {write, fsync, ftruncate};

/* ---- recovery ---- */

typedef struct {
  uint64_t off, len;
} region_t;

/* One file's scan: the caller's visit, and the damaged runs found. */
typedef struct {
  xq_seg_visit_fn visit;
  void *user;
  region_t *v;
  int n, cap;
  bool nomem;
} scan_ctx_t;

static int scan_visit(void *user, const char *worker_id, uint64_t seq,
                      const unsigned char *rec, size_t len) {
  scan_ctx_t *sc = user;
  return sc->visit ? sc->visit(sc->user, worker_id, seq, rec, len) : 0;
}

static void add_region(scan_ctx_t *sc, uint64_t off, uint64_t len) {
  if (sc->n == sc->cap) {
    int ncap = sc->cap ? sc->cap * 2 : 8;
    region_t *nv = realloc(sc->v, (size_t)ncap * sizeof *nv);
    if (!nv) {
      sc->nomem = true;
      return;
    }
    sc->v = nv;
    sc->cap = ncap;
  }
  sc->v[sc->n++] = (region_t){off, len};
}

static void scan_damage(void *user, uint64_t off, uint64_t len) { add_region(user, off, len); }

/* Reads [off, off + len) of fd into a malloc'd buffer. */
static int read_range(int fd, uint64_t off, uint64_t len, unsigned char **out) {
  unsigned char *b = malloc(len ? (size_t)len : 1);
  if (!b) return XQ_ENOMEM;
  uint64_t got = 0;
  while (got < len) {
    ssize_t k = pread(fd, b + got, (size_t)(len - got), (off_t)(off + got));
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) {
      free(b);
      return XQ_EIO;
    }
    got += (uint64_t)k;
  }
  *out = b;
  return 0;
}

/* Writes all of buf with the real write(2). */
static int write_plain(int fd, const unsigned char *buf, size_t n) {
  while (n) {
    ssize_t k = write(fd, buf, n);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return XQ_EIO;
    buf += k;
    n -= (size_t)k;
  }
  return 0;
}

/* Copies each damaged run of file `index` to the quarantine directory (atomically, so a
 * crash half way leaves either no copy or a whole one, and doing it again is harmless). */
static int quarantine_runs(xqc_segments_t *s, int index, int fd, const scan_ctx_t *sc,
                           xq_errbuf_t *eb) {
  int rc = xq_mkdir_p(s->quarantine, eb);
  for (int i = 0; rc == 0 && i < sc->n; i++) {
    char path[700];
    xq_seg_quarantine_path(path, sizeof path, s->quarantine, index, sc->v[i].off);
    unsigned char *b = NULL;
    rc = read_range(fd, sc->v[i].off, sc->v[i].len, &b);
    if (rc < 0) return xq_err_set(eb, rc, "cannot read the damaged bytes for %s", path);
    const void *parts[1] = {b};
    size_t sizes[1] = {(size_t)sc->v[i].len};
    rc = xq_atomic_write(path, parts, sizes, 1, eb);
    free(b);
    if (rc == 0)
      XQ_LOGE(COMP, "damaged bytes in a game segment moved to quarantine; the records around"
              " them are kept (damage inside a file is not a crash: check the disk)"
              " file=%s/seg-%06d.bin offset=%llu bytes=%llu quarantine=%s", s->dir, index,
              (unsigned long long)sc->v[i].off, (unsigned long long)sc->v[i].len, path);
  }
  return rc;
}

/* Rewrites file `index` without its damaged runs (temp file, fsync, rename, fsync of the
 * directory), keeping bytes [0, keep_end) otherwise. */
static int cut_runs(xqc_segments_t *s, int index, const char *path, uint64_t keep_end,
                    const scan_ctx_t *sc, xq_errbuf_t *eb) {
  int in = open(path, O_RDONLY | O_CLOEXEC);
  if (in < 0) return xq_err_set(eb, XQ_EIO, "%s: cannot open: %s", path, strerror(errno));
  int rc = quarantine_runs(s, index, in, sc, eb);
  char tmp[700];
  snprintf(tmp, sizeof tmp, "%s.repair", path);
  int out = rc == 0 ? open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644) : -1;
  if (rc == 0 && out < 0)
    rc = xq_err_set(eb, XQ_EIO, "%s: cannot create: %s", tmp, strerror(errno));
  uint64_t pos = 0;
  for (int i = 0; rc == 0 && i <= sc->n; i++) {
    uint64_t upto = i < sc->n ? sc->v[i].off : keep_end;
    unsigned char *b = NULL;
    if (upto > pos && (rc = read_range(in, pos, upto - pos, &b)) == 0) {
      rc = write_plain(out, b, (size_t)(upto - pos));
      free(b);
    }
    if (rc < 0) rc = xq_err_set(eb, rc, "%s: cannot copy the good records", tmp);
    if (i < sc->n) pos = sc->v[i].off + sc->v[i].len;
  }
  if (rc == 0 && fsync(out) != 0) rc = xq_err_set(eb, XQ_EIO, "%s: fsync failed", tmp);
  if (out >= 0) close(out);
  close(in);
  if (rc == 0 && rename(tmp, path) != 0)
    rc = xq_err_set(eb, XQ_EIO, "%s: cannot replace: %s", path, strerror(errno));
  if (rc == 0 && xq_fsync_dir(s->dir) < 0) rc = xq_err_set(eb, XQ_EIO, "%s: fsync failed", s->dir);
  if (rc < 0) unlink(tmp);
  return rc;
}

/* Scans and repairs one file; *end gets the size it has afterwards. */
static int recover_file(xqc_segments_t *s, int index, bool newest, xq_seg_visit_fn visit,
                        void *user, uint64_t *end, xq_errbuf_t *eb) {
  char path[600];
  xq_seg_path(path, sizeof path, s->dir, index);
  scan_ctx_t sc = {.visit = visit, .user = user};
  xq_seg_scan_t st;
  int rc = xq_seg_scan(path, scan_visit, scan_damage, &sc, &st, eb);
  *end = st.end;
  /* Bad bytes at the end of the newest file are a torn append; anywhere else they are
   * damage, kept in quarantine. */
  if (rc == 0 && st.tail && !newest && st.end >= XQ_SEG_HEADER_SIZE)
    add_region(&sc, st.end, st.tail);
  if (rc == 0 && sc.nomem) rc = XQ_ENOMEM;
  if (rc == 0 && newest && st.tail && st.end >= XQ_SEG_HEADER_SIZE)
    XQ_LOGW(COMP, "torn last record dropped file=%s offset=%llu bytes=%llu", path,
            (unsigned long long)st.end, (unsigned long long)st.tail);
  if (rc == 0 && sc.n) {
    uint64_t keep = newest ? st.end : st.size;
    rc = cut_runs(s, index, path, keep, &sc, eb);
    for (int i = 0; rc == 0 && i < sc.n; i++) {
      s->repaired_regions++;
      s->repaired_bytes += sc.v[i].len;
      keep -= sc.v[i].len;
    }
    *end = keep;
  } else if (rc == 0 && st.tail && st.end >= XQ_SEG_HEADER_SIZE) {
    if (truncate(path, (off_t)st.end) != 0)
      rc = xq_err_set(eb, XQ_EIO, "%s: cannot truncate the torn tail: %s", path, strerror(errno));
  }
  if (rc == 0 && newest) s->torn_bytes += st.tail;
  free(sc.v);
  return rc;
}

int xqc_seg_open(xqc_segments_t *s, const char *dir, const char *quarantine,
                 uint64_t roll_bytes, xq_seg_visit_fn visit, void *user, xq_errbuf_t *eb) {
  memset(s, 0, sizeof *s);
  s->fd = -1;
  snprintf(s->dir, sizeof s->dir, "%s", dir);
  snprintf(s->quarantine, sizeof s->quarantine, "%s", quarantine);
  s->roll_bytes = roll_bytes;
  int *idx = NULL, n = 0;
  int rc = xq_seg_list(dir, &idx, &n, eb);
  if (rc < 0) return rc;
  for (int i = 0; i < n && rc == 0; i++) {
    rc = recover_file(s, idx[i], i == n - 1, visit, user, &s->size, eb);
    s->index = idx[i];
  }
  free(idx);
  xq_seg_quarantine_count(s->quarantine, &s->quarantine_files, &s->quarantine_bytes);
  if (rc < 0) return rc;
  if (n == 0) {
    s->index = 1;
  } else if (s->size < XQ_SEG_HEADER_SIZE) {
    s->size = 0; /* header torn by a crash: the file is started again (no records) */
  } else if (s->size >= s->roll_bytes) {
    s->index++;
    s->size = 0;
  } else {
    /* Continue the last file. Its bytes may still be only in the page cache (a crash of
     * the process, not of the machine): made durable before anything is acknowledged. */
    char path[600];
    xq_seg_path(path, sizeof path, dir, s->index);
    s->fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
    if (s->fd < 0)
      return xq_err_set(eb, XQ_EIO, "%s: cannot open for append: %s", path, strerror(errno));
    if (fsync(s->fd) != 0)
      return xq_err_set(eb, XQ_EIO, "%s: fsync failed: %s (check the disk)", path, strerror(errno));
    s->synced = s->size;
  }
  return 0;
}

/* ---- writing ---- */

/* Records the failure for the status and returns code. */
static int fail(xqc_segments_t *s, xq_errbuf_t *eb, int code, const char *what, int err) {
  snprintf(s->error, sizeof s->error, "%s: %s (seg-%06d.bin)", what, strerror(err), s->index);
  return xq_err_set(eb, code, "%s", s->error);
}

static int io_code(int err) { return err == ENOSPC || err == EDQUOT ? XQ_ENOSPC : XQ_EIO; }

/* Writes all of buf; 0, or -1 with errno set (a short write ends in the error that follows
 * it, or EIO when write returns 0). */
static int write_all(int fd, const unsigned char *buf, size_t n) {
  while (n) {
    ssize_t k = xqc_seg_io.write(fd, buf, n);
    if (k < 0 && errno == EINTR) continue;
    if (k < 0) return -1;
    if (k == 0) {
      errno = EIO;
      return -1;
    }
    buf += k;
    n -= (size_t)k;
  }
  return 0;
}

/* The writer's invariants, checked after every append and sync (Debug and sanitizer
 * builds): no more is synced than written; with a file open and no rewrite due, the
 * pending copies are exactly the bytes written since the last good fsync (or since the
 * header); a failed writer has no file open. */
static void seg_check(const xqc_segments_t *s) {
  assert(s->synced <= s->size);
  assert(s->pend_len <= s->pend_cap || s->pend_len == 0);
  assert((s->pend_len == 0) == (s->pend_records == 0));
  if (s->fd >= 0 && !s->rewrite) {
    uint64_t base = s->synced > XQ_SEG_HEADER_SIZE ? s->synced : XQ_SEG_HEADER_SIZE;
    assert(s->size >= base && s->size - base == s->pend_len);
    (void)base;
  }
  if (s->fd < 0) assert(s->rewrite == (s->pend_len > 0) || s->size == 0 || s->failed);
  (void)s;
}

/* Closes the current file for good: nothing more is written to it, and it is not fsynced
 * (its pending records, if any, are rewritten into the next file). */
static void seal(xqc_segments_t *s) {
  if (s->fd >= 0) close(s->fd);
  s->fd = -1;
  s->index++;
  s->size = s->synced = 0;
  if (s->pend_len) s->rewrite = true;
}

/* Creates file s->index with its header. On failure the file is removed. */
static int start_file(xqc_segments_t *s, xq_errbuf_t *eb) {
  char path[600];
  xq_seg_path(path, sizeof path, s->dir, s->index);
  s->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
  if (s->fd < 0) return fail(s, eb, io_code(errno), "cannot create a segment file", errno);
  unsigned char hdr[XQ_SEG_HEADER_SIZE];
  memcpy(hdr, XQ_SEG_MAGIC, 8);
  xq_put_le32(hdr + 8, XQ_SEG_VERSION);
  int rc = 0;
  if (write_all(s->fd, hdr, sizeof hdr) < 0)
    rc = fail(s, eb, io_code(errno), "cannot write a segment header", errno);
  else if (xq_fsync_dir(s->dir) < 0)
    rc = fail(s, eb, XQ_EIO, "cannot fsync the games directory", errno);
  if (rc < 0) {
    close(s->fd);
    s->fd = -1;
    unlink(path);
    return rc;
  }
  s->size = XQ_SEG_HEADER_SIZE;
  s->synced = 0;
  return 0;
}

/* After a failed fsync: the pending records from memory into a new file, fsynced. A write
 * failure leaves the rewrite to be tried again; a failed fsync of the new file is final. */
static int rewrite_pending(xqc_segments_t *s, xq_errbuf_t *eb) {
  assert(s->rewrite && s->fd < 0);
  int rc = start_file(s, eb);
  if (rc < 0) return rc;
  char path[600];
  xq_seg_path(path, sizeof path, s->dir, s->index);
  if (write_all(s->fd, s->pend, s->pend_len) < 0) {
    rc = fail(s, eb, io_code(errno), "cannot rewrite the pending records", errno);
    s->write_errors++;
    close(s->fd);
    s->fd = -1;
    unlink(path);
    return rc;
  }
  s->size = XQ_SEG_HEADER_SIZE + s->pend_len;
  if (xqc_seg_io.fsync(s->fd) != 0) {
    rc = fail(s, eb, XQ_EIO, "fsync failed again, on a new file", errno);
    s->fsync_errors++;
    s->failed = true;
    XQ_LOGE(COMP, "fsync failed on the file the pending records were rewritten to; stopping,"
            " since nothing written can be trusted (workers keep their unacknowledged games"
            " and resend them): check the disk of the campaign directory, then restart"
            " file=%s records=%llu error=\"%s\"", path, (unsigned long long)s->pend_records,
            s->error);
    return rc;
  }
  XQ_LOGW(COMP, "pending records rewritten after a failed fsync file=%s records=%llu bytes=%zu",
          path, (unsigned long long)s->pend_records, s->pend_len);
  s->rewrite = false;
  s->synced = s->size;
  s->pend_len = 0;
  s->pend_records = 0;
  s->error[0] = '\0';
  return 0;
}

static int keep_pending(xqc_segments_t *s, const unsigned char *p, size_t n) {
  if (s->pend_len + n > s->pend_cap) {
    size_t ncap = s->pend_cap ? s->pend_cap * 2 : 65536;
    while (ncap < s->pend_len + n) ncap *= 2;
    unsigned char *np = realloc(s->pend, ncap);
    if (!np) return XQ_ENOMEM;
    s->pend = np;
    s->pend_cap = ncap;
  }
  memcpy(s->pend + s->pend_len, p, n);
  s->pend_len += n;
  s->pend_records++;
  return 0;
}

int xqc_seg_sync(xqc_segments_t *s, xq_errbuf_t *eb) {
  if (s->failed) return xq_err_set(eb, XQ_EIO, "%s", s->error);
  if (s->rewrite) return rewrite_pending(s, eb);
  if (s->fd < 0 || s->synced == s->size) return 0;
  if (xqc_seg_io.fsync(s->fd) != 0) {
    int err = errno;
    s->fsync_errors++;
    fail(s, eb, XQ_EIO, "fsync failed", err);
    char path[600];
    xq_seg_path(path, sizeof path, s->dir, s->index);
    XQ_LOGE(COMP, "fsync failed; the file is sealed and its unacknowledged records are"
            " rewritten from memory into a new one (an fsync is never retried and trusted)"
            " file=%s records=%llu error=\"%s\"", path, (unsigned long long)s->pend_records,
            strerror(err));
    seal(s);
    if (!s->rewrite) return 0; /* nothing was pending: the header alone */
    return rewrite_pending(s, eb);
  }
  s->synced = s->size;
  s->pend_len = 0;
  s->pend_records = 0;
  seg_check(s);
  return 0;
}

int xqc_seg_append(xqc_segments_t *s, const char *worker_id, uint64_t seq,
                   const unsigned char *rec, size_t len, xq_errbuf_t *eb) {
  size_t idlen = strlen(worker_id);
  if (idlen > 255 || len > XQ_RECORD_MAX_PAYLOAD) return xq_err_set(eb, XQ_ERANGE, "record too large");
  if (s->failed) return xq_err_set(eb, XQ_EIO, "%s", s->error);
  int rc = 0;
  if (s->rewrite && (rc = rewrite_pending(s, eb)) < 0) return rc;
  if (s->fd >= 0 && s->size >= s->roll_bytes) {
    if ((rc = xqc_seg_sync(s, eb)) < 0) return rc;
    if (s->fd >= 0 && s->size >= s->roll_bytes) {
      close(s->fd);
      s->fd = -1;
      s->index++;
    }
  }
  if (s->fd < 0 && (rc = start_file(s, eb)) < 0) {
    s->write_errors++;
    return rc;
  }
  size_t plen = 2 + idlen + 8 + len;
  unsigned char *p = malloc(8 + plen);
  if (!p) return xq_err_set(eb, XQ_ENOMEM, "out of memory for a record");
  unsigned char *q = p + 8;
  q[0] = (unsigned char)idlen;
  q[1] = (unsigned char)(idlen >> 8);
  memcpy(q + 2, worker_id, idlen);
  xq_put_le64(q + 2 + idlen, seq);
  memcpy(q + 10 + idlen, rec, len);
  xq_put_le32(p, (uint32_t)plen);
  xq_put_le32(p + 4, xq_crc32(0, q, plen));
  /* The copy first: a record that could not be rewritten after a failed fsync must not be
   * written at all. */
  rc = keep_pending(s, p, 8 + plen);
  if (rc < 0) rc = xq_err_set(eb, rc, "out of memory for the copy of a pending record");
  if (rc == 0 && write_all(s->fd, p, 8 + plen) < 0) {
    int err = errno;
    s->pend_len -= 8 + plen;
    s->pend_records--;
    s->write_errors++;
    rc = fail(s, eb, io_code(err), "segment write failed", err);
    /* Back to the last good size, so no partial record stays behind good ones. */
    if (xqc_seg_io.ftruncate(s->fd, (off_t)s->size) != 0) {
      XQ_LOGE(COMP, "cannot roll a failed write back; the file is sealed and the next record"
              " starts a new one (its torn end is quarantined at the next start)"
              " index=%d error=\"%s\"", s->index, strerror(errno));
      seal(s);
    }
  }
  free(p);
  if (rc < 0) {
    seg_check(s);
    return rc;
  }
  s->size += 8 + plen;
  s->error[0] = '\0';
  seg_check(s);
  return 0;
}

bool xqc_seg_failed(const xqc_segments_t *s) { return s->failed; }

bool xqc_seg_dirty(const xqc_segments_t *s) {
  return s->rewrite || (s->fd >= 0 && s->synced != s->size);
}

void xqc_seg_close(xqc_segments_t *s) {
  if (s->fd >= 0 || s->rewrite) xqc_seg_sync(s, NULL);
  if (s->fd >= 0) close(s->fd);
  s->fd = -1;
  free(s->pend);
  s->pend = NULL;
  s->pend_len = s->pend_cap = 0;
}
