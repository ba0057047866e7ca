/*
 * trainer.c: xqz-trainer. Resumes from DIR/trainer.xqzc (weights, optimiser state, step)
 * or starts from the coordinator's best net (start_net.h); then loops: BatchRequest -> Batch (samples validated,
 * encoded with xq_sample_encode, legal-move masks from each sample's position) -> one SGD
 * step; Wait -> sleep and ask again; every K steps a CandidateNet upload; a checkpoint on a
 * timer, at --max-steps and on SIGTERM/SIGINT (then exit 0). docs/trainer.md.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <zmq.h>

#include "nn/encode.h"
#include "nn/nn_checkpoint.h"
#include "nn/nn_file.h"
#include "nn/nn_optim.h"
#include "nn/nn_plan.h"
#include "options.h"
#include "start_net.h"
#include "support/log.h"
#include "support/dirlock.h"
#include "support/mkdir_p.h"
#include "wire/sample.h"
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
  nn_model_t *m;
  nn_plan_t *plan;
  nn_sgd_t opt;
  nn_file_meta_t meta;
  nn_loss_cfg_t loss_cfg;
  int max_n;
  /* batch buffers */
  float *planes;          /* (max_n, NN_INPUT_PLANES, 90) */
  uint8_t *mask;          /* (max_n, NN_POLICY_SIZE) */
  int32_t *pi_off;        /* (max_n + 1) */
  nn_pi_entry_t *pi;      /* (max_n * XQ_MAX_MOVES) */
  float *z;               /* (max_n) */
  xq_sample_t *sample;    /* one decoded sample */
  xq_pos_t *pos;          /* its position */
  /* wire */
  void *ctx, *sock;
  uint64_t next_request;
  uint64_t best_net_id;
  unsigned char *pending_candidate; /* a CandidateNet not yet sent (coordinator down) */
  size_t pending_len;
  int64_t pending_step;
  /* progress */
  double t_log, t_ckpt;
  int64_t samples_since_log, rejected;
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
            " that size (its candidates play the current architecture in gating) size=%s"
            " best_blocks=%d best_channels=%d", t->o.size, t->m->arch.blocks,
            t->m->arch.channels);
    nn_sgd_close(&t->opt);
    nn_model_free(&t->m);
    return fresh_net(t, want);
  }
  t->best_net_id = id;
  t->opt.step = t->meta.step;
  XQ_LOGI(COMP, "starting from the best net net=%016llx step=%lld blocks=%d channels=%d",
          (unsigned long long)id, (long long)t->opt.step, t->m->arch.blocks,
          t->m->arch.channels);
  return 0;
}

static int load_or_init(trainer_t *t) {
  xq_errbuf_t eb = {{0}};
  struct stat st;
  nn_arch_t want;
  if (nn_arch_preset(t->o.size, &want)) {
    XQ_LOGE(COMP, "unknown network size size=%s (tiny, default, large or BxC such as 4x16)",
            t->o.size);
    return -1;
  }
  if (stat(t->ckpt_path, &st) == 0) {
    int rc = nn_checkpoint_load(t->ckpt_path, &t->m, &t->meta, &t->opt, &eb);
    if (rc) {
      XQ_LOGE(COMP, "cannot load the checkpoint; move it away to start afresh path=%s error=\"%s\"",
              t->ckpt_path, eb.msg);
      return -1;
    }
    if (t->o.size_given && memcmp(&want, &t->m->arch, sizeof want) != 0) {
      XQ_LOGE(COMP, "checkpoint architecture differs from --size; drop --size to resume "
              "path=%s size=%s blocks=%d channels=%d", t->ckpt_path, t->o.size,
              t->m->arch.blocks, t->m->arch.channels);
      return -1;
    }
    XQ_LOGI(COMP, "resumed from checkpoint path=%s step=%lld blocks=%d channels=%d",
            t->ckpt_path, (long long)t->opt.step, t->m->arch.blocks, t->m->arch.channels);
  } else if (start_from_best(t, &want) < 0) {
    return -1;
  }
  t->opt.momentum = (float)t->o.momentum;
  if (nn_lr_parse(&t->opt.schedule, t->o.lr, &eb)) {
    XQ_LOGE(COMP, "bad --lr schedule error=\"%s\"", eb.msg);
    return -1;
  }
  t->loss_cfg.policy_weight = 1.0f;
  t->loss_cfg.value_weight = 1.0f;
  t->loss_cfg.l2 = (float)t->o.l2;
  t->max_n = (int)t->o.batch;
  if (nn_plan_new(&t->plan, &t->m->arch, t->max_n, true, &eb)) {
    XQ_LOGE(COMP, "cannot plan the batch batch=%d error=\"%s\"", t->max_n, eb.msg);
    return -1;
  }
  size_t n = (size_t)t->max_n;
  t->planes = malloc(n * NN_INPUT_PLANES * NN_HW * sizeof(float));
  t->mask = malloc(n * NN_POLICY_SIZE);
  t->pi_off = malloc((n + 1) * sizeof(int32_t));
  t->pi = malloc(n * XQ_MAX_MOVES * sizeof(nn_pi_entry_t));
  t->z = malloc(n * sizeof(float));
  t->sample = malloc(sizeof *t->sample);
  t->pos = malloc(sizeof *t->pos);
  if (!t->planes || !t->mask || !t->pi_off || !t->pi || !t->z || !t->sample || !t->pos) {
    XQ_LOGE(COMP, "out of memory batch=%d", t->max_n);
    return -1;
  }
  return 0;
}

