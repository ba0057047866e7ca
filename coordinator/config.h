/*
 * config.h: the coordinator's settings as one table (name, type, default, bounds, help).
 * The same table reads DIR/campaign.ini (libinih), applies --key=value overrides, prints
 * --help and writes a default campaign.ini, so the four can never disagree.
 */
#ifndef XQC_CONFIG_H
#define XQC_CONFIG_H

#include <stdint.h>
#include <stdio.h>

#include "support/error.h"
#include "support/options.h"

/* The most members a population may have (the population setting). */
#define XQC_POPULATION_MAX 16

/* How a candidate is judged against the best net (docs/tuning.md). */
typedef enum {
  XQC_GATING_SPRT,      /* a sequential test on the match score */
  XQC_GATING_THRESHOLD, /* promoted when the score reaches threshold_score */
  XQC_GATING_NONE,      /* every candidate promoted, still measured */
} xqc_gating_t;

/* Self-play's root search (SelfplaySettings.search). */
typedef enum {
  XQC_SEARCH_PUCT,   /* PUCT; the policy target is the visit counts */
  XQC_SEARCH_GUMBEL, /* Gumbel's sequential halving; the target is the improved policy */
  XQC_SEARCH_GUMBEL_TREE, /* the same, and the paper's deterministic selection below the root */
} xqc_search_t;

/* The arithmetic of gating and anchor games (ArenaJob.precision; docs/operations.md). */
typedef enum {
  XQC_ARENA_FP32,   /* pinned to fp32 on every worker */
  XQC_ARENA_BF16,   /* pinned to bf16: pairs go only to workers whose CPU runs it */
  XQC_ARENA_WORKER, /* not pinned: each worker's own --precision */
} xqc_arena_precision_t;

typedef struct {
  char router[128];        /* ROUTER bind address */
  char pub[128];           /* PUB bind address */
  char http[128];          /* HTTP endpoint HOST:PORT (dashboard, /metrics); "" = off */
  char net_size[16];       /* tiny | default | large */
  /* self-play settings (SelfplaySettings) */
  int64_t sims, fast_sims, max_plies, temp_plies, games_per_job;
  double full_frac, noise_frac, dirichlet_alpha, resign_threshold, no_resign_frac, temp_final;
  double value_target_q;   /* value target = (1 - q) z + q (root value) */
  double adjudicate_material; /* pawns ahead that win a length-cap game (0 = draw) */
  double colour_swap;      /* share of served samples with the colours swapped */
  int64_t mate_probe;      /* 1: self-play searches use the mate probe (docs/search.md) */
  xqc_search_t search;     /* self-play's search */
  int64_t gumbel_actions;  /* Gumbel: actions considered at the root */
  /* replay window and pacing */
  int64_t window, min_positions, batch_size;
  double reuse;
  /* the growing window (window.h): 0 = the window stays at `window` */
  int64_t window_max;
  double window_exponent, window_slope;
  /* the balance of self-play against training (balance.h) */
  int64_t balance_window_s, balance_warn_s;
  int64_t self_balance, sims_max; /* job simulations follow the balance (self_balance.h) */
  /* gating */
  xqc_gating_t gating;
  int64_t gating_sims, gating_max_games, threshold_games;
  xqc_arena_precision_t arena_precision; /* of gating and anchor games */
  double sprt_elo0, sprt_elo1, sprt_alpha, sprt_beta, threshold_score;
  /* anchor matches (anchors.h): the best net against fixed built-in players */
  char anchors[160];       /* comma-separated built-in player specs */
  int64_t anchor_games, anchor_every; /* games per anchor (0 = off); every Nth promotion */
  int64_t keep_rejected_nets; /* files in nets/rejected/ kept, the newest (net_files.h) */
  /* population-based training (issue 48): 0 = off, else the number of members */
  int64_t population, population_control, pbt_interval_steps;
  int64_t pbt_round_games; /* games of each pairing of a round (even) */
  int64_t pbt_gate_leader; /* 1: the top-rated member's new candidates go to gating */
  double pbt_quantile, pbt_resample_p, pbt_share;
  /* durability and liveness */
  int64_t fsync_ms, heartbeat_ms, worker_timeout_ms, status_ms, segment_bytes;
  int64_t max_peer_errors, seed;
  /* security (docs/operations.md, "Security") and limits */
  char curve_secret_key[512]; /* coordinator's .secret file; empty = CURVE off */
  char curve_allow_dir[512];  /* *.pub files of the clients allowed to connect */
  char curve_admin_dir[512];  /* *.pub files of the keys allowed to send AdminRequest */
  char curve_trainer_dir[512]; /* *.pub files of the trainer's keys; empty = any allowed key */
  char trainer_addresses[512]; /* without CURVE: addresses besides loopback of the trainer */
  int64_t max_message_bytes;  /* ZMQ_MAXMSGSIZE on the ROUTER */
  int64_t fault_window_s, cutoff_s;
  char min_peer_version[32]; /* MAJOR.MINOR.PATCH: older workers and trainers refused; "" any */
} xqc_config_t;

/* The setting's spelling of a gating mode: "sprt", "threshold" or "none". */
const char *xqc_gating_name(xqc_gating_t g);
/* "fp32", "bf16" or "worker", as campaign.ini spells it. */
const char *xqc_arena_precision_name(xqc_arena_precision_t p);
/* Fills every setting with its default. */
void xqc_config_defaults(xqc_config_t *c);
/* Sets one setting from text; XQ_EINVAL (unknown key) or XQ_ERANGE (bad value). */
int xqc_config_set(xqc_config_t *c, const char *key, const char *value, xq_errbuf_t *eb);
/* Reads an INI file (keys in any or no section). Errors name the key and line; a setting
 * given twice (in any sections) is refused naming both lines. */
int xqc_config_load(xqc_config_t *c, const char *path, xq_errbuf_t *eb);
/* Checks the settings against each other (each one alone is checked by xqc_config_set):
 * a window that can never hold min_positions, a window_max below window, a population of
 * one. XQ_ERANGE with
 * the setting named and what to change. */
int xqc_config_check(const xqc_config_t *c, xq_errbuf_t *eb);
/* Writes every setting with its help as a commented INI file. */
int xqc_config_write(const xqc_config_t *c, FILE *f);
/* The i-th limit in force (0 <= i): its setting name and value; 0, or -1 past the last.
 * Status.limits lists them so /metrics and `xqz status` show every limit. */
int xqc_config_limit(const xqc_config_t *c, int i, const char **name, double *value);
/* The settings table, for the command line's parser (names, and which take a value). */
const xq_opts_t *xqc_config_table(void);
/* Prints every setting with default and help (for --help). */
void xqc_config_help(FILE *f);

#endif
