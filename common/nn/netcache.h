/*
 * netcache.h: a local cache (worker, trainer) of net files, one "<16 hex digits>.xqzn" per net id
 * in the cache directory. A cached file is used only when its header and payload checksums
 * are valid and its header carries the expected id; otherwise it is fetched again.
 *
 * A fetch assembles NetChunks in memory (the coordinator serves the file in order, each
 * chunk naming the file size and its CRC-32). The first chunk must hold the header: the
 * size is believed, and the buffer allocated, only when it is exactly the size of the
 * header's architecture and below XQ_NETCACHE_MAX_NET. It checks the CRC-32 of the whole
 * file, validates it as a net, and only then stores it atomically.
 */
#ifndef XQ_NETCACHE_H
#define XQ_NETCACHE_H

#include <stddef.h>
#include <stdint.h>

#include "support/error.h"

#define XQ_NETCACHE_PATH_MAX 1024
/* Largest net file fetched (256 MiB: the 10x128 net is about 12 MiB). A fetch also needs
 * the announced size to be exactly that of the architecture in the first chunk's header. */
#define XQ_NETCACHE_MAX_NET (256 << 20)

/* Writes the cache path of net id into out. */
void xq_netcache_path(const char *dir, uint64_t id, char *out, size_t cap);
/* 1 when the cached file of id exists and is valid, else 0. */
int xq_netcache_has(const char *dir, uint64_t id);

/* Marks id's cached file as used now (its mtime), so the cache keeps the nets in use. */
void xq_netcache_touch(const char *dir, uint64_t id);

/* What a cache directory holds: its net files and their bytes (after a prune). */
typedef struct {
  int files, removed;
  uint64_t bytes;
} xq_netcache_usage_t;

/* Keeps dir's net files ("<16 hex digits>.xqzn") to max_bytes: the ids in keep (nkeep, 0s
 * ignored) and the keep_newest most recently used (mtime) stay whatever their size; the
 * others are deleted, least recently used first, until the total is at most max_bytes.
 * Other files are left alone. *u gets what stays. 0, or XQ_EIO when dir cannot be read
 * (a file that cannot be deleted is skipped and the rest goes on). */
int xq_netcache_prune(const char *dir, const uint64_t *keep, int nkeep, int keep_newest,
                      uint64_t max_bytes, xq_netcache_usage_t *u, xq_errbuf_t *eb);

/* One fetch in progress. The caller owns the struct; close frees the buffer. */
typedef struct {
  uint64_t id;
  uint64_t total;     /* file size from the first chunk (0 before) */
  uint32_t crc;       /* expected CRC-32 of the whole file */
  uint64_t have;      /* bytes received so far, in order */
  unsigned char *buf; /* (total) */
} xq_netfetch_t;

void xq_netfetch_begin(xq_netfetch_t *f, uint64_t id);
void xq_netfetch_close(xq_netfetch_t *f);
/* Adds one chunk. Returns 1 when the file is complete, verified and stored in dir,
 * 0 when more chunks are needed (request from f->have), or an error (fetch failed; the
 * caller closes and may start again). */
int xq_netfetch_add(xq_netfetch_t *f, const char *dir, uint64_t id, uint64_t offset,
                    uint64_t total, uint32_t crc, const void *data, size_t len,
                    xq_errbuf_t *eb);

#endif
