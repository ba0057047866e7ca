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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "commands.h"
#include "json_out.h"
#include "search/game_record.h"
#include "search/segment_file.h"
#include "wire/game_summary.h"

static void usage(FILE *f) {
  fprintf(f, "usage: xqz games PATH... [--adjudicate PAWNS] [--json]\n\n"
             "Summarises stored self-play games, one row per file and a total.\n"
             "PATH: a campaign directory, its games/ directory, segment files\n"
             "(seg-NNNNNN.bin) or `xqz selfplay` record files. Read-only.\n\n"
             "  --adjudicate PAWNS  score length-capped games by material as the campaign\n"
             "                      does (default: adjudicate_material from the campaign's\n"
             "                      campaign.ini when PATH is a campaign, else 0 = draws)\n"
             "  --json              one JSON object per file and one for the total\n\n"
             "Columns: games; mean plies; results by the rules (%% Red, Black, drawn); how\n"
             "games ended (%% checkmate, resignation, repetition, no capture, length cap,\n"
             "other); training samples; %% with a decisive target z; correlation of the\n"
             "material count (side to move's view) with z.\n");
}

typedef struct {
  xq_game_summary_t sum;
  const char *path;
  xq_errbuf_t first_bad; /* why the first bad record was bad */
} file_scan_t;

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
  if (rc < 0 && !fs->first_bad.msg[0]) fs->first_bad = eb;
  xq_record_free(&r);
  return 0;
}

/* A file of `xqz selfplay` records. */
static int scan_records(file_scan_t *fs, xq_errbuf_t *eb) {
  FILE *f = fopen(fs->path, "rb");
  if (!f) return xq_err_set(eb, XQ_EIO, "%s: cannot open: %s", fs->path, strerror(errno));
  int rc = xq_record_read_header(f, eb);
  xq_game_record_t r;
  xq_record_init(&r);
  while (rc == 0) {
    xq_errbuf_t reb = {{0}};
    int got = xq_record_read(f, &r, &reb);
    if (got == 0) break;
    if (got < 0) { /* framing is lost after a bad record: stop at it */
      fs->sum.bad++;
      if (!fs->first_bad.msg[0]) fs->first_bad = reb;
      break;
    }
    if (xq_game_summary_add(&fs->sum, &r, &reb) < 0 && !fs->first_bad.msg[0]) fs->first_bad = reb;
  }
  xq_record_free(&r);
  fclose(f);
  return rc;
}

