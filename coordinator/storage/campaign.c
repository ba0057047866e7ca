/*
 * campaign.c: creating and resuming a campaign directory (see campaign.h). Start-up never
 * guesses: a directory with nets, game segments or a promotions log but no campaign.db is
 * an existing campaign whose database was lost, and the start stops with what is missing
 * and how to recover; a new campaign is made only in a directory with none of them.
 */
#include "campaign.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "nn/nn_file.h"
#include "nn/nn_model.h"
#include "nets.h"
#include "support/atomic_file.h"
#include "support/campaign_nets.h"
#include "support/ini_value.h"
#include "support/log.h"
#include "support/mkdir_p.h"
#include "segments.h"

void xqc_net_path(char *out, size_t n, const char *dir, uint64_t id) {
  snprintf(out, n, "%s/nets/%016llx.xqzn", dir, (unsigned long long)id);
}

int xqc_campaign_init_dir(const char *dir, xq_errbuf_t *eb) {
  char p[1024];
  int rc = xq_mkdir_p(dir, eb);
  if (rc < 0) return rc;
  const char *subs[] = {"nets", "games"};
  for (int i = 0; i < 2; i++) {
    snprintf(p, sizeof p, "%s/%s", dir, subs[i]);
    if ((rc = xq_mkdir_p(p, eb)) < 0) return rc;
  }
  snprintf(p, sizeof p, "%s/campaign.ini", dir);
  if (access(p, F_OK) != 0) {
    xqc_config_t def;
    xqc_config_defaults(&def);
    char tmp[1100];
    snprintf(tmp, sizeof tmp, "%s.tmp", p);
    FILE *f = fopen(tmp, "w");
    if (!f) return xq_err_set(eb, XQ_EIO, "%s: cannot create", tmp);
    xqc_config_write(&def, f);
    if (fflush(f) != 0 || fsync(fileno(f)) != 0) {
      fclose(f);
      return xq_err_set(eb, XQ_EIO, "%s: write failed", tmp);
    }
    fclose(f);
    if (rename(tmp, p) != 0) return xq_err_set(eb, XQ_EIO, "%s: rename failed", p);
    XQ_LOGI("campaign", "wrote default settings path=%s", p);
  }
  return 0;
}

void xqc_campaign_record_endpoints(const char *dir, const xqc_config_t *cfg) {
  char ini[1100];
  snprintf(ini, sizeof ini, "%s/campaign.ini", dir);
  const char *keys[] = {"router", "pub", "http"};
  const char *vals[] = {cfg->router, cfg->pub, cfg->http};
  int changed = 0;
  for (int i = 0; i < 3; i++) {
    xq_errbuf_t eb;
    int rc = xq_ini_set(ini, keys[i], vals[i], &eb);
    if (rc < 0) {
      XQ_LOGW("campaign", "cannot record the endpoint in use in campaign.ini; clients reading"
              " it may not find this coordinator: give them --coordinator key=%s error=\"%s\"",
              keys[i], eb.msg);
      return;
    }
    changed += rc;
  }
  if (changed)
    XQ_LOGI("campaign", "recorded the endpoints in use in campaign.ini router=%s pub=%s"
            " http=%s", cfg->router, cfg->pub, cfg->http);
}

/* The fix for a path this process may not write, by the errno of access(2): a read-only
 * file system, an immutable file (chattr +i, also refused to root) or a file mode. */
static void write_fix(char *out, size_t n, const char *path, int err) {
  struct stat st;
  int w;
  if (err == EROFS)
    w = snprintf(out, n, "it is on a read-only file system: remount it read-write, or copy the"
                 " campaign directory to a writable disk and start there");
  else if (err == EPERM)
    w = snprintf(out, n, "it is immutable or append-only: see lsattr %s, then chattr -i -a %s",
                 path, path);
  else if (stat(path, &st) == 0)
    w = snprintf(out, n, "this process (uid %u) may not write it (owner uid %u, mode %04o): make"
                 " it writable (chmod u+w %s) or run the coordinator as its owner",
                 (unsigned)geteuid(), (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777), path);
  else
    w = snprintf(out, n, "%s: make it writable for the coordinator's user", strerror(err));
  /* A path too long for the buffer: the fix is cut short, and says so. */
  if (w >= 0 && (size_t)w >= n && n > 4) memcpy(out + n - 4, "...", 4);
}

