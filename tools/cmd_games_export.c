/*
 * cmd_games_export.c: `xqz games export PATH... [--out FILE]`: stored games as PGN with
 * ICCS moves (pgn_write.h), the text that Xiangqi GUIs and game databases import.
 *
 * PATH is what `xqz games` takes: a campaign directory (its games/ segments), a games/
 * directory, segment files (seg-NNNNNN.bin, written by the coordinator) or record files
 * from `xqz selfplay`. Games can be kept by the net that played them (--net, an id or its
 * leading hex digits) and by date (--since, --until). A game record carries no time of its
 * own: a game's [Date] is the day its file was last written, which for a segment is the
 * day of its newest game (a segment holds a few hours to days of games), and the date
 * filters work on that day. Read-only, safe on a running campaign.
 */
#define _DEFAULT_SOURCE /* timegm */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cli_options.h"
#include "commands.h"
#include "pgn_write.h"
#include "records/game_record.h"
#include "records/segment_file.h"
#include "support/atomic_file.h"

typedef struct {
  const char *net;         /* --net: lower-case hex prefix, or NULL */
  time_t since, until;     /* file times kept: [since, until); 0 = open */
  int values;
  const char *event;
  FILE *out;
  /* The file being read. */
  const char *path;
  char date[40];           /* its [Date], "YYYY.MM.DD" */
  /* Counts. */
  unsigned long long games, skipped, bad;
  int rc;                  /* first write error */
  xq_errbuf_t eb;
} export_t;

/* Seconds since the epoch of DAY (YYYY-MM-DD, UTC midnight), or -1. */
static time_t parse_day(const char *s) {
  int y, m, d;
  char tail;
  if (sscanf(s, "%4d-%2d-%2d%c", &y, &m, &d, &tail) != 3 || m < 1 || m > 12 || d < 1 || d > 31)
    return -1;
  struct tm tm = {.tm_year = y - 1900, .tm_mon = m - 1, .tm_mday = d};
  return timegm(&tm);
}

/* Writes one decoded game, if the filters keep it. */
static void export_game(export_t *x, const xq_game_record_t *r, const char *worker, uint64_t seq) {
  char id[24];
  snprintf(id, sizeof id, "%016" PRIx64, r->net_id);
  if (x->net && strncmp(id, x->net, strlen(x->net))) {
    x->skipped++;
    return;
  }
  xq_move_t *moves = malloc((size_t)(r->nplies ? r->nplies : 1) * sizeof *moves);
  float *values = malloc((size_t)(r->nplies ? r->nplies : 1) * sizeof *values);
  if (!moves || !values) {
    free(moves);
    free(values);
    if (!x->rc) x->rc = xq_err_set(&x->eb, XQ_ENOMEM, "out of memory for a game");
    return;
  }
  for (int i = 0; i < r->nplies; i++) {
    moves[i] = r->plies[i].move;
    values[i] = r->plies[i].full ? r->plies[i].value : NAN;
  }
  char player[40], site[200], round[40];
  snprintf(player, sizeof player, "xqzero %s", id);
  if (worker) snprintf(site, sizeof site, "worker %s", worker);
  else snprintf(site, sizeof site, "xqz selfplay");
  snprintf(round, sizeof round, "%" PRIu64, seq);
  xqz_pgn_game_t g = {.event = x->event, .site = site, .date = x->date, .round = round,
                      .red = player, .black = player, .start_fen = r->start_fen,
                      .moves = moves, .nmoves = r->nplies, .values = x->values ? values : NULL,
                      .result = r->result, .reason = r->reason};
  xq_errbuf_t eb = {{0}};
  int rc = xqz_pgn_write(x->out, &g, &eb);
  if (rc == XQ_EIO || rc == XQ_ENOMEM) {
    if (!x->rc) x->rc = xq_err_set(&x->eb, rc, "%s", eb.msg);
  } else if (rc) {
    x->bad++;
    fprintf(stderr, "xqz games export: %s: a game left out: %s\n", x->path, eb.msg);
  } else {
    x->games++;
  }
  free(moves);
  free(values);
}

static int visit_segment(void *user, const char *worker_id, uint64_t seq,
                         const unsigned char *rec, size_t len) {
  export_t *x = user;
  xq_game_record_t r;
  xq_errbuf_t eb = {{0}};
  xq_record_init(&r);
  if (xq_record_decode(&r, rec, len, &eb) == 0) export_game(x, &r, worker_id, seq);
  else x->bad++;
  xq_record_free(&r);
  return x->rc != 0;
}

