/* spool_campaign.c: DIR/campaign, the campaign of a worker's spool (spool_campaign.h). */
#include "spool_campaign.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "support/atomic_file.h"

int xq_spool_campaign_load(const char *dir, uint64_t *id, xq_errbuf_t *eb) {
  char path[1100];
  *id = 0;
  snprintf(path, sizeof path, "%s/campaign", dir);
  if (access(path, F_OK) != 0) return 0;
  unsigned char *data = NULL;
  size_t len = 0;
  int rc = xq_read_file(path, 64, &data, &len, eb);
  if (rc < 0) return rc;
  char text[64];
  size_t n = len < sizeof text - 1 ? len : sizeof text - 1;
  memcpy(text, data, n);
  text[n] = '\0';
  free(data);
  char *end = NULL;
  errno = 0;
  unsigned long long v = strtoull(text, &end, 16);
  if (errno || end == text || (*end && *end != '\n') || v == 0)
    return xq_err_set(eb, XQ_EFORMAT, "%s: not a campaign id (16 hex digits); delete the file"
                      " if the spool is empty", path);
  *id = (uint64_t)v;
  return 0;
}

int xq_spool_campaign_save(const char *dir, uint64_t id, xq_errbuf_t *eb) {
  char path[1100], text[32];
  snprintf(path, sizeof path, "%s/campaign", dir);
  size_t len = (size_t)snprintf(text, sizeof text, "%016" PRIx64 "\n", id);
  const void *parts[1] = {text};
  return xq_atomic_write(path, parts, &len, 1, eb);
}
