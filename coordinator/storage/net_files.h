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
 * moves to nets/rejected/, and the files there beyond the keep_rejected newest (by mtime)
 * are deleted (their database rows stay: the history keeps every decision). Failures are
 * logged (the campaign goes on: the database and promotions.log still name the best net). */
void xqc_net_files_decided(const char *dir, uint64_t cand, bool promoted, int64_t keep_rejected);
/* Deletes the files of nets/rejected/ beyond the keep newest; returns how many, or -1 when
 * the directory cannot be read (logged). A missing directory holds none. */
int xqc_net_files_prune_rejected(const char *dir, int64_t keep);

#endif
