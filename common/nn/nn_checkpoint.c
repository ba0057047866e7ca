/* nn_checkpoint.c: .xqzc training checkpoints (model image + SGD state). */
#include "nn/nn_checkpoint.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "support/atomic_file.h"
#include "support/crc32.h"
#include "support/le.h"

enum {
  C_MAGIC = 0, C_VERSION = 8, C_HSIZE = 12, C_STEP = 16, C_MOMENTUM = 24, C_FLAGS = 28,
  C_NETLEN = 32, C_NVEL = 40, C_BODY_CRC = 48, C_HEADER_CRC = 52, C_EMA_COUNT = 56,
};
enum { F_NESTEROV = 1, F_AVERAGE = 2 }; /* flags; F_AVERAGE: an average follows */


int nn_checkpoint_save(const char *path, const nn_model_t *m, const nn_file_meta_t *meta,
                       const nn_sgd_t *opt, const nn_ema_t *ema, xq_errbuf_t *eb) {
  if (opt->n != m->nparams || !opt->velocity)
    return xq_err_set(eb, XQ_EINVAL, "optimiser state does not belong to this model");
  bool avg = ema && ema->avg && ema->count > 0;
  if (avg && (ema->avg->nparams != m->nparams || ema->avg->nstats != m->nstats))
    return xq_err_set(eb, XQ_EINVAL, "averaged weights do not belong to this model");
  nn_file_meta_t mm = *meta;
  mm.step = opt->step;
  unsigned char *net;
  size_t netlen;
  int rc = nn_file_encode(&net, &netlen, m, &mm, eb);
  if (rc) return rc;
  size_t vlen = opt->n * sizeof(float);
  unsigned char h[NN_CKPT_HEADER_SIZE] = {0};
  memcpy(h + C_MAGIC, NN_CKPT_MAGIC, 8);
  xq_put_le32(h + C_VERSION, NN_CKPT_VERSION);
  xq_put_le32(h + C_HSIZE, NN_CKPT_HEADER_SIZE);
  xq_put_le64(h + C_STEP, (uint64_t)opt->step);
  uint32_t mom;
  memcpy(&mom, &opt->momentum, 4);
  xq_put_le32(h + C_MOMENTUM, mom);
  xq_put_le32(h + C_FLAGS, (opt->nesterov ? F_NESTEROV : 0u) | (avg ? F_AVERAGE : 0u));
  xq_put_le64(h + C_NETLEN, netlen);
  xq_put_le64(h + C_NVEL, opt->n);
  size_t plen = avg ? m->nparams * sizeof(float) : 0, slen = avg ? m->nstats * sizeof(float) : 0;
  if (avg) xq_put_le64(h + C_EMA_COUNT, (uint64_t)ema->count);
  uint32_t crc = xq_crc32(0, net, netlen);
  crc = xq_crc32(crc, opt->velocity, vlen);
  if (avg) {
    crc = xq_crc32(crc, ema->avg->params, plen);
    crc = xq_crc32(crc, ema->avg->stats, slen);
  }
  xq_put_le32(h + C_BODY_CRC, crc);
  xq_put_le32(h + C_HEADER_CRC, xq_crc32(0, h, C_HEADER_CRC));
  const void *parts[5] = {h, net, opt->velocity, avg ? ema->avg->params : NULL,
                          avg ? ema->avg->stats : NULL};
  size_t sizes[5] = {sizeof h, netlen, vlen, plen, slen};
  rc = xq_atomic_write(path, parts, sizes, avg ? 5 : 3, eb);
  free(net);
  return rc;
}

/* The average stored after the momentum buffer (nparams then nstats floats of m's
 * architecture), count from the header, into ema. */
static int load_average(nn_ema_t *ema, const nn_model_t *m, const unsigned char *p,
                        uint64_t count, xq_errbuf_t *eb) {
  int rc = nn_ema_init(ema, m, 1, eb);
  if (rc) return rc;
  memcpy(ema->avg->params, p, m->nparams * sizeof(float));
  memcpy(ema->avg->stats, p + m->nparams * sizeof(float), m->nstats * sizeof(float));
  for (size_t i = 0; i < m->nparams + m->nstats; i++) {
    float x = i < m->nparams ? ema->avg->params[i] : ema->avg->stats[i - m->nparams];
    if (!isfinite(x)) {
      nn_ema_close(ema);
      return xq_err_set(eb, XQ_ERANGE, "averaged weights: float %zu is not finite", i);
    }
  }
  ema->count = (int64_t)count;
  return 0;
}