/* A file of `xqz selfplay` records; a damaged record ends the file (its framing is lost). */
static int export_records(export_t *x) {
  FILE *f = fopen(x->path, "rb");
  if (!f) return xq_err_set(&x->eb, XQ_EIO, "%s: cannot open: %s", x->path, strerror(errno));
  int rc = xq_record_read_header(f, &x->eb);
  xq_game_record_t r;
  xq_record_init(&r);
  for (uint64_t n = 1; rc == 0 && !x->rc; n++) {
    xq_errbuf_t reb = {{0}};
    int got = xq_record_read(f, &r, &reb);
    if (got == 0) break;
    if (got < 0) {
      x->bad++;
      fprintf(stderr, "xqz games export: %s: stopped at a bad record: %s\n", x->path, reb.msg);
      break;
    }
    export_game(x, &r, NULL, n);
  }
  xq_record_free(&r);
  fclose(f);
  return rc ? rc : x->rc;
}

/* One file: its date from its time, the date filters, then its games. */
static int export_file(export_t *x, const char *path) {
  struct stat st;
  x->path = path;
  if (stat(path, &st) != 0)
    return xq_err_set(&x->eb, XQ_EIO, "%s: %s", path, strerror(errno));
  struct tm tm;
  gmtime_r(&st.st_mtime, &tm);
  snprintf(x->date, sizeof x->date, "%04d.%02d.%02d", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday);
  if ((x->since && st.st_mtime < x->since) || (x->until && st.st_mtime >= x->until)) return 0;
  char magic[8] = {0};
  FILE *f = fopen(path, "rb");
  if (!f) return xq_err_set(&x->eb, XQ_EIO, "%s: cannot open: %s", path, strerror(errno));
  size_t got = fread(magic, 1, sizeof magic, f);
  fclose(f);
  if (got == 8 && !memcmp(magic, XQ_SEG_MAGIC, 8)) {
    xq_seg_scan_t sc;
    int rc = xq_seg_scan(path, visit_segment, NULL, x, &sc, &x->eb);
    if (rc < 0) return rc;
    if (sc.regions || sc.tail)
      fprintf(stderr, "xqz games export: %s: %llu damaged or unfinished bytes skipped\n", path,
              (unsigned long long)(sc.damaged + sc.tail));
    return x->rc;
  }
  if (got == 8 && !memcmp(magic, XQ_RECORD_MAGIC, 8)) return export_records(x);
  return xq_err_set(&x->eb, XQ_EFORMAT, "%s is neither a segment file nor a game-record file "
                    "(give a campaign directory, its games/, seg-NNNNNN.bin or an `xqz "
                    "selfplay` output)", path);
}

