/* netcache.c: fetch nets in chunks, verify them, keep them by id (see netcache.h). */
#include "wire/netcache.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
