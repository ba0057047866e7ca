/* keyset.c: a directory of allowed CURVE public keys (see keyset.h). */
#include "keyset.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "support/log.h"

#define COMP "auth"

static int dir_mtime(const char *dir, struct timespec *t) {
  struct stat sb;
  if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode)) return -1;
  *t = sb.st_mtim;
  return 0;
}

static int add(xqc_keyset_t *k, const char *key, const char *name) {
  if (k->n == k->cap) {
    int ncap = k->cap ? k->cap * 2 : 32;
    xqc_keyset_entry_t *nv = realloc(k->v, (size_t)ncap * sizeof *nv);
    if (!nv) return XQ_ENOMEM;
    k->v = nv;
    k->cap = ncap;
  }
  xqc_keyset_entry_t *e = &k->v[k->n++];
  memcpy(e->key, key, sizeof e->key);
  snprintf(e->name, sizeof e->name, "%s", name);
  return 0;
}

/* Reads every *.pub file; a bad file is logged and skipped (the others still count). */
static int load(xqc_keyset_t *k, xq_errbuf_t *eb) {
  DIR *d = opendir(k->dir);
  if (!d) return xq_err_set(eb, XQ_EIO, "%s %s: %s", k->what, k->dir, strerror(errno));
  k->n = 0;
  struct dirent *de;
  int rc = 0;
  while (rc == 0 && (de = readdir(d))) {
    size_t len = strlen(de->d_name);
    if (len <= 4 || strcmp(de->d_name + len - 4, ".pub") != 0) continue;
    char path[1024], key[XQ_Z85_KEY_LEN + 1], name[64];
    snprintf(path, sizeof path, "%s/%s", k->dir, de->d_name);
    snprintf(name, sizeof name, "%.*s", (int)(len - 4), de->d_name);
    xq_errbuf_t e2;
    if (xq_curve_read_key(path, key, &e2) < 0) {
      XQ_LOGW(COMP, "key file skipped reason=\"%s\"", e2.msg);
      continue;
    }
    rc = add(k, key, name);
  }
  closedir(d);
  if (rc < 0) return xq_err_set(eb, rc, "%s: out of memory", k->dir);
  XQ_LOGI(COMP, "keys loaded dir=%s setting=%s keys=%d", k->dir, k->what, k->n);
  return 0;
}

int xqc_keyset_open(xqc_keyset_t *k, const char *dir, const char *what, xq_errbuf_t *eb) {
  memset(k, 0, sizeof *k);
  k->what = what;
  if (strlen(dir) >= sizeof k->dir) return xq_err_set(eb, XQ_EINVAL, "%s: path too long", what);
  strcpy(k->dir, dir);
  if (dir_mtime(dir, &k->mtime) < 0)
    return xq_err_set(eb, XQ_EIO, "%s %s is not a readable directory (create it and put the"
                      " clients' .pub files in it)", what, dir);
  return load(k, eb);
}

void xqc_keyset_close(xqc_keyset_t *k) {
  free(k->v);
  k->v = NULL;
  k->n = k->cap = 0;
}

const char *xqc_keyset_find(xqc_keyset_t *k, const char *key) {
  struct timespec t;
  if (dir_mtime(k->dir, &t) == 0 &&
      (t.tv_sec != k->mtime.tv_sec || t.tv_nsec != k->mtime.tv_nsec)) {
    xq_errbuf_t eb;
    k->mtime = t;
    if (load(k, &eb) < 0) XQ_LOGE(COMP, "cannot re-read the key directory reason=\"%s\"", eb.msg);
  }
  for (int i = 0; i < k->n; i++)
    if (!strcmp(k->v[i].key, key)) return k->v[i].name;
  return NULL;
}
