/*
 * trainer.c: xqz-trainer. Resumes from DIR/trainer.xqzc (weights, optimiser state, step)
 * or starts from the coordinator's best net (start_net.h); then loops: BatchRequest -> Batch (samples validated,
 * encoded with xq_sample_encode, legal-move masks from each sample's position) -> one SGD
 * step; Wait -> sleep and ask again; every K steps a CandidateNet upload; a checkpoint on a
 * timer, at --max-steps and on SIGTERM/SIGINT (then exit 0). docs/trainer.md.
 * A checkpoint keeps the last --keep-checkpoints older ones (ckpt_ring.h); a loss or a
 * weight that diverges stops the trainer (exit 1) before it writes anything (diverge.h).
 * In a population (docs/population.md) it first says Hello and, made a member, trains
 * with the member's settings and carries out its copy orders (member.h, member_link.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

#include "nn/blas_core.h"
#include "nn/encode.h"
#include "nn/nn_checkpoint.h"
#include "nn/nn_ema.h"
#include "nn/nn_file.h"
#include "nn/nn_optim.h"
#include "nn/nn_train_pool.h"
#include "campaign.h"
#include "ckpt_ring.h"
#include "diverge.h"
#include "member.h"
#include "member_link.h"
#include "options.h"
#include "start_net.h"
#include "support/atomic_file.h"
#include "support/crc32.h"
#include "support/log.h"
#include "support/dirlock.h"
#include "support/mkdir_p.h"
#include "batch_shard.h"
#include "wire/messages.h"
#include "wire/peer.h"
#include "wire/wire.h"
#include "support/clock.h"

#define COMP "trainer"


static volatile sig_atomic_t stop_signal;
static void on_signal(int sig) { stop_signal = sig; }

static void sleep_ms(int64_t ms) {
  struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) && errno == EINTR && !stop_signal) {
  }
}

/* Everything the loop owns. */
typedef struct {
  trainer_opts_t o;
  char ckpt_path[600];
  char resumed_from[1024]; /* the checkpoint generation the trainer resumed from */
  nn_model_t *m;
  nn_train_pool_t *pool;  /* the training threads, each a shard of every batch */
  xq_batch_shard_t dec;   /* their sample decoders */
  nn_sgd_t opt;
  nn_ema_t ema;           /* the averaged weights the candidates carry (--ema-steps) */
  nn_file_meta_t meta;
  nn_loss_cfg_t loss_cfg;
  int max_n;              /* positions per step now (--batch, or the member's batch) */
  int pool_max;           /* the most the training threads were set up for (--max-batch) */
  nn_lr_schedule_t base_lr; /* --lr as given; a member's lr_scale multiplies it */
  /* Population membership (member_link.h); member_slot 0: a single trainer. */
  bool need_hello;        /* say Hello before the next BatchRequest */
  uint32_t slot_file;     /* the slot DIR/member.slot remembers (0: none) */
  uint32_t member_slot;   /* 1-based slot the coordinator's Welcome gave; 0: not a member */
  uint64_t member_order;  /* the last copy order carried out (DIR/member.order) */
  trainer_member_state_t mst;        /* what the settings and a copy change */
  trainer_member_settings_t msettings; /* the settings trained with now */
  trainer_member_settings_t masked;    /* the last ones the coordinator sent */
  bool masked_valid;
  /* The copy order being carried out: pending while copy_order > member_order. */
  uint64_t copy_order, copy_net, copy_size;
  uint32_t copy_crc;
  uint64_t copy_request;  /* request id of its CheckpointRequest in flight; 0: none */
  double copy_sent, copy_retry_at;
  /* wire */
  void *ctx, *sock;
  uint64_t next_request;
  uint64_t best_net_id;
  /* BatchRequests in flight, oldest first: --prefetch of them, so the next batch is on
   * its way while this one trains. A reply to any other id is stale and never trained. */
  uint64_t ahead[TRAINER_MAX_PREFETCH];
  double ahead_sent[TRAINER_MAX_PREFETCH];
  int nahead;
  double hold_until;      /* no new BatchRequest before (the coordinator said Wait) */
  /* The CandidateNet not yet acknowledged: kept, and resent after --timeout-ms, until the
   * coordinator's Ack for its request id (accepted, or refused with a reason). */
  unsigned char *pending_candidate;
  size_t pending_len;
  unsigned char *pending_ckpt; /* a member's: its checkpoint image at that step, or NULL */
  size_t pending_ckpt_len;
  uint32_t pending_slot;       /* the member slot it was made in (0: none) */
  int64_t pending_step;
  uint64_t pending_net_id;
  uint64_t candidate_request; /* request id of its last upload; 0 = not sent yet */
  double candidate_sent;
  /* progress */
  double t_log, t_ckpt;
  int64_t ckpt_step; /* the step of the newest checkpoint (loaded or written); -1: none */
  int64_t samples_since_log, rejected; /* rejected: samples dropped, as last logged */
  nn_loss_t loss_acc;
  int loss_n;
  nn_loss_t report_acc;   /* since the last BatchRequest (its loss_* fields) */
  int report_n;
} trainer_t;

static int fresh_net(trainer_t *t, const nn_arch_t *want) {
  xq_errbuf_t eb = {{0}};
  if (nn_model_new(&t->m, want, &eb) || nn_sgd_init(&t->opt, t->m, &eb)) {
    XQ_LOGE(COMP, "cannot allocate the network error=\"%s\"", eb.msg);
    return -1;
  }
  nn_model_init(t->m, (uint64_t)t->o.seed);
  memset(&t->meta, 0, sizeof t->meta);
  t->meta.net_id = nn_file_new_id();
  t->opt.step = 0;
  XQ_LOGI(COMP, "fresh network size=%s seed=%lld", t->o.size, (long long)t->o.seed);
  return 0;
}

/* No checkpoint: train on from the coordinator's best net (start_net.h); --size given
 * and different from it starts a fresh net of that size instead. */
