/*
 * cmd_status.c: `xqz status` asks a running coordinator for its Status and prints one
 * screen: campaign, best net and Elo, trainer step and loss, window, ingest rate, the
 * balance of self-play against training, uptime, the open gating match, a population's
 * line when it has one, the workers and the last gating matches. --json prints the same
 * message as JSON (common/wire/status_json.c, as the HTTP API does).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli_options.h"
#include "commands.h"
#include "population_view.h"
#include "remote.h"
#include "rules/rules.h"
#include "wire/messages.h"
#include "wire/status_json.h"
#include "wire/wire.h"

/* The command line. */
typedef struct {
  xqz_remote_t r;
  bool json;
} status_opts_t;

static const xq_opt_t rows[] = {
    XQZ_REMOTE_ROWS(status_opts_t, r),
    {"json", XQ_OPTION_FLAG, XQ_OPT_FIELD(status_opts_t, json), NULL, 0, 0,
     .help = "JSON instead of the screen"},
};
static const xq_opts_t TABLE = {rows, (int)(sizeof rows / sizeof rows[0]), XQ_OPTS_IN_RANGE};

static void usage(FILE *f) {
  fprintf(f, "usage: xqz status [--coordinator ADDR | --campaign DIR] [--json]"
             " [--server-key FILE --key FILE]\n\n"
             "Prints the state of a running campaign: which one it reached (name, id and\n"
             "address), best net, trainer, window, workers and gating matches. --json prints\n"
             "the whole Status message as JSON.\n\n");
  xq_opts_help(&TABLE, f, 18);
}

/* "45s", "12m", "3h05m", "2d04h". */
static void duration(char *buf, size_t n, uint64_t s) {
  if (s < 60) snprintf(buf, n, "%llus", (unsigned long long)s);
  else if (s < 3600) snprintf(buf, n, "%llum%02llus", (unsigned long long)(s / 60),
                              (unsigned long long)(s % 60));
  else if (s < 86400) snprintf(buf, n, "%lluh%02llum", (unsigned long long)(s / 3600),
                               (unsigned long long)(s / 60 % 60));
  else snprintf(buf, n, "%llud%02lluh", (unsigned long long)(s / 86400),
                (unsigned long long)(s / 3600 % 24));
}

static const char *role_name(Xqz__Role r) {
  return r == XQZ__ROLE__ROLE_WORKER ? "" : r == XQZ__ROLE__ROLE_TRAINER ? " (trainer)"
                                                                         : " (other)";
}

/* "3m12s ago" from a unix time, "never" for 0. */
static void since(char *buf, size_t n, int64_t t, int64_t now) {
  if (t <= 0) {
    snprintf(buf, n, "never");
    return;
  }
  char d[24];
  duration(d, sizeof d, (uint64_t)(now > t ? now - t : 0));
  snprintf(buf, n, "%s ago", d);
}

static void print_workers(const Xqz__Status *s) {
  printf("\nworkers: %u alive, %zu known\n", s->workers, s->n_worker_list);
  if (!s->n_worker_list) return;
  printf("  %-24s %-16s %3s  %-16s %7s %6s %5s %6s  %-14s %-14s %-16s  %s\n", "worker", "host",
         "thr", "net", "games", "24h", "rej", "plies", "last game", "last seen", "state",
         "version, precision");
  int64_t now = (int64_t)time(NULL);
  for (size_t i = 0; i < s->n_worker_list; i++) {
    const Xqz__WorkerStatus *w = s->worker_list[i];
    char seen[32], ago[24], game[32], state[40];
    duration(ago, sizeof ago, w->last_seen_ms_ago / 1000);
    snprintf(seen, sizeof seen, "%s ago", ago);
    since(game, sizeof game, w->last_game_time, now);
    /* A coordinator older than WorkerStatus.state sends none: alive/paused say enough. */
    const char *st = w->state && w->state[0] ? w->state
                     : !w->alive             ? "gone"
                     : w->paused             ? "paused"
                                             : "alive";
    if (w->paused && w->alive) snprintf(state, sizeof state, "%s (%.16s)", st, w->pause_reason);
    else snprintf(state, sizeof state, "%s", st);
    printf("  %-24.24s %-16.16s %3u  %016llx %7llu %6llu %5llu %6.1f  %-14s %-14s %-16s"
           "  %s%s%s%s%s\n",
           w->worker_id, w->host, w->threads, (unsigned long long)w->net_id,
           (unsigned long long)w->games, (unsigned long long)w->games_day,
           (unsigned long long)w->rejected, w->avg_plies, game, seen, state,
           w->software_version, w->precision && w->precision[0] ? ", " : "",
           w->precision ? w->precision : "", role_name(w->role), w->banned ? " BANNED" : "");
  }
  printf("  (games: accepted, all time; 24h: accepted in the last 24 hours; rej: rejected by\n"
         "   the rules replay; last seen: time since the last message; state: playing (a game\n"
         "   within 10 minutes), idle (alive, no game lately), paused by its machine's owner\n"
         "   (signal, schedule, busy or memory), gone (no message within worker_timeout_ms))\n");
}

