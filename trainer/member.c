/* member.c: a member of a population (member.h): its settings, and the copy of another
 * member's checkpoint. */

#include "member.h"

#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "diverge.h"
#include "nn/nn_checkpoint.h"
#include "support/crc32.h"

void trainer_member_settings_from_opts(trainer_member_settings_t *s, const trainer_opts_t *o) {
  s->lr_scale = 1.0;
  s->l2 = o->l2;
  s->value_weight = o->value_weight;
  s->batch = o->batch;
}

/* XQ_ERANGE naming the setting unless lo <= v <= hi (and v finite). */
static int in_range(const char *name, double v, double lo, double hi, xq_errbuf_t *eb) {
  if (isfinite(v) && v >= lo && v <= hi) return 0;
  return xq_err_set(eb, XQ_ERANGE, "member setting %s = %g is outside [%g, %g]", name, v, lo,
                    hi);
}

/* The same with the bounds of the trainer's option `option`. */
static int opt_range(const char *name, const char *option, double v, xq_errbuf_t *eb) {
  double lo, hi;
  int rc = trainer_opts_bounds(option, &lo, &hi);
  assert(rc == 0); /* the options table has every one of them */
  (void)rc;
  return in_range(name, v, lo, hi, eb);
}

int trainer_member_settings_check(const trainer_member_settings_t *s, xq_errbuf_t *eb) {
  int rc;
  if ((rc = in_range("lr_scale", s->lr_scale, TRAINER_MEMBER_LR_SCALE_MIN,
                     TRAINER_MEMBER_LR_SCALE_MAX, eb)))
    return rc;
  if ((rc = opt_range("l2", "l2", s->l2, eb))) return rc;
  if ((rc = opt_range("value_weight", "value-weight", s->value_weight, eb))) return rc;
  return opt_range("batch", "batch", (double)s->batch, eb);
}

int trainer_member_apply(trainer_member_state_t *st, const trainer_member_settings_t *s,
                         xq_errbuf_t *eb) {
  int rc = trainer_member_settings_check(s, eb);
  if (rc) return rc;
  if (s->batch > st->max_batch)
    return xq_err_set(eb, XQ_ERANGE, "member setting batch = %" PRId64 " is above the %d"
                      " positions the training threads were set up for", s->batch,
                      st->max_batch);
  nn_lr_schedule_t sched = *st->base;
  for (int i = 0; i < sched.n; i++) {
    double lr = (double)st->base->e[i].lr * s->lr_scale;
    if (!(lr < 100.0))
      return xq_err_set(eb, XQ_ERANGE, "member setting lr_scale = %g takes the --lr rate %g"
                        " (from step %" PRId64 ") to %g; a rate must stay below 100",
                        s->lr_scale, (double)st->base->e[i].lr, st->base->e[i].from, lr);
    sched.e[i].lr = (float)lr;
  }
  st->opt->schedule = sched;
  st->loss_cfg->l2 = (float)s->l2;
  st->loss_cfg->value_weight = (float)s->value_weight;
  *st->batch = (int)s->batch;
  return 0;
}

/* The donor's image into a temporary file of dir, then nn_checkpoint_load. */
static int load_image(const char *dir, const unsigned char *bytes, size_t len, nn_model_t **m,
                      nn_file_meta_t *meta, nn_sgd_t *opt, nn_ema_t *ema, xq_errbuf_t *eb) {
  char path[1024];
  int n = snprintf(path, sizeof path, "%s/member-copy.xqzc.XXXXXX", dir);
  if (n < 0 || (size_t)n >= sizeof path)
    return xq_err_set(eb, XQ_EINVAL, "trainer directory name too long: %s", dir);
  int fd = mkstemp(path);
  if (fd < 0)
    return xq_err_set(eb, XQ_EIO, "cannot create %s: %s", path, strerror(errno));
  size_t done = 0;
  while (done < len) {
    ssize_t w = write(fd, bytes + done, len - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      int e = errno;
      close(fd);
      unlink(path);
      return xq_err_set(eb, XQ_EIO, "cannot write %s: %s", path, strerror(e));
    }
    done += (size_t)w;
  }
  if (close(fd)) {
    int e = errno;
    unlink(path);
    return xq_err_set(eb, XQ_EIO, "cannot write %s: %s", path, strerror(e));
  }
  xq_errbuf_t why = {{0}};
  int rc = nn_checkpoint_load(path, m, meta, opt, ema, &why);
  unlink(path);
  if (rc) return xq_err_set(eb, rc, "donor checkpoint does not load (%s): not copied", why.msg);
  return 0;
}

