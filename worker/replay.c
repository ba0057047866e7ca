/* replay.c: a recorded campaign's games as a worker's self-play (replay.h). */
#include "replay.h"

#include <stdlib.h>
#include <string.h>

#include "records/game_record.h"
#include "records/segment_file.h"
#include "support/hmap.h"

typedef struct {
  unsigned char *buf;
  size_t len;
  uint64_t before; /* positions of the games before this one */
} replay_game_t;

struct xq_replay {
  replay_game_t *g;
  size_t n, cap, next, skipped;
  uint64_t positions;
  uint64_t bytes, max_bytes; /* loaded payload bytes and their cap */
  bool left_out;             /* the cap was reached: later records were not read */
  uint64_t repeats;          /* records stored twice (same worker id and seq), sent once */
  xq_hmap_t seen;            /* (worker id, seq) keys of the records loaded */
  double per_ms;    /* positions a millisecond (0: no pace) */
  int64_t start_ms; /* the first xq_replay_next (-1: not yet) */
  xq_game_record_t r; /* decoding scratch */
};

/* One stored record: kept when it decodes, has a full-search ply and was not stored before
 * under the same (worker id, seq) (a sealed segment may hold a rewritten record's copy,
 * segments.h). Ends the walk (1) at the memory cap. */
static int load_visit(void *user, const char *worker_id, uint64_t seq, const unsigned char *rec,
                      size_t len) {
  xq_replay_t *r = user;
  if (r->bytes + len > r->max_bytes) {
    r->left_out = true;
    return 1;
  }
  /* A 64-bit key of the pair: two different pairs share one with odds of about n^2 / 2^65. */
  int fresh = xq_hmap_put(&r->seen, xq_hmap_str_key(worker_id) ^ (seq * 0x9E3779B97F4A7C15ull), 0);
  if (fresh < 0) return XQ_ENOMEM;
  if (fresh == 0) {
    r->repeats++;
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
  xq_hmap_init(&r->seen, false);
  char games[4096];
  int rc = xq_seg_scan_dir(dir, load_visit, r, games, sizeof games, eb);
  if (rc > 0) rc = 0; /* the memory cap ended the walk */
  xq_record_free(&r->r);
  xq_hmap_free(&r->seen);
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
bool xq_replay_left_out(const xq_replay_t *r) { return r->left_out; }
uint64_t xq_replay_bytes(const xq_replay_t *r) { return r->bytes; }
uint64_t xq_replay_repeats(const xq_replay_t *r) { return r->repeats; }

void xq_replay_unread(xq_replay_t *r) {
  if (r->next > 0) r->next--;
}

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