static int start_from_best(trainer_t *t, const nn_arch_t *want) {
  xq_errbuf_t eb = {{0}};
  char path[1024];
  uint64_t id = 0;
  XQ_LOGI(COMP, "no checkpoint: fetching the coordinator's best net path=%s", t->ckpt_path);
  if (trainer_fetch_best_net(t->o.coordinator, &t->o.curve, t->o.dir, &stop_signal, path,
                             sizeof path, &id, &eb)) {
    XQ_LOGE(COMP, "cannot fetch the best net error=\"%s\"", eb.msg);
    return -1;
  }
  if (nn_file_load(path, &t->m, &t->meta, &eb) || nn_sgd_init(&t->opt, t->m, &eb)) {
    XQ_LOGE(COMP, "cannot load the best net path=%s error=\"%s\"", path, eb.msg);
    return -1;
  }
  if (t->o.size_given && memcmp(want, &t->m->arch, sizeof *want) != 0) {
    XQ_LOGW(COMP, "--size differs from the campaign's best net: training a fresh net of"
            " that size; the coordinator takes its candidates only if campaign.ini's net_size"
            " is that size too (they then play the current best in gating), and refuses"
            " them otherwise size=%s"
            " best_blocks=%d best_channels=%d best_gpool_every=%d best_survival=%d best_lines=%d"
            " best_reply=%d", t->o.size, t->m->arch.blocks, t->m->arch.channels,
            t->m->arch.gpool_every, t->m->arch.survival, t->m->arch.lines, t->m->arch.reply);
    nn_sgd_close(&t->opt);
    nn_model_free(&t->m);
    return fresh_net(t, want);
  }
  t->best_net_id = id;
  t->opt.step = t->meta.step;
  XQ_LOGI(COMP, "starting from the best net net=%016llx step=%lld blocks=%d channels=%d"
          " gpool_every=%d survival=%d lines=%d reply=%d", (unsigned long long)id,
          (long long)t->opt.step, t->m->arch.blocks, t->m->arch.channels, t->m->arch.gpool_every,
          t->m->arch.survival, t->m->arch.lines, t->m->arch.reply);
  return 0;
}

/* --ema-steps: the average the checkpoint kept goes on, else a new one starts here; with
 * --ema-steps 0 a kept one is dropped and candidates are the last step's weights. */
static int setup_average(trainer_t *t) {
  xq_errbuf_t eb = {{0}};
  if (t->o.ema_steps == 0) {
    if (t->ema.avg)
      XQ_LOGW(COMP, "dropping the checkpoint's averaged weights (--ema-steps 0): candidates"
              " are the last step's weights from now on averaged=%lld", (long long)t->ema.count);
    nn_ema_close(&t->ema);
    return 0;
  }
  if (t->ema.avg) {
    XQ_LOGI(COMP, "averaged weights resumed from the checkpoint averaged=%lld ema_steps=%lld",
            (long long)t->ema.count, (long long)t->o.ema_steps);
  } else if (nn_ema_init(&t->ema, t->m, t->o.ema_steps, &eb)) {
    XQ_LOGE(COMP, "cannot allocate the averaged weights error=\"%s\"", eb.msg);
    return -1;
  } else if (t->opt.step > 0) {
    XQ_LOGI(COMP, "averaged weights start at this step (the checkpoint holds none)"
            " step=%lld ema_steps=%lld", (long long)t->opt.step, (long long)t->o.ema_steps);
  }
  t->ema.horizon = t->o.ema_steps;
  return 0;
}

/* Loads the newest checkpoint generation (ckpt_ring.h) that loads and holds finite
 * weights. A newer one that does not is moved aside as NAME.damaged, each named in an
 * error line, once an older one has loaded; when none loads, all stay where they are and
 * the start fails. Returns 1 when one loaded, 0 when there is none, -1 on failure. */
static int load_newest_checkpoint(trainer_t *t) {
  char path[1024], bad[TRAINER_MAX_KEEP + 1][1024];
  xq_errbuf_t why[TRAINER_MAX_KEEP + 1];
  int nbad = 0;
  for (int g = 0; g <= TRAINER_MAX_KEEP; g++) {
    struct stat st;
    trainer_ckpt_gen_path(path, sizeof path, t->ckpt_path, g);
    if (stat(path, &st)) continue;
    xq_errbuf_t eb = {{0}};
    char what[128];
    int rc = nn_checkpoint_load(path, &t->m, &t->meta, &t->opt, &t->ema, &eb);
    if (rc == 0 && !trainer_weights_sane(t->m, &t->opt, &t->ema, what, sizeof what)) {
      xq_err_set(&eb, XQ_ERANGE, "%s: %s is not finite", path, what);
      nn_model_free(&t->m);
      nn_sgd_close(&t->opt);
      nn_ema_close(&t->ema);
      rc = -1;
    }
    if (rc) {
      XQ_LOGE(COMP, "checkpoint does not load; trying the one before it path=%s error=\"%s\"",
              path, eb.msg);
      snprintf(bad[nbad], sizeof bad[nbad], "%s", path);
      why[nbad++] = eb;
      continue;
    }
    for (int k = 0; k < nbad; k++) {
      char moved[1100];
      xq_errbuf_t meb = {{0}};
      if (trainer_ckpt_set_aside(bad[k], moved, sizeof moved, &meb))
        XQ_LOGE(COMP, "cannot move the damaged checkpoint aside; move it away by hand before"
                " the next start path=%s error=\"%s\"", bad[k], meb.msg);
      else
        XQ_LOGE(COMP, "checkpoint does not load; moved aside path=%s moved_to=%s"
                " error=\"%s\"", bad[k], moved, why[k].msg);
    }
    if (nbad)
      XQ_LOGE(COMP, "resumed from an older checkpoint: %d newer one(s) do not load (see above);"
              " the steps since it are trained again path=%s step=%lld", nbad, path,
              (long long)t->opt.step);
    snprintf(t->resumed_from, sizeof t->resumed_from, "%s", path);
    return 1;
  }
  if (nbad) {
    XQ_LOGE(COMP, "no checkpoint loads (each error above); to start over from the"
            " coordinator's best net, move the trainer.xqzc* files out of the directory"
            " dir=%s checkpoints=%d", t->o.dir, nbad);
    return -1;
  }
  return 0;
}