int trainer_member_copy(trainer_member_state_t *st, const char *dir, const unsigned char *bytes,
                        size_t len, uint32_t crc, xq_errbuf_t *eb) {
  uint32_t got = xq_crc32(0, bytes, len);
  if (got != crc)
    return xq_err_set(eb, XQ_ECHECKSUM, "donor checkpoint of %zu bytes has CRC-32 %08" PRIx32
                      ", its sender says %08" PRIx32 ": damaged in transit, not copied", len,
                      got, crc);
  nn_model_t *dm = NULL;
  nn_file_meta_t dmeta;
  nn_sgd_t dopt = {0};
  nn_ema_t dema = {0};
  int rc = load_image(dir, bytes, len, &dm, &dmeta, &dopt, &dema, eb);
  if (rc) goto out;
  if (memcmp(&dm->arch, &st->m->arch, sizeof dm->arch) != 0) {
    char mine[64], theirs[64];
    nn_arch_name(&st->m->arch, mine, sizeof mine);
    nn_arch_name(&dm->arch, theirs, sizeof theirs);
    rc = xq_err_set(eb, XQ_EMISMATCH, "donor checkpoint is a %s net, this member's is %s:"
                    " not copied", theirs, mine);
    goto out;
  }
  if (st->meta->campaign_id != 0 && dmeta.campaign_id != st->meta->campaign_id) {
    rc = xq_err_set(eb, XQ_EMISMATCH, "donor checkpoint is of campaign %016" PRIx64 ", this"
                    " member of campaign %016" PRIx64 ": not copied", dmeta.campaign_id,
                    st->meta->campaign_id);
    goto out;
  }
  char what[128];
  if (!trainer_weights_sane(dm, &dopt, &dema, what, sizeof what)) {
    rc = xq_err_set(eb, XQ_EFORMAT, "donor checkpoint holds a value that is not finite (%s):"
                    " not copied", what);
    goto out;
  }
  /* Same architecture: the same sizes, copied in place. */
  assert(dm->nparams == st->m->nparams && dm->nstats == st->m->nstats);
  assert(dopt.n == st->opt->n);
  memcpy(st->m->params, dm->params, dm->nparams * sizeof(float));
  memcpy(st->m->stats, dm->stats, dm->nstats * sizeof(float));
  st->m->fold.valid = false;
  memcpy(st->opt->velocity, dopt.velocity, dopt.n * sizeof(float));
  st->opt->step = dopt.step;
  st->meta->step = dopt.step;
  if (st->meta->campaign_id == 0) st->meta->campaign_id = dmeta.campaign_id;
  if (st->ema->avg) {
    if (dema.avg && dema.count > 0) {
      memcpy(st->ema->avg->params, dema.avg->params, dm->nparams * sizeof(float));
      memcpy(st->ema->avg->stats, dema.avg->stats, dm->nstats * sizeof(float));
      st->ema->avg->fold.valid = false;
      st->ema->count = dema.count;
    } else {
      st->ema->count = 0; /* the next update starts a new average with the donor's weights */
    }
  }
out:
  nn_ema_close(&dema);
  nn_sgd_close(&dopt);
  nn_model_free(&dm);
  return rc;
}