/* "in 3m10s", or "unknown" with why. */
static void eta(char *buf, size_t n, double s, const char *why) {
  char d[32];
  if (!isfinite(s)) {
    snprintf(buf, n, "unknown (%s)", why);
    return;
  }
  duration(d, sizeof d, (uint64_t)(s + 0.5));
  snprintf(buf, n, "in %s", d);
}

/* When the next events are due (Status.progress; docs/operations.md, "Watching a campaign"). */
static void print_progress(const Xqz__Status *s) {
  const Xqz__Progress *p = s->progress;
  if (!p) return;
  char t[96], rate[48] = "trainer rate not measured";
  bool rated = isfinite(p->steps_per_s);
  if (rated) snprintf(rate, sizeof rate, "%.2f steps/s", p->steps_per_s);
  if (p->candidate_every) {
    eta(t, sizeof t, p->next_candidate_s, "no trainer steps lately");
    printf("progress   next candidate at step %llu %s (%s, one every %llu steps)\n",
           (unsigned long long)p->next_candidate_step, t, rate,
           (unsigned long long)p->candidate_every);
  } else {
    printf("progress   next candidate unknown (no trainer has said its --candidate-every; %s)\n",
           rate);
  }
  if (p->bounded) {
    eta(t, sizeof t, p->end_s, "no trainer steps lately");
    printf("           run ends at step %llu %s\n", (unsigned long long)p->max_steps, t);
  } else if (p->candidate_every) {
    printf("           run unbounded (the trainer has no --max-steps)\n");
  }
  char pr[48] = "no pairs scored lately";
  if (isfinite(p->pairs_per_s)) snprintf(pr, sizeof pr, "%.3f pairs/s", p->pairs_per_s);
  if (p->match_games_max) {
    eta(t, sizeof t, p->match_end_s, pr);
    printf("           gating match %lld of %lld games, ends %s at the latest%s%s%s\n",
           (long long)p->match_games, (long long)p->match_games_max, t,
           isfinite(p->match_end_s) ? " (" : "", isfinite(p->match_end_s) ? pr : "",
           isfinite(p->match_end_s) ? "; the SPRT may stop it sooner)" : "");
  }
  if (p->anchor_games_max) {
    eta(t, sizeof t, p->anchor_end_s, pr);
    printf("           anchor match %lld of %lld games, ends %s\n", (long long)p->anchor_games,
           (long long)p->anchor_games_max, t);
  } else if (p->next_anchor_promotion) {
    printf("           next anchor match at promotion %lld (%lld promotion%s away)\n",
           (long long)p->next_anchor_promotion, (long long)p->promotions_to_anchor,
           p->promotions_to_anchor == 1 ? "" : "s");
  } else {
    printf("           no anchor matches (anchor_games is 0)\n");
  }
}

/* The balance of self-play against training (docs/operations.md, "Watching a campaign"). */
static void print_balance(const Xqz__Balance *b) {
  if (!b) return;
  char span[32], since[32], turnover[32] = "none (no ingest)", busy[32] = "not measured";
  duration(span, sizeof span, (uint64_t)(b->span_s + 0.5));
  duration(since, sizeof since, (uint64_t)b->state_s); /* floored, as the uptime is */
  if (b->turnover_s > 0) duration(turnover, sizeof turnover, (uint64_t)(b->turnover_s + 0.5));
  if (isfinite(b->trainer_busy)) snprintf(busy, sizeof busy, "%.0f%%", 100.0 * b->trainer_busy);
  printf("balance    %s for %s; over the last %s: ingest %.1f positions/s, trained %.1f"
         " samples/s, reuse %.2f of R %g\n", b->state, since, span, b->positions_per_s,
         b->samples_per_s, b->reuse, b->reuse_target);
  printf("           window turnover %s, trainer busy %s, %llu batch requests paced, jobs"
         " at %u simulations\n", turnover, busy, (unsigned long long)b->paced_requests,
         b->job_sims);
  if (b->advice && b->advice[0]) printf("           %s\n", b->advice);
}