static int is_dir(const char *p) {
  struct stat st;
  return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* PATH: a campaign directory, a games/ directory, or a file. */
static int export_path(export_t *x, const char *p) {
  if (!is_dir(p)) return export_file(x, p);
  char dir[1200];
  snprintf(dir, sizeof dir, "%s/games", p);
  if (!is_dir(dir)) snprintf(dir, sizeof dir, "%s", p);
  int *idx = NULL, n = 0;
  int rc = xq_seg_list(dir, &idx, &n, &x->eb);
  if (rc < 0) return rc;
  if (n == 0) rc = xq_err_set(&x->eb, XQ_EINVAL, "%s: no segment files (seg-NNNNNN.bin): give a "
                              "campaign directory or its games/", dir);
  for (int i = 0; i < n && rc == 0; i++) {
    char path[1300];
    xq_seg_path(path, sizeof path, dir, idx[i]);
    rc = export_file(x, path);
  }
  free(idx);
  return rc;
}

/* --net: a net id in hex, or its leading digits. */
static int check_net(const char *name, const char *v, xq_errbuf_t *eb) {
  size_t n = strlen(v);
  if (n > 0 && n <= 16 && strspn(v, "0123456789abcdefABCDEF") == n) return 0;
  return xq_err_set(eb, XQ_ERANGE, "--%s takes a net id in hex (16 digits, or its first ones),"
                    " not '%s'", name, v);
}

/* --since, --until: YYYY-MM-DD. */
static int check_day(const char *name, const char *v, xq_errbuf_t *eb) {
  (void)name;
  return parse_day(v) < 0 ? xq_err_set(eb, XQ_ERANGE, "a day is YYYY-MM-DD, not '%s'", v) : 0;
}

/* The command line as given; parse_args turns it into export_t. */
typedef struct {
  const char *out, *net, *since, *until, *event;
  bool values;
} export_args_t;

#define A(f) XQ_OPT_FIELD(export_args_t, f)
static const xq_opt_t rows[] = {
    {"out", XQ_OPTION_TEXT, A(out), NULL, 0, 0, .arg = "FILE",
     .help = "write FILE (atomically) instead of standard output"},
    {"net", XQ_OPTION_TEXT, A(net), NULL, 0, 0, .arg = "ID", .check = check_net,
     .help = "only games played by this net (its id, or leading hex digits)"},
    {"since", XQ_OPTION_TEXT, A(since), NULL, 0, 0, .arg = "DAY", .check = check_day,
     .help = "only games of files last written on or after DAY (YYYY-MM-DD, UTC); records"
     " carry no time, so a game's date is its file's"},
    {"until", XQ_OPTION_TEXT, A(until), NULL, 0, 0, .arg = "DAY", .check = check_day,
     .help = "... on or before DAY"},
    {"values", XQ_OPTION_FLAG, A(values), NULL, 0, 0,
     .help = "the search's root value after each searched move, for the side that moved, in"
     " [-1, 1], as a comment {+0.123}"},
    {"event", XQ_OPTION_TEXT, A(event), "xqzero self-play", 0, 0, .arg = "TEXT",
     .help = "the [Event] tag"},
};
static const xq_opts_t TABLE = {rows, (int)(sizeof rows / sizeof rows[0]), XQ_OPTS_IN_RANGE};

static void usage(FILE *f) {
  fprintf(f, "usage: xqz games export PATH... [--out FILE] [--net ID] [--since DAY]\n"
             "                        [--until DAY] [--values] [--event TEXT]\n\n"
             "Writes stored self-play games as PGN with ICCS moves ([Game \"Chinese Chess\"],\n"
             "[Variant \"xiangqi\"], [Format \"ICCS\"], a [FEN] tag when a game does not start\n"
             "from the start position), the text Xiangqi GUIs (XBoard) and game databases\n"
             "import. PATH: a campaign directory, its games/ directory, segment files or\n"
             "`xqz selfplay` record files.\n\n");
  xq_opts_help(&TABLE, f, 12);
}

/* Options into x, *out_path and paths (argv's strings). -1 to go on, or the exit status. */
static int parse_args(export_t *x, int argc, char **argv, const char **paths, int *npaths,
                      const char **out_path, char *net, size_t net_size) {
  export_args_t a = {0};
  xq_opts_defaults(&TABLE, &a);
  int st = xqz_options_parse("games export", &TABLE, &a, argc, argv, paths, npaths, usage);
  if (st >= 0) return st;
  *out_path = a.out;
  x->event = a.event;
  x->values = a.values;
  if (a.net) {
    size_t n = strlen(a.net);
    for (size_t k = 0; k <= n && k < net_size; k++) net[k] = (char)tolower((unsigned char)a.net[k]);
    x->net = net;
  }
  if (a.since) x->since = parse_day(a.since);
  if (a.until) x->until = parse_day(a.until) + 86400; /* the whole day */
  if (!*npaths)
    return xqz_usage_error("games export", "which games? give a campaign directory or files");
  return -1;
}

int xqz_cmd_games_export(int argc, char **argv) {
  export_t x = {0};
  const char **paths = calloc((size_t)argc + 1, sizeof *paths), *out_path = NULL;
  char net[24];
  int npaths = 0;
  if (!paths) return 1;
  int st = parse_args(&x, argc, argv, paths, &npaths, &out_path, net, sizeof net);
  if (st >= 0) {
    free(paths);
    return st;
  }
  char *mem = NULL;
  size_t mem_size = 0;
  x.out = out_path ? open_memstream(&mem, &mem_size) : stdout;
  int rc = x.out ? 0 : xq_err_set(&x.eb, XQ_ENOMEM, "out of memory for the output");
  for (int i = 0; i < npaths && rc == 0; i++) rc = export_path(&x, paths[i]);
  if (out_path && x.out) {
    if (fclose(x.out) && rc == 0) rc = xq_err_set(&x.eb, XQ_ENOMEM, "out of memory for the output");
    if (rc == 0) {
      const void *parts[1] = {mem};
      size_t sizes[1] = {mem_size};
      rc = xq_atomic_write(out_path, parts, sizes, 1, &x.eb);
    }
  } else if (fflush(stdout) && rc == 0) {
    rc = xq_err_set(&x.eb, XQ_EIO, "writing standard output: %s", strerror(errno));
  }
  free(mem);
  free(paths);
  if (rc < 0) {
    fprintf(stderr, "xqz games export: %s\n", x.eb.msg[0] ? x.eb.msg : xq_strerror(rc));
    return 1;
  }
  fprintf(stderr, "xqz games export: %llu games written%s%s", x.games, out_path ? " to " : "",
          out_path ? out_path : "");
  if (x.skipped) fprintf(stderr, ", %llu left out by --net", x.skipped);
  if (x.bad) fprintf(stderr, ", %llu bad records skipped", x.bad);
  fprintf(stderr, "\n");
  return 0;
}
