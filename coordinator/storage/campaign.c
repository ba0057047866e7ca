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
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "nn/nn_file.h"
#include "nn/nn_model.h"
#include "nets.h"
#include "support/campaign_nets.h"
#include "support/ini_value.h"
#include "support/log.h"
#include "support/mkdir_p.h"

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
  int fd = open(p, O_WRONLY | O_CREAT | O_APPEND, 0644);
  if (fd < 0) return xq_err_set(eb, XQ_EIO, "%s: cannot open", p);
  size_t n = strlen(line);
  char buf[2048];
  if (n > sizeof buf - 2) n = sizeof buf - 2;
  memcpy(buf, line, n);
  buf[n++] = '\n';
  ssize_t w = write(fd, buf, n);
  int rc = (w == (ssize_t)n && fsync(fd) == 0) ? 0 : xq_err_set(eb, XQ_EIO, "%s: write", p);
  close(fd);
  return rc;
}
