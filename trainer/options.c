/* options.c: the trainer's settings table (support/options.h), --help and command-line
 * parsing. */

#include "options.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ckpt_ring.h"
#include "nn/nn_model.h"
#include "nn/nn_optim.h"
#include "nn/nn_train_pool.h"
#include "support/options.h"
#include "wire/endpoint.h"
#include "wire/wire.h"

#define S(f) XQ_OPTION_STRING, XQ_OPT_FIELD(trainer_opts_t, f)
#define I(f) XQ_OPTION_INT, XQ_OPT_FIELD(trainer_opts_t, f)
#define R(f) XQ_OPTION_DOUBLE, XQ_OPT_FIELD(trainer_opts_t, f)

static const xq_opt_t rows[] = {
    {"coordinator", S(coordinator), "tcp://127.0.0.1:5555", 0, 0,
     .help = "coordinator ROUTER endpoint"},
    {"dir", S(dir), "", 0, 0, .help = "state directory (required); holds trainer.xqzc"},
    {"size", S(size), "default", 0, 0,
     .help = "only to override the campaign: without a checkpoint the trainer starts from the"
     " coordinator's best net; --size tiny (2x16), default (6x64), large (10x128) or BxC that"
     " differs from it starts a fresh net of that size instead (a g suffix adds global"
     " pooling: tiny-g, 2x16g; l line convolutions: 2x16l; then a the attack planes: 2x16a;"
     " then v the wide value head: 2x16v; then s the survival head: tiny-s, 2x16gs; a final"
     " r the opponent-reply head: 2x16r)"},
    {"batch", I(batch), "256", 1, 8192, .help = "positions per SGD step"},
    {"max-batch", I(max_batch), "0", 0, 8192,
     .help = "the largest batch a population may give this member; the pool is sized for it"
     " (0: the --batch value; a larger batch from the coordinator is cut to it)"},
    {"threads", S(threads_arg), "all", 0, 0,
     .help = "training threads, 1..1024 or all (every core this process may use); each takes"
     " a shard of every batch (docs/trainer.md)"},
    {"lr", S(lr), "0:0.02,100000:0.002,200000:0.0002", 0, 0,
     .help = "learning-rate schedule step:lr,... (each lr from its step on)"},
    {"momentum", R(momentum), "0.9", 0, 0.999, .help = "SGD momentum"},
    {"l2", R(l2), "1e-4", 0, 1, .help = "L2 coefficient on conv and FC weights"},
    {"value-weight", R(value_weight), "1.0", 0.01, 100,
     .help = "weight of the value head's loss (its squared error) beside the policy's"
     " cross-entropy of weight 1"},
    {"survival-weight", R(survival_weight), "1.0", 0, 100,
     .help = "weight of the survival head's loss, for a net with the head (an s size such as"
     " 2x16s; docs/network.md); other nets ignore it"},
    {"reply-weight", R(reply_weight), "0.15", 0, 100,
     .help = "weight of the opponent-reply head's loss, for a net with the head (an r size"
     " such as 2x16r; docs/network.md); other nets ignore it"},
    {"candidate-every", I(candidate_every), "1000", 1, 1e9,
     .help = "steps between CandidateNet uploads"},
    {"ema-steps", I(ema_steps), "0", 0, 1e9,
     .help = "upload as candidates the weights averaged over about this many steps (an"
     " exponential moving average, docs/trainer.md) rather than those of the last step; 0: no"
     " average"},
    {"checkpoint-every-s", R(checkpoint_every_s), "300", 1, 1e7,
     .help = "seconds between checkpoints (also on SIGTERM/SIGINT and at --max-steps)"},
    {"max-steps", I(max_steps), "0", 0, 1e15, .help = "stop at this step (0: run until signalled)"},
    {"max-loss", R(max_loss), "1000", 1, 1e30,
     .help = "a step whose loss is above this (or not finite) means training diverged: the"
     " trainer stops without writing a checkpoint or a candidate (a sane net's loss is below"
     " about 15: the policy's cross-entropy of a uniform guess is ln 2086 = 7.6, the value's"
     " error at most 4)"},
    {"keep-checkpoints", I(keep_checkpoints), "3", 0, TRAINER_MAX_KEEP,
     .help = "older checkpoints kept beside DIR/trainer.xqzc as trainer.xqzc.1 (newest) .. .N;"
     " a resume whose newest checkpoint does not load falls back to them"},
    {"seed", I(seed), "1", 0, 1e15, .help = "initialisation seed of a fresh network"},
    {"log-every", I(log_every), "10", 1, 1e9, .help = "steps between progress log lines"},
    {"timeout-ms", I(timeout_ms), "5000", 50, 3.6e6,
     .help = "reply timeout; the request is resent after it (coordinator down or restarting)"},
    {"prefetch", I(prefetch), "2", 1, TRAINER_MAX_PREFETCH,
     .help = "batches requested ahead: the next ones travel while one trains (a trainer on"
     " another box loses no time to round trips)"},
    {"server-key", S(server_key), "", 0, 0,
     .help = "the coordinator's public key file (.pub), when it uses CURVE"},
    {"key", S(key), "", 0, 0, .help = "this trainer's secret key file (.secret, from xqz keygen)"},
};
#define NROWS ((int)(sizeof rows / sizeof rows[0]))
static const xq_opts_t TABLE = {rows, NROWS, XQ_OPTS_IN_RANGE};