static int decode(nn_model_t **out, nn_file_meta_t *meta, nn_sgd_t *opt, nn_ema_t *ema,
                  const unsigned char *b, size_t len, xq_errbuf_t *eb) {
  if (len < 8) return xq_err_set(eb, XQ_ETRUNC, "truncated: %zu bytes", len);
  if (memcmp(b, NN_CKPT_MAGIC, 8))
    return xq_err_set(eb, XQ_EFORMAT, "bad magic: not an xqzero training checkpoint (.xqzc)");
  if (len < NN_CKPT_HEADER_SIZE)
    return xq_err_set(eb, XQ_ETRUNC, "truncated header: %zu of %d bytes", len, NN_CKPT_HEADER_SIZE);
  if (xq_get_le32(b + C_VERSION) != NN_CKPT_VERSION)
    return xq_err_set(eb, XQ_EVERSION, "checkpoint version %u, this build reads version %d",
                      xq_get_le32(b + C_VERSION), NN_CKPT_VERSION);
  if (xq_crc32(0, b, C_HEADER_CRC) != xq_get_le32(b + C_HEADER_CRC))
    return xq_err_set(eb, XQ_ECHECKSUM, "checkpoint header checksum mismatch");
  if (xq_get_le32(b + C_HSIZE) != NN_CKPT_HEADER_SIZE)
    return xq_err_set(eb, XQ_EFORMAT, "checkpoint header size %u", xq_get_le32(b + C_HSIZE));
  uint32_t flags = xq_get_le32(b + C_FLAGS);
  if (flags > (F_NESTEROV | F_AVERAGE))
    return xq_err_set(eb, XQ_EFORMAT, "unknown checkpoint flags %#x", flags);
  uint64_t count = xq_get_le64(b + C_EMA_COUNT);
  if (!(flags & F_AVERAGE) && count)
    return xq_err_set(eb, XQ_EFORMAT, "an average's count (%llu) but no averaged weights",
                      (unsigned long long)count);
  if ((flags & F_AVERAGE) && (count == 0 || count > (uint64_t)INT64_MAX))
    return xq_err_set(eb, XQ_EFORMAT, "averaged weights with a count of %llu",
                      (unsigned long long)count);
  uint64_t netlen = xq_get_le64(b + C_NETLEN), nvel = xq_get_le64(b + C_NVEL);
  size_t rest = len - NN_CKPT_HEADER_SIZE;
  if (netlen > rest) return xq_err_set(eb, XQ_ETRUNC, "truncated: model image cut short");
  if (nvel > (rest - netlen) / sizeof(float))
    return xq_err_set(eb, XQ_ETRUNC, "truncated: momentum buffer cut short");
  /* An average holds the parameters and statistics the embedded model's header counts. */
  size_t after_vel = rest - netlen - nvel * sizeof(float);
  if (flags & F_AVERAGE) {
    nn_file_meta_t hm;
    xq_errbuf_t why = {{0}};
    int hrc = nn_file_decode_header(&hm, b + NN_CKPT_HEADER_SIZE, (size_t)netlen, &why);
    if (hrc) return xq_err_set(eb, hrc, "embedded model: %s", why.msg);
    if (hm.nparams != nvel)
      return xq_err_set(eb, XQ_EMISMATCH, "momentum buffer has %llu floats, the model %llu",
                        (unsigned long long)nvel, (unsigned long long)hm.nparams);
    /* nparams + nstats floats, compared without forming a sum a forged count overflows */
    uint64_t have = after_vel / sizeof(float);
    bool short_of = have < nvel || have - nvel < hm.nstats;
    if (short_of || after_vel != (nvel + hm.nstats) * sizeof(float))
      return xq_err_set(eb, short_of ? XQ_ETRUNC : XQ_EFORMAT,
                        "averaged weights: %zu bytes where the model needs %llu floats%s",
                        after_vel, (unsigned long long)(nvel + hm.nstats),
                        short_of ? " (cut short)" : "");
  } else if (after_vel) {
    return xq_err_set(eb, XQ_EFORMAT, "checkpoint size: %zu bytes of trailing garbage",
                      after_vel);
  }
  uint32_t crc = xq_crc32(0, b + NN_CKPT_HEADER_SIZE, rest);
  if (crc != xq_get_le32(b + C_BODY_CRC))
    return xq_err_set(eb, XQ_ECHECKSUM, "checkpoint body checksum mismatch");
  xq_errbuf_t why = {{0}};
  nn_model_t *m;
  int rc = nn_file_decode(&m, meta, b + NN_CKPT_HEADER_SIZE, (size_t)netlen, &why);
  if (rc) return xq_err_set(eb, rc, "embedded model: %s", why.msg);
  if (nvel != m->nparams) {
    size_t np = m->nparams;
    nn_model_free(&m);
    return xq_err_set(eb, XQ_EMISMATCH, "momentum buffer has %llu floats, the model %zu",
                      (unsigned long long)nvel, np);
  }
  if (ema && (flags & F_AVERAGE)) {
    rc = load_average(ema, m, b + NN_CKPT_HEADER_SIZE + netlen + nvel * sizeof(float), count,
                      eb);
    if (rc) {
      nn_model_free(&m);
      return rc;
    }
  }
  float *vel = malloc(nvel * sizeof(float) + 1);
  if (!vel) {
    nn_model_free(&m);
    if (ema) nn_ema_close(ema);
    return xq_err_set(eb, XQ_ENOMEM, "cannot allocate the momentum buffer");
  }
  memcpy(vel, b + NN_CKPT_HEADER_SIZE + netlen, nvel * sizeof(float));
  uint32_t mom = xq_get_le32(b + C_MOMENTUM);
  memcpy(&opt->momentum, &mom, 4);
  opt->nesterov = flags & F_NESTEROV;
  opt->step = (int64_t)xq_get_le64(b + C_STEP);
  opt->n = nvel;
  opt->velocity = vel;
  *out = m;
  return 0;
}

int nn_checkpoint_load(const char *path, nn_model_t **out, nn_file_meta_t *meta,
                       nn_sgd_t *opt, nn_ema_t *ema, xq_errbuf_t *eb) {
  unsigned char *buf;
  size_t len;
  nn_file_meta_t local;
  *out = NULL;
  if (ema) nn_ema_close(ema); /* a previous average goes; the stored one, if any, replaces it */
  int rc = xq_read_file(path, NN_FILE_MAX_SIZE * 2, &buf, &len, eb);
  if (rc) return rc;
  xq_errbuf_t why = {{0}};
  rc = decode(out, meta ? meta : &local, opt, ema, buf, len, &why);
  free(buf);
  if (rc) return xq_err_set(eb, rc, "%s: %s", path, why.msg);
  return 0;
}
