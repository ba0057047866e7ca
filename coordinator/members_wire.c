/*
 * members_wire.c: the population's messages (members_wire.h, docs/population.md): the
 * members' table opened at start, a trainer's Hello claiming a slot, a member's
 * BatchRequest checked and held back while its copy order is pending, a member's
 * candidate checkpoint stored, and CheckpointRequest serving the checkpoint a copy order
 * names. The table itself is population/members.h's; this file is its wiring.
 *
 * Refusals: a claim or a request for a slot another trainer holds (a forged claim), a slot
 * that does not exist, or a checkpoint that does not match its CRC counts as a fault of the
 * sender; an honest mistake (another architecture, a full table, a trainer that did not say
 * Hello) is only refused. Hello's Error codes tell the trainer what to do: CAMPAIGN and
 * BAD_FIELD (another campaign, another architecture, a slot number that does not exist)
 * stop it; NOT_ALLOWED (a full table, a slot held by a live trainer, a peer without the
 * trainer role) is worth a retry.
 */
#include "members_wire.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "commands.h"
#include "coord.h"
#include "identity.h"
#include "nn/nn_checkpoint.h"
#include "population_round.h"
#include "promote.h"
#include "storage/net_files.h"
#include "support/atomic_file.h"
#include "support/crc32.h"
#include "support/log.h"
#include "wire/messages.h"
#include "wire/wire.h"

#define COMP "coordinator"
#define MEMBERS_FILE "members.txt"
#define CHECKPOINT_DIR "checkpoints"
#define COPY_RETRY_MS 200 /* a member waiting for its own copy asks again this soon */

/* ---- files: members.txt and checkpoints/<net>.xqzc ---- */

static void checkpoint_path(const xqc_t *c, uint64_t net, char *path, size_t n) {
  snprintf(path, n, "%s/" CHECKPOINT_DIR "/%016" PRIx64 ".xqzc", c->dir, net);
}

/* Saves members.txt; a failure is logged (the table in memory goes on). */
void xqc_members_persist(xqc_t *c) {
  char path[1024];
  xq_errbuf_t eb;
  snprintf(path, sizeof path, "%s/" MEMBERS_FILE, c->dir);
  if (xqc_members_save(&c->members, path, &eb) < 0)
    XQ_LOGE(COMP, "population table not saved; a restart would forget the members' changes"
            " since the last save (check the campaign disk) reason=\"%s\"", eb.msg);
}

/* Reads the checkpoint of net, checked whole (nn_checkpoint.h: sizes, checksums, and the
 * net inside is net): its bytes in *data (malloc'd; NULL: not kept), size, CRC-32 and
 * step. 0, or the error with the file named in eb. */
static int checkpoint_read(const xqc_t *c, uint64_t net, unsigned char **data, size_t *size,
                           uint32_t *crc, int64_t *step, xq_errbuf_t *eb) {
  char path[1024];
  checkpoint_path(c, net, path, sizeof path);
  nn_model_t *m = NULL;
  nn_file_meta_t meta;
  nn_sgd_t opt;
  memset(&opt, 0, sizeof opt);
  xq_errbuf_t why = {{0}};
  int rc = nn_checkpoint_load(path, &m, &meta, &opt, NULL, &why);
  nn_model_free(&m);
  nn_sgd_close(&opt);
  if (rc < 0) return xq_err_set(eb, rc, "checkpoint %s: %s", path, why.msg);
  if (meta.net_id != net)
    return xq_err_set(eb, XQ_EMISMATCH, "checkpoint %s holds net %016" PRIx64 ", not its name's",
                      path, meta.net_id);
  unsigned char *bytes = NULL;
  rc = xq_read_file(path, XQ_WIRE_MAX_MESSAGE, &bytes, size, &why);
  if (rc < 0) return xq_err_set(eb, rc, "checkpoint %s: %s", path, why.msg);
  *crc = xq_crc32(0, bytes, *size);
  *step = meta.step;
  if (data) *data = bytes;
  else free(bytes);
  return 0;
}

/* Deletes the checkpoint of net when no member needs it any more (members.h). */
static void drop_checkpoint(xqc_t *c, uint64_t net) {
  if (!net || xqc_members_checkpoint_needed(&c->members, net)) return;
  char path[1024];
  checkpoint_path(c, net, path, sizeof path);
  if (unlink(path) == 0)
    XQ_LOGI(COMP, "member checkpoint deleted, no member needs it net=%016" PRIx64, net);
  else if (errno != ENOENT)
    XQ_LOGW(COMP, "cannot delete a member checkpoint no member needs file=%s err=\"%s\"", path,
            strerror(errno));
}

