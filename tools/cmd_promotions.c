/*
 * cmd_promotions.c: `xqz promotions` prints the gating history of a running campaign
 * (every decided match, oldest first: net, parent, W-D-L, score, Elo with its 95%
 * interval, decision, time). --follow then asks again every few seconds for the matches
 * decided since (PromotionsRequest.after_match_id) and prints them as they come, until
 * Ctrl-C. Then the strength of the measured nets against the anchors (anchors.h), a
 * column per anchor, and the newest score per anchor. --json prints a JSON array (with --follow, one array per batch of new matches,
 * one per line). --plot FILE.svg writes the dashboard's strength chart instead: the best
 * net's Elo and the anchor scores against wall-clock time, as a plain SVG file.
 */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <math.h>

#include "cli_options.h"
#include "commands.h"
#include "remote.h"
#include "wire/messages.h"
#include "wire/status_json.h"
#include "wire/wire.h"

#define FOLLOW_EVERY_MS 3000

static volatile sig_atomic_t g_stop;

static void on_sigint(int sig) {
  (void)sig;
  g_stop = 1;
}

/* --plot: a file named FILE.svg. */
static int check_svg(const char *name, const char *v, xq_errbuf_t *eb) {
  size_t len = strlen(v);
  if (len >= 4 && !strcmp(v + len - 4, ".svg")) return 0;
  return xq_err_set(eb, XQ_ERANGE, "--%s writes SVG only; name the file FILE.svg (got '%s')",
                    name, v);
}

/* The command line. */
typedef struct {
  xqz_remote_t r;
  bool follow, json;
  const char *plot;
} promotions_opts_t;

#define O(f) XQ_OPT_FIELD(promotions_opts_t, f)
static const xq_opt_t rows[] = {
    XQZ_REMOTE_ROWS(promotions_opts_t, r),
    {"follow", XQ_OPTION_FLAG, O(follow), NULL, 0, 0,
     .help = "keep asking every 3 s and print new matches (Ctrl-C stops)"},
    {"json", XQ_OPTION_FLAG, O(json), NULL, 0, 0,
     .help = "a JSON array (with --follow: one array per line)"},
    {"plot", XQ_OPTION_TEXT, O(plot), NULL, 0, 0, .arg = "FILE.svg", .check = check_svg,
     .help = "write the Elo and anchor scores against time as an SVG chart"},
};
static const xq_opts_t TABLE = {rows, (int)(sizeof rows / sizeof rows[0]), XQ_OPTS_IN_RANGE};

static void usage(FILE *f) {
  fprintf(f, "usage: xqz promotions [--coordinator ADDR] [--follow] [--json] [--plot FILE.svg]"
             " [--server-key FILE --key FILE]\n\n"
             "Prints every decided gating match of a running campaign, oldest first.\n\n");
  xq_opts_help(&TABLE, f, 18);
}

/* The SVG chart (--plot): two panels sharing a time axis, the best net's Elo after each
 * promotion (net 1 at Elo 0 from the first recorded time) and each anchor's score. */
#define PW 800           /* picture width, px */
#define PH 520           /* picture height */
#define PL 70            /* plot left edge */
#define PR 780           /* plot right edge */
static const int PANEL_TOP[2] = {40, 290}, PANEL_H = 190;
static const char *const COLORS[] = {"#2563eb", "#d97706", "#15803d", "#b91c1c"};

typedef struct {
  double t0, t1; /* time axis (unix seconds) */
} plot_axis_t;

static double px(const plot_axis_t *a, double t) {
  return PL + (PR - PL) * (t - a->t0) / (a->t1 - a->t0);
}

static double py(int panel, double v, double lo, double hi) {
  return PANEL_TOP[panel] + PANEL_H - PANEL_H * (v - lo) / (hi - lo);
}

/* Five time ticks, local time; "MM-DD HH:MM" (or "HH:MM:SS" under ten minutes). */
static void time_ticks(FILE *f, const plot_axis_t *a) {
  for (int i = 0; i <= 4; i++) {
    double t = a->t0 + (a->t1 - a->t0) * i / 4;
    time_t tt = (time_t)t;
    struct tm tm;
    char lab[32];
    localtime_r(&tt, &tm);
    strftime(lab, sizeof lab, a->t1 - a->t0 < 600 ? "%H:%M:%S" : "%m-%d %H:%M", &tm);
    fprintf(f, "<text class=\"xtick\" x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>\n",
            px(a, t), PANEL_TOP[1] + PANEL_H + 18, lab);
    for (int p = 0; p < 2; p++)
      fprintf(f, "<line class=\"grid\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%d\"/>\n",
              px(a, t), px(a, t), PANEL_TOP[p], PANEL_TOP[p] + PANEL_H);
  }
}

