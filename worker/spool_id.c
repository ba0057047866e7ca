/* spool_id.c: DIR/worker_id, the worker's stable default id (spool_id.h). */
#include "spool_id.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "support/atomic_file.h"

#define ID_MAX 127 /* the coordinator keeps ids of up to 127 characters */

/* The coordinator's rule for a worker id (coordinator/peers/peers.c, xqc_worker_id_ok). */
static bool id_ok(const char *s, size_t len) {
  if (len == 0 || len > ID_MAX) return false;
  for (size_t i = 0; i < len; i++) {
    unsigned char ch = (unsigned char)s[i];
    if (ch <= ' ' || ch > '~' || ch == '"' || ch == '\\') return false;
  }
  return true;
}

int xq_spool_worker_id(const char *dir, const char *host, xq_rng_t *rng, char *out, size_t n,
                       xq_errbuf_t *eb) {
  char path[1100];
  snprintf(path, sizeof path, "%s/" XQ_SPOOL_ID_FILE, dir);
  if (access(path, F_OK) == 0) {
    unsigned char *data = NULL;
    size_t len = 0;
    int rc = xq_read_file(path, 4096, &data, &len, eb);
    if (rc < 0) return rc;
    while (len && (data[len - 1] == '\n' || data[len - 1] == '\r')) len--;
    bool ok = id_ok((const char *)data, len) && len < n;
    if (ok) snprintf(out, n, "%.*s", (int)len, (const char *)data);
    free(data);
    if (!ok)
      return xq_err_set(eb, XQ_EFORMAT, "%s holds no valid worker id (printable, no spaces"
                        " or quotes, 1..%d characters): fix it, or delete it for a new id",
                        path, ID_MAX);
    return 0;
  }
  char id[ID_MAX + 1], h[ID_MAX - 8];
  /* The host name, cut and cleaned so that the id passes the coordinator's rule. */
  snprintf(h, sizeof h, "%s", host && *host ? host : "worker");
  for (char *q = h; *q; q++)
    if (!id_ok(q, 1)) *q = '_';
  snprintf(id, sizeof id, "%s-%08llx", h, (unsigned long long)xq_rng_below(rng, 1ull << 32));
  char line[ID_MAX + 2];
  int m = snprintf(line, sizeof line, "%s\n", id);
  const void *parts[1] = {line};
  size_t sizes[1] = {(size_t)m};
  int rc = xq_atomic_write(path, parts, sizes, 1, eb);
  if (rc < 0) return rc;
  if (strlen(id) >= n) return xq_err_set(eb, XQ_ERANGE, "worker id too long");
  snprintf(out, n, "%s", id);
  return 0;
}
