/*
 * main.c: xqz-coordinator --campaign DIR [--key=value | --key value]... [--help]
 * Creates or resumes the campaign in DIR, rebuilds the replay window from the game
 * segments and runs the loop until SIGINT/SIGTERM; then flushes, fsyncs and closes.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "storage/campaign.h"
#include "coord.h"
#include "enrol.h"
#include "members_wire.h"
#include "status.h"
#include "support/dirlock.h"
#include "support/log.h"
#include "wire/join_command.h"
#include "wire/wire.h"

#define COMP "coordinator"

typedef struct {
  char key[128]; /* as typed, without the dashes */
  const char *value;
} override_t;

static int load_worker_key(const char *worker_id, const char *key, int64_t unused, void *user) {
  (void)unused;
  xqc_t *c = user;
  xqc_sources_get(&c->window.sources, worker_id, key, NULL);
  return 0;
}

/* Sets the command line's settings on cfg; the first bad one fails, named in eb. */
static int apply_overrides(xqc_config_t *cfg, const override_t *ov, int nov, xq_errbuf_t *eb) {
  for (int i = 0; i < nov; i++) {
    xq_errbuf_t e2;
    int rc = xqc_config_set(cfg, ov[i].key, ov[i].value, &e2);
    if (rc < 0) {
      /* A bad value's reason starts with the setting's name already. */
      size_t k = strlen(ov[i].key);
      const char *why = e2.msg;
      if (!strncmp(why, ov[i].key, k) && !strncmp(why + k, ": ", 2)) why += k + 2;
      return xq_err_set(eb, rc, "command line: --%s: %s", ov[i].key, why);
    }
  }
  return 0;
}

/* The command line: --campaign DIR into *dir, every other --key value (or --key=value)
 * into ov, set later over campaign.ini's settings. Returns -1 to go on, else the exit code
 * (0 after --help or --version, 2 after bad usage, said on stderr). */
static int parse_args(int argc, char **argv, const char **dir, override_t *ov, int *nov) {
  xq_errbuf_t eb;
  for (int i = 1;;) {
    xq_opt_arg_t a;
    int rc = xq_opts_next(xqc_config_table(), argc, argv, &i, true, &a, &eb);
    if (rc == XQ_OPTS_END) break;
    if (rc == XQ_OPTS_HELP) {
      xqc_config_help(stdout);
      return 0;
    }
    if (rc == XQ_OPTS_VERSION) {
      printf("%s\n", XQ_VERSION_LINE);
      return 0;
    }
    if (rc == XQ_OPTS_WORD)
      rc = xq_err_set(&eb, XQ_EINVAL, "unexpected argument '%s' (see --help)", a.arg);
    if (rc < 0) {
      fprintf(stderr, "xqz-coordinator: %s\n", eb.msg);
      return 2;
    }
    if (strcmp(a.name, "campaign") == 0) {
      *dir = a.value;
    } else {
      memcpy(ov[*nov].key, a.name, sizeof a.name);
      ov[(*nov)++].value = a.value;
    }
  }
  if (!*dir) {
    fprintf(stderr, "xqz-coordinator: --campaign DIR is required (see --help)\n");
    return 2;
  }
  return -1;
}

/* The settings of the campaign in dir with the overrides, checked on a scratch config
 * before anything is created (the campaign's own campaign.ini when there is one, then the
 * command line, also against each other); then the directory made and locked for the
 * process's life (two coordinators would both append). */
