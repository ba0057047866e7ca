/*
 * cmd_games.c: `xqz games` summarises stored self-play games, one row per file: how the
 * games end (Red / Black / drawn, and by reason), their mean length, and what they teach
 * the value head (the share of samples with a decisive target, and the correlation of
 * material with that target). It reads a campaign directory (its games/ segments), a
 * games/ directory, segment files or `xqz selfplay` record files, and never writes:
 * it is safe on a running campaign (a record being appended is left out).
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli_options.h"
#include "commands.h"
#include "json_out.h"
#include "rules/material.h"
#include "records/game_record.h"
#include "records/segment_file.h"
#include "records/game_summary.h"

/* The command line's options. */
typedef struct {
  double adjudicate; /* -1: not given */
  bool json;
} games_args_t;

#define A(f) XQ_OPT_FIELD(games_args_t, f)
static const xq_opt_t rows[] = {
    {"adjudicate", XQ_OPTION_DOUBLE, A(adjudicate), NULL, 0, 100, .arg = "PAWNS",
     .help = "score length-capped games by material as the campaign does (0 for record"
     " files: capped games drawn)",
     .shown = "adjudicate_material in the campaign's campaign.ini, else the coordinator's"
     " default " XQ_ADJUDICATE_DEFAULT},
    {"json", XQ_OPTION_FLAG, A(json), NULL, 0, 0,
     .help = "one JSON object per file (and one for the total)"},
};
static const xq_opts_t TABLE = {rows, (int)(sizeof rows / sizeof rows[0]), XQ_OPTS_IN_RANGE};

static void usage(FILE *f) {
  fprintf(f, "usage: xqz games PATH... [--adjudicate PAWNS] [--json]\n"
             "       xqz games export PATH... [--out FILE] ...  (PGN; games export --help)\n\n"
             "Summarises stored self-play games, one row per file, and a total row when\n"
             "there is more than one file. PATH: a campaign directory, its games/\n"
             "directory, segment files (seg-NNNNNN.bin) or `xqz selfplay` record files.\n"
             "Read-only: safe on a running campaign.\n\n");
  xq_opts_help(&TABLE, f, 18);
  fprintf(f, "\nColumns: games; mean plies; results by the rules (%% Red, Black, drawn); how\n"
             "games ended (%% checkmate, resignation, repetition, no capture, length cap,\n"
             "other); training samples; %% with a decisive target z; correlation of the\n"
             "material count (side to move's view) with z.\n");
}

typedef struct {
  char *path;
  double pawns; /* adjudication of this file's games */
} games_file_t;

typedef struct {
  xq_game_summary_t sum;
  const char *path;
  xq_errbuf_t first_bad; /* why the first bad record was bad */
} file_scan_t;

static void note_bad(file_scan_t *fs, const xq_errbuf_t *eb) {
  if (!fs->first_bad.msg[0]) fs->first_bad = *eb;
}

static int visit_segment(void *user, const char *worker_id, uint64_t seq,
                         const unsigned char *rec, size_t len) {
  (void)worker_id;
  (void)seq;
  file_scan_t *fs = user;
  xq_game_record_t r;
  xq_errbuf_t eb = {{0}};
  xq_record_init(&r);
  int rc = xq_record_decode(&r, rec, len, &eb);
  if (rc == 0) rc = xq_game_summary_add(&fs->sum, &r, &eb);
  else fs->sum.bad++;
  if (rc < 0) note_bad(fs, &eb);
  xq_record_free(&r);
  return 0;
}

/* A file of `xqz selfplay` records. A record that does not decode is skipped; a
 * truncated or CRC-failing one ends the file (its framing cannot be trusted). */
static int scan_records(file_scan_t *fs, xq_errbuf_t *eb) {
  FILE *f = fopen(fs->path, "rb");
  if (!f) return xq_err_set(eb, XQ_EIO, "%s: cannot open: %s", fs->path, strerror(errno));
  int rc = xq_record_read_header(f, eb);
  xq_game_record_t r;
  xq_record_init(&r);
  while (rc == 0) {
    xq_errbuf_t reb = {{0}};
    long before = ftell(f);
    int got = xq_record_read(f, &r, &reb);
    if (got == 0) break;
    if (got > 0) {
      if (xq_game_summary_add(&fs->sum, &r, &reb) < 0) note_bad(fs, &reb);
      continue;
    }
    fs->sum.bad++;
    note_bad(fs, &reb);
    if (got == XQ_ETRUNC || got == XQ_ECHECKSUM || got == XQ_ENOMEM || ftell(f) - before <= 8)
      break;
  }
  xq_record_free(&r);
  fclose(f);
  return rc;
}