int xqc_campaign_check_writable(const char *dir, bool ini_must_change, xq_errbuf_t *eb) {
  /* What the coordinator writes while it runs: the directory and its folders (segments,
   * nets, the database's -wal and -shm), the database, its logs. A file absent is made
   * later in its (checked) directory. */
  static const char *const paths[] = {"", "/games", "/nets", "/campaign.db",
                                      "/campaign.db-wal", "/campaign.db-shm",
                                      "/promotions.log", "/anchors.log", "/campaign.ini"};
  for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
    bool ini = strcmp(paths[i], "/campaign.ini") == 0;
    if (ini && !ini_must_change) continue;
    char p[1100], fix[1400];
    snprintf(p, sizeof p, "%s%s", dir, paths[i]);
    if (access(p, F_OK) != 0 && i > 0) continue;
    if (access(p, W_OK) == 0) continue;
    int err = errno;
    write_fix(fix, sizeof fix, p, err);
    /* The whole story in the log (an error buffer holds 256 bytes), the gist in eb. */
    if (ini)
      XQ_LOGE("campaign", "%s is read-only (%s), and the command line gives other endpoints"
              " (router, pub, http) than it holds, which the coordinator records there for"
              " clients (xqz status --campaign) and the next start: %s; or write the endpoints"
              " into campaign.ini yourself", p, strerror(err), fix);
    else
      XQ_LOGE("campaign", "%s is read-only (%s), and the coordinator writes it (%s): %s", p,
              strerror(err),
              i == 0 ? "segments, nets, the database's journal" :
              i <= 2 ? "games and nets" :
              i <= 5 ? "nets, matches, promotions" : "one line per decision",
              fix);
    return xq_err_set(eb, XQ_EIO, "%s is read-only (%s): the fix is in the line above", p,
                      strerror(err));
  }
  return 0;
}

/* The settings in text, one "key = value" line each (xqc_config_write); malloc'd or NULL. */
static char *settings_text(const xqc_config_t *cfg, size_t *len) {
  char *buf = NULL;
  FILE *f = open_memstream(&buf, len);
  if (!f) return NULL;
  int rc = xqc_config_write(cfg, f);
  if (fclose(f) != 0 || rc < 0) {
    free(buf);
    return NULL;
  }
  return buf;
}

/* The value of key in text of len bytes ("key = value" lines; ';' comments), copied into
 * out (n bytes); false when the key is absent. */
static bool setting_value(const char *text, size_t len, const char *key, char *out, size_t n) {
  size_t kl = strlen(key);
  for (const char *l = text, *end = text + len; l < end;) {
    const char *nl = memchr(l, '\n', (size_t)(end - l));
    size_t ll = nl ? (size_t)(nl - l) : (size_t)(end - l);
    if (ll >= kl + 3 && !memcmp(l, key, kl) && !memcmp(l + kl, " = ", 3)) {
      snprintf(out, n, "%.*s", (int)(ll - kl - 3), l + kl + 3);
      return true;
    }
    l += ll + 1;
  }
  return false;
}

