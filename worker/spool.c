/* spool.c: unacknowledged games in memory and on disk (see spool.h). Sequence numbers come
 * from a counter: seq.next in the spool holds a durable reservation (SEQ_BLOCK seqs ahead),
 * so a restart continues above every seq handed out before, whatever the clock does; the
 * clock (in microseconds) is only the floor of a spool without one (a fresh spool under a
 * worker id used before must not reuse that id's seqs). */
#include "spool.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "support/atomic_file.h"
#include "support/crc32.h"
#include "support/dirlock.h"
#include "support/log.h"
#include "support/mkdir_p.h"

#define SPOOL_MAGIC "XQZS"
#define SPOOL_VERSION 1u
#define SPOOL_MAX_FILE (64u << 20)
#define SEQ_FILE "seq.next"
#define SEQ_BLOCK (1ull << 20) /* seqs reserved per write of SEQ_FILE */

typedef struct {
  char *worker_id;
  uint64_t seq;
  unsigned char *rec;
  size_t len;
  int64_t sent_ms; /* 0: not sent since (re)connect */
} entry_t;

struct xq_spool {
  pthread_mutex_t lock;
  char *dir;
  size_t max;
  entry_t *e; /* (n) in seq order of arrival */
  size_t n, cap;
  uint64_t next_seq;
  uint64_t reserved; /* seqs below this are reserved in SEQ_FILE */
  xq_dirlock_t dirlock; /* held while open: one worker per spool */
};

static void put32(unsigned char *p, uint32_t v) {
  for (int i = 0; i < 4; i++) p[i] = (unsigned char)(v >> (8 * i));
}
static void put64(unsigned char *p, uint64_t v) {
  for (int i = 0; i < 8; i++) p[i] = (unsigned char)(v >> (8 * i));
}
static uint32_t get32(const unsigned char *p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; i++) v |= (uint32_t)p[i] << (8 * i);
  return v;
}
static uint64_t get64(const unsigned char *p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; i++) v |= (uint64_t)p[i] << (8 * i);
  return v;
}

static void entry_path(const xq_spool_t *sp, const char *wid, uint64_t seq, char *out,
                       size_t cap) {
  /* The id goes into the name only as a hash, so any id is a safe file name. */
  uint32_t h = xq_crc32(0, wid, strlen(wid));
  snprintf(out, cap, "%s/%08x-%016" PRIx64 ".xqs", sp->dir, h, seq);
}

static int push(xq_spool_t *sp, const char *wid, uint64_t seq, const void *rec, size_t len) {
  if (sp->n == sp->cap) {
    size_t nc = sp->cap ? sp->cap * 2 : 64;
    entry_t *ne = realloc(sp->e, nc * sizeof *ne);
    if (!ne) return XQ_ENOMEM;
    sp->e = ne;
    sp->cap = nc;
  }
  entry_t *e = &sp->e[sp->n];
  e->worker_id = strdup(wid);
  e->rec = malloc(len ? len : 1);
  if (!e->worker_id || !e->rec) {
    free(e->worker_id);
    free(e->rec);
    return XQ_ENOMEM;
  }
  memcpy(e->rec, rec, len);
  e->len = len;
  e->seq = seq;
  e->sent_ms = 0;
  sp->n++;
  return 0;
}

/* Parses one spool file image; 0 or XQ_EFORMAT. */
static int load_one(xq_spool_t *sp, const unsigned char *b, size_t n) {
  if (n < 16 + 4 || memcmp(b, SPOOL_MAGIC, 4) || get32(b + 4) != SPOOL_VERSION) return XQ_EFORMAT;
  if (xq_crc32(0, b + 12, n - 12) != get32(b + 8)) return XQ_EFORMAT;
  size_t off = 12;
  uint32_t wl = get32(b + off);
  off += 4;
  if (wl == 0 || wl > 255 || n - off < (size_t)wl + 12) return XQ_EFORMAT;
  char wid[256];
  memcpy(wid, b + off, wl);
  wid[wl] = 0;
  off += wl;
  uint64_t seq = get64(b + off);
  off += 8;
  uint32_t rl = get32(b + off);
  off += 4;
  if (n - off != rl) return XQ_EFORMAT;
  if (seq >= sp->next_seq) sp->next_seq = seq + 1;
  return push(sp, wid, seq, b + off, rl);
}

