/*
 * mkdir_p.c: mkdir -p (see mkdir_p.h).
 */
#include "support/mkdir_p.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

static int mkdir_one(const char *path, xq_errbuf_t *eb) {
  if (mkdir(path, 0755) == 0) return 0;
  int err = errno;
  struct stat st;
  if (err == EEXIST && stat(path, &st) == 0 && S_ISDIR(st.st_mode)) return 0;
  if (err == EEXIST) return xq_err_set(eb, XQ_EIO, "%s: exists and is not a directory", path);
  return xq_err_set(eb, XQ_EIO, "%s: cannot create directory: %s", path, strerror(err));
}

int xq_mkdir_p(const char *path, xq_errbuf_t *eb) {
  char p[4096];
  size_t n = strlen(path);
  if (n == 0) return xq_err_set(eb, XQ_EIO, "empty directory name");
  if (n >= sizeof p) return xq_err_set(eb, XQ_EIO, "%.64s...: directory name too long", path);
  memcpy(p, path, n + 1);
  /* Each parent in turn (a leading '/' and repeated slashes are not components). */
  for (size_t i = 1; i < n; i++) {
    if (p[i] != '/' || p[i - 1] == '/') continue;
    p[i] = '\0';
    int rc = mkdir_one(p, eb);
    p[i] = '/';
    if (rc < 0) return rc;
  }
  return mkdir_one(p, eb);
}
