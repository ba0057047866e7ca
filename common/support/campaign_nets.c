/*
 * campaign_nets.c: the best-net link and the rejected candidates of a campaign directory
 * (see campaign_nets.h).
 */
#define _DEFAULT_SOURCE /* realpath, symlink, link */
#include "support/campaign_nets.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "support/mkdir_p.h"

static bool is_dir(const char *p) {
  struct stat st;
  return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static bool is_file(const char *p) {
  struct stat st;
  return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

static int fsync_dir(const char *dir) {
  int fd = open(dir, O_RDONLY | O_DIRECTORY);
  if (fd < 0) return -1;
  int rc = fsync(fd);
  close(fd);
  return rc;
}

static int put_path(char *path, size_t size, const char *p, xq_errbuf_t *eb) {
  if ((size_t)snprintf(path, size, "%s", p) >= size)
    return xq_err_set(eb, XQ_ERANGE, "%s: path too long", p);
  return 0;
}

/* The id of the last "promoted":true line of dir/promotions.log, or 0. */
static uint64_t last_promoted(const char *dir) {
  char p[PATH_MAX];
  snprintf(p, sizeof p, "%s/promotions.log", dir);
  FILE *f = fopen(p, "r");
  if (!f) return 0;
  uint64_t id = 0;
  char line[2048];
  while (fgets(line, sizeof line, f)) {
    const char *n = strstr(line, "\"net\":\"");
    if (!n || !strstr(line, "\"promoted\":true")) continue;
    uint64_t v = strtoull(n + 7, NULL, 16);
    if (v) id = v;
  }
  fclose(f);
  return id;
}

int xq_campaign_best_net(const char *dir, char *path, size_t size, xq_errbuf_t *eb) {
  char nets[PATH_MAX], p[PATH_MAX + 32], real[PATH_MAX];
  if (!is_dir(dir))
    return xq_err_set(eb, XQ_EINVAL, "--campaign %s: no such directory (give the campaign"
                      " directory of a coordinator, e.g. campaigns/quickstart)", dir);
  snprintf(nets, sizeof nets, "%s/nets", dir);
  if (!is_dir(nets))
    return xq_err_set(eb, XQ_EINVAL, "--campaign %s: not a campaign directory (no nets/"
                      " in it; a coordinator makes one at its first start)", dir);
  snprintf(p, sizeof p, "%s/" XQ_CAMPAIGN_BEST_NAME, nets);
  if (is_file(p) && realpath(p, real)) return put_path(path, size, real, eb);
  uint64_t id = last_promoted(dir);
  snprintf(p, sizeof p, "%s/%016llx.xqzn", nets, (unsigned long long)id);
  if (id && is_file(p)) return put_path(path, size, p, eb);
  return xq_err_set(eb, XQ_EINVAL, "--campaign %s: no best net: neither nets/"
                    XQ_CAMPAIGN_BEST_NAME " nor a promoted net in promotions.log (start its"
                    " coordinator once: it makes nets/" XQ_CAMPAIGN_BEST_NAME ")", dir);
}

int xq_campaign_set_best(const char *dir, uint64_t id, xq_errbuf_t *eb) {
  char nets[PATH_MAX], target[32], tmp[PATH_MAX + 64], link_path[PATH_MAX + 32],
      file[PATH_MAX + 32];
  snprintf(nets, sizeof nets, "%s/nets", dir);
  snprintf(target, sizeof target, "%016llx.xqzn", (unsigned long long)id);
  snprintf(file, sizeof file, "%s/%s", nets, target);
  snprintf(tmp, sizeof tmp, "%s/.%s.tmp.%ld", nets, XQ_CAMPAIGN_BEST_NAME, (long)getpid());
  snprintf(link_path, sizeof link_path, "%s/" XQ_CAMPAIGN_BEST_NAME, nets);
  if (!is_file(file)) return xq_err_set(eb, XQ_EIO, "%s: no such net file", file);
  unlink(tmp);
  /* A relative symbolic link survives moving the campaign directory; a hard link is the
   * fallback for file systems without symbolic links. */
  if (symlink(target, tmp) != 0 && link(file, tmp) != 0)
    return xq_err_set(eb, XQ_EIO, "%s: cannot make a link: %s", tmp, strerror(errno));
  if (rename(tmp, link_path) != 0) {
    int e = errno;
    unlink(tmp);
    return xq_err_set(eb, XQ_EIO, "%s: cannot rename into place: %s", link_path, strerror(e));
  }
  if (fsync_dir(nets) != 0)
    return xq_err_set(eb, XQ_EIO, "%s: fsync: %s", nets, strerror(errno));
  return 0;
}

int xq_campaign_file_rejected(const char *dir, uint64_t id, xq_errbuf_t *eb) {
  char nets[PATH_MAX], rej[PATH_MAX + 16], from[PATH_MAX + 32], to[PATH_MAX + 64];
  snprintf(nets, sizeof nets, "%s/nets", dir);
  snprintf(rej, sizeof rej, "%s/" XQ_CAMPAIGN_REJECTED_DIR, nets);
  snprintf(from, sizeof from, "%s/nets/%016llx.xqzn", dir, (unsigned long long)id);
  snprintf(to, sizeof to, "%s/%016llx.xqzn", rej, (unsigned long long)id);
  if (!is_file(from)) return 0;
  int rc = xq_mkdir_p(rej, eb);
  if (rc < 0) return rc;
  if (rename(from, to) != 0)
    return xq_err_set(eb, XQ_EIO, "%s: cannot move to %s: %s", from, to, strerror(errno));
  /* Both directories changed; a crash before they reach disk leaves the file in one of
   * the two, which readers accept alike. */
  if (fsync_dir(rej) != 0 || fsync_dir(nets) != 0)
    return xq_err_set(eb, XQ_EIO, "%s: fsync: %s", rej, strerror(errno));
  return 0;
}