static int load_or_init(trainer_t *t) {
  xq_errbuf_t eb = {{0}};
  nn_arch_t want;
  if (nn_arch_preset(t->o.size, &want)) { /* checked by trainer_opts_parse already */
    XQ_LOGE(COMP, "unknown network size size=%s (" NN_ARCH_SPELLING ")", t->o.size);
    return -1;
  }
  int loaded = load_newest_checkpoint(t);
  if (loaded < 0) return -1;
  t->ckpt_step = -1; /* set below when a checkpoint loaded */
  if (loaded) {
    t->ckpt_step = t->opt.step;
    if (t->o.size_given && memcmp(&want, &t->m->arch, sizeof want) != 0) {
      XQ_LOGE(COMP, "checkpoint architecture differs from --size; drop --size to resume "
              "path=%s size=%s blocks=%d channels=%d gpool_every=%d survival=%d",
              t->resumed_from, t->o.size, t->m->arch.blocks, t->m->arch.channels,
              t->m->arch.gpool_every, t->m->arch.survival);
      return -1;
    }
    XQ_LOGI(COMP, "resumed from checkpoint path=%s step=%lld blocks=%d channels=%d"
            " gpool_every=%d survival=%d reply=%d", t->resumed_from, (long long)t->opt.step,
            t->m->arch.blocks, t->m->arch.channels, t->m->arch.gpool_every, t->m->arch.survival,
            t->m->arch.reply);
    trainer_campaign_loaded(&t->meta, t->resumed_from);
  } else if (start_from_best(t, &want) < 0) {
    return -1;
  }
  t->opt.momentum = (float)t->o.momentum;
  if (nn_lr_parse(&t->base_lr, t->o.lr, &eb)) {
    XQ_LOGE(COMP, "bad --lr schedule error=\"%s\"", eb.msg);
    return -1;
  }
  t->opt.schedule = t->base_lr;
  trainer_opts_loss_cfg(&t->o, &t->loss_cfg);
  t->max_n = (int)t->o.batch;
  /* Sized for --max-batch: a population may give this member a larger batch. */
  t->pool_max = (int)(t->o.max_batch > t->o.batch ? t->o.max_batch : t->o.batch);
  int threads = t->o.threads > t->max_n ? t->max_n : t->o.threads;
  if (nn_train_pool_new(&t->pool, t->m, threads, t->pool_max, XQ_BATCH_SHARD_MAX_PI, &eb) ||
      xq_batch_shard_init(&t->dec, threads, &eb)) {
    XQ_LOGE(COMP, "cannot set up the training threads threads=%d batch=%d max_batch=%d"
            " error=\"%s\"", threads, t->max_n, t->pool_max, eb.msg);
    return -1;
  }
  return setup_average(t);
}

/* What a population member's settings and copies change, and what DIR remembers of a
 * membership: its slot (asked for again in Hello) and its last copy order. A file that
 * does not read is named in a warning and taken as nothing remembered. */
static void member_setup(trainer_t *t) {
  t->mst = (trainer_member_state_t){.m = t->m, .meta = &t->meta, .opt = &t->opt,
                                    .ema = &t->ema, .loss_cfg = &t->loss_cfg,
                                    .base = &t->base_lr, .batch = &t->max_n,
                                    .max_batch = t->pool_max};
  trainer_member_settings_from_opts(&t->msettings, &t->o);
  uint64_t slot = 0;
  xq_errbuf_t eb = {{0}};
  if (trainer_member_file_read(t->o.dir, TRAINER_MEMBER_SLOT_FILE, &slot, &eb) ||
      trainer_member_file_read(t->o.dir, TRAINER_MEMBER_ORDER_FILE, &t->member_order, &eb))
    XQ_LOGW(COMP, "population file ignored error=\"%s\"", eb.msg);
  t->slot_file = slot <= UINT32_MAX ? (uint32_t)slot : 0;
  t->need_hello = true;
}

/* The divergence guard tripped (diverge.h): one error line naming the step, the loss,
 * what is not finite (when known) and the likely cause, the learning rate. Nothing is
 * written after it: the caller stops with exit status 1. */
static void diverged(trainer_t *t, const nn_loss_t *loss, const char *what) {
  XQ_LOGE(COMP, "training diverged: stopping before any checkpoint or candidate is written,"
          " so the last good checkpoint stays; the learning rate is likely too high for this"
          " net (or the batches are bad): lower --lr and restart, and the trainer resumes"
          " from its last good checkpoint step=%lld loss=%g policy=%g value=%g%s%s%s lr=%g"
          " lr_schedule=\"%s\" max_loss=%g checkpoint=%s", (long long)t->opt.step,
          loss ? loss->total : NAN, loss ? loss->policy : NAN, loss ? loss->value : NAN,
          what ? " not_finite=\"" : "", what ? what : "", what ? "\"" : "",
          (double)nn_lr_at(&t->opt.schedule, t->opt.step > 0 ? t->opt.step - 1 : 0), t->o.lr,
          t->o.max_loss, t->ckpt_path);
}

/* Returns 0, -1 when the write failed (training goes on), or -2 when the weights are not
 * finite: nothing is written and the caller stops. */
static int checkpoint(trainer_t *t, const char *why) {
  xq_errbuf_t eb = {{0}};
  char what[128];
  if (!trainer_weights_sane(t->m, &t->opt, &t->ema, what, sizeof what)) {
    diverged(t, NULL, what);
    return -2;
  }
  t->meta.created = (int64_t)time(NULL);
  t->meta.input_version = (uint32_t)nn_arch_input_version(&t->m->arch);
  if (trainer_ckpt_rotate(t->ckpt_path, (int)t->o.keep_checkpoints, &eb))
    XQ_LOGW(COMP, "cannot keep the older checkpoint; writing the new one anyway (check the"
            " directory's permissions and space) error=\"%s\"", eb.msg);
  int rc = nn_checkpoint_save(t->ckpt_path, t->m, &t->meta, &t->opt, &t->ema, &eb);
  if (rc) XQ_LOGE(COMP, "checkpoint failed; training goes on, check the disk path=%s error=\"%s\"",
                  t->ckpt_path, eb.msg);
  else XQ_LOGI(COMP, "checkpoint written path=%s step=%lld why=%s", t->ckpt_path,
               (long long)t->opt.step, why);
  if (!rc) t->ckpt_step = t->opt.step;
  t->t_ckpt = xq_clock_s();
  return rc ? -1 : 0;
}

static int send_env(trainer_t *t, Xqz__Envelope *env) {
  env->request_id = ++t->next_request;
  return xq_wire_send(t->sock, NULL, 0, env, ZMQ_DONTWAIT);
}

static int send_batch_request(trainer_t *t) {
  Xqz__Envelope env;
  Xqz__BatchRequest br;
  xq_msg_batch_request(&env, &br, (uint32_t)t->max_n, (uint64_t)t->opt.step);
  br.campaign_id = t->meta.campaign_id;
  br.software_version = (char *)XQ_SOFTWARE_NAME; /* the coordinator's min_peer_version */
  br.candidate_every = (uint64_t)t->o.candidate_every; /* its progress (Status.progress) */
  br.max_steps = (uint64_t)t->o.max_steps;
  br.member_slot = t->member_slot;
  br.member_order = t->member_slot ? t->member_order : 0;
  if (t->report_n > 0) { /* the coordinator keeps the loss curve (Status.loss_history) */
    double k = 1.0 / t->report_n;
    br.loss_steps = (uint32_t)t->report_n;
    br.loss = (float)(t->report_acc.total * k);
    br.loss_policy = (float)(t->report_acc.policy * k);
    br.loss_value = (float)(t->report_acc.value * k);
  }
  int rc = send_env(t, &env);
  if (rc == 0) {
    memset(&t->report_acc, 0, sizeof t->report_acc);
    t->report_n = 0;
  }
  return rc;
}

