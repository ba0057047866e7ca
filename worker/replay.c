/* replay.c: a recorded campaign's games as a worker's self-play (replay.h). */
#include "replay.h"

#include <stdlib.h>
#include <string.h>

#include "records/game_record.h"
#include "records/segment_file.h"

typedef struct {
  unsigned char *buf;
  size_t len;
  uint64_t before; /* positions of the games before this one */
} replay_game_t;

struct xq_replay {
  replay_game_t *g;
  size_t n, cap, next, skipped;
  uint64_t positions;
  uint64_t bytes, max_bytes, left_out; /* loaded payload bytes, their cap, records past it */
  double per_ms;    /* positions a millisecond (0: no pace) */
  int64_t start_ms; /* the first xq_replay_next (-1: not yet) */
  xq_game_record_t r; /* decoding scratch */
};

/* One stored record: kept when it decodes and has a full-search ply. */
static int load_visit(void *user, const char *worker_id, uint64_t seq, const unsigned char *rec,
                      size_t len) {
  (void)worker_id;
  (void)seq;
  xq_replay_t *r = user;
  if (r->left_out || r->bytes + len > r->max_bytes) {
    r->left_out++;
    return 0;
  }
  xq_errbuf_t eb = {{0}};
  if (xq_record_decode(&r->r, rec, len, &eb) != 0) {
    r->skipped++;
    return 0;
  }
  uint64_t full = 0;
  for (int i = 0; i < r->r.nplies; i++) full += r->r.plies[i].full;
  if (full == 0) return 0; /* no samples: the coordinator would store it for nothing */
  if (r->n == r->cap) {
    size_t cap = r->cap ? r->cap * 2 : 1024;
    replay_game_t *g = realloc(r->g, cap * sizeof *g);
    if (!g) return XQ_ENOMEM;
    r->g = g;
    r->cap = cap;
  }
  replay_game_t *g = &r->g[r->n];
  g->buf = malloc(len);
  if (!g->buf) return XQ_ENOMEM;
  memcpy(g->buf, rec, len);
  g->len = len;
  r->bytes += len;
  g->before = r->positions;
  r->positions += full;
  r->n++;
  return 0;
}

int xq_replay_open(xq_replay_t **out, const char *dir, double minutes, uint64_t max_bytes,
                   xq_errbuf_t *eb) {
  *out = NULL;
  xq_replay_t *r = calloc(1, sizeof *r);
  if (!r) return xq_err_set(eb, XQ_ENOMEM, "--replay: out of memory");
  xq_record_init(&r->r);
  r->start_ms = -1;
  r->max_bytes = max_bytes;
  char games[4096];
  int rc = xq_seg_scan_dir(dir, load_visit, r, games, sizeof games, eb);
  xq_record_free(&r->r);
  if (rc == XQ_ENOMEM) {
    xq_err_set(eb, XQ_ENOMEM, "--replay %s: out of memory after %zu games", dir, r->n);
  } else if (rc < 0) {
    char why[sizeof(xq_errbuf_t)];
    snprintf(why, sizeof why, "%s", eb ? eb->msg : xq_strerror(rc));
    xq_err_set(eb, rc, "--replay %s: %s", dir, why);
  } else if (r->n == 0) {
    rc = xq_err_set(eb, XQ_EINVAL, "--replay %s: no stored game with a full-search ply in %s"
                    " (%zu records did not decode)", dir, games, r->skipped);
  }
  if (rc < 0) {
    xq_replay_free(&r);
    return rc;
  }
  r->per_ms = minutes > 0 ? (double)r->positions / (minutes * 60000.0) : 0;
  *out = r;
  return 0;
}

void xq_replay_free(xq_replay_t **rp) {
  xq_replay_t *r = *rp;
  if (!r) return;
  for (size_t i = 0; i < r->n; i++) free(r->g[i].buf);
  free(r->g);
  free(r);
  *rp = NULL;
}

size_t xq_replay_games(const xq_replay_t *r) { return r->n; }
uint64_t xq_replay_positions(const xq_replay_t *r) { return r->positions; }
size_t xq_replay_skipped(const xq_replay_t *r) { return r->skipped; }
size_t xq_replay_sent(const xq_replay_t *r) { return r->next; }
uint64_t xq_replay_left_out(const xq_replay_t *r) { return r->left_out; }

int64_t xq_replay_due_ms(const xq_replay_t *r, size_t i) {
  if (r->per_ms <= 0 || i >= r->n) return 0;
  return (int64_t)((double)r->g[i].before / r->per_ms);
}

int xq_replay_next(xq_replay_t *r, int64_t now_ms, const unsigned char **rec, size_t *len,
                   uint64_t *positions, int64_t *wait_ms) {
  *wait_ms = 0;
  if (r->next >= r->n) return -1;
  if (r->start_ms < 0) r->start_ms = now_ms;
  int64_t due = r->start_ms + xq_replay_due_ms(r, r->next);
  if (now_ms < due) {
    *wait_ms = due - now_ms;
    return 0;
  }
  *rec = r->g[r->next].buf;
  *len = r->g[r->next].len;
  *positions = (r->next + 1 < r->n ? r->g[r->next + 1].before : r->positions) - r->g[r->next].before;
  r->next++;
  return 1;
}