static int settings(xqc_t *c, const char *dir, const override_t *ov, int nov,
                    xq_dirlock_t *dirlock, xq_errbuf_t *eb) {
  char ini[1024];
  snprintf(ini, sizeof ini, "%s/campaign.ini", dir);
  xqc_config_t probe;
  xqc_config_defaults(&probe);
  int rc = access(ini, F_OK) == 0 ? xqc_config_load(&probe, ini, eb) : 0;
  if (rc == 0) rc = apply_overrides(&probe, ov, nov, eb);
  if (rc == 0) rc = xqc_config_check(&probe, eb);
  if (rc == 0) rc = xqc_campaign_init_dir(dir, eb);
  if (rc == 0) rc = xq_dirlock_acquire(dirlock, dir, "xqz-coordinator", eb);
  xqc_config_defaults(&c->cfg);
  if (rc == 0) rc = xqc_config_load(&c->cfg, ini, eb);
  xqc_config_t file = c->cfg; /* campaign.ini alone: what the command line changes */
  if (rc == 0) rc = apply_overrides(&c->cfg, ov, nov, eb);
  if (rc == 0) rc = xqc_config_check(&c->cfg, eb);
  /* A campaign it cannot write is refused now, naming the file, not after listening. */
  bool endpoints = strcmp(file.router, c->cfg.router) || strcmp(file.pub, c->cfg.pub) ||
                   strcmp(file.http, c->cfg.http);
  if (rc == 0) rc = xqc_campaign_check_writable(dir, endpoints, eb);
  if (rc == 0) xqc_campaign_settings_changes(dir, &c->cfg, &file);
  return rc;
}

/* Opens the campaign (keys, database, bans, the window rebuilt from the segments) and runs
 * the loop until a signal or an error. */
static int run_campaign(xqc_t *c, xq_errbuf_t *eb) {
  xq_rng_seed(&c->rng, (uint64_t)c->cfg.seed ^ (uint64_t)time(NULL));
  snprintf(c->last_gating, sizeof c->last_gating, "none yet");
  int rc = xqc_auth_open(&c->peers.auth, &c->cfg, eb); /* CURVE settings first: fail fast */
  if (rc == 0)
    rc = xqc_campaign_open(c->dir, &c->cfg, &c->db, &c->campaign_id, &c->best, &c->best_elo,
                           &c->promotions, eb);
  /* Match ids from a counter kept in campaign.db, never the clock (a clock step reordered
   * them); the database file's identity, watched by the timer (promote.c). */
  if (rc == 0 && xqc_db_next_match_id(c->db, &c->next_match_id) < 0)
    rc = xq_err_set(eb, XQ_EIO, "%s/campaign.db: cannot read the match ids", c->dir);
  if (rc == 0 && xqc_campaign_db_id(c->dir, &c->db_dev, &c->db_ino) < 0)
    rc = xq_err_set(eb, XQ_EIO, "%s/campaign.db: vanished right after it was opened", c->dir);
  if (rc == 0) rc = xqc_members_open(c, eb); /* members.txt, after the campaign's id */
  /* Bans and workers' keys first: the rebuild of the window skips banned senders. */
  if (rc == 0) rc = xqc_bans_load(&c->peers.bans, c->db, eb);
  if (rc == 0) rc = xqc_enrol_open(c, eb); /* after the keys and campaign.db */
  if (rc == 0 && xqc_db_worker_keys_load(c->db, load_worker_key, c) < 0)
    XQ_LOGW(COMP, "cannot read the workers' keys; bans on keys apply to new games only");
  xqc_window_rule_t rule = xqc_window_rule(&c->cfg);
  if (rc == 0) rc = xqc_replay_init_rule(&c->window.replay, &rule);
  if (rc == 0) rc = xqc_workers_init(&c->stats.workers);
  if (rc == 0) xqc_status_open(c);
  if (rc == 0) xqc_admin_mark_workers(c); /* bans may have changed while stopped */
  if (rc == 0) rc = xqc_ingest_open(c, eb);
  if (rc == 0) rc = xqc_run(c, eb);
  if (c->verdict.active)
    XQ_LOGW(COMP, "stopped with a gating decision not stored (campaign.db did not take it);"
            " it was never announced, and the match resumes at the next start match=%llu"
            " cause=\"%s\"", (unsigned long long)c->verdict.match_id, c->verdict.cause);
  if (rc == 0 && xqc_seg_failed(&c->seg))
    rc = xq_err_set(eb, XQ_EIO, "game segments cannot be made durable: %s", c->seg.error);
  return rc;
}

