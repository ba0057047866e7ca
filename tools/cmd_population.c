/*
 * cmd_population.c: `xqz population` asks a running coordinator for its Status and prints
 * the population's part (issue 48): one line (size, round, share, the best member), the
 * members table (population_view.h) and the last exploit-and-explore steps. --json prints
 * Status.population as JSON (status_json.h); --follow asks again every --every seconds
 * until Ctrl-C. A campaign without a population says so and exits 0 (nothing is wrong).
 */
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli_options.h"
#include "commands.h"
#include "population_view.h"
#include "remote.h"
#include "wire/messages.h"
#include "wire/status_json.h"
#include "wire/wire.h"

static volatile sig_atomic_t g_stop;

static void on_sigint(int sig) {
  (void)sig;
  g_stop = 1;
}

/* The command line. */
typedef struct {
  xqz_remote_t r;
  bool follow, json;
  int every;
} population_opts_t;

#define O(f) XQ_OPT_FIELD(population_opts_t, f)
static const xq_opt_t rows[] = {
    XQZ_REMOTE_ROWS(population_opts_t, r),
    {"follow", XQ_OPTION_FLAG, O(follow), NULL, 0, 0,
     .help = "ask again every --every seconds and print it again (Ctrl-C stops)"},
    {"every", XQ_OPTION_INT, O(every), "5", 1, 3600, .arg = "SECONDS",
     .help = "the period of --follow"},
    {"json", XQ_OPTION_FLAG, O(json), NULL, 0, 0,
     .help = "Status.population as JSON (with --follow: one object per line)"},
};
static const xq_opts_t TABLE = {rows, (int)(sizeof rows / sizeof rows[0]), XQ_OPTS_IN_RANGE};

static void usage(FILE *f) {
  fprintf(f, "usage: xqz population [--coordinator ADDR | --campaign DIR] [--follow [--every S]]"
             " [--json] [--server-key FILE --key FILE]\n\n"
             "Prints the population of a running campaign (population > 0): its members'\n"
             "trainers, steps, settings, ratings and lineage, then the last\n"
             "exploit-and-explore steps.\n\n");
  xq_opts_help(&TABLE, f, 18);
}

/* One answer printed: 0, 1 when the coordinator did not answer (already said). */
static int show(xqz_remote_t *r, bool json, bool follow) {
  Xqz__Envelope env;
  Xqz__StatusRequest q;
  xq_msg_status_request(&env, &q);
  Xqz__Envelope *reply = xqz_remote_call(r, &env, XQZ__ENVELOPE__BODY_STATUS);
  if (!reply) return 1;
  const Xqz__Population *p = reply->status->population;
  int rc = 0;
  if (json) {
    char *j = xq_population_json(p);
    if (j) printf("%s\n", j);
    else rc = 1;
    free(j);
  } else if (!p) {
    printf("campaign %s has no population (its population setting is 0): nothing to show\n",
           reply->status->campaign);
  } else {
    if (follow) {
      char when[32];
      time_t now = time(NULL);
      struct tm tm;
      localtime_r(&now, &tm);
      strftime(when, sizeof when, "%H:%M:%S", &tm);
      printf("---- %s\n", when);
    }
    printf("population of %s: ", reply->status->campaign);
    xqz_population_line(stdout, p);
    printf("\n");
    xqz_population_table(stdout, p);
    printf("\n");
    xqz_population_events(stdout, p, XQZ_POPULATION_EVENTS);
  }
  fflush(stdout);
  xq_wire_free(&reply);
  return rc;
}

int xqz_cmd_population(int argc, char **argv) {
  population_opts_t o;
  memset(&o, 0, sizeof o); /* a row without a default leaves its field alone */
  xqz_remote_init(&o.r, "population");
  xq_opts_defaults(&TABLE, &o);
  int st = xqz_options_parse("population", &TABLE, &o, argc, argv, NULL, NULL, usage);
  if (st >= 0) return st;
  xqz_remote_t r = o.r;
  if (xqz_remote_open(&r)) return 1;
  int rc = show(&r, o.json, o.follow);
  if (rc == 0 && o.follow) {
    signal(SIGINT, on_sigint);
    signal(SIGTERM, on_sigint);
    while (!g_stop) {
      for (int t = 0; t < o.every * 10 && !g_stop; t++)
        nanosleep(&(struct timespec){0, 100 * 1000000L}, NULL);
      /* A coordinator that stops answering is reported and following goes on; one of
       * another protocol version ends it. */
      if (!g_stop && show(&r, o.json, true) && r.version_mismatch) {
        rc = 1;
        break;
      }
    }
  }
  xqz_remote_close(&r);
  return rc;
}
