/*
 * nn_file.c: encoding and validating decoding of .xqzn weights files.
 * Integers are written byte by byte in little-endian order, so the header is the same on
 * every host; float payloads are copied as IEEE-754 binary32, which needs a
 * little-endian host (checked at compile time below).
 */
#include "nn/nn_file.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "support/atomic_file.h"
#include "support/crc32.h"
#include "support/le.h"
#include "support/rng.h"

_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
               "the .xqzn float payload is little-endian; add byte swapping for this host");
_Static_assert(sizeof(float) == 4, "float must be IEEE-754 binary32");


enum {
  OFF_MAGIC = 0, OFF_VERSION = 8, OFF_HSIZE = 12, OFF_INPUT_VERSION = 16,
  OFF_INPUT_PLANES = 20, OFF_BLOCKS = 24, OFF_CHANNELS = 28, OFF_POLICY_CH = 32,
  OFF_VALUE_CH = 36, OFF_VALUE_HIDDEN = 40, OFF_POLICY_SIZE = 44, OFF_NET_ID = 48,
  OFF_PARENT_ID = 56, OFF_STEP = 64, OFF_CREATED = 72, OFF_NPARAMS = 80, OFF_NSTATS = 88,
  OFF_PAYLOAD_CRC = 96, OFF_HEADER_CRC = 100, OFF_CAMPAIGN = 104, OFF_GPOOL = 112,
  OFF_SURVIVAL = 116, OFF_LINES = 120, OFF_REPLY = 124, OFF_RESERVED = 128,
  OFF_RESERVED_V1 = 104, /* version 1 had no campaign id: reserved from here */
  OFF_RESERVED_V2 = 112, /* version 2 had no global pooling: reserved from here */
  OFF_RESERVED_V3 = 116, /* version 3 had no survival head: reserved from here */
  OFF_RESERVED_V4 = 120, /* version 4 had no line convolutions: reserved from here */
  OFF_RESERVED_V5 = 124, /* version 5 had no opponent-reply head: reserved from here */
};

/* The first reserved (must be zero) header byte of a format version. */
static int reserved_from(uint32_t version) {
  static const int from[] = {0, OFF_RESERVED_V1, OFF_RESERVED_V2, OFF_RESERVED_V3,
                             OFF_RESERVED_V4, OFF_RESERVED_V5};
  return version < sizeof from / sizeof from[0] ? from[version] : OFF_RESERVED;
}

/* Version 1's header CRC covers bytes 0..99 (the rest was reserved, zero); later versions'
 * also cover what follows the CRC field (campaign id, global pooling, reserved bytes). */
static uint32_t header_crc(const unsigned char *b, uint32_t version) {
  uint32_t crc = xq_crc32(0, b, OFF_HEADER_CRC);
  if (version >= 2) crc = xq_crc32(crc, b + OFF_CAMPAIGN, NN_FILE_HEADER_SIZE - OFF_CAMPAIGN);
  return crc;
}

int nn_file_version_for(const nn_arch_t *a) {
  if (a->reply) return 6;
  if (a->lines) return 5;
  if (a->survival) return 4;
  if (a->gpool_every) return 3;
  return 2;
}