void xqc_campaign_settings_changes(const char *dir, const xqc_config_t *now,
                                   const xqc_config_t *file) {
  char path[1100];
  snprintf(path, sizeof path, "%s/%s", dir, XQC_CAMPAIGN_LAST_START);
  size_t nlen = 0, flen = 0, llen = 0;
  char *ntext = settings_text(now, &nlen), *ftext = settings_text(file, &flen);
  unsigned char *last = NULL;
  xq_errbuf_t eb;
  if (!ntext || !ftext) {
    XQ_LOGW("campaign", "out of memory comparing the settings with the last start's");
    free(ntext);
    free(ftext);
    return;
  }
  if (access(path, F_OK) == 0 && xq_read_file(path, 1 << 20, &last, &llen, &eb) < 0)
    XQ_LOGW("campaign", "cannot read the last start's settings; changes are not listed this"
            " time error=\"%s\"", eb.msg);
  int changed = 0;
  for (const char *l = ntext, *end = ntext + nlen; last && l < end;) {
    const char *nl = memchr(l, '\n', (size_t)(end - l)), *eq = strstr(l, " = ");
    size_t ll = nl ? (size_t)(nl - l) : (size_t)(end - l);
    char key[64], was[600], is[600], in_file[600];
    if (*l != ';' && eq && eq < l + ll && (size_t)(eq - l) < sizeof key) {
      snprintf(key, sizeof key, "%.*s", (int)(eq - l), l);
      if (setting_value((const char *)last, llen, key, was, sizeof was) &&
          setting_value(ntext, nlen, key, is, sizeof is) && strcmp(was, is) != 0) {
        bool from_ini = setting_value(ftext, flen, key, in_file, sizeof in_file) &&
                        !strcmp(in_file, is);
        XQ_LOGW("campaign", "setting differs from the last start key=%s was=\"%s\" now=\"%s\""
                " from=%s", key, was, is, from_ini ? "campaign.ini" : "command-line");
        changed++;
      }
    }
    l += ll + 1;
  }
  if (changed)
    XQ_LOGW("campaign", "%d setting(s) differ from the last start (listed above); if that was"
            " not meant, stop and start again with the last start's options (they are in %s)",
            changed, path);
  const char *head = "; settings in force at the last start of xqz-coordinator, written at each"
                     " start to list what changed at the next; edit campaign.ini, not this\n";
  const void *parts[2] = {head, ntext};
  size_t sizes[2] = {strlen(head), nlen};
  if (xq_atomic_write(path, parts, sizes, 2, &eb) < 0)
    XQ_LOGW("campaign", "cannot record the settings of this start; the next start cannot list"
            " what changed error=\"%s\"", eb.msg);
  free(ntext);
  free(ftext);
  free(last);
}

/* 64 random bits from the kernel; without them (very old kernel, early boot), a net-style
 * id from the clock and the pid, which is unique enough to tell campaigns apart. */
static uint64_t new_campaign_id(void) {
  uint64_t id = 0;
  if (getrandom(&id, sizeof id, GRND_NONBLOCK) != (ssize_t)sizeof id) id = nn_file_new_id();
  return id ? id : 1;
}

/* Reads the campaign id, giving the campaign one when it has none (new, or made before
 * campaign ids: its nets and the trainer's checkpoint say 0, which is accepted). */
static int campaign_identity(xqc_db_t *db, bool fresh, uint64_t *id, xq_errbuf_t *eb) {
  int rc = xqc_db_campaign_id(db, id);
  if (rc == 0 && *id == 0) {
    uint64_t want = new_campaign_id();
    rc = xqc_db_campaign_id_set(db, want);
    if (rc == 0) rc = xqc_db_campaign_id(db, id);
    if (rc == 0 && !fresh)
      XQ_LOGI("campaign", "campaign made before campaign ids: it has one now; its older nets"
              " and the trainer's checkpoint say none (0), which is accepted campaign=%016llx",
              (unsigned long long)*id);
  }
  if (rc < 0) return xq_err_set(eb, rc, "campaign.db: cannot read or store the campaign id");
  return 0;
}