/* A segment file; damage (or a record being appended) is counted and reported, not fatal:
 * the records after a damaged run are read (the scanner resyncs on the next valid one). */
static int scan_segment(file_scan_t *fs, xq_errbuf_t *eb) {
  xq_seg_scan_t st;
  int rc = xq_seg_scan(fs->path, visit_segment, NULL, fs, &st, eb);
  if (rc < 0) return rc;
  fs->sum.damaged_runs = st.regions;
  fs->sum.damaged_bytes = st.damaged;
  fs->sum.torn_bytes = st.tail;
  if (st.regions)
    fprintf(stderr, "xqz games: %s: %llu damaged bytes in %llu places skipped; the records"
                    " after them are counted (the coordinator moves such bytes to the"
                    " campaign's quarantine/ at its next start)\n", fs->path,
            (unsigned long long)st.damaged, (unsigned long long)st.regions);
  if (st.tail)
    fprintf(stderr, "xqz games: %s: read up to byte %llu only (a record being written, or a"
                    " torn or damaged end: the last %llu bytes are not counted)\n",
            fs->path, (unsigned long long)st.end, (unsigned long long)st.tail);
  return 0;
}

static int scan_file(file_scan_t *fs, xq_errbuf_t *eb) {
  FILE *f = fopen(fs->path, "rb");
  if (!f) return xq_err_set(eb, XQ_EIO, "%s: cannot open: %s", fs->path, strerror(errno));
  char magic[8] = {0};
  size_t got = fread(magic, 1, sizeof magic, f);
  fclose(f);
  if (got == 8 && !memcmp(magic, XQ_RECORD_MAGIC, 8)) return scan_records(fs, eb);
  /* A segment the coordinator has just started may not have its header on disk yet. */
  if (!memcmp(magic, XQ_SEG_MAGIC, got)) return scan_segment(fs, eb);
  return xq_err_set(eb, XQ_EFORMAT, "%s: neither a segment file nor a game-record file",
                    fs->path);
}

static double pct(uint64_t a, uint64_t b) { return b ? 100.0 * (double)a / (double)b : 0.0; }

static void print_header(void) {
  printf("%-16s %8s %6s %5s %5s %5s  %5s %5s %5s %5s %5s %5s %10s %6s %6s\n", "file", "games",
         "plies", "red", "black", "draw", "mate", "resgn", "rep", "nocap", "cap", "other",
         "samples", "dec-z", "mat~z");
}

static void print_row(const char *name, const xq_game_summary_t *s) {
  uint64_t g = s->games;
  const uint64_t *r = s->by_reason;
  uint64_t other = g - r[XQ_REASON_CHECKMATE] - r[XQ_REASON_RESIGN] - r[XQ_REASON_REPETITION] -
                   r[XQ_REASON_NO_CAPTURE] - r[XQ_REASON_LENGTH_CAP];
  double c = xq_game_summary_material_z(s);
  char cz[16];
  if (isnan(c)) snprintf(cz, sizeof cz, "-");
  else snprintf(cz, sizeof cz, "%+.2f", c);
  printf("%-16s %8llu %6.1f %4.0f%% %4.0f%% %4.0f%%  "
         "%4.0f%% %4.0f%% %4.0f%% %4.0f%% %4.0f%% %4.0f%% %10llu %5.0f%% %6s\n",
         name, (unsigned long long)g, g ? (double)s->plies / (double)g : 0.0,
         pct(s->red_wins, g), pct(s->black_wins, g), pct(s->draws, g),
         pct(r[XQ_REASON_CHECKMATE], g), pct(r[XQ_REASON_RESIGN], g),
         pct(r[XQ_REASON_REPETITION], g), pct(r[XQ_REASON_NO_CAPTURE], g),
         pct(r[XQ_REASON_LENGTH_CAP], g), pct(other, g), (unsigned long long)s->samples,
         pct(s->decisive, s->samples), cz);
}

