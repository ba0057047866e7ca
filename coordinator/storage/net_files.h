/*
 * net_files.h: the coordinator keeps its nets/ directory readable (layout in
 * support/campaign_nets.h): nets/best.xqzn names the best net from the start and after
 * each promotion, and a rejected candidate moves to nets/rejected/.
 */
#ifndef XQC_NET_FILES_H
#define XQC_NET_FILES_H

#include <stdbool.h>
#include <stdint.h>

/* At start: makes nets/best.xqzn name best (a campaign from before the link gets one). */
void xqc_net_files_open(const char *dir, uint64_t best);
/* A gating decision on candidate cand: promoted, the link moves to it; rejected, its file
 * moves to nets/rejected/. Failures are logged (the campaign goes on: the database and
 * promotions.log still name the best net). */
void xqc_net_files_decided(const char *dir, uint64_t cand, bool promoted);

#endif