/* Sends the pending candidate, unless an upload of it awaits its Ack for less than
 * --timeout-ms; keeps it when the coordinator is unreachable. */
static void flush_candidate(trainer_t *t) {
  if (!t->pending_candidate) return;
  if (t->candidate_request &&
      xq_clock_s() - t->candidate_sent < (double)t->o.timeout_ms / 1000.0)
    return;
  if (t->candidate_request)
    XQ_LOGW(COMP, "no Ack for the candidate; uploading it again step=%lld net=%016llx",
            (long long)t->pending_step, (unsigned long long)t->pending_net_id);
  Xqz__Envelope env;
  Xqz__CandidateNet cn;
  xq_msg_candidate(&env, &cn, t->pending_candidate, t->pending_len, (uint64_t)t->pending_step);
  if (t->pending_ckpt) { /* a member's: the checkpoint another member may copy */
    cn.checkpoint.data = t->pending_ckpt;
    cn.checkpoint.len = t->pending_ckpt_len;
    cn.checkpoint_crc32 = xq_crc32(0, t->pending_ckpt, t->pending_ckpt_len);
  }
  cn.member_slot = t->pending_slot;
  if (send_env(t, &env) == 0) {
    XQ_LOGI(COMP, "candidate uploaded step=%lld bytes=%zu net=%016llx parent=%016llx",
            (long long)t->pending_step, t->pending_len, (unsigned long long)t->pending_net_id,
            (unsigned long long)t->best_net_id);
    t->candidate_request = t->next_request;
    t->candidate_sent = xq_clock_s();
  }
}

/* The coordinator's answer to the candidate's upload: either way it is done with. */
static void candidate_acked(trainer_t *t, const Xqz__Ack *a) {
  if (a->accepted)
    XQ_LOGI(COMP, "candidate accepted step=%lld net=%016llx", (long long)t->pending_step,
            (unsigned long long)t->pending_net_id);
  else
    XQ_LOGW(COMP, "candidate refused by the coordinator step=%lld net=%016llx reason=\"%s\"",
            (long long)t->pending_step, (unsigned long long)t->pending_net_id,
            a->reason ? a->reason : "");
  free(t->pending_candidate);
  t->pending_candidate = NULL;
  free(t->pending_ckpt);
  t->pending_ckpt = NULL;
  t->candidate_request = 0;
}

/* A member's checkpoint at this step as an .xqzc image (nn_checkpoint.h), under the
 * candidate's metadata (meta: its net id, which the coordinator files it under), through a
 * temporary file of DIR (its own checkpoint ring stays as it is): into *out, or NULL
 * with an error line (the candidate then goes without it). */
static void checkpoint_image(trainer_t *t, const nn_file_meta_t *meta, unsigned char **out,
                             size_t *len) {
  char path[700];
  xq_errbuf_t eb = {{0}};
  *out = NULL;
  *len = 0;
  snprintf(path, sizeof path, "%s/candidate.xqzc", t->o.dir);
  if (nn_checkpoint_save(path, t->m, meta, &t->opt, &t->ema, &eb) ||
      xq_read_file(path, XQ_WIRE_MAX_MESSAGE, out, len, &eb))
    XQ_LOGE(COMP, "cannot make the member's checkpoint for the candidate; uploading the net"
            " without it (check the directory's space) path=%s error=\"%s\"", path, eb.msg);
  unlink(path);
}

/* Encodes the candidate and uploads it; returns -1 (nothing uploaded) when its weights
 * are not finite: the trainer diverged and stops. */
static int make_candidate(trainer_t *t) {
  xq_errbuf_t eb = {{0}};
  char what[128];
  if (!trainer_weights_sane(t->m, &t->opt, &t->ema, what, sizeof what)) {
    diverged(t, NULL, what);
    return -1;
  }
  nn_file_meta_t meta = t->meta;
  meta.net_id = nn_file_new_id();
  meta.parent_id = t->best_net_id;
  meta.step = t->opt.step;
  meta.created = (int64_t)time(NULL);
  meta.input_version = (uint32_t)nn_arch_input_version(&t->m->arch);
  if (t->pending_candidate) /* never acknowledged: the newer net replaces it */
    XQ_LOGW(COMP, "candidate never acknowledged, replaced by a newer one step=%lld net=%016llx",
            (long long)t->pending_step, (unsigned long long)t->pending_net_id);
  free(t->pending_candidate);
  t->pending_candidate = NULL;
  free(t->pending_ckpt);
  t->pending_ckpt = NULL;
  t->candidate_request = 0;
  const nn_model_t *net = t->ema.avg && t->ema.count > 0 ? t->ema.avg : t->m;
  if (nn_file_encode(&t->pending_candidate, &t->pending_len, net, &meta, &eb)) {
    XQ_LOGE(COMP, "cannot encode the candidate error=\"%s\"", eb.msg);
    return 0;
  }
  t->pending_step = t->opt.step;
  t->pending_net_id = meta.net_id;
  t->pending_slot = t->member_slot;
  if (t->member_slot) checkpoint_image(t, &meta, &t->pending_ckpt, &t->pending_ckpt_len);
  flush_candidate(t);
  return 0;
}

/* One step on a Batch: the pool's threads decode, encode and train on a shard each.
 * Returns samples used, or -1 when the step's loss diverged (logged; the caller stops). */
static int train_on(trainer_t *t, const Xqz__Batch *b) {
  int count = b->n_samples < (size_t)t->max_n ? (int)b->n_samples : t->max_n;
  t->dec.batch = b;
  nn_loss_t loss;
  int n = nn_train_pool_step(t->pool, &t->opt, count, xq_batch_shard_fill, &t->dec,
                             &t->loss_cfg, &loss);
  int64_t rejected = xq_batch_shard_rejected(&t->dec);
  for (int r = 0; r < t->dec.threads && rejected > t->rejected; r++) {
    if (!t->dec.rank[r].last.msg[0]) continue;
    if (t->rejected < 10 || rejected / 1000 > t->rejected / 1000)
      XQ_LOGW(COMP, "bad samples from the coordinator dropped rejected=%lld reason=\"%s\"",
              (long long)rejected, t->dec.rank[r].last.msg);
    break;
  }
  t->rejected = rejected;
  if (n == 0) return 0;
  if (!trainer_loss_sane(&loss, t->o.max_loss)) {
    diverged(t, &loss, NULL);
    return -1;
  }
  if (t->ema.avg) nn_ema_update(&t->ema, t->m);
  t->loss_acc.total += loss.total;
  t->loss_acc.policy += loss.policy;
  t->loss_acc.value += loss.value;
  t->loss_acc.l2 += loss.l2;
  t->loss_acc.survival += loss.survival;
  t->loss_acc.reply += loss.reply;
  t->loss_n++;
  t->report_acc.total += loss.total;
  t->report_acc.policy += loss.policy;
  t->report_acc.value += loss.value;
  t->report_n++;
  return n;
}