/* The campaign's net architecture as net_size spells it ("2x16" for tiny): a trainer's
 * net_arch is compared in this spelling. */
static void arch_spelling(const char *name, char *out, size_t n) {
  nn_arch_t a;
  if (nn_arch_preset(name, &a) == 0) nn_arch_name(&a, out, n);
  else xqc_clean_text(out, n, name); /* a peer's text: logged and sent back in a refusal */
}

int xqc_members_open(xqc_t *c, xq_errbuf_t *eb) {
  if (c->cfg.population <= 0) return 0;
  xqc_members_t *t = &c->members;
  char arch[XQC_MEMBER_TEXT_MAX], path[1024];
  arch_spelling(c->cfg.net_size, arch, sizeof arch);
  bool control = c->cfg.population_control == 1;
  int k = (int)c->cfg.population;
  snprintf(path, sizeof path, "%s/" MEMBERS_FILE, c->dir);
  if (access(path, F_OK) == 0) {
    int rc = xqc_members_load(t, path, eb);
    if (rc < 0) return rc;
    if (t->campaign_id && t->campaign_id != c->campaign_id)
      return xq_err_set(eb, XQ_EMISMATCH, "members.txt belongs to campaign %016" PRIx64 ", this"
                        " is campaign %016" PRIx64 ": move members.txt away to start the members"
                        " afresh", t->campaign_id, c->campaign_id);
    if (t->k != k || strcmp(t->arch, arch))
      return xq_err_set(eb, XQ_EMISMATCH, "members.txt holds a population of %d members of %s"
                        " nets, campaign.ini asks for %d of %s (net_size %s): set population"
                        " and net_size back, or move members.txt away to start the members"
                        " afresh", t->k, t->arch, k, arch, c->cfg.net_size);
    if (t->control != (control ? 0 : -1)) {
      XQ_LOGW(COMP, "population_control changed since members.txt was saved; slot 1 %s the"
              " control member from now on", control ? "is" : "is no longer");
      t->control = control ? 0 : -1;
    }
    XQ_LOGI(COMP, "population loaded members=%d arch=%s rounds=%" PRIu64 " orders=%" PRIu64
            " file=%s", t->k, t->arch, t->round, t->last_order, path);
  } else {
    xqc_members_init(t, k, control, c->campaign_id, arch, (double)c->cfg.batch_size);
    int rc = xqc_members_save(t, path, eb);
    if (rc < 0) return rc;
    XQ_LOGI(COMP, "population started afresh members=%d arch=%s control=%d file=%s", k, arch,
            control, path);
  }
  snprintf(path, sizeof path, "%s/" CHECKPOINT_DIR, c->dir);
  if (mkdir(path, 0755) != 0 && errno != EEXIST)
    return xq_err_set(eb, XQ_EIO, "cannot make %s for the members' checkpoints: %s", path,
                      strerror(errno));
  return 0;
}

void xqc_members_tick(xqc_t *c, uint64_t now_ms) {
  if (c->cfg.population <= 0) return;
  int freed = xqc_members_expire(&c->members, now_ms, (uint64_t)c->cfg.worker_timeout_ms);
  if (freed)
    XQ_LOGW(COMP, "population slots freed: their trainers were silent longer than"
            " worker_timeout_ms slots=%d", freed);
}

/* ---- who asks ---- */

/* The connection identity of p (its routing id as text) in conn (XQC_MEMBER_TEXT_MAX). */
static void conn_of(const xqc_peer_t *p, char *conn) {
  xqc_peer_identity_of("", NULL, p->rid, p->rid_len, conn, XQC_MEMBER_TEXT_MAX);
}

/* Answers rq with an Error of code (a fault of p when hostile, else a warning). */
static void refuse(xqc_t *c, xqc_peer_t *p, uint64_t rq, bool hostile, unsigned code,
                   const char *why) {
  if (hostile) {
    xqc_peer_fault(c, p, why);
  } else {
    char id[XQC_IDENTITY_MAX];
    xqc_peer_identity(p, id, sizeof id);
    XQ_LOGW(COMP, "population request refused peer=%s address=%s reason=\"%s\"", id,
            p->address[0] ? p->address : "-", why);
  }
  if (!p->cut) xqc_reply_error(c, p->rid, p->rid_len, rq, code, why);
}