static void print_screen(const Xqz__Status *s, const char *addr) {
  char up[32];
  duration(up, sizeof up, (uint64_t)s->uptime_s);
  printf("campaign   %s   id %016llx   at %s   (coordinator %s, protocol %u, up %s)\n",
         s->campaign, (unsigned long long)s->campaign_id, addr, s->software_version,
         s->protocol_version, up);
  char elo[64];
  printf("best net   %016llx   Elo %s   promotions %llu\n", (unsigned long long)s->best_net_id,
         xqz_elo_text(elo, sizeof elo, s->best_elo, 1), (unsigned long long)s->promotions);
  printf("trainer    step %llu", (unsigned long long)s->trainer_step);
  if (s->trainer_version && s->trainer_version[0]) printf("   %s", s->trainer_version);
  if (s->last_loss)
    printf("   loss %.4f (policy %.4f, value %.4f) at step %llu", s->last_loss->loss,
           s->last_loss->policy, s->last_loss->value, (unsigned long long)s->last_loss->step);
  printf("\n");
  double fill = s->window_capacity ? 100.0 * (double)s->window_positions /
                                         (double)s->window_capacity : 0.0;
  printf("window     %llu / %llu positions (%.1f%%)   ingest %.1f positions/s\n",
         (unsigned long long)s->window_positions, (unsigned long long)s->window_capacity, fill,
         s->positions_per_s);
  print_balance(s->balance);
  print_progress(s);
  printf("games      %llu accepted (%llu positions), %llu rejected, %llu duplicates,"
         " %llu from banned senders; %llu samples served\n",
         (unsigned long long)s->games, (unsigned long long)s->positions,
         (unsigned long long)s->rejected_games, (unsigned long long)s->duplicates,
         (unsigned long long)s->banned_games, (unsigned long long)s->samples_served);
  if (s->storage_error && s->storage_error[0])
    printf("storage    BLOCKED for %llds: games are not stored or acknowledged (%llu not stored;"
           " workers keep them): %s; free space in the campaign's games/ directory\n",
           (long long)s->storage_blocked_s, (unsigned long long)s->storage_unstored_games,
           s->storage_error);
  else
    printf("storage    ok\n");
  if (s->quarantine_files)
    printf("quarantine %llu damaged runs (%llu bytes) cut out of the segments, kept in the"
           " campaign's quarantine/ directory\n", (unsigned long long)s->quarantine_files,
           (unsigned long long)s->quarantine_bytes);
  printf("gating     %s (arena games in %s)", s->gating_mode,
         !s->arena_precision[0] ? "fp32"
         : strcmp(s->arena_precision, "worker") ? s->arena_precision
                                                : "each worker's --precision");
  const Xqz__MatchStatus *m = s->open_match;
  if (m)
    printf("; open: %016llx vs %016llx  %lld-%lld-%lld  score %.3f  Elo %s\n",
           (unsigned long long)m->net_a, (unsigned long long)m->net_b, (long long)m->wins,
           (long long)m->draws, (long long)m->losses, m->score,
           xqz_match_elo_text(elo, sizeof elo, m));
  else
    printf("; no match open; last: %s\n", s->last_gating);
  printf("anchors    best net: ");
  xqz_anchor_line(stdout, s->anchor_history, s->n_anchor_history);
  printf("\n");
  const Xqz__AnchorPoint *oa = s->open_anchor;
  if (oa)
    printf("           measuring %016llx vs %s: %lld-%lld-%lld of %lld games\n",
           (unsigned long long)oa->net_id, oa->anchor, (long long)oa->wins,
           (long long)oa->draws, (long long)oa->losses, (long long)oa->games);
  if (s->population) {
    printf("population ");
    xqz_population_line(stdout, s->population);
    printf(" (xqz population: the members)\n");
  }
  print_workers(s);
  printf("\nlast gating matches (%zu)\n", s->n_recent_matches);
  if (s->n_recent_matches) {
    xqz_match_header(stdout);
    for (size_t i = 0; i < s->n_recent_matches; i++) xqz_match_row(stdout, s->recent_matches[i]);
  }
}

int xqz_cmd_status(int argc, char **argv) {
  status_opts_t o;
  memset(&o, 0, sizeof o); /* a row without a default leaves its field alone */
  xqz_remote_init(&o.r, "status");
  xq_opts_defaults(&TABLE, &o);
  int st = xqz_options_parse("status", &TABLE, &o, argc, argv, NULL, NULL, usage);
  if (st >= 0) return st;
  xqz_remote_t r = o.r;
  bool json = o.json;
  if (xqz_remote_open(&r)) return 1;
  Xqz__Envelope env;
  Xqz__StatusRequest q;
  xq_msg_status_request(&env, &q);
  Xqz__Envelope *reply = xqz_remote_call(&r, &env, XQZ__ENVELOPE__BODY_STATUS);
  xqz_remote_close(&r);
  if (!reply) return 1;
  int rc = 0;
  if (json) {
    char *j = xq_status_json(reply->status);
    if (j) printf("%s\n", j);
    else rc = 1;
    free(j);
  } else {
    print_screen(reply->status, r.addr);
  }
  xq_wire_free(&reply);
  return rc;
}