static void log_progress(trainer_t *t, const Xqz__Batch *b) {
  double now = xq_clock_s(), dt = now - t->t_log;
  double k = t->loss_n ? 1.0 / t->loss_n : 0.0;
  /* A survival (reply) net's line ends with its survival (reply) loss, unweighted like
   * policy and value. */
  char surv[64] = "";
  int at = 0;
  if (t->m->arch.survival)
    at = snprintf(surv, sizeof surv, " survival=%.4f", t->loss_acc.survival * k);
  if (t->m->arch.reply)
    snprintf(surv + at, sizeof surv - (size_t)at, " reply=%.4f", t->loss_acc.reply * k);
  XQ_LOGI(COMP, "training step=%lld loss=%.4f policy=%.4f value=%.4f l2=%.5f lr=%g "
          "samples_per_s=%.1f window=%llu best_net=%016llx%s",
          (long long)t->opt.step, t->loss_acc.total * k, t->loss_acc.policy * k,
          t->loss_acc.value * k, t->loss_acc.l2 * k,
          (double)nn_lr_at(&t->opt.schedule, t->opt.step - 1),
          dt > 0 ? (double)t->samples_since_log / dt : 0.0,
          (unsigned long long)b->window_positions, (unsigned long long)t->best_net_id, surv);
  memset(&t->loss_acc, 0, sizeof t->loss_acc);
  t->loss_n = 0;
  t->samples_since_log = 0;
  t->t_log = now;
}

/* Keeps --prefetch BatchRequests in flight (unless the coordinator asked to wait).
 * Returns false when the coordinator is not connected. */
static bool request_ahead(trainer_t *t) {
  while (t->nahead < t->o.prefetch && xq_clock_s() >= t->hold_until) {
    if (send_batch_request(t)) return false; /* not connected: ZMQ_IMMEDIATE queues nothing */
    t->ahead[t->nahead] = t->next_request;
    t->ahead_sent[t->nahead] = xq_clock_s();
    t->nahead++;
  }
  return true;
}

/* Takes request id out of the in-flight list; false if it is not there (stale). */
static bool take_ahead(trainer_t *t, uint64_t id) {
  for (int i = 0; i < t->nahead; i++) {
    if (t->ahead[i] != id) continue;
    memmove(&t->ahead[i], &t->ahead[i + 1], (size_t)(t->nahead - i - 1) * sizeof t->ahead[0]);
    memmove(&t->ahead_sent[i], &t->ahead_sent[i + 1],
            (size_t)(t->nahead - i - 1) * sizeof t->ahead_sent[0]);
    t->nahead--;
    return true;
  }
  return false;
}

/* Not connected (ZMQ_IMMEDIATE queues nothing): a WARN line every --timeout-ms since
 * *since, and 100 ms before the next try. */
static void unreachable(const trainer_t *t, double *since) {
  if (xq_clock_s() - *since >= (double)t->o.timeout_ms / 1000.0) {
    XQ_LOGW(COMP, "coordinator unreachable; retrying (is it running?) endpoint=%s",
            t->o.coordinator);
    *since = xq_clock_s();
  }
  sleep_ms(100);
}

static void hold(trainer_t *t, int64_t ms) { t->hold_until = xq_clock_s() + (double)ms / 1000.0; }

/* A member's settings as the coordinator sent them: trained with from the next step when
 * they differ from the current ones (one line each time). A batch above --max-batch is cut
 * to it; settings out of range are refused (one error line); both once per new value. */
static void member_settings(trainer_t *t, const Xqz__MemberSettings *w) {
  trainer_member_settings_t s;
  trainer_member_settings_from_wire(&s, w);
  if (t->masked_valid && trainer_member_settings_equal(&s, &t->masked)) return;
  t->masked = s;
  t->masked_valid = true;
  if (s.batch > t->pool_max) {
    XQ_LOGW(COMP, "the member's batch is above --max-batch; training with --max-batch (start"
            " the trainer with a larger --max-batch to train with it) batch=%" PRId64
            " max_batch=%d", s.batch, t->pool_max);
    s.batch = t->pool_max;
  }
  if (trainer_member_settings_equal(&s, &t->msettings)) return;
  xq_errbuf_t eb = {{0}};
  if (trainer_member_apply(&t->mst, &s, &eb)) {
    XQ_LOGE(COMP, "member settings refused; training on with the current ones slot=%u"
            " error=\"%s\"", t->member_slot, eb.msg);
    return;
  }
  t->msettings = s;
  XQ_LOGI(COMP, "member settings slot=%u lr_scale=%g l2=%g value_weight=%g batch=%" PRId64,
          t->member_slot, s.lr_scale, s.l2, s.value_weight, s.batch);
}

static bool copy_pending(const trainer_t *t) { return t->copy_order > t->member_order; }

/* A copy order newer than the last one carried out: asks for the donor's checkpoint
 * (CheckpointRequest), unless a request for it is in flight (for less than --timeout-ms)
 * or a failed one is waiting to be asked again. */
static void member_copy_order(trainer_t *t, const Xqz__Member *mb) {
  double now = xq_clock_s();
  if (mb->order != t->copy_order) {
    XQ_LOGI(COMP, "member copy order slot=%u order=%" PRIu64 " donor_net=%016" PRIx64
            " parent=%u bytes=%" PRIu64, t->member_slot, mb->order, mb->copy_net, mb->parent,
            mb->copy_size);
    t->copy_request = 0;
    t->copy_retry_at = 0;
  } else if ((t->copy_request && now - t->copy_sent < (double)t->o.timeout_ms / 1000.0) ||
             now < t->copy_retry_at) {
    return;
  }
  t->copy_order = mb->order;
  t->copy_net = mb->copy_net;
  t->copy_size = mb->copy_size;
  t->copy_crc = mb->copy_crc32;
  Xqz__Envelope env;
  Xqz__CheckpointRequest r;
  xq_msg_checkpoint_request(&env, &r, t->copy_net, t->member_slot);
  if (send_env(t, &env) == 0) {
    t->copy_request = t->next_request;
    t->copy_sent = now;
  }
}