static int checkpoint(trainer_t *t, const char *why) {
  xq_errbuf_t eb = {{0}};
  t->meta.created = (int64_t)time(NULL);
  t->meta.input_version = NN_INPUT_VERSION;
  int rc = nn_checkpoint_save(t->ckpt_path, t->m, &t->meta, &t->opt, &eb);
  if (rc) XQ_LOGE(COMP, "checkpoint failed; training goes on, check the disk path=%s error=\"%s\"",
                  t->ckpt_path, eb.msg);
  else XQ_LOGI(COMP, "checkpoint written path=%s step=%lld why=%s", t->ckpt_path,
               (long long)t->opt.step, why);
  t->t_ckpt = xq_clock_s();
  return rc;
}

static int send_env(trainer_t *t, Xqz__Envelope *env) {
  env->request_id = ++t->next_request;
  return xq_wire_send(t->sock, NULL, 0, env, ZMQ_DONTWAIT);
}

static int send_batch_request(trainer_t *t) {
  Xqz__Envelope env;
  Xqz__BatchRequest br = XQZ__BATCH_REQUEST__INIT;
  xq_wire_init(&env);
  br.size = (uint32_t)t->max_n;
  br.trainer_step = (uint64_t)t->opt.step;
  if (t->report_n > 0) { /* the coordinator keeps the loss curve (Status.loss_history) */
    double k = 1.0 / t->report_n;
    br.loss_steps = (uint32_t)t->report_n;
    br.loss = (float)(t->report_acc.total * k);
    br.loss_policy = (float)(t->report_acc.policy * k);
    br.loss_value = (float)(t->report_acc.value * k);
  }
  env.body_case = XQZ__ENVELOPE__BODY_BATCH_REQUEST;
  env.batch_request = &br;
  int rc = send_env(t, &env);
  if (rc == 0) {
    memset(&t->report_acc, 0, sizeof t->report_acc);
    t->report_n = 0;
  }
  return rc;
}

/* Sends the pending candidate if any; keeps it when the coordinator is unreachable. */
static void flush_candidate(trainer_t *t) {
  if (!t->pending_candidate) return;
  Xqz__Envelope env;
  Xqz__CandidateNet cn = XQZ__CANDIDATE_NET__INIT;
  xq_wire_init(&env);
  cn.net.data = t->pending_candidate;
  cn.net.len = t->pending_len;
  cn.step = (uint64_t)t->pending_step;
  env.body_case = XQZ__ENVELOPE__BODY_CANDIDATE;
  env.candidate = &cn;
  if (send_env(t, &env) == 0) {
    XQ_LOGI(COMP, "candidate uploaded step=%lld bytes=%zu parent=%016llx",
            (long long)t->pending_step, t->pending_len, (unsigned long long)t->best_net_id);
    free(t->pending_candidate);
    t->pending_candidate = NULL;
  }
}

static void make_candidate(trainer_t *t) {
  xq_errbuf_t eb = {{0}};
  nn_file_meta_t meta = t->meta;
  meta.net_id = nn_file_new_id();
  meta.parent_id = t->best_net_id;
  meta.step = t->opt.step;
  meta.created = (int64_t)time(NULL);
  meta.input_version = NN_INPUT_VERSION;
  free(t->pending_candidate);
  t->pending_candidate = NULL;
  if (nn_file_encode(&t->pending_candidate, &t->pending_len, t->m, &meta, &eb)) {
    XQ_LOGE(COMP, "cannot encode the candidate error=\"%s\"", eb.msg);
    return;
  }
  t->pending_step = t->opt.step;
  flush_candidate(t);
}