/* The reservation an earlier run left in dir/SEQ_FILE (0 when none or unreadable). */
static uint64_t seq_load(const char *dir) {
  char path[2048];
  snprintf(path, sizeof path, "%s/" SEQ_FILE, dir);
  FILE *f = fopen(path, "r");
  if (!f) return 0;
  uint64_t v = 0;
  if (fscanf(f, "%" SCNu64, &v) != 1) v = 0;
  fclose(f);
  return v;
}

/* Reserves the seqs from `from` to from + SEQ_BLOCK durably (temp, fsync, rename). */
static int seq_reserve(xq_spool_t *sp, uint64_t from, xq_errbuf_t *eb) {
  char path[2048], txt[32];
  snprintf(path, sizeof path, "%s/" SEQ_FILE, sp->dir);
  uint64_t r = from + SEQ_BLOCK;
  int n = snprintf(txt, sizeof txt, "%" PRIu64 "\n", r);
  const void *parts[1] = {txt};
  size_t sizes[1] = {(size_t)n};
  int rc = xq_atomic_write(path, parts, sizes, 1, eb);
  if (rc == 0) sp->reserved = r;
  return rc;
}

int xq_spool_open(xq_spool_t **out, const char *dir, size_t max_games, xq_errbuf_t *eb) {
  *out = NULL;
  if (xq_mkdir_p(dir, eb) < 0) return XQ_EIO;
  xq_spool_t *sp = calloc(1, sizeof *sp);
  if (!sp || !(sp->dir = strdup(dir))) {
    free(sp);
    return xq_err_set(eb, XQ_ENOMEM, "spool");
  }
  pthread_mutex_init(&sp->lock, NULL);
  sp->dirlock.fd = -1;
  /* Two workers on one spool would resend (and drop) each other's games. */
  int lrc = xq_dirlock_acquire(&sp->dirlock, dir, "xqz-worker", eb);
  if (lrc < 0) {
    xq_spool_free(&sp);
    return lrc;
  }
  sp->max = max_games;
  /* The clock in microseconds is only the floor (see the top): seq.next, read below, keeps
   * a restarted worker above its earlier seqs after a clock step back. */
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  sp->next_seq = (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
  DIR *d = opendir(dir);
  if (!d) {
    xq_spool_free(&sp);
    return xq_err_set(eb, XQ_EIO, "spool dir %s: %s", dir, strerror(errno));
  }
  struct dirent *de;
  while ((de = readdir(d))) {
    size_t nl = strlen(de->d_name);
    if (nl < 5 || strcmp(de->d_name + nl - 4, ".xqs")) continue;
    char path[2048];
    snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
    unsigned char *buf = NULL;
    size_t n = 0;
    xq_errbuf_t why = {{0}};
    int rc = xq_read_file(path, SPOOL_MAX_FILE, &buf, &n, &why);
    if (!rc) rc = load_one(sp, buf, n);
    free(buf);
    if (rc) {
      char bad[2100];
      snprintf(bad, sizeof bad, "%s.bad", path);
      rename(path, bad);
      XQ_LOGW("worker", "unreadable spool file set aside file=%s error=\"%s\"", bad, xq_strerror(rc));
    }
  }
  closedir(d);
  uint64_t stored = seq_load(dir);
  if (stored > sp->next_seq) sp->next_seq = stored;
  if (seq_reserve(sp, sp->next_seq, eb) < 0) {
    xq_spool_free(&sp);
    return XQ_EIO;
  }
  *out = sp;
  return 0;
}

void xq_spool_free(xq_spool_t **p) {
  if (!p || !*p) return;
  xq_spool_t *sp = *p;
  for (size_t i = 0; i < sp->n; i++) {
    free(sp->e[i].worker_id);
    free(sp->e[i].rec);
  }
  free(sp->e);
  free(sp->dir);
  xq_dirlock_release(&sp->dirlock);
  pthread_mutex_destroy(&sp->lock);
  free(sp);
  *p = NULL;
}

int xq_spool_add(xq_spool_t *sp, const char *worker_id, const void *rec, size_t len,
                 uint64_t *seq, xq_errbuf_t *eb) {
  size_t wl = strlen(worker_id);
  if (wl == 0 || wl > 255 || len > SPOOL_MAX_FILE - 512)
    return xq_err_set(eb, XQ_EINVAL, "spool: bad worker id or record size");
  pthread_mutex_lock(&sp->lock);
  if (sp->next_seq >= sp->reserved && seq_reserve(sp, sp->next_seq, eb) < 0) {
    pthread_mutex_unlock(&sp->lock);
    return XQ_EIO;
  }
  uint64_t s = sp->next_seq++;
  unsigned char head[12 + 4 + 255 + 12];
  memcpy(head, SPOOL_MAGIC, 4);
  put32(head + 4, SPOOL_VERSION);
  size_t off = 12;
  put32(head + off, (uint32_t)wl);
  off += 4;
  memcpy(head + off, worker_id, wl);
  off += wl;
  put64(head + off, s);
  off += 8;
  put32(head + off, (uint32_t)len);
  off += 4;
  uint32_t crc = xq_crc32(xq_crc32(0, head + 12, off - 12), rec, len);
  put32(head + 8, crc);
  char path[2048];
  entry_path(sp, worker_id, s, path, sizeof path);
  const void *parts[2] = {head, rec};
  size_t sizes[2] = {off, len};
  int rc = xq_atomic_write(path, parts, sizes, 2, eb);
  if (!rc && push(sp, worker_id, s, rec, len)) {
    unlink(path);
    rc = xq_err_set(eb, XQ_ENOMEM, "spool entry");
  }
  pthread_mutex_unlock(&sp->lock);
  if (!rc) *seq = s;
  return rc;
}

int xq_spool_ack(xq_spool_t *sp, const char *worker_id, uint64_t seq) {
  int found = 0;
  pthread_mutex_lock(&sp->lock);
  for (size_t i = 0; i < sp->n; i++) {
    entry_t *e = &sp->e[i];
    if (e->seq != seq || strcmp(e->worker_id, worker_id)) continue;
    char path[2048];
    entry_path(sp, worker_id, seq, path, sizeof path);
    unlink(path);
    free(e->worker_id);
    free(e->rec);
    memmove(e, e + 1, (sp->n - i - 1) * sizeof *e);
    sp->n--;
    found = 1;
    break;
  }
  pthread_mutex_unlock(&sp->lock);
  return found;
}

size_t xq_spool_count(xq_spool_t *sp) {
  pthread_mutex_lock(&sp->lock);
  size_t n = sp->n;
  pthread_mutex_unlock(&sp->lock);
  return n;
}

int xq_spool_full(xq_spool_t *sp) { return xq_spool_count(sp) >= sp->max; }

int xq_spool_due(xq_spool_t *sp, int64_t now_ms, int64_t resend_ms, int max, int max_in_flight,
                 xq_spool_send_fn fn, void *ctx) {
  int done = 0;
  pthread_mutex_lock(&sp->lock);
  int in_flight = 0;
  for (size_t i = 0; i < sp->n; i++)
    in_flight += sp->e[i].sent_ms && now_ms - sp->e[i].sent_ms < resend_ms;
  if (max > max_in_flight - in_flight) max = max_in_flight - in_flight;
  for (size_t i = 0; i < sp->n && done < max; i++) {
    entry_t *e = &sp->e[i];
    if (e->sent_ms && now_ms - e->sent_ms < resend_ms) continue;
    fn(ctx, e->worker_id, e->seq, e->rec, e->len);
    e->sent_ms = now_ms;
    done++;
  }
  pthread_mutex_unlock(&sp->lock);
  return done;
}

void xq_spool_reset_sent(xq_spool_t *sp) {
  pthread_mutex_lock(&sp->lock);
  for (size_t i = 0; i < sp->n; i++) sp->e[i].sent_ms = 0;
  pthread_mutex_unlock(&sp->lock);
}
