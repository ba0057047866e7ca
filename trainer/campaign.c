/* campaign.c: the trainer's campaign id: logged at resume, adopted, refused (campaign.h). */
#include "campaign.h"

#include <inttypes.h>

#include "support/log.h"
#include "wire/wire.h"

#define COMP "trainer"

void trainer_campaign_loaded(const nn_file_meta_t *meta, const char *ckpt_path) {
  if (meta->campaign_id)
    XQ_LOGI(COMP, "checkpoint belongs to campaign=%016" PRIx64 " path=%s", meta->campaign_id,
            ckpt_path);
  else
    XQ_LOGW(COMP, "checkpoint names no campaign (written before campaign ids); resuming, and"
            " adopting the coordinator's campaign path=%s", ckpt_path);
}

void trainer_campaign_adopt(uint64_t *mine, uint64_t theirs) {
  if (*mine || !theirs) return;
  *mine = theirs;
  XQ_LOGI(COMP, "adopted the coordinator's campaign; the checkpoint and candidates record it"
          " campaign=%016" PRIx64, theirs);
}

bool trainer_campaign_refused(const Xqz__Error *e, uint64_t mine, const char *dir) {
  if (e->code != XQ_ERROR_CAMPAIGN) return false;
  XQ_LOGE(COMP, "the coordinator runs another campaign; stopping after a last checkpoint of"
          " the trainer's own campaign (point --dir at this campaign's trainer directory,"
          " or move trainer.xqzc away to start from the coordinator's best net) dir=%s"
          " campaign=%016" PRIx64 " reason=\"%s\"",
          dir, mine, e->message ? e->message : "");
  return true;
}