int nn_file_encode(unsigned char **buf, size_t *len, const nn_model_t *m,
                   const nn_file_meta_t *meta, xq_errbuf_t *eb) {
  size_t payload = (m->nparams + m->nstats) * sizeof(float);
  unsigned char *b = calloc(1, NN_FILE_HEADER_SIZE + payload);
  *buf = NULL;
  *len = 0;
  if (!b) return xq_err_set(eb, XQ_ENOMEM, "cannot allocate %zu bytes", payload);
  unsigned char *pl = b + NN_FILE_HEADER_SIZE;
  memcpy(pl, m->params, m->nparams * sizeof(float));
  memcpy(pl + m->nparams * sizeof(float), m->stats, m->nstats * sizeof(float));
  memcpy(b + OFF_MAGIC, NN_FILE_MAGIC, 8);
  const uint32_t version = (uint32_t)nn_file_version_for(&m->arch);
  xq_put_le32(b + OFF_VERSION, version);
  xq_put_le32(b + OFF_HSIZE, NN_FILE_HEADER_SIZE);
  /* The input a net reads is part of its architecture: version 2 has the attack planes. */
  xq_put_le32(b + OFF_INPUT_VERSION, (uint32_t)nn_arch_input_version(&m->arch));
  xq_put_le32(b + OFF_INPUT_PLANES, (uint32_t)nn_arch_input_planes(&m->arch));
  xq_put_le32(b + OFF_BLOCKS, (uint32_t)m->arch.blocks);
  xq_put_le32(b + OFF_CHANNELS, (uint32_t)m->arch.channels);
  xq_put_le32(b + OFF_POLICY_CH, (uint32_t)m->arch.policy_channels);
  xq_put_le32(b + OFF_VALUE_CH, (uint32_t)m->arch.value_channels);
  xq_put_le32(b + OFF_VALUE_HIDDEN, (uint32_t)m->arch.value_hidden);
  xq_put_le32(b + OFF_POLICY_SIZE, NN_POLICY_SIZE);
  xq_put_le32(b + OFF_GPOOL, (uint32_t)m->arch.gpool_every);
  xq_put_le32(b + OFF_SURVIVAL, (uint32_t)m->arch.survival);
  xq_put_le32(b + OFF_LINES, (uint32_t)m->arch.lines);
  xq_put_le32(b + OFF_REPLY, (uint32_t)m->arch.reply);
  xq_put_le64(b + OFF_NET_ID, meta->net_id);
  xq_put_le64(b + OFF_PARENT_ID, meta->parent_id);
  xq_put_le64(b + OFF_STEP, (uint64_t)meta->step);
  xq_put_le64(b + OFF_CREATED, (uint64_t)meta->created);
  xq_put_le64(b + OFF_NPARAMS, m->nparams);
  xq_put_le64(b + OFF_NSTATS, m->nstats);
  xq_put_le32(b + OFF_PAYLOAD_CRC, xq_crc32(0, pl, payload));
  xq_put_le64(b + OFF_CAMPAIGN, meta->campaign_id);
  xq_put_le32(b + OFF_HEADER_CRC, header_crc(b, version));
  *buf = b;
  *len = NN_FILE_HEADER_SIZE + payload;
  return 0;
}

static int check_u32(const unsigned char *b, int off, uint32_t want, const char *what,
                     xq_errbuf_t *eb) {
  uint32_t got = xq_get_le32(b + off);
  if (got != want)
    return xq_err_set(eb, XQ_EMISMATCH, "%s is %u, this build expects %u", what, got, want);
  return 0;
}

