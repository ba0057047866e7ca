/*
 * net_files.c: the best-net link and the rejected candidates, kept by the coordinator
 * (see net_files.h).
 */
#include "net_files.h"

#include <errno.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "support/campaign_nets.h"
#include "support/log.h"
#include "nn/netcache.h"

#define COMP "coordinator"

static void set_best(const char *dir, uint64_t id) {
  xq_errbuf_t eb;
  if (xq_campaign_set_best(dir, id, &eb) < 0)
    XQ_LOGW(COMP, "cannot point nets/" XQ_CAMPAIGN_BEST_NAME " at the best net; tools given"
            " --campaign fall back to promotions.log net=%016llx error=\"%s\"",
            (unsigned long long)id, eb.msg);
}

void xqc_net_files_open(const char *dir, uint64_t best) { set_best(dir, best); }

int xqc_net_files_prune_rejected(const char *dir, int64_t keep) {
  char rej[1024];
  snprintf(rej, sizeof rej, "%s/nets/" XQ_CAMPAIGN_REJECTED_DIR, dir);
  struct stat st;
  if (stat(rej, &st) != 0 && errno == ENOENT) return 0;
  /* The newest keep files stay whatever their size; a cap of 0 bytes deletes the rest. */
  xq_netcache_usage_t u;
  xq_errbuf_t eb = {{0}};
  if (xq_netcache_prune(rej, NULL, 0, keep > 1000000 ? 1000000 : (int)keep, 0, &u, &eb) < 0) {
    XQ_LOGW(COMP, "cannot prune nets/" XQ_CAMPAIGN_REJECTED_DIR "/; its files are kept"
            " error=\"%s\"", eb.msg);
    return -1;
  }
  if (u.removed)
    XQ_LOGI(COMP, "rejected nets' files pruned to keep_rejected_nets; their campaign.db rows"
            " stay removed=%d kept=%d keep_rejected_nets=%lld", u.removed, u.files,
            (long long)keep);
  return u.removed;
}

void xqc_net_files_decided(const char *dir, uint64_t cand, bool promoted, int64_t keep_rejected) {
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
  xqc_net_files_prune_rejected(dir, keep_rejected);
}