/* Turns a Batch into an nn_batch_t and takes one step. Returns samples used. */
static int train_on(trainer_t *t, const Xqz__Batch *b) {
  int n = 0;
  t->pi_off[0] = 0;
  for (size_t i = 0; i < b->n_samples && n < t->max_n; i++) {
    xq_errbuf_t eb = {{0}};
    if (xq_sample_from_proto(t->sample, b->samples[i], &eb)) {
      if (t->rejected++ < 10 || t->rejected % 1000 == 0)
        XQ_LOGW(COMP, "bad sample from the coordinator dropped rejected=%lld reason=\"%s\"",
                (long long)t->rejected, eb.msg);
      continue;
    }
    const xq_sample_t *s = t->sample;
    xq_sample_encode(t->planes + (size_t)n * NN_INPUT_PLANES * NN_HW, s);
    xq_sample_position(t->pos, s);
    uint8_t *mask = t->mask + (size_t)n * NN_POLICY_SIZE;
    nn_encode_legal(t->pos, mask, NULL, NULL);
    int32_t off = t->pi_off[n];
    for (int k = 0; k < s->npi; k++) {
      t->pi[off + k].index = s->pi_index[k];
      t->pi[off + k].prob = s->pi_prob[k];
    }
    t->pi_off[n + 1] = off + s->npi;
    t->z[n] = s->z;
    n++;
  }
  if (n == 0) return 0;
  nn_batch_t nb = {n, t->planes, t->mask, t->pi_off, t->pi, t->z};
  nn_loss_t loss;
  nn_train_step(t->m, t->plan, &t->opt, &nb, &t->loss_cfg, &loss);
  t->loss_acc.total += loss.total;
  t->loss_acc.policy += loss.policy;
  t->loss_acc.value += loss.value;
  t->loss_acc.l2 += loss.l2;
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
  XQ_LOGI(COMP, "training step=%lld loss=%.4f policy=%.4f value=%.4f l2=%.5f lr=%g "
          "samples_per_s=%.1f window=%llu best_net=%016llx",
          (long long)t->opt.step, t->loss_acc.total * k, t->loss_acc.policy * k,
          t->loss_acc.value * k, t->loss_acc.l2 * k,
          (double)nn_lr_at(&t->opt.schedule, t->opt.step - 1),
          dt > 0 ? (double)t->samples_since_log / dt : 0.0,
          (unsigned long long)b->window_positions, (unsigned long long)t->best_net_id);
  memset(&t->loss_acc, 0, sizeof t->loss_acc);
  t->loss_n = 0;
  t->samples_since_log = 0;
  t->t_log = now;
}

