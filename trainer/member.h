/*
 * member.h: the trainer's side of a member of a population (issue 48, population-based
 * training; not yet wired to the coordinator). A member trains like any trainer, with
 * its own few settings, which the population perturbs (explore), and now and then
 * continues from a better member's checkpoint (exploit).
 *
 * The settings: lr_scale multiplies every rate of the --lr schedule; l2, value_weight
 * and batch are --l2, --value-weight and --batch. Their bounds are those of the options
 * table (options.h), lr_scale's are TRAINER_MEMBER_LR_SCALE_MIN..MAX.
 *
 * The copy replaces a member's weights, BN running statistics, momentum buffer, step and
 * averaged weights (nn_ema.h) by the donor's, bit for bit, in place: the model, the
 * momentum buffer and the average keep their addresses, so a training pool bound to the
 * model (nn_train_pool.h) goes on. Configuration stays the member's own: its learning
 * rate schedule, momentum coefficient, loss weights, batch and averaging horizon.
 */
#ifndef XQ_TRAINER_MEMBER_H
#define XQ_TRAINER_MEMBER_H

#include <stddef.h>
#include <stdint.h>

#include "nn/nn_ema.h"
#include "nn/nn_file.h"
#include "nn/nn_loss.h"
#include "nn/nn_model.h"
#include "nn/nn_optim.h"
#include "options.h"
#include "support/error.h"

#define TRAINER_MEMBER_LR_SCALE_MIN 0.001
#define TRAINER_MEMBER_LR_SCALE_MAX 1000.0

/* The settings a population perturbs. */
typedef struct {
  double lr_scale;     /* multiplies the --lr schedule's rates; 1: the schedule as given */
  double l2;           /* L2 coefficient (nn_loss_cfg_t.l2, --l2) */
  double value_weight; /* weight of the value loss (nn_loss_cfg_t.value_weight) */
  int64_t batch;       /* positions per step (--batch) */
} trainer_member_settings_t;

/* The parts of a running trainer that the settings and a copy change; the trainer owns
 * them all (the pointers stay its own). */
typedef struct {
  nn_model_t *m;                /* the model trained (a pool may be bound to it) */
  nn_file_meta_t *meta;         /* its metadata: step and campaign id */
  nn_sgd_t *opt;                /* optimiser: schedule (effective rates), velocity, step */
  nn_ema_t *ema;                /* averaged weights; avg NULL when the trainer keeps none */
  nn_loss_cfg_t *loss_cfg;      /* l2 and value_weight */
  const nn_lr_schedule_t *base; /* the --lr schedule as given, before lr_scale */
  int *batch;                   /* positions per step (the trainer's max_n) */
  int max_batch;                /* the most its training threads were set up for */
} trainer_member_state_t;

/* The settings the options give: lr_scale 1, --l2, --value-weight, --batch. */
void trainer_member_settings_from_opts(trainer_member_settings_t *s, const trainer_opts_t *o);
/* 0 when every setting is a finite number in its range; else XQ_ERANGE with the first
 * bad one named in eb (its value and its range). */
int trainer_member_settings_check(const trainer_member_settings_t *s, xq_errbuf_t *eb);
/* Makes st train with s from its next step: the schedule becomes base's with each rate
 * times lr_scale, then l2, value_weight and the batch. Checks s first (and that the batch
 * fits st->max_batch and the scaled rates stay below 100, nn_lr_parse's bound); on an
 * error (XQ_ERANGE, the reason in eb) nothing changes. */
int trainer_member_apply(trainer_member_state_t *st, const trainer_member_settings_t *s,
                         xq_errbuf_t *eb);

/* Continues st from a donor's checkpoint (an .xqzc image, nn_checkpoint.h) of len bytes
 * with CRC-32 crc (crc32.h) over them. Refuses, leaving st untouched: a checksum that
 * does not match (XQ_ECHECKSUM), a checkpoint that does not load (its code), another
 * architecture (XQ_EMISMATCH, both named) or another campaign (XQ_EMISMATCH, both ids
 * named; a member of no campaign yet, id 0, adopts the donor's). The image passes through
 * a temporary file in dir, removed before returning. On success st's weights, BN
 * statistics, velocity and step are the donor's (meta->step too), and its average: the
 * donor's when both keep one, a new empty one when only the member does, none when the
 * member keeps none. Returns 0 or a negative XQ_E... code, the reason in eb. */
int trainer_member_copy(trainer_member_state_t *st, const char *dir, const unsigned char *bytes,
                        size_t len, uint32_t crc, xq_errbuf_t *eb);

#endif
