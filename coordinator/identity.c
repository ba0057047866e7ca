/*
 * identity.c: campaign identity checks on Hello, BatchRequest and CandidateNet
 * (identity.h). A refusal is an honest mistake more often than an attack (a trainer
 * directory or a worker spool of another campaign), so its message says which campaign is
 * which and what to change; it still counts as an error of the sender's identity, so a
 * peer that keeps trying is cut off like any other. The version gate (min_peer_version)
 * refuses workers and trainers older than a minimum, saying which version to install.
 */
#include "identity.h"

#include <assert.h>
#include <stdio.h>
#include <string.h>

#include "nn/nn_model.h"
#include "support/log.h"
#include "support/version.h"
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

/* MAJOR.MINOR.PATCH of a software version ("xqzero 0.2.0" or "0.2.0") into v; false when
 * it holds none (empty: a program older than the field, or text that is no version). */
static bool parse_version(const char *s, unsigned v[3]) {
  if (!s) return false;
  if (!strncmp(s, "xqzero ", 7)) s += 7;
  int end = 0;
  return sscanf(s, "%u.%u.%u%n", &v[0], &v[1], &v[2], &end) == 3 &&
         (s[end] == '\0' || s[end] == ' ' || s[end] == '-' || s[end] == '+');
}

/* The version gate (min_peer_version): true when it is off or the peer's version is at
 * least the minimum; else an Error of code XQ_ERROR_PROTOCOL_VERSION saying which version
 * to install. That code because the peers it refuses are older builds, and every build
 * since protocol 1 stops on it (exit status 1) instead of retrying; one error is counted. */
static bool version_ok(xqc_t *c, xqc_peer_t *p, uint64_t rq, int role, const char *version) {
  unsigned want[3], have[3];
  if (!parse_version(c->cfg.min_peer_version, want)) return true; /* "" : off */
  bool known = parse_version(version, have);
  if (known && (have[0] != want[0] ? have[0] > want[0]
                : have[1] != want[1] ? have[1] > want[1] : have[2] >= want[2]))
    return true;
  char shown[64], msg[400], who[XQC_IDENTITY_MAX];
  size_t k = 0; /* the peer's text, printable and without quotes, for the log and reply */
  for (const char *q = version ? version : ""; *q && k + 1 < sizeof shown; q++)
    shown[k++] = *q < ' ' || *q > '~' || *q == '"' ? '?' : *q;
  shown[k] = '\0';
  const char *what = role == XQZ__ROLE__ROLE_TRAINER ? "trainer" : "worker";
  snprintf(msg, sizeof msg, XQ_WIRE_TOO_OLD ": this coordinator (%s) admits workers and"
           " trainers of xqzero %s or newer (min_peer_version), this %s %s%s%s; install xqzero"
           " %s or newer on its machine and start it again", XQ_SOFTWARE_NAME,
           c->cfg.min_peer_version, what, known ? "runs " : "states no version",
           known ? shown : "", known ? "" : " (a build older than that)",
           c->cfg.min_peer_version);
  xqc_peer_identity(p, who, sizeof who);
  XQ_LOGW(COMP, "refused a peer older than min_peer_version; it is told to install %s or"
          " newer peer=%s role=%s version=\"%s\" min_peer_version=%s", c->cfg.min_peer_version,
          who, what, shown, c->cfg.min_peer_version);
  xqc_peer_error(c, p, NULL);
  if (!p->cut) xqc_reply_error(c, p->rid, p->rid_len, rq, XQ_ERROR_PROTOCOL_VERSION, msg);
  return false;
}

bool xqc_identity_hello_ok(xqc_t *c, xqc_peer_t *p, uint64_t rq, const Xqz__Hello *h) {
  if (!version_ok(c, p, rq, h->role, h->software_version)) return false;
  if (h->campaign_id == 0 || h->campaign_id == c->campaign_id) return true;
  refuse_peer(c, p, rq, h->role, h->campaign_id);
  return false;
}

bool xqc_identity_batch_ok(xqc_t *c, xqc_peer_t *p, uint64_t rq, const Xqz__BatchRequest *r) {
  if (!version_ok(c, p, rq, XQZ__ROLE__ROLE_TRAINER, r->software_version)) return false;
  /* Shown by xqz status (Status.trainer_version): printable ASCII, no quotes. */
  size_t k = 0;
  for (const char *q = r->software_version ? r->software_version : "";
       *q && k + 1 < sizeof c->stats.trainer_version; q++)
    c->stats.trainer_version[k++] = *q < ' ' || *q > '~' || *q == '"' || *q == '\\' ? '?' : *q;
  c->stats.trainer_version[k] = '\0';
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

void xqc_clean_text(char *out, size_t n, const char *s) {
  size_t k = 0;
  for (const unsigned char *q = (const unsigned char *)(s ? s : ""); *q && k + 1 < n; q++)
    out[k++] = *q < ' ' || *q > '~' || *q == '"' || *q == '\\' ? '?' : (char)*q;
  out[k] = '\0';
}
