/*
 * options.h: the trainer's settings as one table (name, type, default, bounds, help):
 * the same rows parse the command line, validate it and print --help.
 */
#ifndef XQ_TRAINER_OPTIONS_H
#define XQ_TRAINER_OPTIONS_H

#include <stdbool.h>
#include <stdint.h>

#include "nn/nn_loss.h"
#include "wire/curve.h"

#define TRAINER_MAX_PREFETCH 8

typedef struct {
  char coordinator[256]; /* ROUTER endpoint */
  char dir[512];         /* state directory: trainer.xqzc */
  char size[16];         /* tiny | default | large (for a fresh start) */
  bool size_given;       /* --size was on the command line */
  int64_t batch;         /* positions per step */
  int64_t max_batch;     /* the largest batch a population may give (>= batch; 0 in the
                          * table: --batch's value) */
  char threads_arg[16];  /* --threads as given: N or "all" */
  int threads;           /* training threads (data-parallel shards of each batch) */
  char lr[512];          /* learning-rate schedule "step:lr,..." */
  double momentum;
  double l2;
  double value_weight;        /* weight of the value head's loss (wv, nn_loss.h) */
  double survival_weight;     /* weight of the survival head's loss (survival nets) */
  double reply_weight;        /* weight of the opponent-reply head's loss (reply nets) */
  int64_t candidate_every;    /* steps between candidate uploads */
  int64_t ema_steps;          /* candidates are the weights averaged over about this many
                               * steps (nn_ema.h); 0: the last step's weights */
  double checkpoint_every_s;  /* seconds between checkpoints */
  int64_t max_steps;          /* stop (checkpoint, exit 0) at this step; 0 = never */
  double max_loss;            /* a step's loss above it (or not finite) is divergence: stop */
  int64_t keep_checkpoints;   /* older checkpoint generations kept (ckpt_ring.h) */
  int64_t seed;               /* initialisation seed for a fresh start */
  int64_t log_every;          /* steps between log lines */
  int64_t timeout_ms;         /* reply timeout before a request is resent */
  int64_t prefetch;           /* BatchRequests kept in flight (1..TRAINER_MAX_PREFETCH) */
  char server_key[512];       /* coordinator's .pub (CURVE), "" = plain TCP */
  char key[512];              /* this trainer's .secret (CURVE) */
  xq_curve_t curve;           /* loaded from the two files above */
} trainer_opts_t;

/* Parses argv into o (defaults first). Returns 0, 1 when --help was printed, or -1
 * after printing the problem to stderr. */
int trainer_opts_parse(trainer_opts_t *o, int argc, char **argv);
/* The loss configuration the options give: policy weight 1, --value-weight, --l2,
 * --survival-weight, --reply-weight, the policy at the legal moves only. */
void trainer_opts_loss_cfg(const trainer_opts_t *o, nn_loss_cfg_t *cfg);
/* The bounds of a numeric option of the table ("batch", "l2", ...) into lo and hi (both
 * included). Returns 0, or XQ_EINVAL for a name the table lacks or a row without bounds. */
int trainer_opts_bounds(const char *name, double *lo, double *hi);

#endif
