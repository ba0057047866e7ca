/*
 * self_balance.h: an optional setting (self_balance = 1) that lets the balance of
 * self-play against training (balance.h) choose the full-search simulations handed out
 * in self-play jobs. When the campaign stays trainer-bound (the workers outrun the
 * trainer: positions leave the window barely trained), the simulations rise by a quarter,
 * up to sims_max: the lab's surplus cycles buy better policy targets instead of
 * discarded positions. When it stays worker-bound (the trainer waits for data), they fall
 * by a fifth, down to the campaign's `sims`. One change at most per balance_warn_s, so
 * each change is seen in the balance before the next. Off (the default), jobs carry
 * `sims` as configured. Not measured yet against a fixed `sims` (docs/tuning.md).
 *
 * The module is pure: the caller passes the state and the clock (status.c does).
 */
#ifndef XQC_SELF_BALANCE_H
#define XQC_SELF_BALANCE_H

#include <stdbool.h>
#include <stdint.h>

#include "balance.h"

typedef struct {
  int64_t sims;            /* the simulations jobs carry now; 0 until the first tick */
  uint64_t last_change_ms; /* the last change, or the first tick */
} xqc_self_balance_t;

typedef struct {
  bool on;                 /* self_balance = 1 */
  int64_t floor, cap;      /* sims and sims_max */
  uint64_t dwell_ms;       /* balance_warn_s: the least time between changes */
} xqc_self_balance_cfg_t;

/* Re-evaluates on the timer: state is the balance's, in it since state_since_ms.
 * Returns the change made (+1 raised, -1 lowered, 0 none); the caller logs it. */
int xqc_self_balance_tick(xqc_self_balance_t *sb, const xqc_self_balance_cfg_t *cfg,
                          xqc_balance_state_t state, uint64_t state_since_ms,
                          uint64_t now_ms);
/* The full-search simulations for the next self-play job. */
int64_t xqc_self_balance_sims(const xqc_self_balance_t *sb, const xqc_self_balance_cfg_t *cfg);

#endif
