/* nn_checkpoint.c: .xqzc training checkpoints (model image + SGD state). */
#include "nn/nn_checkpoint.h"

#include <stdlib.h>
#include <string.h>

#include "support/atomic_file.h"
#include "support/crc32.h"
#include "support/le.h"

enum {
  C_MAGIC = 0, C_VERSION = 8, C_HSIZE = 12, C_STEP = 16, C_MOMENTUM = 24, C_FLAGS = 28,
  C_NETLEN = 32, C_NVEL = 40, C_BODY_CRC = 48, C_HEADER_CRC = 52, C_RESERVED = 56,
};


int nn_checkpoint_save(const char *path, const nn_model_t *m, const nn_file_meta_t *meta,
                       const nn_sgd_t *opt, xq_errbuf_t *eb) {
  if (opt->n != m->nparams || !opt->velocity)
    return xq_err_set(eb, XQ_EINVAL, "optimiser state does not belong to this model");
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
  xq_put_le32(h + C_FLAGS, opt->nesterov ? 1u : 0u);
  xq_put_le64(h + C_NETLEN, netlen);
  xq_put_le64(h + C_NVEL, opt->n);
  uint32_t crc = xq_crc32(0, net, netlen);
  crc = xq_crc32(crc, opt->velocity, vlen);
  xq_put_le32(h + C_BODY_CRC, crc);
  xq_put_le32(h + C_HEADER_CRC, xq_crc32(0, h, C_HEADER_CRC));
  const void *parts[3] = {h, net, opt->velocity};
  size_t sizes[3] = {sizeof h, netlen, vlen};
  rc = xq_atomic_write(path, parts, sizes, 3, eb);
  free(net);
  return rc;
}

static int decode(nn_model_t **out, nn_file_meta_t *meta, nn_sgd_t *opt,
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
  if (flags > 1) return xq_err_set(eb, XQ_EFORMAT, "unknown checkpoint flags %#x", flags);
  for (int i = C_RESERVED; i < NN_CKPT_HEADER_SIZE; i++)
    if (b[i]) return xq_err_set(eb, XQ_EFORMAT, "reserved header byte %d is not zero", i);
  uint64_t netlen = xq_get_le64(b + C_NETLEN), nvel = xq_get_le64(b + C_NVEL);
  size_t rest = len - NN_CKPT_HEADER_SIZE;
  if (netlen > rest) return xq_err_set(eb, XQ_ETRUNC, "truncated: model image cut short");
  if (nvel > (rest - netlen) / sizeof(float))
    return xq_err_set(eb, XQ_ETRUNC, "truncated: momentum buffer cut short");
  if (rest - netlen != nvel * sizeof(float))
    return xq_err_set(eb, XQ_EFORMAT, "checkpoint size: %zu bytes of trailing garbage",
                      (size_t)(rest - netlen - nvel * sizeof(float)));
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
  float *vel = malloc(nvel * sizeof(float) + 1);
  if (!vel) {
    nn_model_free(&m);
    return xq_err_set(eb, XQ_ENOMEM, "cannot allocate the momentum buffer");
  }
  memcpy(vel, b + NN_CKPT_HEADER_SIZE + netlen, nvel * sizeof(float));
  uint32_t mom = xq_get_le32(b + C_MOMENTUM);
  memcpy(&opt->momentum, &mom, 4);
  opt->nesterov = flags & 1;
  opt->step = (int64_t)xq_get_le64(b + C_STEP);
  opt->n = nvel;
  opt->velocity = vel;
  *out = m;
  return 0;
}

int nn_checkpoint_load(const char *path, nn_model_t **out, nn_file_meta_t *meta,
                       nn_sgd_t *opt, xq_errbuf_t *eb) {
  unsigned char *buf;
  size_t len;
  nn_file_meta_t local;
  *out = NULL;
  int rc = xq_read_file(path, NN_FILE_MAX_SIZE * 2, &buf, &len, eb);
  if (rc) return rc;
  xq_errbuf_t why = {{0}};
  rc = decode(out, meta ? meta : &local, opt, buf, len, &why);
  free(buf);
  if (rc) return xq_err_set(eb, rc, "%s: %s", path, why.msg);
  return 0;
}