int nn_file_decode_header(nn_file_meta_t *meta, const unsigned char *b, size_t len,
                          xq_errbuf_t *eb) {
  memset(meta, 0, sizeof *meta);
  if (len < 8) return xq_err_set(eb, XQ_ETRUNC, "truncated: %zu bytes, no room for the magic", len);
  if (memcmp(b + OFF_MAGIC, NN_FILE_MAGIC, 8) != 0)
    return xq_err_set(eb, XQ_EFORMAT, "bad magic: not an xqzero weights file (.xqzn)");
  if (len < NN_FILE_HEADER_SIZE)
    return xq_err_set(eb, XQ_ETRUNC, "truncated header: %zu of %d bytes", len,
                      NN_FILE_HEADER_SIZE);
  uint32_t version = xq_get_le32(b + OFF_VERSION);
  if (version > NN_FILE_VERSION)
    return xq_err_set(eb, XQ_EVERSION, "format version %u, this build reads versions %d to %d:"
                      " the file was written by a newer xqzero, upgrade this one", version,
                      NN_FILE_VERSION_MIN, NN_FILE_VERSION);
  if (version < NN_FILE_VERSION_MIN)
    return xq_err_set(eb, XQ_EVERSION, "format version %u, this build reads versions %d to %d",
                      version, NN_FILE_VERSION_MIN, NN_FILE_VERSION);
  uint32_t hcrc = header_crc(b, version);
  if (hcrc != xq_get_le32(b + OFF_HEADER_CRC))
    return xq_err_set(eb, XQ_ECHECKSUM, "header checksum mismatch (stored %08x, computed %08x)",
                      xq_get_le32(b + OFF_HEADER_CRC), hcrc);
  int rc;
  if ((rc = check_u32(b, OFF_HSIZE, NN_FILE_HEADER_SIZE, "header size", eb))) return rc;
  for (int i = reserved_from(version); i < NN_FILE_HEADER_SIZE; i++)
    if (b[i]) return xq_err_set(eb, XQ_EFORMAT, "reserved header byte %d is not zero", i);
  meta->format_version = version;
  meta->campaign_id = version == 1 ? 0 : xq_get_le64(b + OFF_CAMPAIGN);
  meta->input_version = xq_get_le32(b + OFF_INPUT_VERSION);
  if (meta->input_version != NN_INPUT_VERSION && meta->input_version != NN_INPUT_VERSION_ATTACKS)
    return xq_err_set(eb, XQ_EMISMATCH,
                      "input-plane version %u, this build encodes versions %d and %d",
                      meta->input_version, NN_INPUT_VERSION, NN_INPUT_VERSION_ATTACKS);
  int attacks = meta->input_version == NN_INPUT_VERSION_ATTACKS;
  if ((rc = check_u32(b, OFF_INPUT_PLANES, attacks ? NN_INPUT_PLANES_MAX : NN_INPUT_PLANES,
                      "input plane count", eb)))
    return rc;
  if ((rc = check_u32(b, OFF_POLICY_SIZE, NN_POLICY_SIZE, "policy size", eb))) return rc;
  /* Versions before 3 had no global pooling: their nets pool nowhere. Versions before 4
   * had no survival head, versions before 5 no line convolutions, before 6 no reply head. */
  uint32_t f[9] = {xq_get_le32(b + OFF_BLOCKS), xq_get_le32(b + OFF_CHANNELS), xq_get_le32(b + OFF_POLICY_CH),
                   xq_get_le32(b + OFF_VALUE_CH), xq_get_le32(b + OFF_VALUE_HIDDEN),
                   version >= 3 ? xq_get_le32(b + OFF_GPOOL) : 0,
                   version >= 4 ? xq_get_le32(b + OFF_SURVIVAL) : 0,
                   version >= 5 ? xq_get_le32(b + OFF_LINES) : 0,
                   version >= 6 ? xq_get_le32(b + OFF_REPLY) : 0};
  for (int i = 0; i < 9; i++)
    if (f[i] > 1000000)
      return xq_err_set(eb, XQ_ERANGE, "architecture field %d is %u, out of range", i, f[i]);
  meta->arch = (nn_arch_t){(int)f[0], (int)f[1], (int)f[2], (int)f[3], (int)f[4], (int)f[5],
                           (int)f[6], (int)f[7], attacks, (int)f[8]};
  xq_errbuf_t why = {{0}};
  if ((rc = nn_arch_validate(&meta->arch, &why)))
    return xq_err_set(eb, rc, "unsupported architecture: %s", why.msg);
  meta->net_id = xq_get_le64(b + OFF_NET_ID);
  meta->parent_id = xq_get_le64(b + OFF_PARENT_ID);
  meta->step = (int64_t)xq_get_le64(b + OFF_STEP);
  meta->created = (int64_t)xq_get_le64(b + OFF_CREATED);
  meta->nparams = xq_get_le64(b + OFF_NPARAMS);
  meta->nstats = xq_get_le64(b + OFF_NSTATS);
  meta->payload_crc = xq_get_le32(b + OFF_PAYLOAD_CRC);
  if (meta->step < 0) return xq_err_set(eb, XQ_ERANGE, "negative training step %lld", (long long)meta->step);
  return 0;
}

typedef struct {
  char s[32];
} arch_label_t;

static arch_label_t arch_label(const nn_arch_t *a) {
  arch_label_t l;
  nn_arch_name(a, l.s, sizeof l.s);
  return l;
}

/* Checks the payload counts against the architecture and the buffer length. */
static int check_payload(const nn_file_meta_t *meta, const nn_model_t *m, size_t len,
                         const unsigned char *b, xq_errbuf_t *eb) {
  if (meta->nparams != m->nparams || meta->nstats != m->nstats)
    return xq_err_set(eb, XQ_EMISMATCH,
                      "payload size: header says %llu parameters + %llu statistics, "
                      "a %s net has %zu + %zu",
                      (unsigned long long)meta->nparams, (unsigned long long)meta->nstats,
                      arch_label(&m->arch).s, m->nparams, m->nstats);
  size_t want = NN_FILE_HEADER_SIZE + (m->nparams + m->nstats) * sizeof(float);
  if (len < want)
    return xq_err_set(eb, XQ_ETRUNC, "truncated payload: %zu of %zu bytes", len, want);
  if (len > want)
    return xq_err_set(eb, XQ_EFORMAT, "payload size: %zu bytes of trailing garbage", len - want);
  uint32_t crc = xq_crc32(0, b + NN_FILE_HEADER_SIZE, want - NN_FILE_HEADER_SIZE);
  if (crc != meta->payload_crc)
    return xq_err_set(eb, XQ_ECHECKSUM, "payload checksum mismatch (stored %08x, computed %08x)",
                      meta->payload_crc, crc);
  return 0;
}

