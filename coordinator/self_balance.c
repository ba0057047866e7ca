/* self_balance.c: the job simulations follow the balance (self_balance.h). */
#include "self_balance.h"

int64_t xqc_self_balance_sims(const xqc_self_balance_t *sb, const xqc_self_balance_cfg_t *cfg) {
  if (!cfg->on || sb->sims < cfg->floor) return cfg->floor;
  return sb->sims > cfg->cap ? cfg->cap : sb->sims;
}

int xqc_self_balance_tick(xqc_self_balance_t *sb, const xqc_self_balance_cfg_t *cfg,
                          xqc_balance_state_t state, uint64_t state_since_ms,
                          uint64_t now_ms) {
  if (!cfg->on) return 0;
  if (sb->sims == 0) { /* first tick: start at the floor, and wait a dwell before moving */
    sb->sims = cfg->floor;
    sb->last_change_ms = now_ms;
  }
  int64_t cur = xqc_self_balance_sims(sb, cfg);
  if (now_ms - sb->last_change_ms < cfg->dwell_ms) return 0;
  int64_t next = cur;
  if (state == XQC_BALANCE_TRAINER_BOUND) {
    next = cur + (cur + 3) / 4; /* a quarter more, at least one */
    if (next > cfg->cap) next = cfg->cap;
  } else if (state == XQC_BALANCE_WORKER_BOUND && now_ms - state_since_ms >= cfg->dwell_ms) {
    next = cur - (cur + 4) / 5; /* a fifth less, at least one */
    if (next < cfg->floor) next = cfg->floor;
  }
  if (next == cur) return 0;
  sb->sims = next;
  sb->last_change_ms = now_ms;
  return next > cur ? 1 : -1;
}
