/*
 * identity.c: campaign identity checks on Hello, BatchRequest and CandidateNet
 * (identity.h). A refusal is an honest mistake more often than an attack (a trainer
 * directory or a worker spool of another campaign), so its message says which campaign is
 * which and what to change; it still counts as an error of the sender's identity, so a
 * peer that keeps trying is cut off like any other.
 */
#include "identity.h"

#include <assert.h>
#include <stdio.h>
#include <string.h>

#include "nn/nn_model.h"
#include "support/log.h"
#include "wire/wire.h"

#define COMP "coordinator"

/* Refuses a peer that believes in campaign `theirs`: log, Error reply, one error. */
static void refuse_peer(xqc_t *c, xqc_peer_t *p, uint64_t rq, int role, uint64_t theirs) {
  char msg[400], who[XQC_IDENTITY_MAX];
  const char *fix = role == XQZ__ROLE__ROLE_TRAINER
                        ? "the trainer's checkpoint belongs to that campaign: point --dir at"
                          " this campaign's trainer directory, or move trainer.xqzc away to"
                          " start from this campaign's best net"
                        : "the worker's spooled games belong to that campaign: point it at"
                          " that campaign's coordinator, or give it another --spool directory";
  snprintf(msg, sizeof msg, "campaign mismatch: this coordinator runs campaign %016llx, the"
           " peer belongs to campaign %016llx; %s", (unsigned long long)c->campaign_id,
           (unsigned long long)theirs, fix);
  xqc_peer_identity(p, who, sizeof who);
  XQ_LOGW(COMP, "refused a peer of another campaign peer=%s role=%d campaign=%016llx"
          " peer_campaign=%016llx", who, role, (unsigned long long)c->campaign_id,
          (unsigned long long)theirs);
  xqc_peer_error(c, p, NULL);
  if (!p->cut) xqc_reply_error(c, p->rid, p->rid_len, rq, XQ_ERROR_CAMPAIGN, msg);
}

bool xqc_identity_hello_ok(xqc_t *c, xqc_peer_t *p, uint64_t rq, const Xqz__Hello *h) {
  if (h->campaign_id == 0 || h->campaign_id == c->campaign_id) return true;
  refuse_peer(c, p, rq, h->role, h->campaign_id);
  return false;
}

bool xqc_identity_batch_ok(xqc_t *c, xqc_peer_t *p, uint64_t rq, const Xqz__BatchRequest *r) {
  if (r->campaign_id == 0 || r->campaign_id == c->campaign_id) return true;
  refuse_peer(c, p, rq, XQZ__ROLE__ROLE_TRAINER, r->campaign_id);
  return false;
}

bool xqc_identity_candidate_ok(xqc_t *c, const xqc_peer_t *p, const nn_file_meta_t *meta,
                               char *why, size_t n) {
  char who[XQC_IDENTITY_MAX];
  xqc_peer_identity(p, who, sizeof who);
  if (meta->campaign_id && meta->campaign_id != c->campaign_id) {
    snprintf(why, n, "candidate net %016llx belongs to campaign %016llx, this coordinator runs"
             " campaign %016llx: the trainer's directory is another campaign's",
             (unsigned long long)meta->net_id, (unsigned long long)meta->campaign_id,
             (unsigned long long)c->campaign_id);
    XQ_LOGW(COMP, "candidate refused reason=\"%s\" peer=%s", why, who);
    return false;
  }
  nn_arch_t want;
  int rc = nn_arch_preset(c->cfg.net_size, &want);
  assert(rc == 0); /* config.c refuses a net_size that does not parse */
  (void)rc;
  if (memcmp(&want, &meta->arch, sizeof want) != 0) {
    char got_name[32], want_name[32];
    nn_arch_name(&meta->arch, got_name, sizeof got_name);
    nn_arch_name(&want, want_name, sizeof want_name);
    snprintf(why, n, "candidate net %016llx is %s (value hidden %d), the campaign's net_size"
             " is %s (%s, value hidden %d): train with --size %s, or change net_size in"
             " campaign.ini to grow the campaign's net", (unsigned long long)meta->net_id,
             got_name, meta->arch.value_hidden, c->cfg.net_size, want_name, want.value_hidden,
             c->cfg.net_size);
    XQ_LOGW(COMP, "candidate refused reason=\"%s\" peer=%s", why, who);
    return false;
  }
  if (meta->campaign_id == 0)
    XQ_LOGW(COMP, "candidate net has no campaign id (written by a trainer older than campaign"
            " ids); accepted, upgrade the trainer net=%016llx peer=%s",
            (unsigned long long)meta->net_id, who);
  return true;
}