/* Order done: remembered in DIR/member.order, and said in every BatchRequest. */
static void member_order_done(trainer_t *t, uint64_t order) {
  xq_errbuf_t eb = {{0}};
  t->member_order = order;
  if (trainer_member_file_write(t->o.dir, TRAINER_MEMBER_ORDER_FILE, t->member_order, &eb))
    XQ_LOGE(COMP, "cannot remember the copy order; after a restart the copy is made again"
            " error=\"%s\"", eb.msg);
}

/* What a Welcome, Batch or Wait says of this member: its settings and its copy order. An
 * order with no net (copy_net 0) was withdrawn by the coordinator, whose copy of the donor's
 * checkpoint could not be served: the member keeps its weights, with the order's settings. */
static void member_update(trainer_t *t, const Xqz__Member *mb) {
  if (!mb || mb->slot == 0 || t->member_slot == 0) return;
  if (mb->settings) member_settings(t, mb->settings);
  if (mb->order <= t->member_order || mb->control) return;
  if (mb->copy_net) {
    member_copy_order(t, mb);
    return;
  }
  XQ_LOGW(COMP, "member copy order withdrawn by the coordinator (the donor's checkpoint could"
          " not be served): training on with this member's own weights slot=%u order=%" PRIu64,
          t->member_slot, mb->order);
  t->copy_order = mb->order;
  t->copy_request = 0;
  member_order_done(t, mb->order);
}

/* The reply to the CheckpointRequest: a checkpoint that passes every check replaces the
 * trainer's state (trainer_member_copy), is written as its own checkpoint at once, and its
 * order is remembered; anything else is logged and asked for again later. */
static void on_checkpoint(trainer_t *t, const Xqz__Envelope *env) {
  xq_errbuf_t eb = {{0}};
  int rc;
  t->copy_request = 0;
  if (env->body_case == XQZ__ENVELOPE__BODY_CHECKPOINT) {
    const Xqz__Checkpoint *ck = env->checkpoint;
    rc = trainer_member_checkpoint_check(ck, t->copy_net, t->copy_size, t->copy_crc, &eb);
    if (!rc)
      rc = trainer_member_copy(&t->mst, t->o.dir, ck->data.data, ck->data.len, ck->crc32, &eb);
  } else if (env->body_case == XQZ__ENVELOPE__BODY_ERROR) {
    rc = xq_err_set(&eb, XQ_EIO, "the coordinator refused the checkpoint request: %s",
                    env->error->message ? env->error->message : "");
  } else {
    rc = xq_err_set(&eb, XQ_EFORMAT, "the coordinator answered the checkpoint request with"
                    " message body %d", (int)env->body_case);
  }
  if (rc) {
    XQ_LOGE(COMP, "member copy failed; nothing copied, training waits and asks again"
            " slot=%u order=%" PRIu64 " donor_net=%016" PRIx64 " error=\"%s\"",
            t->member_slot, t->copy_order, t->copy_net, eb.msg);
    t->copy_retry_at = xq_clock_s() + (double)t->o.timeout_ms / 1000.0;
    return;
  }
  t->member_order = t->copy_order;
  checkpoint(t, "member-copy");
  member_order_done(t, t->copy_order);
  memset(&t->loss_acc, 0, sizeof t->loss_acc);
  t->loss_n = 0;
  XQ_LOGI(COMP, "member copied slot=%u donor_net=%016" PRIx64 " step=%lld order=%" PRIu64,
          t->member_slot, t->copy_net, (long long)t->opt.step, t->member_order);
}

/* The coordinator's Welcome: with a Member, this trainer is that member (its slot
 * remembered in DIR/member.slot, its settings applied); without, a single trainer. */
static void welcome(trainer_t *t, const Xqz__Welcome *w) {
  trainer_campaign_adopt(&t->meta.campaign_id, w->campaign_id);
  const Xqz__Member *mb = w->member;
  if (!mb || mb->slot == 0) {
    if (t->member_slot || t->slot_file)
      XQ_LOGI(COMP, "the coordinator runs no population: a single trainer slot_file=%u",
              t->slot_file);
    t->member_slot = 0;
    return;
  }
  t->member_slot = mb->slot;
  if (mb->slot != t->slot_file) {
    xq_errbuf_t eb = {{0}};
    if (trainer_member_file_write(t->o.dir, TRAINER_MEMBER_SLOT_FILE, mb->slot, &eb))
      XQ_LOGE(COMP, "cannot remember the member slot; the next start asks for any slot"
              " error=\"%s\"", eb.msg);
    else
      t->slot_file = mb->slot;
  }
  XQ_LOGI(COMP, "population member slot=%u generation=%u parent=%u order=%" PRIu64
          " done_order=%" PRIu64 " control=%d", mb->slot, mb->generation, mb->parent,
          mb->order, t->member_order, (int)mb->control);
  t->masked_valid = false; /* the settings line again, for this Welcome */
  member_update(t, mb);
}

/* A coordinator of another protocol version, or one admitting only newer trainers
 * (rrc and env from xq_wire_recv): logged, true. Retrying cannot help. */
static bool version_refused(int rrc, const Xqz__Envelope *env, const xq_errbuf_t *eb) {
  if (rrc != XQ_EVERSION && !xq_wire_is_version_refusal(env)) return false;
  const char *why = env ? env->error->message : eb->msg;
  if (!strncmp(why, XQ_WIRE_TOO_OLD, strlen(XQ_WIRE_TOO_OLD)))
    XQ_LOGE(COMP, "the coordinator admits only newer trainers; stopping after a checkpoint:"
            " install the version it names, then start the trainer again"
            " this_trainer=\"%s\" reason=\"%s\"", XQ_VERSION_LINE, why);
  else
    XQ_LOGE(COMP, "the coordinator speaks another protocol version; stopping (upgrade the"
            " trainer or the coordinator) this_trainer=\"%s\" reason=\"%s\"",
            XQ_VERSION_LINE, why);
  return true;
}

/* The answer to Hello: 0 to train (member or single trainer), 1 to ask again later, or
 * -1 (exit 1), -2 (exit 2) to stop. */