static int create_first_net(const char *dir, const xqc_config_t *cfg, xqc_db_t *db,
                            uint64_t campaign_id, uint64_t *id_out, xq_errbuf_t *eb) {
  nn_arch_t arch;
  int rc = nn_arch_preset(cfg->net_size, &arch);
  if (rc < 0) return xq_err_set(eb, rc, "net_size: unknown preset '%s'", cfg->net_size);
  nn_model_t *m = NULL;
  if ((rc = nn_model_new(&m, &arch, eb)) < 0) return rc;
  nn_model_init(m, (uint64_t)cfg->seed);
  nn_file_meta_t meta;
  memset(&meta, 0, sizeof meta);
  meta.arch = arch;
  meta.campaign_id = campaign_id;
  meta.net_id = nn_file_new_id();
  meta.parent_id = 0;
  meta.step = 0;
  meta.created = (int64_t)time(NULL);
  char path[1024];
  xqc_net_path(path, sizeof path, dir, meta.net_id);
  rc = nn_file_save(path, m, &meta, eb);
  nn_model_free(&m);
  if (rc < 0) return rc;
  if ((rc = xqc_db_add_net(db, meta.net_id, 0, 0, "best")) < 0) return rc;
  if ((rc = xqc_db_set_net_state(db, meta.net_id, "best", 0.0)) < 0) return rc;
  if ((rc = xqc_db_add_promotion(db, meta.net_id, 0, 0, 0, 0.5, 0.0)) < 0) return rc;
  char line[512];
  snprintf(line, sizeof line,
           "{\"net\":\"%016llx\",\"parent\":\"0000000000000000\",\"step\":0,"
           "\"promoted\":true,\"first\":true,\"elo\":0,\"time\":%lld}",
           (unsigned long long)meta.net_id, (long long)time(NULL));
  if ((rc = xqc_campaign_log_line(dir, "promotions.log", line, eb)) < 0) return rc;
  XQ_LOGI("campaign", "created net 1 net=%016llx size=%s path=%s",
          (unsigned long long)meta.net_id, cfg->net_size, path);
  *id_out = meta.net_id;
  return 0;
}

/* Files in dir/sub whose names end in suffix (0 when the folder is missing). */
static int count_files(const char *dir, const char *sub, const char *suffix) {
  char p[1024];
  snprintf(p, sizeof p, "%s/%s", dir, sub);
  DIR *d = opendir(p);
  if (!d) return 0;
  int n = 0;
  size_t sl = strlen(suffix);
  struct dirent *de;
  while ((de = readdir(d))) {
    size_t nl = strlen(de->d_name);
    if (nl > sl && !strcmp(de->d_name + nl - sl, suffix) &&
        strcmp(de->d_name, XQ_CAMPAIGN_BEST_NAME) != 0)
      n++;
  }
  closedir(d);
  return n;
}

/* campaign.db (at db_path) is missing: a new campaign when the directory holds nothing of
 * one, else the refusal naming what is there and how to recover. */
static int missing_db(const char *dir, const char *db_path, xq_errbuf_t *eb) {
  int nets = count_files(dir, "nets", ".xqzn") +
             count_files(dir, "nets/" XQ_CAMPAIGN_REJECTED_DIR, ".xqzn");
  int segs = count_files(dir, "games", ".bin");
  char p[1100];
  snprintf(p, sizeof p, "%s/promotions.log", dir);
  bool log = access(p, F_OK) == 0;
  snprintf(p, sizeof p, "%s-wal", db_path);
  bool wal = access(p, F_OK) == 0;
  if (!nets && !segs && !log) return 0;
  XQ_LOGE("campaign", "%s is missing, but this directory holds a campaign (%d net file(s) in"
          " nets/, %d game segment(s) in games/%s%s): its database was deleted or moved. A new"
          " campaign is not started over an old one (a new campaign id and net 1 beside the"
          " old games). Recover: restore campaign.db from a backup (or campaign.db.rescue,"
          " if the coordinator wrote one) into %s and start again; or, to start a new"
          " campaign, use another --campaign directory", db_path, nets, segs,
          log ? ", promotions.log" : "", wal ? ", a campaign.db-wal without its database" : "",
          dir);
  return xq_err_set(eb, XQ_EIO, "%s is missing beside an existing campaign's nets and games:"
                    " restore it from a backup (see the line above)", db_path);
}