/* Copies a validated payload into m and checks every value is finite. */
static int take_payload(nn_model_t *m, const unsigned char *b, xq_errbuf_t *eb) {
  const unsigned char *pl = b + NN_FILE_HEADER_SIZE;
  memcpy(m->params, pl, m->nparams * sizeof(float));
  memcpy(m->stats, pl + m->nparams * sizeof(float), m->nstats * sizeof(float));
  for (size_t i = 0; i < m->nparams; i++)
    if (!isfinite(m->params[i]))
      return xq_err_set(eb, XQ_ERANGE, "parameter %zu is not finite", i);
  for (size_t i = 0; i < m->nstats; i++)
    if (!isfinite(m->stats[i]))
      return xq_err_set(eb, XQ_ERANGE, "BN statistic %zu is not finite", i);
  for (int l = 0; l < m->nconvs + 2; l++) {
    const nn_convbn_t *cb = l < m->nconvs ? &m->p.tower[l] : l == m->nconvs ? &m->p.pol : &m->p.val;
    for (int c = 0; c < cb->cout; c++)
      if (cb->var[c] < 0.0f)
        return xq_err_set(eb, XQ_ERANGE, "negative BN running variance in layer %d", l);
  }
  m->fold.valid = false;
  return 0;
}

/* The payload's size as the header's architecture gives it (*want, header included),
 * checked against the header's own counts and against len (not shorter), before anything
 * is allocated: a header may claim a huge architecture. */
static int check_sizes(const nn_file_meta_t *meta, size_t len, size_t *want, xq_errbuf_t *eb) {
  size_t np = 0, ns = 0;
  nn_arch_counts(&meta->arch, &np, &ns);
  if (meta->nparams != np || meta->nstats != ns)
    return xq_err_set(eb, XQ_EMISMATCH,
                      "payload size: header says %llu parameters + %llu statistics, "
                      "a %s net has %zu + %zu",
                      (unsigned long long)meta->nparams, (unsigned long long)meta->nstats,
                      arch_label(&meta->arch).s, np, ns);
  int rc = nn_file_expected_size(meta, want, eb);
  if (rc) return rc;
  if (len < *want) return xq_err_set(eb, XQ_ETRUNC, "truncated payload: %zu of %zu bytes", len, *want);
  return 0;
}

int nn_file_decode(nn_model_t **out, nn_file_meta_t *meta, const unsigned char *buf,
                   size_t len, xq_errbuf_t *eb) {
  nn_file_meta_t local;
  if (!meta) meta = &local;
  *out = NULL;
  int rc = nn_file_decode_header(meta, buf, len, eb);
  if (rc) return rc;
  size_t want = 0;
  if ((rc = check_sizes(meta, len, &want, eb))) return rc;
  nn_model_t *m;
  if ((rc = nn_model_new(&m, &meta->arch, eb))) return rc;
  if ((rc = check_payload(meta, m, len, buf, eb)) || (rc = take_payload(m, buf, eb))) {
    nn_model_free(&m);
    return rc;
  }
  *out = m;
  return 0;
}

int nn_file_expected_size(const nn_file_meta_t *meta, size_t *size, xq_errbuf_t *eb) {
  size_t np, ns;
  nn_arch_counts(&meta->arch, &np, &ns);
  /* Validated architectures are far below this; the check keeps the sum from overflowing. */
  if (np > NN_FILE_MAX_SIZE / sizeof(float) || ns > NN_FILE_MAX_SIZE / sizeof(float) ||
      NN_FILE_HEADER_SIZE + (np + ns) * sizeof(float) > NN_FILE_MAX_SIZE)
    return xq_err_set(eb, XQ_ERANGE, "a %s net would pass the %zu-byte limit",
                      arch_label(&meta->arch).s, (size_t)NN_FILE_MAX_SIZE);
  *size = NN_FILE_HEADER_SIZE + (np + ns) * sizeof(float);
  return 0;
}