static int hello_answer(trainer_t *t, const Xqz__Envelope *env) {
  if (env->body_case == XQZ__ENVELOPE__BODY_WELCOME) {
    welcome(t, env->welcome);
    return 0;
  }
  if (env->body_case != XQZ__ENVELOPE__BODY_ERROR) {
    XQ_LOGW(COMP, "unexpected answer to Hello; a single trainer body=%d", (int)env->body_case);
    return 0;
  }
  const Xqz__Error *e = env->error;
  const char *msg = e->message ? e->message : "";
  if (trainer_campaign_refused(e, t->meta.campaign_id, t->o.dir)) {
    checkpoint(t, "campaign-mismatch"); /* still of its own campaign */
    return -1;
  }
  switch (trainer_member_refusal(e)) {
    case TRAINER_HELLO_FATAL:
      XQ_LOGE(COMP, "the population refuses this trainer; stopping (give it the campaign's"
              " net size with --size, or a --dir of this campaign) slot_file=%u reason=\"%s\"",
              t->slot_file, msg);
      if (t->opt.step != t->ckpt_step) checkpoint(t, "population-refused");
      return -2;
    case TRAINER_HELLO_RETRY:
      XQ_LOGW(COMP, "no population slot for this trainer now; asking again in %lld ms"
              " slot_file=%u reason=\"%s\"", (long long)t->o.timeout_ms, t->slot_file, msg);
      return 1;
    case TRAINER_HELLO_SINGLE:
      break;
  }
  XQ_LOGI(COMP, "the coordinator does not take the trainer's Hello; a single trainer code=%u"
          " reason=\"%s\"", e->code, msg);
  t->member_slot = 0;
  return 0;
}

/* Says Hello (role trainer, the remembered slot, the net's architecture) and waits for the
 * answer, saying it again after each --timeout-ms without one. Replies to anything sent
 * before are dropped (stale). Returns 0 to train (also on a signal: run() then stops), or
 * the exit code. */
static int hello(trainer_t *t) {
  char host[256] = "", arch[64];
  if (gethostname(host, sizeof host - 1)) host[0] = '\0';
  nn_arch_name(&t->m->arch, arch, sizeof arch);
  t->nahead = 0; /* requests in flight are forgotten: a late reply is stale */
  const double timeout_s = (double)t->o.timeout_ms / 1000.0;
  double t0 = xq_clock_s();
  while (!stop_signal) {
    Xqz__Envelope env;
    Xqz__Hello h;
    xq_msg_hello(&env, &h, XQZ__ROLE__ROLE_TRAINER, NULL, host,
                 (uint32_t)nn_train_pool_threads(t->pool), t->meta.campaign_id);
    h.member_slot = t->slot_file;
    h.net_arch = arch;
    h.member_order = t->member_order;
    if (send_env(t, &env)) {
      unreachable(t, &t0);
      continue;
    }
    uint64_t id = t->next_request;
    double sent = xq_clock_s();
    while (!stop_signal && xq_clock_s() - sent < timeout_s) {
      zmq_pollitem_t pi = {t->sock, 0, ZMQ_POLLIN, 0};
      if (zmq_poll(&pi, 1, 100) <= 0) continue;
      Xqz__Envelope *r = NULL;
      xq_errbuf_t eb = {{0}};
      int rrc = xq_wire_recv(t->sock, NULL, NULL, &r, ZMQ_DONTWAIT, &eb);
      if (version_refused(rrc, r, &eb)) {
        xq_wire_free(&r);
        checkpoint(t, "protocol-version");
        return 1;
      }
      if (rrc || r->request_id != id) {
        xq_wire_free(&r);
        continue;
      }
      int v = hello_answer(t, r);
      xq_wire_free(&r);
      if (v <= 0) {
        t->need_hello = false;
        return -v;
      }
      sleep_ms(t->o.timeout_ms); /* no slot now: ask again */
      sent = -1.0;
      break;
    }
    if (sent >= 0.0 && !stop_signal)
      XQ_LOGW(COMP, "no answer to Hello; saying it again (is the coordinator running?)"
              " endpoint=%s timeout_ms=%lld", t->o.coordinator, (long long)t->o.timeout_ms);
    t0 = xq_clock_s();
  }
  return 0;
}

/* Acts on one reply; returns -1 to stop (exit code 1), else 0. */
static int on_reply(trainer_t *t, Xqz__Envelope *env) {
  if (t->candidate_request && env->request_id == t->candidate_request) {
    if (env->body_case == XQZ__ENVELOPE__BODY_ACK) candidate_acked(t, env->ack);
    else if (env->body_case == XQZ__ENVELOPE__BODY_ERROR) /* kept: resent after the timeout */
      XQ_LOGW(COMP, "coordinator error on the candidate upload; will retry code=%u"
              " message=\"%s\"", env->error->code, env->error->message ? env->error->message : "");
    return 0;
  }
  if (t->copy_request && env->request_id == t->copy_request) {
    on_checkpoint(t, env);
    return 0;
  }
  if (!take_ahead(t, env->request_id)) {
    /* A late reply to a request already given up on; its batch is not used twice. */
    XQ_LOGD(COMP, "stale reply ignored request_id=%llu", (unsigned long long)env->request_id);
    return 0;
  }
  switch (env->body_case) {
    case XQZ__ENVELOPE__BODY_BATCH: {
      const Xqz__Batch *b = env->batch;
      t->best_net_id = b->best_net_id;
      trainer_campaign_adopt(&t->meta.campaign_id, b->campaign_id);
      member_update(t, b->member);
      request_ahead(t); /* the next batch travels while this one trains */
      if (copy_pending(t)) { /* trained on after the copy only: dropped */
        XQ_LOGD(COMP, "batch dropped: a copy order is pending order=%llu",
                (unsigned long long)t->copy_order);
        break;
      }
      int n = train_on(t, b);
      if (n < 0) return -1; /* diverged: nothing more is written */
      if (n == 0) break;
      t->samples_since_log += n;
      if (t->opt.step % t->o.log_every == 0) log_progress(t, b);
      if (t->opt.step % t->o.candidate_every == 0 && make_candidate(t) < 0) return -1;
      break;
    }
    case XQZ__ENVELOPE__BODY_WAIT: {
      int64_t ms = env->wait->retry_ms ? env->wait->retry_ms : 1000;
      if (ms > 60000) ms = 60000;
      XQ_LOGD(COMP, "coordinator says wait retry_ms=%lld reason=\"%s\"", (long long)ms,
              env->wait->reason ? env->wait->reason : "");
      hold(t, ms);
      member_update(t, env->wait->member);
      break;
    }
    case XQZ__ENVELOPE__BODY_ERROR:
      if (trainer_campaign_refused(env->error, t->meta.campaign_id, t->o.dir)) {
        checkpoint(t, "campaign-mismatch"); /* still of its own campaign */
        return -1;
      }
      XQ_LOGW(COMP, "coordinator error; retrying code=%u message=\"%s\"", env->error->code,
              env->error->message ? env->error->message : "");
      /* A member's slot is bound to its connection: a coordinator that restarted (or lost
       * it) asks for Hello again. */
      if (t->member_slot) t->need_hello = true;
      hold(t, 1000);
      break;
    default:
      XQ_LOGD(COMP, "unexpected reply ignored body=%d", (int)env->body_case);
      break;
  }
  return 0;
}