/* The 0-based slot p holds when it is the 1-based slot asked; else -1 with the reason in
 * why, and *hostile when the slot does not exist or another trainer (another key, or
 * without CURVE another host) holds it. */
static int held_slot(xqc_t *c, const xqc_peer_t *p, uint32_t asked, bool *hostile, char *why,
                     size_t n) {
  const xqc_members_t *t = &c->members;
  *hostile = false;
  if (asked == 0) {
    snprintf(why, n, "this campaign is a population of %d trainers: a trainer says Hello for"
             " a member slot and names it in its requests (member_slot 0: an xqz-trainer"
             " older than populations; upgrade it)", t->k);
    return -1;
  }
  if (asked > (uint32_t)t->k) {
    *hostile = true;
    snprintf(why, n, "population slot %u does not exist: the slots are 1 to %d", asked, t->k);
    return -1;
  }
  char conn[XQC_MEMBER_TEXT_MAX];
  conn_of(p, conn);
  int s = (int)asked - 1;
  if (xqc_members_find_conn(t, conn) == s) return s;
  const xqc_member_t *m = &t->slot[s];
  *hostile = m->held && strcmp(p->key[0] ? m->key : m->host, p->key[0] ? p->key : p->address);
  snprintf(why, n, "slot %u is not held by this connection: say Hello first", asked);
  return -1;
}

/* ---- Hello ---- */

/* The checkpoint slot's pending copy order names cannot be served (damaged, gone): the
 * order is withdrawn (copy_net 0, saved), so that the member trains on with its own weights
 * and the order's settings rather than waiting for a file that will not come back. */
static void withdraw_copy(xqc_t *c, int slot, const char *why) {
  xqc_member_t *x = &c->members.slot[slot];
  if (!xqc_members_copy_pending(&c->members, slot)) return;
  XQ_LOGE(COMP, "the checkpoint a member's copy order names cannot be served: the order is"
          " withdrawn, the member keeps its own weights and takes the order's settings"
          " slot=%d order=%" PRIu64 " net=%016" PRIx64 " error=\"%s\"", slot + 1, x->order,
          x->copy_net, why);
  x->copy_net = 0;
  x->copy_known = 0;
  xqc_members_persist(c);
}

void xqc_members_fill(xqc_t *c, int slot, Xqz__Member *m, Xqz__MemberSettings *s) {
  xqc_member_t *x = &c->members.slot[slot];
  xqz__member__init(m);
  xqz__member_settings__init(s);
  s->lr_scale = x->settings[XQC_MS_LR_SCALE];
  s->l2 = x->settings[XQC_MS_L2];
  s->value_weight = x->settings[XQC_MS_VALUE_WEIGHT];
  s->batch = (uint32_t)llround(x->settings[XQC_MS_BATCH]);
  m->slot = (uint32_t)slot + 1;
  m->settings = s;
  m->generation = (uint32_t)x->generation;
  m->parent = (uint32_t)(x->parent + 1);
  m->order = x->order;
  m->copy_net = x->copy_net;
  m->control = slot == c->members.control;
  if (x->order && x->copy_net && x->copy_known != x->copy_net) {
    /* Read once per order: the checkpoint's size and CRC the member checks its copy by.
     * One that cannot be read withdraws a pending order. */
    xq_errbuf_t eb;
    int64_t step;
    x->copy_known = x->copy_net;
    if (checkpoint_read(c, x->copy_net, NULL, &x->copy_size, &x->copy_crc32, &step, &eb) < 0) {
      x->copy_size = 0;
      x->copy_crc32 = 0;
      withdraw_copy(c, slot, eb.msg);
    }
  }
  if (x->copy_known == x->copy_net && x->copy_net) {
    m->copy_size = x->copy_size;
    m->copy_crc32 = x->copy_crc32;
  }
}