int nn_file_verify(nn_file_meta_t *meta, const unsigned char *buf, size_t len, xq_errbuf_t *eb) {
  nn_file_meta_t local;
  if (!meta) meta = &local;
  int rc = nn_file_decode_header(meta, buf, len, eb);
  if (rc) return rc;
  size_t want = 0;
  if ((rc = check_sizes(meta, len, &want, eb))) return rc;
  if (len > want)
    return xq_err_set(eb, XQ_EFORMAT, "payload size: %zu bytes of trailing garbage", len - want);
  uint32_t crc = xq_crc32(0, buf + NN_FILE_HEADER_SIZE, want - NN_FILE_HEADER_SIZE);
  if (crc != meta->payload_crc)
    return xq_err_set(eb, XQ_ECHECKSUM, "payload checksum mismatch (stored %08x, computed %08x)",
                      meta->payload_crc, crc);
  return 0;
}

int nn_file_save(const char *path, const nn_model_t *m, const nn_file_meta_t *meta,
                 xq_errbuf_t *eb) {
  unsigned char *buf;
  size_t len;
  int rc = nn_file_encode(&buf, &len, m, meta, eb);
  if (rc) return rc;
  const void *parts[1] = {buf};
  rc = xq_atomic_write(path, parts, &len, 1, eb);
  free(buf);
  return rc;
}

static int read_whole(const char *path, unsigned char **buf, size_t *len, xq_errbuf_t *eb) {
  return xq_read_file(path, NN_FILE_MAX_SIZE, buf, len, eb);
}

int nn_file_load(const char *path, nn_model_t **out, nn_file_meta_t *meta, xq_errbuf_t *eb) {
  unsigned char *buf;
  size_t len;
  *out = NULL;
  int rc = read_whole(path, &buf, &len, eb);
  if (rc) return rc;
  xq_errbuf_t why = {{0}};
  rc = nn_file_decode(out, meta, buf, len, &why);
  free(buf);
  if (rc) return xq_err_set(eb, rc, "%s: %s", path, why.msg);
  return 0;
}

static int arch_mismatch(const nn_arch_t *want, const nn_arch_t *got, xq_errbuf_t *eb) {
  static const char *names[] = {"blocks", "channels", "policy channels", "value channels",
                                "value hidden", "global pooling every", "survival head",
                                "line convolutions", "attack planes", "opponent-reply head"};
  int w[10] = {want->blocks, want->channels, want->policy_channels, want->value_channels,
               want->value_hidden, want->gpool_every, want->survival, want->lines,
               want->attacks, want->reply};
  int g[10] = {got->blocks, got->channels, got->policy_channels, got->value_channels,
               got->value_hidden, got->gpool_every, got->survival, got->lines, got->attacks,
               got->reply};
  for (int i = 0; i < 10; i++)
    if (w[i] != g[i])
      return xq_err_set(eb, XQ_EMISMATCH, "architecture mismatch: file has %s %d, expected %d",
                        names[i], g[i], w[i]);
  return 0;
}

int nn_file_load_into(const char *path, nn_model_t *m, nn_file_meta_t *meta, xq_errbuf_t *eb) {
  nn_model_t *tmp;
  nn_file_meta_t local;
  if (!meta) meta = &local;
  int rc = nn_file_load(path, &tmp, meta, eb);
  if (rc) return rc;
  xq_errbuf_t why = {{0}};
  if ((rc = arch_mismatch(&m->arch, &tmp->arch, &why))) {
    nn_model_free(&tmp);
    return xq_err_set(eb, rc, "%s: %s", path, why.msg);
  }
  memcpy(m->params, tmp->params, m->nparams * sizeof(float));
  memcpy(m->stats, tmp->stats, m->nstats * sizeof(float));
  m->fold.valid = false;
  nn_model_free(&tmp);
  return 0;
}

int nn_file_info(const char *path, nn_file_meta_t *meta, int check, xq_errbuf_t *eb) {
  unsigned char *buf;
  size_t len;
  int rc = read_whole(path, &buf, &len, eb);
  if (rc) return rc;
  xq_errbuf_t why = {{0}};
  rc = nn_file_decode_header(meta, buf, len, &why);
  if (!rc && check) {
    nn_model_t *m;
    rc = nn_file_decode(&m, meta, buf, len, &why);
    nn_model_free(&m);
  }
  free(buf);
  if (rc) return xq_err_set(eb, rc, "%s: %s", path, why.msg);
  return 0;
}

uint64_t nn_file_new_id(void) {
  static uint64_t counter;
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  uint64_t s = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
  s ^= (uint64_t)getpid() << 40;
  s += ++counter * 0x9E3779B97F4A7C15ull;
  uint64_t id = xq_splitmix64(&s);
  return id ? id : 1;
}