static void value_ticks(FILE *f, int panel, double lo, double hi, const char *unit) {
  for (int i = 0; i <= 4; i++) {
    double v = lo + (hi - lo) * i / 4, y = py(panel, v, lo, hi);
    fprintf(f, "<line class=\"grid\" x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\"/>\n"
               "<text class=\"ytick\" x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%.0f%s</text>\n",
            PL, PR, y, y, PL - 6, y + 4, v, unit);
  }
}

/* Escapes the few characters XML needs escaped in a spec or title. */
static void xml_text(FILE *f, const char *s) {
  for (; *s; s++) {
    if (*s == '<') fputs("&lt;", f);
    else if (*s == '>') fputs("&gt;", f);
    else if (*s == '&') fputs("&amp;", f);
    else if (*s == '"') fputs("&quot;", f);
    else fputc(*s, f);
  }
}

static int write_plot(const char *path, Xqz__MatchStatus *const *m, size_t n,
                      Xqz__AnchorPoint *const *a, size_t na) {
  plot_axis_t ax = {INFINITY, -INFINITY};
  double elo_lo = 0, elo_hi = 0;
  for (size_t i = 0; i < n; i++) {
    if (m[i]->time <= 0) continue;
    ax.t0 = fmin(ax.t0, (double)m[i]->time);
    ax.t1 = fmax(ax.t1, (double)m[i]->time);
    if (!strcmp(m[i]->decision, "promoted") && isfinite(m[i]->best_elo)) {
      elo_lo = fmin(elo_lo, m[i]->best_elo);
      elo_hi = fmax(elo_hi, m[i]->best_elo);
    }
  }
  for (size_t i = 0; i < na; i++) {
    if (a[i]->time <= 0) continue;
    ax.t0 = fmin(ax.t0, (double)a[i]->time);
    ax.t1 = fmax(ax.t1, (double)a[i]->time);
  }
  if (!isfinite(ax.t0)) ax.t0 = ax.t1 = (double)time(NULL);
  if (ax.t1 - ax.t0 < 60) { /* one moment: a minute either side */
    ax.t0 -= 60;
    ax.t1 += 60;
  }
  double pad = fmax(50.0, 0.1 * (elo_hi - elo_lo));
  elo_lo = 50.0 * floor((elo_lo - pad) / 50.0);
  elo_hi = 50.0 * ceil((elo_hi + pad) / 50.0);

  char tmp[1100];
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  FILE *f = fopen(tmp, "w");
  if (!f) {
    fprintf(stderr, "xqz promotions: cannot write %s: %s\n", tmp, strerror(errno));
    return 1;
  }
  fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
             "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\""
             " viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"12\">\n"
             "<style>.grid{stroke:#e5e7eb}.xtick,.ytick{fill:#52606d}"
             ".title{font-weight:bold;fill:#1f2933}.line{fill:none;stroke-width:2}</style>\n"
             "<rect width=\"100%%\" height=\"100%%\" fill=\"#fff\"/>\n",
          PW, PH, PW, PH);
  fprintf(f, "<text class=\"title\" x=\"%d\" y=\"%d\">Elo of the best nets (vs net 1),"
             " by time</text>\n", PL, PANEL_TOP[0] - 14);
  fprintf(f, "<text class=\"title\" x=\"%d\" y=\"%d\">Strength against the anchors"
             " (score %%), by time</text>\n", PL, PANEL_TOP[1] - 14);
  time_ticks(f, &ax);
  value_ticks(f, 0, elo_lo, elo_hi, "");
  value_ticks(f, 1, 0, 100, "%");

  /* Elo: net 1 at 0 from the first recorded time, then each promotion. */
  fprintf(f, "<g class=\"elo\"><polyline class=\"line\" stroke=\"%s\" points=\"%.1f,%.1f",
          COLORS[0], px(&ax, ax.t0), py(0, 0, elo_lo, elo_hi));
  for (size_t i = 0; i < n; i++)
    if (m[i]->time > 0 && !strcmp(m[i]->decision, "promoted"))
      fprintf(f, " %.1f,%.1f", px(&ax, (double)m[i]->time), py(0, m[i]->best_elo, elo_lo, elo_hi));
  fprintf(f, "\"/>\n<circle class=\"pt\" cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\">"
             "<title>net 1: Elo 0</title></circle>\n",
          px(&ax, ax.t0), py(0, 0, elo_lo, elo_hi), COLORS[0]);
  for (size_t i = 0; i < n; i++)
    if (m[i]->time > 0 && !strcmp(m[i]->decision, "promoted"))
      fprintf(f, "<circle class=\"pt\" cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\">"
                 "<title>%016llx: Elo %+.0f at step %lld</title></circle>\n",
              px(&ax, (double)m[i]->time), py(0, m[i]->best_elo, elo_lo, elo_hi), COLORS[0],
              (unsigned long long)m[i]->net_a, m[i]->best_elo, (long long)m[i]->step);
  fprintf(f, "</g>\n");

  /* Anchors: one series per anchor spec, in order of first appearance. */
  const char *names[64];
  int nn = 0;
  for (size_t i = 0; i < na && nn < 64; i++) {
    int k = 0;
    while (k < nn && strcmp(names[k], a[i]->anchor)) k++;
    if (k == nn) names[nn++] = a[i]->anchor;
  }
  for (int k = 0; k < nn; k++) {
    const char *col = COLORS[k % 4];
    fprintf(f, "<g class=\"anchor\"><polyline class=\"line\" stroke=\"%s\" points=\"", col);
    for (size_t i = 0; i < na; i++)
      if (a[i]->time > 0 && !strcmp(a[i]->anchor, names[k]))
        fprintf(f, "%.1f,%.1f ", px(&ax, (double)a[i]->time), py(1, 100 * a[i]->score, 0, 100));
    fprintf(f, "\"/>\n");
    for (size_t i = 0; i < na; i++)
      if (a[i]->time > 0 && !strcmp(a[i]->anchor, names[k])) {
        fprintf(f, "<circle class=\"pt\" cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"><title>",
                px(&ax, (double)a[i]->time), py(1, 100 * a[i]->score, 0, 100), col);
        xml_text(f, names[k]);
        fprintf(f, ": %.0f%% (%lld-%lld-%lld) by net %016llx</title></circle>\n",
                100 * a[i]->score, (long long)a[i]->wins, (long long)a[i]->draws,
                (long long)a[i]->losses, (unsigned long long)a[i]->net_id);
      }
    fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"10\" height=\"10\" fill=\"%s\"/>"
               "<text class=\"legend\" x=\"%d\" y=\"%d\">", PL + 130 * k, PH - 14, col,
            PL + 130 * k + 14, PH - 5);
    xml_text(f, names[k]);
    fprintf(f, "</text></g>\n");
  }
  if (!nn)
    fprintf(f, "<text class=\"ytick\" x=\"%d\" y=\"%d\">no anchor match decided yet</text>\n",
            PL + 10, PANEL_TOP[1] + PANEL_H / 2);
  fprintf(f, "</svg>\n");
  bool bad = ferror(f) != 0;
  if (fclose(f) != 0 || bad || rename(tmp, path) != 0) {
    fprintf(stderr, "xqz promotions: cannot write %s: %s\n", path, strerror(errno));
    remove(tmp);
    return 1;
  }
  return 0;
}

