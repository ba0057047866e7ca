/* options.c: the trainer's settings table, --help and command-line parsing. */

#include "options.h"

#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ckpt_ring.h"
#include "nn/nn_model.h"
#include "nn/nn_optim.h"
#include "nn/nn_train_pool.h"
#include "support/opt_name.h"
#include "wire/endpoint.h"
#include "wire/wire.h"

typedef enum { OPT_STR, OPT_INT, OPT_REAL } opt_type_t;

typedef struct {
  const char *name;
  opt_type_t type;
  size_t off, cap; /* offset in trainer_opts_t; capacity of a string */
  const char *def;
  double lo, hi;   /* bounds of numbers */
  const char *help;
} opt_row_t;

#define S(f) OPT_STR, offsetof(trainer_opts_t, f), sizeof(((trainer_opts_t *)0)->f)
#define I(f) OPT_INT, offsetof(trainer_opts_t, f), 0
#define R(f) OPT_REAL, offsetof(trainer_opts_t, f), 0

static const opt_row_t rows[] = {
    {"coordinator", S(coordinator), "tcp://127.0.0.1:5555", 0, 0,
     "coordinator ROUTER endpoint"},
    {"dir", S(dir), "", 0, 0, "state directory (required); holds trainer.xqzc"},
    {"size", S(size), "default", 0, 0,
     "only to override the campaign: without a checkpoint the trainer starts from the"
     " coordinator's best net; --size tiny (2x16), default (6x64), large (10x128) or BxC that"
     " differs from it starts a fresh net of that size instead (a g suffix adds global"
     " pooling: tiny-g, 2x16g; l line convolutions: 2x16l; then a the attack planes: 2x16a;"
     " then v the wide value head: 2x16v; then s the survival head: tiny-s, 2x16gs; a final"
     " r the opponent-reply head: 2x16r)"},
    {"batch", I(batch), "256", 1, 8192, "positions per SGD step"},
    {"threads", S(threads_arg), "all", 0, 0,
     "training threads, 1..1024 or all (every core this process may use); each takes a"
     " shard of every batch (docs/trainer.md)"},
    {"lr", S(lr), "0:0.02,100000:0.002,200000:0.0002", 0, 0,
     "learning-rate schedule step:lr,... (each lr from its step on)"},
    {"momentum", R(momentum), "0.9", 0, 0.999, "SGD momentum"},
    {"l2", R(l2), "1e-4", 0, 1, "L2 coefficient on conv and FC weights"},
    {"survival-weight", R(survival_weight), "1.0", 0, 100,
     "weight of the survival head's loss, for a net with the head (an s size such as 2x16s;"
     " docs/network.md); other nets ignore it"},
    {"reply-weight", R(reply_weight), "0.15", 0, 100,
     "weight of the opponent-reply head's loss, for a net with the head (an r size such as"
     " 2x16r; docs/network.md); other nets ignore it"},
    {"candidate-every", I(candidate_every), "1000", 1, 1e9,
     "steps between CandidateNet uploads"},
    {"ema-steps", I(ema_steps), "0", 0, 1e9,
     "upload as candidates the weights averaged over about this many steps (an exponential"
     " moving average, docs/trainer.md) rather than those of the last step; 0: no average"},
    {"checkpoint-every-s", R(checkpoint_every_s), "300", 1, 1e7,
     "seconds between checkpoints (also on SIGTERM/SIGINT and at --max-steps)"},
    {"max-steps", I(max_steps), "0", 0, 1e15, "stop at this step (0: run until signalled)"},
    {"max-loss", R(max_loss), "1000", 1, 1e30,
     "a step whose loss is above this (or not finite) means training diverged: the trainer"
     " stops without writing a checkpoint or a candidate (a sane net's loss is below about"
     " 15: the policy's cross-entropy of a uniform guess is ln 2086 = 7.6, the value's error"
     " at most 4)"},
    {"keep-checkpoints", I(keep_checkpoints), "3", 0, TRAINER_MAX_KEEP,
     "older checkpoints kept beside DIR/trainer.xqzc as trainer.xqzc.1 (newest) .. .N; a"
     " resume whose newest checkpoint does not load falls back to them"},
    {"seed", I(seed), "1", 0, 1e15, "initialisation seed of a fresh network"},
    {"log-every", I(log_every), "10", 1, 1e9, "steps between progress log lines"},
    {"timeout-ms", I(timeout_ms), "5000", 50, 3.6e6,
     "reply timeout; the request is resent after it (coordinator down or restarting)"},
    {"prefetch", I(prefetch), "2", 1, TRAINER_MAX_PREFETCH,
     "batches requested ahead: the next ones travel while one trains (a trainer on another"
     " box loses no time to round trips)"},
    {"server-key", S(server_key), "", 0, 0,
     "the coordinator's public key file (.pub), when it uses CURVE"},
    {"key", S(key), "", 0, 0, "this trainer's secret key file (.secret, from xqz keygen)"},
};
#define NROWS ((int)(sizeof rows / sizeof rows[0]))

