/*
 * cmd_promotions.c: `xqz promotions` prints the gating history of a running campaign
 * (every decided match, oldest first: net, parent, W-D-L, score, Elo with its 95%
 * interval, decision, time). --follow then asks again every few seconds for the matches
 * decided since (PromotionsRequest.after_match_id) and prints them as they come, until
 * Ctrl-C. Then the strength of the measured nets against the anchors (anchors.h), a
 * column per anchor, and the newest score per anchor. --json prints a JSON array (with --follow, one array per batch of new matches,
 * one per line).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "commands.h"
#include "remote.h"
#include "wire/status_json.h"
#include "wire/wire.h"

#define FOLLOW_EVERY_MS 3000

static volatile sig_atomic_t g_stop;

static void on_sigint(int sig) {
  (void)sig;
  g_stop = 1;
}

static void usage(FILE *f) {
  fprintf(f, "usage: xqz promotions [--coordinator ADDR] [--follow] [--json]"
             " [--server-key FILE --key FILE]\n\n"
             "Prints every decided gating match of a running campaign, oldest first.\n\n"
             XQZ_REMOTE_OPTIONS_HELP
             "  --follow            keep asking every 3 s and print new matches (Ctrl-C stops)\n"
             "  --json              a JSON array (with --follow: one array per line)\n");
}

/* Fetches every match decided after *after (page by page: the coordinator answers at
 * most a page at a time, and an empty page ends) and prints them; *after moves to the
 * newest. Returns 0, or 1 when the coordinator did not answer (already reported). */
static int fetch_new(xqz_remote_t *r, uint64_t *after, int json, int *printed_header,
                     bool first) {
  Xqz__Envelope **pages = NULL;
  Xqz__MatchStatus **all = NULL;
  size_t npages = 0, nall = 0;
  int rc = 0;
  for (;;) {
    Xqz__Envelope env;
    Xqz__PromotionsRequest q = XQZ__PROMOTIONS_REQUEST__INIT;
    xq_wire_init(&env);
    q.after_match_id = *after;
    env.body_case = XQZ__ENVELOPE__BODY_PROMOTIONS_REQUEST;
    env.promotions_request = &q;
    Xqz__Envelope *reply = xqz_remote_call(r, &env, XQZ__ENVELOPE__BODY_PROMOTIONS);
    if (!reply) {
      rc = 1;
      break;
    }
    const Xqz__Promotions *p = reply->promotions;
    size_t n = p->n_matches;
    Xqz__Envelope **np = realloc(pages, (npages + 1) * sizeof *np);
    Xqz__MatchStatus **na = realloc(all, (nall + n + 1) * sizeof *na);
    if (np) pages = np;
    if (na) all = na;
    if (!np || !na) {
      fprintf(stderr, "xqz promotions: out of memory\n");
      xq_wire_free(&reply);
      rc = 1;
      break;
    }
    pages[npages++] = reply;
    if (n) memcpy(all + nall, p->matches, n * sizeof *all);
    nall += n;
    if (n == 0) break;
    *after = p->matches[n - 1]->match_id;
  }
  if (rc == 0 && json && (nall || !*printed_header)) {
    char *j = xq_matches_json(all, nall);
    if (j) printf("%s\n", j);
    else rc = 1;
    free(j);
    *printed_header = 1;
  } else if (rc == 0 && !json) {
    if (!*printed_header) xqz_match_header(stdout);
    *printed_header = 1;
    for (size_t i = 0; i < nall; i++) xqz_match_row(stdout, all[i]);
    /* The anchors come with the first page of the first fetch (the whole history). */
    const Xqz__Promotions *p0 = npages ? pages[0]->promotions : NULL;
    if (first && p0 && p0->n_anchors) {
      printf("\nstrength against the anchors (score and W-D-L of each measured net)\n");
      xqz_anchor_table(stdout, p0->anchors, p0->n_anchors);
      printf("  best net: ");
      xqz_anchor_line(stdout, p0->anchors, p0->n_anchors);
      printf("\n");
    }
  }
  fflush(stdout);
  for (size_t i = 0; i < npages; i++) xq_wire_free(&pages[i]);
  free(pages);
  free(all);
  return rc;
}

int xqz_cmd_promotions(int argc, char **argv) {
  xqz_remote_t r;
  xqz_remote_init(&r, "promotions");
  int json = 0, follow = 0;
  for (int i = 1; i < argc; i++) {
    int k = xqz_remote_option(&r, argc, argv, &i);
    if (k < 0) return 2;
    if (k) continue;
    if (!strcmp(argv[i], "--json")) {
      json = 1;
    } else if (!strcmp(argv[i], "--follow")) {
      follow = 1;
    } else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
      usage(stdout);
      return 0;
    } else {
      fprintf(stderr, "xqz promotions: unknown argument '%s'\n\n", argv[i]);
      usage(stderr);
      return 2;
    }
  }
  if (xqz_remote_open(&r)) return 1;
  uint64_t after = 0;
  int header = 0;
  int rc = fetch_new(&r, &after, json, &header, true);
  if (rc == 0 && follow) {
    signal(SIGINT, on_sigint);
    signal(SIGTERM, on_sigint);
    while (!g_stop) {
      for (int t = 0; t < FOLLOW_EVERY_MS / 100 && !g_stop; t++)
        nanosleep(&(struct timespec){0, 100 * 1000000L}, NULL);
      if (g_stop) break;
      /* A coordinator that stops answering is reported and following goes on; one of
       * another protocol version ends it. */
      if (fetch_new(&r, &after, json, &header, false) && r.version_mismatch) {
        rc = 1;
        break;
      }
    }
  }
  xqz_remote_close(&r);
  return rc;
}
