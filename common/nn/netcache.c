/* netcache.c: fetch nets in chunks, verify them, keep them by id (see netcache.h). */
#include "nn/netcache.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nn/nn_file.h"
#include "support/atomic_file.h"
#include "support/crc32.h"

void xq_netcache_path(const char *dir, uint64_t id, char *out, size_t cap) {
  snprintf(out, cap, "%s/%016" PRIx64 ".xqzn", dir, id);
}

int xq_netcache_has(const char *dir, uint64_t id) {
  char path[XQ_NETCACHE_PATH_MAX];
  xq_netcache_path(dir, id, path, sizeof path);
  nn_file_meta_t meta;
  xq_errbuf_t eb = {{0}};
  if (nn_file_info(path, &meta, 1, &eb)) return 0;
  return meta.net_id == id;
}

void xq_netcache_touch(const char *dir, uint64_t id) {
  char path[XQ_NETCACHE_PATH_MAX];
  xq_netcache_path(dir, id, path, sizeof path);
  utimensat(AT_FDCWD, path, NULL, 0); /* best effort: a missing file is fetched again */
}

typedef struct {
  uint64_t id, bytes;
  struct timespec used;
  bool gone; /* deleted by the prune */
} cached_t;

/* Most recently used first (mtime, then id so the order is total). */
static int by_use(const void *pa, const void *pb) {
  const cached_t *a = pa, *b = pb;
  if (a->used.tv_sec != b->used.tv_sec) return a->used.tv_sec > b->used.tv_sec ? -1 : 1;
  if (a->used.tv_nsec != b->used.tv_nsec) return a->used.tv_nsec > b->used.tv_nsec ? -1 : 1;
  return a->id > b->id ? -1 : a->id < b->id;
}

/* Whether name is "<16 hex digits>.xqzn"; its id in *id. */
static int net_name(const char *name, uint64_t *id) {
  if (strlen(name) != 21 || strcmp(name + 16, ".xqzn")) return 0;
  for (int i = 0; i < 16; i++)
    if (!strchr("0123456789abcdef", name[i])) return 0;
  *id = strtoull(name, NULL, 16);
  return 1;
}

int xq_netcache_prune(const char *dir, const uint64_t *keep, int nkeep, int keep_newest,
                      uint64_t max_bytes, xq_netcache_usage_t *u, xq_errbuf_t *eb) {
  memset(u, 0, sizeof *u);
  DIR *d = opendir(dir);
  if (!d) return xq_err_set(eb, XQ_EIO, "cannot read the net cache %s: %s", dir, strerror(errno));
  cached_t *v = NULL;
  size_t n = 0, cap = 0;
  int rc = 0;
  struct dirent *de;
  while ((de = readdir(d))) {
    uint64_t id;
    struct stat st;
    if (!net_name(de->d_name, &id) || fstatat(dirfd(d), de->d_name, &st, 0) || !S_ISREG(st.st_mode))
      continue;
    if (n == cap) {
      size_t ncap = cap ? cap * 2 : 64;
      cached_t *nv = realloc(v, ncap * sizeof *nv);
      if (!nv) {
        rc = xq_err_set(eb, XQ_ENOMEM, "net cache listing of %zu files", n);
        break;
      }
      v = nv;
      cap = ncap;
    }
    v[n].id = id;
    v[n].bytes = (uint64_t)st.st_size;
    v[n].used = st.st_mtim;
    v[n].gone = false;
    n++;
  }
  closedir(d);
  if (rc) {
    free(v);
    return rc;
  }
  if (n) qsort(v, n, sizeof *v, by_use);
  uint64_t total = 0;
  for (size_t i = 0; i < n; i++) total += v[i].bytes;
  /* The least recently used go first: walk from the oldest end. */
  for (size_t i = n; i-- > 0 && total > max_bytes;) {
    bool kept = (int)i < keep_newest;
    for (int k = 0; k < nkeep && !kept; k++) kept = keep[k] && keep[k] == v[i].id;
    if (kept) continue;
    char path[XQ_NETCACHE_PATH_MAX];
    xq_netcache_path(dir, v[i].id, path, sizeof path);
    if (unlink(path) != 0 && errno != ENOENT) continue;
    total -= v[i].bytes;
    v[i].gone = true;
    u->removed++;
  }
  for (size_t i = 0; i < n; i++) u->files += !v[i].gone;
  u->bytes = total;
  free(v);
  return 0;
}