/* Fetches every match decided after *after (page by page: the coordinator answers at
 * most a page at a time, and an empty page ends) and prints them; *after moves to the
 * newest. Returns 0, or 1 when the coordinator did not answer (already reported). */
static int fetch_new(xqz_remote_t *r, uint64_t *after, int json, int *printed_header,
                     bool first, const char *plot) {
  Xqz__Envelope **pages = NULL;
  Xqz__MatchStatus **all = NULL;
  size_t npages = 0, nall = 0;
  int rc = 0;
  for (;;) {
    Xqz__Envelope env;
    Xqz__PromotionsRequest q;
    xq_msg_promotions_request(&env, &q, *after);
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
  if (rc == 0 && plot) {
    const Xqz__Promotions *p0 = npages ? pages[0]->promotions : NULL;
    rc = write_plot(plot, all, nall, p0 ? p0->anchors : NULL, p0 ? p0->n_anchors : 0);
    if (rc == 0)
      printf("wrote %s: %zu decided matches, %zu anchor matches\n", plot, nall,
             p0 ? p0->n_anchors : 0);
  } else if (rc == 0 && json && (nall || !*printed_header)) {
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
  promotions_opts_t o;
  memset(&o, 0, sizeof o); /* a row without a default leaves its field alone */
  xqz_remote_init(&o.r, "promotions");
  xq_opts_defaults(&TABLE, &o);
  int st = xqz_options_parse("promotions", &TABLE, &o, argc, argv, NULL, NULL, usage);
  if (st >= 0) return st;
  if (o.plot && (o.follow || o.json))
    return xqz_usage_error("promotions", "--plot writes one chart; it goes with neither"
                           " --follow nor --json");
  xqz_remote_t r = o.r;
  int json = o.json, follow = o.follow;
  const char *plot = o.plot;
  if (xqz_remote_open(&r)) return 1;
  uint64_t after = 0;
  int header = 0;
  int rc = fetch_new(&r, &after, json, &header, true, plot);
  if (rc == 0 && follow) {
    signal(SIGINT, on_sigint);
    signal(SIGTERM, on_sigint);
    while (!g_stop) {
      for (int t = 0; t < FOLLOW_EVERY_MS / 100 && !g_stop; t++)
        nanosleep(&(struct timespec){0, 100 * 1000000L}, NULL);
      if (g_stop) break;
      /* A coordinator that stops answering is reported and following goes on; one of
       * another protocol version ends it. */
      if (fetch_new(&r, &after, json, &header, false, NULL) && r.version_mismatch) {
        rc = 1;
        break;
      }
    }
  }
  xqz_remote_close(&r);
  return rc;
}
