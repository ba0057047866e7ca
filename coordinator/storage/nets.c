/*
 * nets.c: the cache of verified net files (see nets.h), and what happens to a net that
 * cannot be served: a damaged file is quarantined in nets/damaged/ and a lost best net
 * falls back to the previous intact one, each logged. The NetRequest handler that serves
 * a net in chunks from the cache is requests.c's (xqc_cmd_net_request); it rejects the
 * open match's candidate through promote.c. Takes what it needs as arguments: no coord.h.
 */
#include "nets.h"

#include <errno.h>
#include <inttypes.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "campaign.h"
#include "nn/nn_file.h"
#include "support/atomic_file.h"
#include "support/crc32.h"
#include "support/log.h"
#include "support/mkdir_p.h"
#include "wire/wire.h"

#define COMP "coordinator"
#define PREVIOUS_MAX 64 /* promotions looked at for an intact earlier best net */

/* Drops entry e's bytes. */
static void entry_free(xqc_net_entry_t *e) {
  free(e->data);
  memset(e, 0, sizeof *e);
}

/* Whether the file st describes is the one e was verified from. */
static bool same_file(const xqc_net_entry_t *e, const struct stat *st) {
  return e->dev == st->st_dev && e->ino == st->st_ino && e->fsize == st->st_size &&
         e->mtime_ns == (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec;
}

/* Reads path and verifies it as net id; 0 with the bytes in *data, else the error (*damaged
 * set when the file was read but fails verification). */
static int read_verified(const char *path, uint64_t id, unsigned char **data, size_t *size,
                         bool *damaged, xq_errbuf_t *eb) {
  *damaged = false;
  int rc = xq_read_file(path, NN_FILE_MAX_SIZE, data, size, eb);
  if (rc < 0) return rc;
  nn_file_meta_t meta;
  xq_errbuf_t why = {{0}};
  rc = nn_file_verify(&meta, *data, *size, &why);
  if (!rc && meta.net_id != id)
    rc = xq_err_set(&why, XQ_EMISMATCH, "the file holds net %016" PRIx64, meta.net_id);
  if (rc) {
    free(*data);
    *data = NULL;
    *damaged = true;
    return xq_err_set(eb, rc, "%s: %s", path, why.msg);
  }
  return 0;
}

int xqc_nets_load_ex(xqc_nets_t *n, const char *dir, uint64_t id, bool *damaged,
                     xq_errbuf_t *eb) {
  bool dmg = false;
  if (damaged) *damaged = false;
  char path[1024];
  xqc_net_path(path, sizeof path, dir, id);
  struct stat st;
  int found = -1, victim = 0;
  for (int i = 0; i < XQC_NETS_CACHE; i++) {
    if (n->cache[i].id == id && id) found = i;
    if (n->cache[i].used < n->cache[victim].used) victim = i;
  }
  if (stat(path, &st) != 0) {
    if (found >= 0) entry_free(&n->cache[found]);
    if (n->id == id) n->id = 0;
    return xq_err_set(eb, XQ_EIO, "%s: %s", path, strerror(errno));
  }
  xqc_net_entry_t *e = found >= 0 ? &n->cache[found] : NULL;
  if (!e || !same_file(e, &st)) {
    unsigned char *data = NULL;
    size_t size = 0;
    int rc = read_verified(path, id, &data, &size, &dmg, eb);
    n->reads++;
    if (rc < 0) {
      if (e) entry_free(e);
      if (n->id == id) n->id = 0;
      if (damaged) *damaged = dmg;
      return rc;
    }
    if (!e) e = &n->cache[victim];
    entry_free(e);
    e->id = id;
    e->data = data;
    e->size = size;
    e->crc = xq_crc32(0, data, size);
    e->dev = st.st_dev;
    e->ino = st.st_ino;
    e->fsize = st.st_size;
    e->mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
  }
  e->used = ++n->tick;
  n->id = e->id;
  n->data = e->data;
  n->size = e->size;
  n->crc = e->crc;
  return 0;
}

int xqc_nets_load(xqc_nets_t *n, const char *dir, uint64_t id, xq_errbuf_t *eb) {
  return xqc_nets_load_ex(n, dir, id, NULL, eb);
}

void xqc_nets_close(xqc_nets_t *n) {
  for (int i = 0; i < XQC_NETS_CACHE; i++) entry_free(&n->cache[i]);
  memset(n, 0, sizeof *n);
}

void xqc_nets_quarantine(const char *dir, uint64_t id, const char *why) {
  char from[1024], to_dir[1024], to[1100];
  xqc_net_path(from, sizeof from, dir, id);
  snprintf(to_dir, sizeof to_dir, "%s/nets/" XQC_NETS_DAMAGED_DIR, dir);
  snprintf(to, sizeof to, "%s/%016" PRIx64 ".xqzn", to_dir, id);
  xq_errbuf_t eb = {{0}};
  if (xq_mkdir_p(to_dir, &eb) < 0 || rename(from, to) != 0) {
    XQ_LOGE(COMP, "DAMAGED NET FILE, and it cannot be moved aside; it is not served: move"
            " or delete it by hand net=%016" PRIx64 " path=%s reason=\"%s\" error=\"%s\"", id,
            from, why, eb.msg[0] ? eb.msg : strerror(errno));
    return;
  }
  XQ_LOGE(COMP, "DAMAGED NET FILE: it fails the checksums written with it, so it is never"
          " served; moved aside for inspection (restore it from a backup or a worker's"
          " cache to use it again) net=%016" PRIx64 " moved_to=%s reason=\"%s\"", id, to, why);
}

/* Whether net id's file in dir verifies. */
static bool intact(const char *dir, uint64_t id) {
  char path[1024];
  xqc_net_path(path, sizeof path, dir, id);
  unsigned char *data = NULL;
  size_t size = 0;
  bool damaged;
  xq_errbuf_t eb = {{0}};
  if (read_verified(path, id, &data, &size, &damaged, &eb) < 0) return false;
  free(data);
  return true;
}

int xqc_nets_previous_best(xqc_db_t *db, const char *dir, uint64_t bad, uint64_t *id,
                           double *elo, xq_errbuf_t *eb) {
  sqlite3_stmt *st = xqc_db_prep(db, "SELECT net, elo FROM promotions ORDER BY seq DESC LIMIT ?");
  if (!st) return xq_err_set(eb, XQ_EIO, "campaign.db: cannot read the promotions");
  sqlite3_bind_int(st, 1, PREVIOUS_MAX);
  int rc = XQ_EIO;
  while (sqlite3_step(st) == SQLITE_ROW) {
    uint64_t net = (uint64_t)sqlite3_column_int64(st, 0);
    if (!net || net == bad || !intact(dir, net)) continue;
    *id = net;
    *elo = sqlite3_column_double(st, 1);
    rc = 0;
    break;
  }
  sqlite3_finalize(st);
  if (rc) xq_err_set(eb, rc, "no earlier best net with an intact file among the last %d"
                     " promotions", PREVIOUS_MAX);
  return rc;
}

void xqc_nets_record_fallback(xqc_db_t *db, const char *dir, uint64_t bad, uint64_t prev,
                              double prev_elo, const char *why) {
  sqlite3_stmt *st = xqc_db_prep(db, "UPDATE nets SET state = 'damaged' WHERE id = ?");
  int rc = st ? 0 : XQ_EIO;
  if (st) {
    sqlite3_bind_int64(st, 1, (sqlite3_int64)bad);
    rc = xqc_db_step_done(db, st);
  }
  int64_t step = 0;
  char state[16];
  if (xqc_db_net_state(db, prev, state, sizeof state, &step) < 0) step = 0;
  if (rc == 0) rc = xqc_db_set_net_state(db, prev, "best", prev_elo);
  if (rc == 0) rc = xqc_db_add_promotion(db, prev, bad, step, 0, 0.5, prev_elo);
  if (rc < 0)
    XQ_LOGE(COMP, "the fall back to the previous best net is not recorded in campaign.db; a"
            " restart checks the best net again and falls back again net=%016" PRIx64, prev);
  char line[700];
  snprintf(line, sizeof line,
           "{\"net\":\"%016" PRIx64 "\",\"parent\":\"%016" PRIx64 "\",\"step\":%lld,"
           "\"promoted\":true,\"fallback\":true,\"elo\":%.1f,\"time\":%lld}",
           prev, bad, (long long)step, prev_elo, (long long)time(NULL));
  xq_errbuf_t eb = {{0}};
  if (xqc_campaign_log_line(dir, "promotions.log", line, &eb) < 0)
    XQ_LOGE(COMP, "promotions.log not written reason=\"%s\"", eb.msg);
  XQ_LOGE(COMP, "BEST NET LOST: falling back to the previous best net; self-play goes on with"
          " it (restore the lost file from a backup and it can be gated again as a"
          " candidate) lost=%016" PRIx64 " best=%016" PRIx64 " elo=%.1f reason=\"%s\"", bad,
          prev, prev_elo, why);
}

int xqc_nets_check_best(xqc_db_t *db, const char *dir, uint64_t *best, double *elo,
                        xq_errbuf_t *eb) {
  char path[1024];
  xqc_net_path(path, sizeof path, dir, *best);
  unsigned char *data = NULL;
  size_t size = 0;
  bool damaged = false;
  xq_errbuf_t why = {{0}};
  if (read_verified(path, *best, &data, &size, &damaged, &why) == 0) {
    free(data);
    return 0;
  }
  if (damaged) xqc_nets_quarantine(dir, *best, why.msg);
  uint64_t prev;
  double prev_elo;
  xq_errbuf_t none = {{0}};
  if (xqc_nets_previous_best(db, dir, *best, &prev, &prev_elo, &none) < 0)
    return xq_err_set(eb, XQ_EIO, "the best net %016" PRIx64 " cannot be used (%s) and %s:"
                      " restore nets/%016" PRIx64 ".xqzn from a backup (or a worker's cache"
                      " of it) and start again", *best, why.msg, none.msg, *best);
  xqc_nets_record_fallback(db, dir, *best, prev, prev_elo, why.msg);
  *best = prev;
  *elo = prev_elo;
  return 0;
}