void xq_netfetch_begin(xq_netfetch_t *f, uint64_t id) {
  memset(f, 0, sizeof *f);
  f->id = id;
}

void xq_netfetch_close(xq_netfetch_t *f) {
  free(f->buf);
  memset(f, 0, sizeof *f);
}

int xq_netfetch_add(xq_netfetch_t *f, const char *dir, uint64_t id, uint64_t offset,
                    uint64_t total, uint32_t crc, const void *data, size_t len,
                    xq_errbuf_t *eb) {
  if (id != f->id) return xq_err_set(eb, XQ_EINVAL, "chunk of net %016" PRIx64 ", fetching %016" PRIx64, id, f->id);
  if (total < NN_FILE_HEADER_SIZE || total > XQ_NETCACHE_MAX_NET)
    return xq_err_set(eb, XQ_ERANGE, "net size %" PRIu64 " out of range (%d to %d bytes)",
                      total, NN_FILE_HEADER_SIZE, XQ_NETCACHE_MAX_NET);
  if (!f->buf) {
    /* The peer's size is believed only when the header in the first chunk names an
     * architecture of exactly that size: nothing is allocated for a size it merely claims. */
    if (offset != 0 || len < NN_FILE_HEADER_SIZE)
      return xq_err_set(eb, XQ_EFORMAT, "first chunk at %" PRIu64 "+%zu does not hold the"
                        " %d-byte header", offset, len, NN_FILE_HEADER_SIZE);
    nn_file_meta_t meta;
    size_t want;
    xq_errbuf_t why = {{0}};
    int rc = nn_file_decode_header(&meta, data, len, &why);
    if (!rc) rc = nn_file_expected_size(&meta, &want, &why);
    if (rc) return xq_err_set(eb, rc, "net %016" PRIx64 ": %s", id, why.msg);
    if (total != want)
      return xq_err_set(eb, XQ_EMISMATCH, "net %016" PRIx64 " announced as %" PRIu64 " bytes;"
                        " its header's architecture makes %zu", id, total, want);
    f->buf = malloc((size_t)total);
    if (!f->buf) return xq_err_set(eb, XQ_ENOMEM, "net buffer of %" PRIu64 " bytes", total);
    f->total = total;
    f->crc = crc;
  }
  if (total != f->total || crc != f->crc)
    return xq_err_set(eb, XQ_EMISMATCH, "net changed during the fetch (size or CRC)");
  if (offset != f->have || len > total - offset || len == 0)
    return xq_err_set(eb, XQ_EFORMAT, "chunk at %" PRIu64 "+%zu, expected offset %" PRIu64,
                      offset, len, f->have);
  memcpy(f->buf + f->have, data, len);
  f->have += len;
  if (f->have < f->total) return 0;
  uint32_t got = xq_crc32(0, f->buf, (size_t)f->total);
  if (got != f->crc)
    return xq_err_set(eb, XQ_ECHECKSUM, "net %016" PRIx64 ": CRC-32 %08x, announced %08x", id, got, f->crc);
  nn_file_meta_t meta;
  int rc = nn_file_decode_header(&meta, f->buf, (size_t)f->total, eb);
  if (rc) return rc;
  if (meta.net_id != id)
    return xq_err_set(eb, XQ_EMISMATCH, "file holds net %016" PRIx64 ", asked for %016" PRIx64, meta.net_id, id);
  char path[XQ_NETCACHE_PATH_MAX];
  xq_netcache_path(dir, id, path, sizeof path);
  const void *parts[1] = {f->buf};
  size_t sizes[1] = {(size_t)f->total};
  rc = xq_atomic_write(path, parts, sizes, 1, eb);
  if (rc) return rc;
  if (!xq_netcache_has(dir, id)) return xq_err_set(eb, XQ_EFORMAT, "net %016" PRIx64 " fails validation", id);
  return 1;
}
