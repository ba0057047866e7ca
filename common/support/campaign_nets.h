/*
 * campaign_nets.h: where a campaign directory keeps its nets, for the coordinator that
 * files them and for every tool that wants "the best net of this campaign" (xqz play
 * --campaign, xqz engine --campaign).
 *
 * Layout: DIR/nets/<id>.xqzn holds the first net, every promoted net and the candidates
 * being measured; DIR/nets/best.xqzn is a symbolic link to the best one ("<id>.xqzn",
 * relative; a hard link where the file system has no symbolic links), replaced atomically
 * at each promotion (a new link under a temporary name, renamed over the old one, the
 * directory fsynced); DIR/nets/rejected/<id>.xqzn holds the candidates the gate rejected,
 * kept for inspection (delete them at will: nothing reads them again).
 */
#ifndef XQ_CAMPAIGN_NETS_H
#define XQ_CAMPAIGN_NETS_H

#include <stddef.h>
#include <stdint.h>

#include "support/error.h"

#define XQ_CAMPAIGN_BEST_NAME "best.xqzn"
#define XQ_CAMPAIGN_REJECTED_DIR "rejected"

/* The best net of the campaign in dir, for a reader (a player, an engine).
 *
 * Contract: on success returns 0 and writes into path (size bytes) the resolved path of
 * an existing net file, DIR/nets/<id>.xqzn (or DIR/nets/best.xqzn itself when it is a
 * hard link): the file is a complete net, never a partly written one, and stays in place
 * when later promotions move the link, so it may be opened at leisure. The file's
 * contents are not checked here: load it with nn_file (which checks the magic, version
 * and checksum). Campaigns from before the link: the last promoted net of DIR's
 * promotions.log is taken. On failure returns XQ_EINVAL (or XQ_ERANGE when path is too
 * small) with eb naming dir and the fix: not a directory, or not a campaign (no nets/,
 * no best.xqzn, no promotion logged). Thread-safe; reads only. */
int xq_campaign_best_net(const char *dir, char *path, size_t size, xq_errbuf_t *eb);

/* Makes DIR/nets/best.xqzn name net id (DIR/nets/<id>.xqzn must exist), atomically.
 * Returns 0, or XQ_EIO with the reason in eb (the old link is then untouched). */
int xq_campaign_set_best(const char *dir, uint64_t id, xq_errbuf_t *eb);

/* Moves a rejected candidate, DIR/nets/<id>.xqzn, to DIR/nets/rejected/<id>.xqzn.
 * Returns 0 (also when the file is not there: moved already), or XQ_EIO. */
int xq_campaign_file_rejected(const char *dir, uint64_t id, xq_errbuf_t *eb);

#endif