/* --threads: a whole number in 1..NN_TRAIN_MAX_THREADS, or "all". */
static int parse_threads(trainer_opts_t *o) {
  if (!strcmp(o->threads_arg, "all")) {
    o->threads = nn_train_default_threads();
    return 0;
  }
  char *end;
  errno = 0;
  long v = strtol(o->threads_arg, &end, 10);
  if (errno || end == o->threads_arg || *end || v < 1 || v > NN_TRAIN_MAX_THREADS) {
    fprintf(stderr, "xqz-trainer: --threads: '%s' is not a thread count; give 1..%d, or all"
            " for every core of this box\n", o->threads_arg, NN_TRAIN_MAX_THREADS);
    return -1;
  }
  o->threads = (int)v;
  return 0;
}

static void usage(FILE *f) {
  fprintf(f, "usage: xqz-trainer --dir DIR [options]\n\n"
             "Trains the network on batches from the coordinator, uploads candidates,\n"
             "checkpoints to DIR/trainer.xqzc (keeping older ones as trainer.xqzc.1 ...) and\n"
             "resumes from the newest that loads; stops, writing nothing, if training\n"
             "diverges (docs/trainer.md).\n\n");
  xq_opts_help(&TABLE, f, 24);
  fprintf(f, "  %-24s %s\n", "--help", "print this and exit");
  fprintf(f, "  %-24s %s\n", "--version", "print the software and protocol versions and exit");
}

int trainer_opts_parse(trainer_opts_t *o, int argc, char **argv) {
  memset(o, 0, sizeof *o);
  xq_opts_defaults(&TABLE, o);
  bool given[NROWS] = {false};
  xq_errbuf_t eb;
  int rc = xq_opts_parse_argv(&TABLE, o, argc, argv, given, &eb);
  if (rc == XQ_OPTS_HELP) {
    usage(stdout);
    return 1;
  }
  if (rc == XQ_OPTS_VERSION) {
    printf("%s\n", XQ_VERSION_LINE);
    return 1;
  }
  if (rc < 0) {
    fprintf(stderr, "xqz-trainer: %s\n", eb.msg);
    return -1;
  }
  o->size_given = given[xq_opts_find(&TABLE, "size")];
  if (!o->dir[0]) {
    fprintf(stderr, "xqz-trainer: --dir is required (see --help)\n");
    return -1;
  }
  if (parse_threads(o)) return -1;
  if (o->max_batch == 0) o->max_batch = o->batch;
  if (o->max_batch < o->batch) {
    fprintf(stderr, "xqz-trainer: --max-batch %lld is below --batch %lld; give at least the"
            " batch, or leave it out\n", (long long)o->max_batch, (long long)o->batch);
    return -1;
  }
  /* Every setting is checked here, before the trainer fetches anything or waits on the
   * coordinator (issue 49: a bad --lr was found only after the best net arrived). */
  nn_lr_schedule_t sched;
  if (nn_lr_parse(&sched, o->lr, &eb)) {
    fprintf(stderr, "xqz-trainer: --lr: '%s': %s; give STEP:LR pairs with increasing steps"
            " and 0 <= LR < 100, e.g. 0:0.02,100000:0.002\n", o->lr, eb.msg);
    return -1;
  }
  nn_arch_t arch;
  if (nn_arch_preset(o->size, &arch)) {
    fprintf(stderr, "xqz-trainer: --size: '%s' is not a network size (" NN_ARCH_SPELLING
            ")\n", o->size);
    return -1;
  }
  if (xq_endpoint_check(o->coordinator, "--coordinator", &eb) < 0) {
    fprintf(stderr, "xqz-trainer: %s\n", eb.msg);
    return -1;
  }
  if (xq_curve_client_load(&o->curve, o->server_key, o->key, &eb) < 0) {
    fprintf(stderr, "xqz-trainer: %s\n", eb.msg);
    return -1;
  }
  return 0;
}

void trainer_opts_loss_cfg(const trainer_opts_t *o, nn_loss_cfg_t *cfg) {
  memset(cfg, 0, sizeof *cfg);
  cfg->policy_weight = 1.0f;
  cfg->value_weight = (float)o->value_weight;
  cfg->l2 = (float)o->l2;
  cfg->survival_weight = (float)o->survival_weight;
  cfg->reply_weight = (float)o->reply_weight;
  cfg->legal_policy = true; /* every batch carries its legal moves' mask */
}

int trainer_opts_bounds(const char *name, double *lo, double *hi) {
  int i = xq_opts_find(&TABLE, name);
  if (i < 0 || (rows[i].kind != XQ_OPTION_INT && rows[i].kind != XQ_OPTION_DOUBLE))
    return XQ_EINVAL;
  *lo = rows[i].lo;
  *hi = rows[i].hi;
  return 0;
}