static void print_json(const char *name, const xq_game_summary_t *s) {
  double c = xq_game_summary_material_z(s);
  printf("{\"file\":");
  xqz_json_str(name);
  printf(",\"adjudicate_material\":%g,\"games\":%llu,\"bad\":%llu,"
         "\"plies\":%llu,\"red_wins\":%llu,\"black_wins\":%llu,\"draws\":%llu,\"reasons\":{",
         s->adjudicate_pawns, (unsigned long long)s->games, (unsigned long long)s->bad,
         (unsigned long long)s->plies, (unsigned long long)s->red_wins,
         (unsigned long long)s->black_wins, (unsigned long long)s->draws);
  int first = 1;
  for (int k = 1; k < XQ_SUMMARY_REASONS; k++) {
    if (!s->by_reason[k]) continue;
    printf("%s\"%s\":%llu", first ? "" : ",", xq_reason_name((xq_reason_t)k),
           (unsigned long long)s->by_reason[k]);
    first = 0;
  }
  printf("},\"samples\":%llu,\"decisive_samples\":%llu,\"damaged_runs\":%llu,"
         "\"damaged_bytes\":%llu,\"torn_bytes\":%llu,\"material_z\":",
         (unsigned long long)s->samples, (unsigned long long)s->decisive,
         (unsigned long long)s->damaged_runs, (unsigned long long)s->damaged_bytes,
         (unsigned long long)s->torn_bytes);
  if (isnan(c)) printf("null}\n");
  else printf("%.4f}\n", c);
}

/* adjudicate_material of the campaign in dir: its campaign.ini's value, the coordinator's
 * default when the file does not set it, and 0 (capped games drawn) without a
 * campaign.ini. */
static double campaign_adjudication(const char *dir) {
  char path[1400];
  snprintf(path, sizeof path, "%s/campaign.ini", dir);
  FILE *f = fopen(path, "r");
  if (!f) return 0.0;
  double pawns = strtod(XQ_ADJUDICATE_DEFAULT, NULL);
  char line[512];
  while (fgets(line, sizeof line, f)) {
    char *p = line + strspn(line, " \t");
    if (strncmp(p, "adjudicate_material", 19) != 0) continue;
    p += 19 + strspn(p + 19, " \t");
    if (*p != '=' && *p != ':') continue;
    char *end;
    double v = strtod(p + 1, &end);
    if (end != p + 1 && end[strspn(end, " \t\r\n")] == '\0') pawns = v;
  }
  fclose(f);
  return pawns;
}