/* Returns the exit code. */
static int run(trainer_t *t) {
  t->t_log = t->t_ckpt = xq_clock_s();
  bool need_request = true;
  uint64_t waiting_for = 0;
  double sent_at = xq_clock_s();
  while (!stop_signal) {
    if (t->o.max_steps > 0 && t->opt.step >= t->o.max_steps) {
      XQ_LOGI(COMP, "reached --max-steps step=%lld", (long long)t->opt.step);
      break;
    }
    if (xq_clock_s() - t->t_ckpt >= t->o.checkpoint_every_s) checkpoint(t, "timer");
    flush_candidate(t);
    if (need_request) {
      if (send_batch_request(t)) { /* not connected (yet): ZMQ_IMMEDIATE queues nothing */
        if (xq_clock_s() - sent_at >= (double)t->o.timeout_ms / 1000.0) {
          XQ_LOGW(COMP, "coordinator unreachable; retrying (is it running?) endpoint=%s",
                  t->o.coordinator);
          sent_at = xq_clock_s();
        }
        sleep_ms(100);
        continue;
      }
      waiting_for = t->next_request;
      sent_at = xq_clock_s();
      need_request = false;
    }
    zmq_pollitem_t pi = {t->sock, 0, ZMQ_POLLIN, 0};
    int rc = zmq_poll(&pi, 1, 250);
    if (rc < 0 && zmq_errno() != EINTR) {
      XQ_LOGE(COMP, "zmq_poll failed error=\"%s\"", zmq_strerror(zmq_errno()));
      return 1;
    }
    if (rc <= 0) {
      if (xq_clock_s() - sent_at >= (double)t->o.timeout_ms / 1000.0) {
        XQ_LOGW(COMP, "no reply from the coordinator; asking again (is it running?) "
                "endpoint=%s timeout_ms=%lld", t->o.coordinator, (long long)t->o.timeout_ms);
        need_request = true;
      }
      continue;
    }
    Xqz__Envelope *env = NULL;
    xq_errbuf_t eb = {{0}};
    int rrc = xq_wire_recv(t->sock, NULL, NULL, &env, ZMQ_DONTWAIT, &eb);
    if (rrc == XQ_EVERSION || xq_wire_is_version_refusal(env)) {
      /* Retrying cannot help: save the work and stop. */
      XQ_LOGE(COMP, "the coordinator speaks another protocol version; stopping (upgrade the"
              " trainer or the coordinator) this_trainer=\"%s\" reason=\"%s\"", XQ_VERSION_LINE,
              env ? env->error->message : eb.msg);
      xq_wire_free(&env);
      checkpoint(t, "protocol-version");
      return 1;
    }
    if (rrc) {
      if (zmq_errno() != EAGAIN && zmq_errno() != EINTR)
        XQ_LOGW(COMP, "malformed message from the coordinator dropped reason=\"%s\"", eb.msg);
      continue;
    }
    if (env->request_id != waiting_for) {
      /* A late reply to a request already resent; its batch is not used twice. */
      XQ_LOGD(COMP, "stale reply ignored request_id=%llu", (unsigned long long)env->request_id);
      xq_wire_free(&env);
      continue;
    }
    switch (env->body_case) {
      case XQZ__ENVELOPE__BODY_BATCH: {
        const Xqz__Batch *b = env->batch;
        t->best_net_id = b->best_net_id;
        int n = train_on(t, b);
        need_request = true;
        if (n == 0) break;
        t->samples_since_log += n;
        if (t->opt.step % t->o.log_every == 0) log_progress(t, b);
        if (t->opt.step % t->o.candidate_every == 0) make_candidate(t);
        break;
      }
      case XQZ__ENVELOPE__BODY_WAIT: {
        int64_t ms = env->wait->retry_ms ? env->wait->retry_ms : 1000;
        if (ms > 60000) ms = 60000;
        XQ_LOGD(COMP, "coordinator says wait retry_ms=%lld reason=\"%s\"", (long long)ms,
                env->wait->reason ? env->wait->reason : "");
        sleep_ms(ms);
        need_request = true;
        break;
      }
      case XQZ__ENVELOPE__BODY_ERROR:
        XQ_LOGW(COMP, "coordinator error; retrying code=%u message=\"%s\"", env->error->code,
                env->error->message ? env->error->message : "");
        sleep_ms(1000);
        need_request = true;
        break;
      default:
        XQ_LOGD(COMP, "unexpected reply ignored body=%d", (int)env->body_case);
        break;
    }
    xq_wire_free(&env);
  }
  if (stop_signal) XQ_LOGI(COMP, "stopping on signal signal=%d", (int)stop_signal);
  return checkpoint(t, stop_signal ? "signal" : "max-steps") ? 1 : 0;
}

static void trainer_close(trainer_t *t) {
  if (t->sock) zmq_close(t->sock);
  if (t->ctx) zmq_ctx_term(t->ctx);
  nn_plan_free(&t->plan);
  nn_model_free(&t->m);
  nn_sgd_close(&t->opt);
  free(t->planes);
  free(t->mask);
  free(t->pi_off);
  free(t->pi);
  free(t->z);
  free(t->sample);
  free(t->pos);
  free(t->pending_candidate);
}

int main(int argc, char **argv) {
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
  t->ctx = zmq_ctx_new();
  t->sock = t->ctx ? zmq_socket(t->ctx, ZMQ_DEALER) : NULL;
  int one = 1;
  xq_errbuf_t ceb;
  if (t->sock && xq_curve_apply_client(t->sock, &t->o.curve, &ceb) < 0) {
    XQ_LOGE(COMP, "cannot set the CURVE keys error=\"%s\"", ceb.msg);
    goto out;
  }
  if (!t->sock || xq_wire_socket_setup(t->sock) ||
      zmq_setsockopt(t->sock, ZMQ_IMMEDIATE, &one, sizeof one) ||
      zmq_connect(t->sock, t->o.coordinator)) {
    XQ_LOGE(COMP, "cannot set up the coordinator socket endpoint=%s error=\"%s\"",
            t->o.coordinator, zmq_strerror(zmq_errno()));
    goto out;
  }
  XQ_LOGI(COMP, "started endpoint=%s dir=%s batch=%d step=%lld candidate_every=%lld curve=%s",
          t->o.coordinator, t->o.dir, t->max_n, (long long)t->opt.step,
          (long long)t->o.candidate_every, t->o.curve.on ? "on" : "off");
  rc = run(t);
out:
  trainer_close(t);
  free(t);
  return rc;
}