static int scan_file(file_scan_t *fs, xq_errbuf_t *eb) {
  FILE *f = fopen(fs->path, "rb");
  if (!f) return xq_err_set(eb, XQ_EIO, "%s: cannot open: %s", fs->path, strerror(errno));
  char magic[8] = {0};
  size_t got = fread(magic, 1, sizeof magic, f);
  fclose(f);
  if (got == 8 && !memcmp(magic, XQ_RECORD_MAGIC, 8)) return scan_records(fs, eb);
  if (got == 8 && !memcmp(magic, XQ_SEG_MAGIC, 8)) {
    uint64_t end;
    int torn;
    return xq_seg_scan_file(fs->path, visit_segment, fs, &end, &torn, eb);
  }
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
  printf("%-16s %8llu %6.1f %4.0f%% %4.0f%% %4.0f%%  %4.0f%% %4.0f%% %4.0f%% %4.0f%% %4.0f%% %4.0f%% "
         "%10llu %5.0f%% %6s\n",
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
  printf("},\"samples\":%llu,\"decisive_samples\":%llu,\"material_z\":", (unsigned long long)s->samples,
         (unsigned long long)s->decisive);
  if (isnan(c)) printf("null}\n");
  else printf("%.4f}\n", c);
}

/* adjudicate_material from DIR/campaign.ini, if DIR is a campaign; 1 when found. */
static int campaign_adjudication(const char *dir, double *pawns) {
  char path[1200];
  snprintf(path, sizeof path, "%s/campaign.ini", dir);
  FILE *f = fopen(path, "r");
  if (!f) return 0;
  char line[512];
  int found = 0;
  while (fgets(line, sizeof line, f))
    if (sscanf(line, " adjudicate_material = %lf", pawns) == 1) found = 1;
  fclose(f);
  return found;
}

static int is_dir(const char *p) {
  struct stat st;
  return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The files PATH stands for, appended to *files (malloc'd strings). */
static int expand(const char *p, char ***files, int *n, double *pawns, int pawns_given,
                  xq_errbuf_t *eb) {
  char dir[1100];
  if (!is_dir(p)) {
    snprintf(dir, sizeof dir, "%s", p);
    char **nf = realloc(*files, (size_t)(*n + 1) * sizeof *nf);
    if (!nf || !(nf[*n] = strdup(dir))) return XQ_ENOMEM;
    *files = nf;
    (*n)++;
    return 0;
  }
  snprintf(dir, sizeof dir, "%s/games", p);
  if (is_dir(dir)) {
    if (!pawns_given) campaign_adjudication(p, pawns);
  } else {
    snprintf(dir, sizeof dir, "%s", p);
    if (!pawns_given) {
      char parent[1200];
      snprintf(parent, sizeof parent, "%s/..", p);
      campaign_adjudication(parent, pawns);
    }
  }
  int *idx, k;
  int rc = xq_seg_list(dir, &idx, &k, eb);
  if (rc < 0) return rc;
  if (k == 0) rc = xq_err_set(eb, XQ_EINVAL, "%s: no segment files (seg-NNNNNN.bin)", dir);
  for (int i = 0; i < k && rc == 0; i++) {
    char path[1200];
    xq_seg_path(path, sizeof path, dir, idx[i]);
    char **nf = realloc(*files, (size_t)(*n + 1) * sizeof *nf);
    if (!nf) { rc = XQ_ENOMEM; break; }
    *files = nf;
    if (!(nf[*n] = strdup(path))) { rc = XQ_ENOMEM; break; }
    (*n)++;
  }
  free(idx);
  return rc;
}

int xqz_cmd_games(int argc, char **argv) {
  int json = 0, pawns_given = 0;
  double pawns = 0.0;
  const char **paths = calloc((size_t)argc, sizeof *paths);
  int npaths = 0;
  if (!paths) return 1;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--json")) {
      json = 1;
    } else if (!strcmp(argv[i], "--adjudicate") && i + 1 < argc) {
      char *end;
      pawns = strtod(argv[++i], &end);
      if (*end || pawns < 0 || pawns > 100) {
        fprintf(stderr, "xqz games: --adjudicate takes pawns from 0 to 100, not '%s'\n", argv[i]);
        free(paths);
        return 2;
      }
      pawns_given = 1;
    } else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
      usage(stdout);
      free(paths);
      return 0;
    } else if (argv[i][0] == '-') {
      fprintf(stderr, "xqz games: unknown argument '%s'\n\n", argv[i]);
      usage(stderr);
      free(paths);
      return 2;
    } else {
      paths[npaths++] = argv[i];
    }
  }
  if (npaths == 0) {
    usage(stderr);
    free(paths);
    return 2;
  }
  char **files = NULL;
  int nfiles = 0, rc = 0;
  xq_errbuf_t eb = {{0}};
  for (int i = 0; i < npaths && rc == 0; i++)
    rc = expand(paths[i], &files, &nfiles, &pawns, pawns_given, &eb);
  xq_game_summary_t total;
  xq_game_summary_init(&total, pawns);
  if (rc == 0 && !json) {
    printf("adjudicate_material %g (length-capped games %s)\n", pawns,
           pawns > 0 ? "scored by material" : "drawn");
    print_header();
  }
  for (int i = 0; i < nfiles && rc == 0; i++) {
    file_scan_t fs = {.path = files[i]};
    xq_game_summary_init(&fs.sum, pawns);
    rc = scan_file(&fs, &eb);
    if (rc < 0) break;
    const char *base = strrchr(files[i], '/');
    base = base ? base + 1 : files[i];
    if (json) print_json(base, &fs.sum);
    else print_row(base, &fs.sum);
    fflush(stdout);
    if (fs.sum.bad)
      fprintf(stderr, "xqz games: %s: %llu records skipped (first: %s)\n", files[i],
              (unsigned long long)fs.sum.bad, fs.first_bad.msg);
    xq_game_summary_merge(&total, &fs.sum);
  }
  if (rc == 0 && nfiles > 1) {
    if (json) print_json("all", &total);
    else print_row("all", &total);
  }
  if (rc < 0) fprintf(stderr, "xqz games: %s\n", eb.msg[0] ? eb.msg : "out of memory");
  for (int i = 0; i < nfiles; i++) free(files[i]);
  free(files);
  free(paths);
  return rc < 0 ? 1 : 0;
}