int xqc_campaign_db_id(const char *dir, uint64_t *dev, uint64_t *ino) {
  char p[1024];
  snprintf(p, sizeof p, "%s/campaign.db", dir);
  struct stat st;
  *dev = *ino = 0;
  if (stat(p, &st) != 0) return XQ_EIO;
  *dev = (uint64_t)st.st_dev;
  *ino = (uint64_t)st.st_ino;
  return 0;
}

int xqc_campaign_open(const char *dir, const xqc_config_t *cfg, xqc_db_t **db,
                      uint64_t *campaign_id, uint64_t *best, double *best_elo,
                      int64_t *promotions, xq_errbuf_t *eb) {
  char p[1024];
  snprintf(p, sizeof p, "%s/campaign.db", dir);
  int rc = access(p, F_OK) == 0 ? 0 : missing_db(dir, p, eb);
  if (rc < 0) return rc;
  rc = xqc_db_open(db, p, eb);
  if (rc < 0) return rc;
  if ((rc = xqc_db_best(*db, best, best_elo, promotions)) < 0) return rc;
  if ((rc = campaign_identity(*db, *best == 0, campaign_id, eb)) < 0) return rc;
  if (*best == 0) {
    if ((rc = create_first_net(dir, cfg, *db, *campaign_id, best, eb)) < 0) return rc;
    *best_elo = 0;
    *promotions = 1;
    return 0;
  }
  /* A damaged or missing best net falls back to the previous intact one (nets.h). */
  if ((rc = xqc_nets_check_best(*db, dir, best, best_elo, eb)) < 0) return rc;
  xqc_net_path(p, sizeof p, dir, *best);
  nn_file_meta_t meta;
  if ((rc = nn_file_info(p, &meta, 1, eb)) < 0) return rc;
  if (meta.campaign_id && meta.campaign_id != *campaign_id)
    return xq_err_set(eb, XQ_EMISMATCH, "%s belongs to campaign %016llx, campaign.db to campaign"
                      " %016llx: the directory mixes two campaigns; restore it from a backup"
                      " of one", p, (unsigned long long)meta.campaign_id,
                      (unsigned long long)*campaign_id);
  XQ_LOGI("campaign", "resumed best=%016llx elo=%.1f promotions=%lld", (unsigned long long)*best,
          *best_elo, (long long)*promotions);
  return 0;
}

int xqc_campaign_log_line(const char *dir, const char *name, const char *line,
                          xq_errbuf_t *eb) {
  char p[1024];
  snprintf(p, sizeof p, "%s/%s", dir, name);
  int fd = open(p, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return xq_err_set(eb, XQ_EIO, "%s: cannot open: %s", p, strerror(errno));
  /* A line is whole or absent: a short write (the disk filled up in the middle of it)
   * is cut off again, so the next line does not start inside it and a reader never sees
   * two lines run together. A torn tail left by a crash is ended before this line. */
  struct stat st;
  off_t end = fstat(fd, &st) == 0 ? st.st_size : -1;
  char last = '\n';
  if (end > 0 && pread(fd, &last, 1, end - 1) != 1) last = '\n';
  size_t n = strlen(line), k = 0;
  char buf[2048];
  if (n > sizeof buf - 3) n = sizeof buf - 3;
  if (last != '\n') buf[k++] = '\n';
  memcpy(buf + k, line, n);
  k += n;
  buf[k++] = '\n';
  ssize_t w = xqc_seg_io.write(fd, buf, k);
  int err = w < 0 ? errno : ENOSPC;
  int rc = 0;
  if (w != (ssize_t)k || xqc_seg_io.fsync(fd) != 0) {
    if (w == (ssize_t)k) err = errno;
    rc = xq_err_set(eb, XQ_EIO, "%s: line not written: %s", p, strerror(err));
    if (w > 0 && end >= 0 && xqc_seg_io.ftruncate(fd, end) != 0)
      XQ_LOGE("campaign", "%s: a part of a line stays at its end (it could not be cut off:"
              " %s); the next line is written after it on a line of its own", p,
              strerror(errno));
  }
  close(fd);
  return rc;
}