/* Returns the exit code. */
static int run(trainer_t *t) {
  t->t_log = t->t_ckpt = xq_clock_s();
  double unreachable_since = xq_clock_s();
  const double timeout_s = (double)t->o.timeout_ms / 1000.0;
  while (!stop_signal) {
    if (t->need_hello) {
      int hrc = hello(t);
      if (hrc) return hrc;
      continue;
    }
    if (t->o.max_steps > 0 && t->opt.step >= t->o.max_steps) {
      XQ_LOGI(COMP, "reached --max-steps step=%lld", (long long)t->opt.step);
      break;
    }
    /* The timer writes only a step not yet written: a paced or waiting trainer that
     * rewrote the same step would push every older generation out of the ring. */
    if (xq_clock_s() - t->t_ckpt >= t->o.checkpoint_every_s) {
      if (t->opt.step == t->ckpt_step) t->t_ckpt = xq_clock_s();
      else if (checkpoint(t, "timer") == -2) return 1; /* diverged: nothing written */
    }
    flush_candidate(t);
    if (!request_ahead(t) && t->nahead == 0) {
      unreachable(t, &unreachable_since);
      continue;
    }
    unreachable_since = xq_clock_s();
    zmq_pollitem_t pi = {t->sock, 0, ZMQ_POLLIN, 0};
    int rc = zmq_poll(&pi, 1, 100);
    if (rc < 0 && zmq_errno() != EINTR) {
      XQ_LOGE(COMP, "zmq_poll failed error=\"%s\"", zmq_strerror(zmq_errno()));
      return 1;
    }
    if (rc <= 0) {
      if (t->nahead > 0 && xq_clock_s() - t->ahead_sent[0] >= timeout_s) {
        /* The coordinator restarted or lost them: forget every request in flight (a late
         * reply to one is stale) and ask again. */
        XQ_LOGW(COMP, "no reply from the coordinator; asking again (is it running?) "
                "endpoint=%s timeout_ms=%lld in_flight=%d", t->o.coordinator,
                (long long)t->o.timeout_ms, t->nahead);
        t->nahead = 0;
        if (t->member_slot) t->need_hello = true; /* its slot may have gone with it */
      }
      continue;
    }
    Xqz__Envelope *env = NULL;
    xq_errbuf_t eb = {{0}};
    int rrc = xq_wire_recv(t->sock, NULL, NULL, &env, ZMQ_DONTWAIT, &eb);
    if (version_refused(rrc, env, &eb)) { /* retrying cannot help: save the work and stop */
      xq_wire_free(&env);
      checkpoint(t, "protocol-version");
      return 1;
    }
    if (rrc) {
      if (zmq_errno() != EAGAIN && zmq_errno() != EINTR)
        XQ_LOGW(COMP, "malformed message from the coordinator dropped reason=\"%s\"", eb.msg);
      continue;
    }
    rc = on_reply(t, env);
    xq_wire_free(&env);
    if (rc < 0) return 1;
  }
  if (stop_signal) XQ_LOGI(COMP, "stopping on signal signal=%d", (int)stop_signal);
  return checkpoint(t, stop_signal ? "signal" : "max-steps") ? 1 : 0;
}

static void trainer_close(trainer_t *t) {
  xq_peer_close(&t->sock);
  if (t->ctx) zmq_ctx_term(t->ctx);
  nn_train_pool_free(&t->pool); /* before the model its threads train */
  xq_batch_shard_close(&t->dec);
  nn_model_free(&t->m);
  nn_sgd_close(&t->opt);
  nn_ema_close(&t->ema);
  free(t->pending_candidate);
  free(t->pending_ckpt);
}

int main(int argc, char **argv) {
  nn_blas_core_setup(argv); /* first: may restart this program on better BLAS kernels */
  trainer_t *t = calloc(1, sizeof *t);
  if (!t) return 1;
  int rc = trainer_opts_parse(&t->o, argc, argv);
  if (rc) {
    free(t);
    return rc > 0 ? 0 : 2;
  }
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGINT, &sa, NULL);
  signal(SIGPIPE, SIG_IGN);
  xq_errbuf_t deb = {{0}};
  if (xq_mkdir_p(t->o.dir, &deb) < 0) {
    XQ_LOGE(COMP, "cannot create the state directory dir=%s error=\"%s\"", t->o.dir, deb.msg);
    free(t);
    return 1;
  }
  xq_dirlock_t dirlock; /* held for the process's life: one trainer per state directory */
  if (xq_dirlock_acquire(&dirlock, t->o.dir, "xqz-trainer", &deb) < 0) {
    XQ_LOGE(COMP, "cannot start: %s", deb.msg);
    free(t);
    return 1;
  }
  snprintf(t->ckpt_path, sizeof t->ckpt_path, "%s/trainer.xqzc", t->o.dir);
  rc = 1;
  if (load_or_init(t)) goto out;
  member_setup(t);
  t->ctx = zmq_ctx_new();
  if (!t->ctx) {
    XQ_LOGE(COMP, "cannot set up the coordinator socket: zmq_ctx_new failed error=\"%s\"",
            zmq_strerror(zmq_errno()));
    goto out;
  }
  const xq_peer_opts_t popts = {.immediate = true}; /* no request queued while unconnected */
  xq_errbuf_t ceb = {{0}};
  if (xq_peer_open(&t->sock, t->ctx, t->o.coordinator, &t->o.curve, &popts, &ceb) < 0) {
    XQ_LOGE(COMP, "cannot set up the coordinator socket error=\"%s\"", ceb.msg);
    goto out; /* trainer_close frees the context */
  }
  const char *blas_was = nn_blas_core_replaced();
  XQ_LOGI(COMP, "started endpoint=%s dir=%s batch=%d max_batch=%d threads=%d step=%lld"
          " candidate_every=%lld ema_steps=%lld curve=%s blas_core=%s blas_fallback=%s"
          " member_slot_file=%u member_order=%llu", t->o.coordinator, t->o.dir, t->max_n,
          t->pool_max, nn_train_pool_threads(t->pool), (long long)t->opt.step,
          (long long)t->o.candidate_every, (long long)t->o.ema_steps,
          t->o.curve.on ? "on" : "off", nn_blas_core(), blas_was ? blas_was : "none",
          t->slot_file, (unsigned long long)t->member_order);
  rc = run(t);
out:
  trainer_close(t);
  free(t);
  return rc;
}