int xqc_members_hello(xqc_t *c, xqc_peer_t *p, uint64_t rq, const Xqz__Hello *h,
                      Xqz__Member *m, Xqz__MemberSettings *s) {
  xqc_members_t *t = &c->members;
  char why[400];
  if (h->member_slot > (uint32_t)t->k) {
    snprintf(why, sizeof why, "population slot %u does not exist: the slots are 1 to %d; start"
             " the trainer without a slot number (remove member.slot from its directory)",
             h->member_slot, t->k);
    refuse(c, p, rq, true, XQ_ERROR_BAD_FIELD, why);
    return -1;
  }
  char conn[XQC_MEMBER_TEXT_MAX], arch[XQC_MEMBER_TEXT_MAX];
  conn_of(p, conn);
  arch_spelling(h->net_arch ? h->net_arch : "", arch, sizeof arch);
  unsigned roles = xqc_peer_roles(c, p);
  xqc_member_ask_t a = {roles, p->key, conn, p->address, h->campaign_id, arch,
                        (int)h->member_slot - 1};
  int slot = -1;
  int rc = xqc_members_claim(t, &a, xqc_now_ms(), (uint64_t)c->cfg.worker_timeout_ms, &slot,
                             why, sizeof why);
  if (rc < 0) {
    /* XQ_EMISMATCH is another campaign, another architecture or a forged claim; XQ_EINVAL
     * from a trainer an ask that does not fit a slot (a routing id too long). */
    bool campaign = h->campaign_id && h->campaign_id != t->campaign_id;
    bool honest = campaign || strcmp(arch, t->arch) != 0;
    bool hostile = rc == XQ_EMISMATCH ? !honest : rc == XQ_EINVAL && (roles & XQC_ROLE_TRAINER);
    unsigned code = rc == XQ_EMISMATCH && campaign ? XQ_ERROR_CAMPAIGN
                    : (rc == XQ_EMISMATCH && honest) || (rc == XQ_EINVAL && hostile)
                        ? XQ_ERROR_BAD_FIELD
                        : XQ_ERROR_NOT_ALLOWED;
    refuse(c, p, rq, hostile, code, why);
    return -1;
  }
  xqc_members_persist(c); /* the slot's key and host, so a restart gives it back to its trainer */
  /* The orders it says it carried out (never beyond the slot's own): after a restart of
   * the coordinator, a done copy is not taken for a pending one. */
  xqc_member_t *x = &t->slot[slot];
  if (h->member_order > x->done_order && h->member_order <= x->order)
    x->done_order = h->member_order;
  xqc_members_fill(c, slot, m, s);
  XQ_LOGI(COMP, "member hello slot=%d host=%s key=%.8s address=%s generation=%d order=%" PRIu64,
          slot + 1, t->slot[slot].host[0] ? t->slot[slot].host : "-", p->key[0] ? p->key : "-",
          p->address[0] ? p->address : "-", t->slot[slot].generation, t->slot[slot].order);
  return slot;
}

/* ---- BatchRequest ---- */

void xqc_members_wait(xqc_t *c, xqc_peer_t *p, uint64_t rq, int slot, uint32_t ms,
                      const char *why) {
  Xqz__Envelope env;
  Xqz__Wait w;
  Xqz__Member m;
  Xqz__MemberSettings s;
  xq_msg_wait(&env, &w, ms, why);
  xqc_members_fill(c, slot, &m, &s);
  w.member = &m;
  env.request_id = rq;
  xqc_reply(c, p->rid, p->rid_len, &env);
}

int xqc_members_batch(xqc_t *c, xqc_peer_t *p, uint64_t rq, const Xqz__BatchRequest *r) {
  char why[400];
  bool hostile;
  int s = held_slot(c, p, r->member_slot, &hostile, why, sizeof why);
  if (s < 0) {
    refuse(c, p, rq, hostile, XQ_ERROR_BAD_FIELD, why);
    return -1;
  }
  xqc_members_t *t = &c->members;
  xqc_member_t *m = &t->slot[s];
  xqc_members_seen(t, s, xqc_now_ms(), (int64_t)r->trainer_step, 0);
  if (r->member_order > m->done_order) {
    bool was = xqc_members_copy_pending(t, s);
    m->done_order = r->member_order;
    if (was && !xqc_members_copy_pending(t, s)) {
      XQ_LOGI(COMP, "member copied slot=%d order=%" PRIu64 " net=%016" PRIx64 " parent=%d", s + 1,
              m->order, m->copy_net, m->parent + 1);
      drop_checkpoint(c, m->copy_net);
      m->round_step = m->last_step; /* its next round interval counts from the copy */
    }
  }
  if (xqc_members_copy_pending(t, s)) {
    snprintf(why, sizeof why, "copy order %" PRIu64 " pending", m->order);
    xqc_members_wait(c, p, rq, s, COPY_RETRY_MS, why);
    return -1;
  }
  return s;
}

