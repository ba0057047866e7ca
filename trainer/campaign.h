/*
 * campaign.h: the trainer's side of campaign identity (docs/operations.md). The trainer
 * belongs to the campaign its checkpoint names (nn_file_meta_t.campaign_id); its
 * BatchRequests carry that id and the coordinator refuses another campaign's trainer with
 * an Error of code XQ_ERROR_CAMPAIGN, on which the trainer writes its checkpoint (still
 * of its own campaign) and stops with exit status 1. A trainer that does not know its
 * campaign yet (fresh net, or a checkpoint written before campaign ids) adopts the id
 * the coordinator's Batch carries, and its next checkpoint and candidates record it.
 */
#ifndef XQ_TRAINER_CAMPAIGN_H
#define XQ_TRAINER_CAMPAIGN_H

#include <stdbool.h>
#include <stdint.h>

#include "nn/nn_file.h"
#include "xqz.pb-c.h"

/* Logs the campaign a loaded checkpoint belongs to (a warning when it names none). */
void trainer_campaign_loaded(const nn_file_meta_t *meta, const char *ckpt_path);
/* A Batch from the coordinator of campaign `theirs` (0: an older coordinator): a trainer
 * of no campaign yet (*mine == 0) adopts it. */
void trainer_campaign_adopt(uint64_t *mine, uint64_t theirs);
/* true (and the refusal logged, naming the trainer's directory) when e is the
 * coordinator's refusal of a trainer of another campaign: retrying cannot help. */
bool trainer_campaign_refused(const Xqz__Error *e, uint64_t mine, const char *dir);

#endif