static int is_dir(const char *p) {
  struct stat st;
  return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static int add_file(games_file_t **files, int *n, const char *path, double pawns) {
  games_file_t *nf = realloc(*files, (size_t)(*n + 1) * sizeof *nf);
  if (!nf) return XQ_ENOMEM;
  *files = nf;
  if (!(nf[*n].path = strdup(path))) return XQ_ENOMEM;
  nf[*n].pawns = pawns;
  (*n)++;
  return 0;
}

/* The files PATH stands for, appended to *files with the adjudication of their campaign
 * (`given` >= 0: --adjudicate). A segment file or games/ directory belongs to the
 * campaign one directory up; a record file to none. */
static int expand(const char *p, games_file_t **files, int *n, double given, xq_errbuf_t *eb) {
  char dir[1200], camp[1300] = "";
  /* Checked before anything is printed: an error comes alone, never after the header. */
  if (access(p, R_OK) != 0)
    return errno == ENOENT
               ? xq_err_set(eb, XQ_EIO, "%s: no such campaign directory or file (check the"
                            " path: a campaign directory, its games/ or game files)", p)
               : xq_err_set(eb, XQ_EIO, "%s: cannot read it: %s", p, strerror(errno));
  if (!is_dir(p)) {
    const char *slash = strrchr(p, '/');
    if (xq_seg_number(slash ? slash + 1 : p) >= 0)
      snprintf(camp, sizeof camp, "%.*s/..", slash ? (int)(slash - p) : 1, slash ? p : ".");
    return add_file(files, n, p,
                    given >= 0 ? given : camp[0] ? campaign_adjudication(camp) : 0.0);
  }
  snprintf(dir, sizeof dir, "%s/games", p);
  if (is_dir(dir)) {
    snprintf(camp, sizeof camp, "%s", p);
  } else {
    snprintf(dir, sizeof dir, "%s", p);
    snprintf(camp, sizeof camp, "%s/..", p);
  }
  double pawns = given >= 0 ? given : campaign_adjudication(camp);
  int *idx, k;
  int rc = xq_seg_list(dir, &idx, &k, eb);
  if (rc < 0) return rc;
  if (k == 0) rc = xq_err_set(eb, XQ_EINVAL, "%s: no segment files (seg-NNNNNN.bin)", dir);
  for (int i = 0; i < k && rc == 0; i++) {
    char path[1300];
    xq_seg_path(path, sizeof path, dir, idx[i]);
    rc = add_file(files, n, path, pawns);
  }
  free(idx);
  return rc;
}

/* The quarantine of the campaign directory p (runs of damaged bytes the coordinator cut out
 * of its segments), as one line when it holds any. */
static void print_quarantine(const char *p) {
  char dir[1300], games[1300];
  snprintf(games, sizeof games, "%s/games", p);
  snprintf(dir, sizeof dir, "%s/quarantine", p);
  if (!is_dir(games)) return;
  uint64_t files, bytes;
  xq_seg_quarantine_count(dir, &files, &bytes);
  if (files)
    printf("quarantine %s: %llu runs of damaged bytes (%llu bytes) cut out of the segments"
           " (their games are lost; the games around them are counted above)\n", dir,
           (unsigned long long)files, (unsigned long long)bytes);
}

int xqz_cmd_games(int argc, char **argv) {
  if (argc > 1 && !strcmp(argv[1], "export")) return xqz_cmd_games_export(argc - 1, argv + 1);
  games_args_t a = {.adjudicate = -1.0};
  int npaths = 0;
  const char **paths = calloc((size_t)argc, sizeof *paths);
  if (!paths) return 1;
  int st = xqz_options_parse("games", &TABLE, &a, argc, argv, paths, &npaths, usage);
  if (st < 0 && !npaths)
    st = xqz_usage_error("games", "which games? give a campaign directory or files");
  if (st >= 0) {
    free(paths);
    return st;
  }
  double given = a.adjudicate;
  int json = a.json;
  games_file_t *files = NULL;
  int nfiles = 0, rc = 0;
  xq_errbuf_t eb = {{0}};
  for (int i = 0; i < npaths && rc == 0; i++) rc = expand(paths[i], &files, &nfiles, given, &eb);
  for (int i = 1; i < nfiles && rc == 0; i++)
    if (files[i].pawns != files[0].pawns)
      rc = xq_err_set(&eb, XQ_EINVAL,
                      "%s and %s score length-capped games differently (%g and %g pawns); "
                      "give --adjudicate", files[0].path, files[i].path, files[0].pawns,
                      files[i].pawns);
  double pawns = nfiles ? files[0].pawns : 0.0;
  xq_game_summary_t total;
  xq_game_summary_init(&total, pawns);
  if (rc == 0 && !json) {
    printf("adjudicate_material %g (length-capped games %s)\n", pawns,
           pawns > 0 ? "scored by material" : "drawn");
    print_header();
  }
  for (int i = 0; i < nfiles && rc == 0; i++) {
    file_scan_t fs = {.path = files[i].path};
    xq_game_summary_init(&fs.sum, pawns);
    rc = scan_file(&fs, &eb);
    if (rc < 0) break;
    const char *base = strrchr(fs.path, '/');
    if (json) print_json(fs.path, &fs.sum);
    else print_row(base ? base + 1 : fs.path, &fs.sum);
    fflush(stdout);
    if (fs.sum.bad)
      fprintf(stderr, "xqz games: %s: %llu records skipped (first: %s)\n", fs.path,
              (unsigned long long)fs.sum.bad, fs.first_bad.msg);
    xq_game_summary_merge(&total, &fs.sum);
  }
  if (rc == 0 && nfiles > 1) {
    if (json) print_json("all", &total);
    else print_row("all", &total);
  }
  for (int i = 0; i < npaths && rc == 0 && !json; i++) print_quarantine(paths[i]);
  if (rc < 0) fprintf(stderr, "xqz games: %s\n", eb.msg[0] ? eb.msg : "out of memory");
  for (int i = 0; i < nfiles; i++) free(files[i].path);
  free(files);
  free(paths);
  return rc < 0 ? 1 : 0;
}