/* ---- CandidateNet ---- */

/* Stores the checkpoint of net (len bytes) unless the same bytes are stored already;
 * checks what is stored. 0; XQ_EINVAL when the bytes are not net's checkpoint (or other
 * bytes are stored under its name); XQ_EIO when it cannot be written. */
static int store_checkpoint(xqc_t *c, uint64_t net, const ProtobufCBinaryData *ck, char *why,
                            size_t n) {
  char path[1024];
  checkpoint_path(c, net, path, sizeof path);
  unsigned char *have = NULL;
  size_t have_len = 0;
  xq_errbuf_t eb = {{0}};
  if (xq_read_file(path, XQ_WIRE_MAX_MESSAGE, &have, &have_len, NULL) == 0) {
    bool same = have_len == ck->len && memcmp(have, ck->data, have_len) == 0;
    free(have);
    if (same) return 0; /* a resend */
    snprintf(why, n, "another checkpoint of net %016" PRIx64 " is stored already", net);
    return XQ_EINVAL;
  }
  const void *parts[1] = {ck->data};
  size_t sizes[1] = {ck->len};
  if (xq_atomic_write(path, parts, sizes, 1, &eb) < 0) {
    snprintf(why, n, "cannot store the member's checkpoint: %s", eb.msg);
    return XQ_EIO;
  }
  uint32_t crc;
  size_t size;
  int64_t step;
  if (checkpoint_read(c, net, NULL, &size, &crc, &step, &eb) < 0) {
    unlink(path);
    snprintf(why, n, "the member's checkpoint does not load: %s", eb.msg);
    return XQ_EINVAL;
  }
  return 0;
}

int xqc_members_candidate_check(xqc_t *c, xqc_peer_t *p, const Xqz__CandidateNet *cn,
                                uint64_t net, char *why, size_t n) {
  bool hostile;
  int s = held_slot(c, p, cn->member_slot, &hostile, why, n);
  if (s < 0) {
    if (hostile) xqc_peer_fault(c, p, why);
    return XQ_EINVAL;
  }
  if (!cn->checkpoint.len) {
    snprintf(why, n, "a population member's candidate carries its checkpoint; this one has"
             " none (net %016" PRIx64 ")", net);
    xqc_peer_fault(c, p, why);
    return XQ_EINVAL;
  }
  uint32_t crc = xq_crc32(0, cn->checkpoint.data, cn->checkpoint.len);
  if (crc != cn->checkpoint_crc32) {
    snprintf(why, n, "checkpoint CRC mismatch: the candidate says %08" PRIx32 ", its %zu bytes"
             " have %08" PRIx32, cn->checkpoint_crc32, cn->checkpoint.len, crc);
    xqc_peer_fault(c, p, why);
    return XQ_EINVAL;
  }
  int rc = store_checkpoint(c, net, &cn->checkpoint, why, n);
  if (rc == XQ_EIO) XQ_LOGE(COMP, "member checkpoint not stored reason=\"%s\"", why);
  else if (rc < 0) xqc_peer_fault(c, p, why);
  return rc < 0 ? rc : s;
}

/* Whether net is still in play: the best net, a player of the open round, the open gating
 * match's candidate or the one queued for it, or a decision waiting to be stored. */
static bool net_in_play(const xqc_t *c, uint64_t net) {
  if (net == c->best || (c->gate.open && net == c->gate.cand) || net == c->queued_cand ||
      (c->verdict.active && net == c->verdict.cand))
    return true;
  for (int i = 0; c->round.open && i < c->round.nplayers; i++)
    if (c->round.player[i].net == net) return true;
  return false;
}

/* A member's candidate that a newer one of the same member replaced and that nothing
 * plays any more is retired like a rejected one (nets/rejected/, the newest
 * keep_rejected_nets kept): K members upload K times the candidates of one trainer, and
 * a campaign of weeks must not fill its disk with nets no round will rate. */
