/* bans.c: the operator's bans, in memory and in SQLite (see bans.h). */
#include "bans.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int find(const xqc_bans_t *b, const char *target) {
  for (int i = 0; i < b->n; i++)
    if (!strcmp(b->v[i].target, target)) return i;
  return -1;
}

static int put(xqc_bans_t *b, const char *target, const char *reason, int64_t when) {
  int i = find(b, target);
  if (i < 0) {
    if (b->n == b->cap) {
      int ncap = b->cap ? b->cap * 2 : 16;
      xqc_ban_t *nv = realloc(b->v, (size_t)ncap * sizeof *nv);
      if (!nv) return XQ_ENOMEM;
      b->v = nv;
      b->cap = ncap;
    }
    i = b->n++;
    memset(&b->v[i], 0, sizeof b->v[i]);
    snprintf(b->v[i].target, sizeof b->v[i].target, "%s", target);
  }
  snprintf(b->v[i].reason, sizeof b->v[i].reason, "%s", reason ? reason : "");
  b->v[i].time = when;
  return 0;
}

static int on_row(const char *target, const char *reason, int64_t when, void *user) {
  if (!xqc_bans_target_valid(target)) return 0; /* edited by hand into nonsense: ignore */
  return put(user, target, reason, when);
}

int xqc_bans_load(xqc_bans_t *b, xqc_db_t *db, xq_errbuf_t *eb) {
  memset(b, 0, sizeof *b);
  int rc = xqc_db_bans_load(db, on_row, b);
  if (rc < 0) return xq_err_set(eb, rc, "cannot read the bans table of the campaign database");
  return 0;
}

void xqc_bans_close(xqc_bans_t *b) {
  free(b->v);
  memset(b, 0, sizeof *b);
}

bool xqc_bans_target_valid(const char *target) {
  size_t n = strlen(target);
  if (n == 0 || n >= sizeof(((xqc_ban_t *)0)->target)) return false;
  for (size_t i = 0; i < n; i++)
    if (target[i] <= ' ' || target[i] > '~') return false;
  return true;
}

bool xqc_bans_match(const xqc_bans_t *b, const char *worker_id, const char *key) {
  if (b->n == 0) return false;
  return (worker_id && worker_id[0] && find(b, worker_id) >= 0) ||
         (key && key[0] && find(b, key) >= 0);
}

int xqc_bans_add(xqc_bans_t *b, xqc_db_t *db, const char *target, const char *reason,
                 xq_errbuf_t *eb) {
  if (!xqc_bans_target_valid(target))
    return xq_err_set(eb, XQ_EINVAL, "target must be a worker id or a CURVE key (1 to 127 "
                      "printable characters, no spaces)");
  if (xqc_db_ban_set(db, target, reason ? reason : "") < 0)
    return xq_err_set(eb, XQ_EIO, "cannot store the ban in the campaign database");
  int rc = put(b, target, reason, (int64_t)time(NULL));
  if (rc < 0) return xq_err_set(eb, rc, "out of memory");
  return 0;
}

int xqc_bans_remove(xqc_bans_t *b, xqc_db_t *db, const char *target, xq_errbuf_t *eb) {
  int i = find(b, target);
  if (i < 0) return 0;
  if (xqc_db_ban_remove(db, target) < 0)
    return xq_err_set(eb, XQ_EIO, "cannot remove the ban from the campaign database");
  b->v[i] = b->v[--b->n];
  return 1;
}