static int set(trainer_opts_t *o, const opt_row_t *r, const char *v) {
  char *base = (char *)o + r->off;
  if (r->type == OPT_STR) {
    if (strlen(v) >= r->cap) {
      fprintf(stderr, "xqz-trainer: --%s: value too long\n", r->name);
      return -1;
    }
    strcpy(base, v);
    return 0;
  }
  char *end;
  errno = 0;
  double d = strtod(v, &end);
  if (errno || end == v || *end || !isfinite(d) || d < r->lo || d > r->hi ||
      (r->type == OPT_INT && d != floor(d))) {
    fprintf(stderr, "xqz-trainer: --%s: '%s' is not a %s in [%g, %g]\n", r->name, v,
            r->type == OPT_INT ? "whole number" : "number", r->lo, r->hi);
    return -1;
  }
  if (r->type == OPT_INT) *(int64_t *)(void *)base = (int64_t)d;
  else *(double *)(void *)base = d;
  return 0;
}

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
  for (int i = 0; i < NROWS; i++) {
    char head[64];
    snprintf(head, sizeof head, "--%s %s", rows[i].name,
             rows[i].type == OPT_STR ? "S" : rows[i].type == OPT_INT ? "N" : "X");
    fprintf(f, "  %-24s %s", head, rows[i].help);
    if (rows[i].def[0]) fprintf(f, " (default %s)", rows[i].def);
    fputc('\n', f);
  }
  fprintf(f, "  %-24s %s\n", "--help", "print this and exit");
  fprintf(f, "  %-24s %s\n", "--version", "print the software and protocol versions and exit");
}

int trainer_opts_parse(trainer_opts_t *o, int argc, char **argv) {
  memset(o, 0, sizeof *o);
  for (int i = 0; i < NROWS; i++)
    if (set(o, &rows[i], rows[i].def)) return -1;
  for (int a = 1; a < argc; a++) {
    const char *arg = argv[a];
    if (!strcmp(arg, "--help") || !strcmp(arg, "-h")) {
      usage(stdout);
      return 1;
    }
    if (!strcmp(arg, "--version")) {
      printf("%s\n", XQ_VERSION_LINE);
      return 1;
    }
    const opt_row_t *r = NULL;
    if (!strncmp(arg, "--", 2)) /* --min_positions is --min-positions (opt_name.h) */
      for (int i = 0; i < NROWS; i++)
        if (xq_opt_name_eq(arg + 2, rows[i].name)) r = &rows[i];
    if (!r) {
      xq_opt_near_t near;
      xq_opt_near_init(&near, arg + strspn(arg, "-"));
      for (int i = 0; i < NROWS; i++) xq_opt_near_add(&near, rows[i].name);
      if (xq_opt_near_best(&near))
        fprintf(stderr, "xqz-trainer: unknown option '%s'; did you mean --%s? (see --help)\n",
                arg, xq_opt_near_best(&near));
      else
        fprintf(stderr, "xqz-trainer: unknown option '%s' (see --help)\n", arg);
      return -1;
    }
    if (a + 1 >= argc) {
      fprintf(stderr, "xqz-trainer: --%s needs a value\n", r->name);
      return -1;
    }
    if (set(o, r, argv[++a])) return -1;
    if (!strcmp(r->name, "size")) o->size_given = true;
  }
  if (!o->dir[0]) {
    fprintf(stderr, "xqz-trainer: --dir is required (see --help)\n");
    return -1;
  }
  if (parse_threads(o)) return -1;
  /* Every setting is checked here, before the trainer fetches anything or waits on the
   * coordinator (issue 49: a bad --lr was found only after the best net arrived). */
  xq_errbuf_t eb;
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