static void retire_superseded(xqc_t *c, uint64_t net) {
  char state[16] = "";
  if (!net || net_in_play(c, net) ||
      xqc_db_net_state(c->db, net, state, sizeof state, NULL) < 0 || strcmp(state, "candidate"))
    return;
  if (xqc_db_set_net_state(c->db, net, "superseded", 0.0) < 0) return; /* kept; said by db */
  xqc_net_files_decided(c->dir, net, false, c->cfg.keep_rejected_nets);
}

void xqc_members_candidate_stored(xqc_t *c, int slot, uint64_t net, int64_t step) {
  xqc_members_t *t = &c->members;
  uint64_t prev = t->slot[slot].last_net;
  xqc_members_seen(t, slot, xqc_now_ms(), step, net);
  xqc_members_persist(c);
  /* The leader's line is gated as a single trainer's is, not only once a round: a round
   * comes every pbt_interval_steps of the slowest member, and self-play would play an old
   * net that long (the 20-minute run promoted 7 nets where one trainer promoted 73). Its
   * candidate waiting for gating is replaced by this one (and retired below). */
  if (c->cfg.pbt_gate_leader && slot == xqc_round_leader(c) && net != c->best) {
    XQ_LOGI(COMP, "the leading member's candidate goes to gating member=%d net=%016" PRIx64
            " elo=%+.1f", slot + 1, net, t->slot[slot].elo);
    xqc_promote_gate_net(c, net, step);
  }
  if (prev != net) {
    drop_checkpoint(c, prev);
    retire_superseded(c, prev);
  }
  XQ_LOGI(COMP, "member candidate stored slot=%d net=%016" PRIx64 " step=%lld", slot + 1, net,
          (long long)step);
  xqc_round_candidate(c, slot);
}

/* ---- CheckpointRequest ---- */

void xqc_cmd_checkpoint_request(xqc_t *c, xqc_peer_t *p, uint64_t rq, const Xqz__Envelope *env) {
  if (c->cfg.population <= 0) {
    xqc_reply_error(c, p->rid, p->rid_len, rq, XQ_ERROR_NOT_FOUND,
                    "this campaign has no population (campaign.ini population = 0)");
    return;
  }
  const Xqz__CheckpointRequest *r = env->checkpoint_request;
  char why[400];
  bool hostile;
  int s = held_slot(c, p, r->member_slot, &hostile, why, sizeof why);
  if (s < 0) {
    refuse(c, p, rq, hostile, XQ_ERROR_BAD_FIELD, why);
    return;
  }
  xqc_member_t *m = &c->members.slot[s];
  xqc_members_seen(&c->members, s, xqc_now_ms(), 0, 0);
  if (!m->order || !r->net_id || r->net_id != m->copy_net) {
    if (m->order && !m->copy_net)
      snprintf(why, sizeof why, "checkpoint of net %016" PRIx64 " refused: slot %d's copy"
               " order %" PRIu64 " was withdrawn (its checkpoint could not be served); train on",
               r->net_id, s + 1, m->order);
    else
      snprintf(why, sizeof why, "checkpoint of net %016" PRIx64 " refused: slot %d's copy"
               " order names %s%016" PRIx64, r->net_id, s + 1, m->order ? "net " : "no net, ",
               m->order ? m->copy_net : 0);
    /* A request that crossed the withdrawal of its order is honest. */
    refuse(c, p, rq, !(m->order && !m->copy_net), XQ_ERROR_BAD_FIELD, why);
    return;
  }
  unsigned char *data = NULL;
  size_t size = 0;
  uint32_t crc = 0;
  int64_t step = 0;
  xq_errbuf_t eb;
  if (checkpoint_read(c, r->net_id, &data, &size, &crc, &step, &eb) < 0) {
    withdraw_copy(c, s, eb.msg);
    snprintf(why, sizeof why, "the coordinator cannot serve the checkpoint, and withdrew the"
             " copy order: %s", eb.msg);
    xqc_reply_error(c, p->rid, p->rid_len, rq, XQ_ERROR_INTERNAL, why);
    return;
  }
  Xqz__Envelope out;
  Xqz__Checkpoint ck;
  xq_msg_checkpoint(&out, &ck, r->net_id, (uint64_t)step, crc, data, size);
  out.request_id = rq;
  xqc_reply(c, p->rid, p->rid_len, &out);
  XQ_LOGI(COMP, "member checkpoint served slot=%d net=%016" PRIx64 " bytes=%zu", s + 1,
          r->net_id, size);
  free(data);
}
