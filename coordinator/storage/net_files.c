/*
 * net_files.c: the best-net link and the rejected candidates, kept by the coordinator
 * (see net_files.h).
 */
#include "net_files.h"

#include <stdio.h>
#include <unistd.h>

#include "support/campaign_nets.h"
#include "support/log.h"

#define COMP "coordinator"

static void set_best(const char *dir, uint64_t id) {
  xq_errbuf_t eb;
  if (xq_campaign_set_best(dir, id, &eb) < 0)
    XQ_LOGW(COMP, "cannot point nets/" XQ_CAMPAIGN_BEST_NAME " at the best net; tools given"
            " --campaign fall back to promotions.log net=%016llx error=\"%s\"",
            (unsigned long long)id, eb.msg);
}

void xqc_net_files_open(const char *dir, uint64_t best) { set_best(dir, best); }

void xqc_net_files_decided(const char *dir, uint64_t cand, bool promoted) {
  if (promoted) {
    set_best(dir, cand);
    return;
  }
  xq_errbuf_t eb;
  char path[1024];
  snprintf(path, sizeof path, "%s/nets/%016llx.xqzn", dir, (unsigned long long)cand);
  if (access(path, F_OK) != 0) return; /* quarantined as damaged, or moved by hand */
  if (xq_campaign_file_rejected(dir, cand, &eb) < 0)
    XQ_LOGW(COMP, "cannot move a rejected candidate to nets/" XQ_CAMPAIGN_REJECTED_DIR
            "/; it stays in nets/ net=%016llx error=\"%s\"", (unsigned long long)cand, eb.msg);
}