static void coordinator_free(xqc_t *c) {
  xqc_seg_close(&c->seg);
  xqc_gate_close(&c->gate);
  xqc_gate_close(&c->anchor.gate);
  xqc_round_close(&c->round);
  xqc_replay_close(&c->window.replay);
  xqc_seen_close(&c->window.seen);
  xqc_copies_close(&c->window.copies);
  xqc_workers_close(&c->stats.workers);
  xqc_bans_close(&c->peers.bans);
  xqc_sources_close(&c->window.sources);
  xqc_cutoff_close(&c->peers.cutoff);
  xqc_auth_close(&c->peers.auth);
  xqc_db_close(&c->db);
  free(c->peers.list);
  free(c->acks);
  free(c);
}

/* Raises the soft open-file limit to the hard one and logs both: every connection takes a
 * descriptor, and at a shell's 1024 a flood of idle connections had left none for the game
 * segments (EMFILE) and locked new workers out (issue 47). */
static void raise_open_files(void) {
  struct rlimit rl;
  if (getrlimit(RLIMIT_NOFILE, &rl) != 0) {
    XQ_LOGW(COMP, "cannot read the open-file limit err=\"%s\"", strerror(errno));
    return;
  }
  unsigned long long was = (unsigned long long)rl.rlim_cur;
  if (rl.rlim_cur < rl.rlim_max) {
    rl.rlim_cur = rl.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &rl) != 0) {
      XQ_LOGW(COMP, "cannot raise the open-file limit to its hard limit; connections beyond"
              " it are refused and storage may fail (raise LimitNOFILE / ulimit -n) limit=%llu"
              " hard=%llu err=\"%s\"", was, (unsigned long long)rl.rlim_max, strerror(errno));
      return;
    }
  }
  XQ_LOGI(COMP, "open-file limit limit=%llu was=%llu hard=%llu (each connection takes one)",
          (unsigned long long)rl.rlim_cur, was, (unsigned long long)rl.rlim_max);
}

/* Logs the command that adds a worker on another machine (join_command.h; `xqz
 * join-command --campaign DIR` prints it again), and a warning when none could join. */
static void log_join(const xqc_config_t *cfg) {
  char steps[2048], warn[512];
  xq_join_in_t in = {cfg->router, cfg->pub, cfg->curve_secret_key, cfg->curve_allow_dir};
  xq_join_command(&in, steps, sizeof steps, warn, sizeof warn);
  for (char *line = steps, *nl; *line; line = nl + 1) {
    nl = strchr(line, '\n');
    if (!nl) break;
    *nl = '\0';
    XQ_LOGI(COMP, "to add a worker on another machine: %s", line);
  }
  if (warn[0]) XQ_LOGW(COMP, "%s", warn);
}

int main(int argc, char **argv) {
  const char *dir = NULL;
  override_t *ov = calloc((size_t)argc, sizeof *ov);
  int nov = 0;
  if (!ov) return 1;
  int code = parse_args(argc, argv, &dir, ov, &nov);
  if (code >= 0) {
    free(ov);
    return code;
  }
  xqc_t *c = calloc(1, sizeof *c);
  if (!c) return 1;
  snprintf(c->dir, sizeof c->dir, "%s", dir);
  xq_errbuf_t eb;
  xq_dirlock_t dirlock = {-1};
  int rc = settings(c, dir, ov, nov, &dirlock, &eb);
  free(ov);
  if (rc < 0) {
    XQ_LOGE(COMP, "cannot start: %s", eb.msg);
    free(c);
    return 2;
  }
  raise_open_files();
  log_join(&c->cfg);
  rc = run_campaign(c, &eb);
  if (rc < 0) XQ_LOGE(COMP, "stopped on error: %s", eb.msg);
  coordinator_free(c);
  if (rc == 0) XQ_LOGI(COMP, "stopped cleanly");
  return rc < 0 ? 1 : 0;
}
