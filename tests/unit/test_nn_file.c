/*
 * test_nn_file.c: the .xqzn weights file and the .xqzc checkpoint: round trips (with and
 * without global pooling, with the survival head), one test per validation error, older format versions loading
 * unchanged, a fuzz loop of mutated and truncated images that must all be rejected
 * without a crash, and a checkpoint that resumes training bit for bit.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <unistd.h>

#include "nn/nn_checkpoint.h"
#include "nn/nn_file.h"
#include "nn/nn_forward.h"
#include "nn/nn_optim.h"
#include "support/atomic_file.h"
#include "support/crc32.h"
#include "nn_test_util.h"

static char tmpdir[256];

static int setup(void **state) {
  (void)state;
  snprintf(tmpdir, sizeof tmpdir, "%s/nn_file_test_XXXXXX", XQZ_BINARY_DIR);
  return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state) {
  (void)state;
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
  return system(cmd) == 0 ? 0 : -1;
}

/* A 1x8 net (gpool_every 0) or a 2x8 net pooling every gpool_every-th block, with
 * nonzero pooling weights so they are seen to travel. */
static nn_model_t *small(uint64_t seed, int gpool_every) {
  nn_arch_t a = nn_arch_make(gpool_every ? 2 : 1, 8);
  a.gpool_every = gpool_every;
  nn_model_t *m;
  assert_int_equal(nn_model_new(&m, &a, NULL), 0);
  nn_model_init(m, seed);
  for (size_t i = 0; i < m->nstats; i++) m->stats[i] = 0.5f + (float)i / 1000.0f;
  xq_rng_t r;
  xq_rng_seed(&r, seed + 100);
  for (int b = 0; b < a.blocks; b++)
    if (m->p.gpool_w[b]) tu_fill(m->p.gpool_w[b], 2 * 8 * 8, &r, 0.3f);
  return m;
}

static nn_model_t *tiny(uint64_t seed) { return small(seed, 0); }

static nn_file_meta_t meta_of(uint64_t id) {
  nn_file_meta_t meta = {0};
  meta.net_id = id;
  meta.parent_id = 77;
  meta.step = 1234;
  meta.created = 1700000000;
  return meta;
}

/* Architecture names: the three presets and "BxC", with every malformed or out-of-range
 * spelling refused. */
static void test_arch_names(void **state) {
  (void)state;
  nn_arch_t a;
  assert_int_equal(nn_arch_preset("tiny", &a), 0);
  assert_int_equal(a.blocks, 2);
  assert_int_equal(a.channels, 16);
  assert_int_equal(nn_arch_preset("large", &a), 0);
  assert_int_equal(a.blocks, 10);
  assert_int_equal(a.channels, 128);
  assert_int_equal(nn_arch_preset("4x16", &a), 0);
  assert_int_equal(a.blocks, 4);
  assert_int_equal(a.channels, 16);
  assert_int_equal(a.value_hidden, 32);
  assert_int_equal(a.gpool_every, 0);
  assert_int_equal(nn_arch_preset("0x8", &a), 0);
  assert_int_equal(a.blocks, 0);
  /* Global pooling: "-g" on a preset or "g" on BxC pools every block, "gK" every K-th. */
  static const struct {
    const char *name;
    int blocks, channels, every, survival, lines, attacks;
    const char *canonical;
    int reply, value_channels; /* value_channels 0: the plain head's one */
  } pooled[] = {{"tiny-g", 2, 16, 1, 0, 0, 0, "2x16g", 0, 0},
                {"default-g", 6, 64, 1, 0, 0, 0, "6x64g", 0, 0},
                {"large-g", 10, 128, 1, 0, 0, 0, "10x128g", 0, 0},
                {"2x16g", 2, 16, 1, 0, 0, 0, "2x16g", 0, 0},
                {"6x64g2", 6, 64, 2, 0, 0, 0, "6x64g2", 0, 0},
                {"4x16g40", 4, 16, 40, 0, 0, 0, "4x16g40", 0, 0},
                {"tiny", 2, 16, 0, 0, 0, 0, "2x16", 0, 0},
                /* The survival head: a final "s", alone or after the pooling suffix. */
                {"tiny-s", 2, 16, 0, 1, 0, 0, "2x16s", 0, 0},
                {"tiny-gs", 2, 16, 1, 1, 0, 0, "2x16gs", 0, 0},
                {"large-s", 10, 128, 0, 1, 0, 0, "10x128s", 0, 0},
                {"2x16s", 2, 16, 0, 1, 0, 0, "2x16s", 0, 0},
                {"2x16gs", 2, 16, 1, 1, 0, 0, "2x16gs", 0, 0},
                {"6x64g2s", 6, 64, 2, 1, 0, 0, "6x64g2s", 0, 0},
                {"0x8s", 0, 8, 0, 1, 0, 0, "0x8s", 0, 0},
                /* Line convolutions: "-l" or "l" in place of the pooling suffix. */
                {"tiny-l", 2, 16, 0, 0, 1, 0, "2x16l", 0, 0},
                {"tiny-ls", 2, 16, 0, 1, 1, 0, "2x16ls", 0, 0},
                {"2x16l", 2, 16, 0, 0, 1, 0, "2x16l", 0, 0},
                {"6x64ls", 6, 64, 0, 1, 1, 0, "6x64ls", 0, 0},
                /* The attack planes: "a" after the pooling or line suffix, before "s". */
                {"tiny-a", 2, 16, 0, 0, 0, 1, "2x16a", 0, 0},
                {"tiny-la", 2, 16, 0, 0, 1, 1, "2x16la", 0, 0},
                {"tiny-gas", 2, 16, 1, 1, 0, 1, "2x16gas", 0, 0},
                {"2x16las", 2, 16, 0, 1, 1, 1, "2x16las", 0, 0},
                {"6x64g2a", 6, 64, 2, 0, 0, 1, "6x64g2a", 0, 0},
                {"0x8a", 0, 8, 0, 0, 0, 1, "0x8a", 0, 0},
                /* The wide value head: "v" after the attack planes, C/4 channels, at
                 * least 2. */
                {"tiny-v", 2, 16, 0, 0, 0, 0, "2x16v", 0, 4},
                {"2x16av", 2, 16, 0, 0, 0, 1, "2x16av", 0, 4},
                {"default-v", 6, 64, 0, 0, 0, 0, "6x64v", 0, 16},
                {"0x8v", 0, 8, 0, 0, 0, 0, "0x8v", 0, 2},
                /* The opponent-reply head: a final "r", after everything else. */
                {"tiny-r", 2, 16, 0, 0, 0, 0, "2x16r", 1, 0},
                {"2x16r", 2, 16, 0, 0, 0, 0, "2x16r", 1, 0},
                {"tiny-sr", 2, 16, 0, 1, 0, 0, "2x16sr", 1, 0},
                {"2x16lasr", 2, 16, 0, 1, 1, 1, "2x16lasr", 1, 0},
                {"0x8r", 0, 8, 0, 0, 0, 0, "0x8r", 1, 0},
                {"large-lavsr", 10, 128, 0, 1, 1, 1, "10x128lavsr", 1, 32}};
  for (size_t i = 0; i < sizeof pooled / sizeof pooled[0]; i++) {
    assert_int_equal(nn_arch_preset(pooled[i].name, &a), 0);
    assert_int_equal(a.blocks, pooled[i].blocks);
    assert_int_equal(a.channels, pooled[i].channels);
    assert_int_equal(a.gpool_every, pooled[i].every);
    assert_int_equal(a.survival, pooled[i].survival);
    assert_int_equal(a.lines, pooled[i].lines);
    assert_int_equal(a.attacks, pooled[i].attacks);
    assert_int_equal(a.reply, pooled[i].reply);
    assert_int_equal(a.value_channels, pooled[i].value_channels ? pooled[i].value_channels : 1);
    assert_int_equal(nn_arch_validate(&a, NULL), 0);
    char name[32];
    nn_arch_name(&a, name, sizeof name);
    assert_string_equal(name, pooled[i].canonical);
    nn_arch_t back;
    assert_int_equal(nn_arch_preset(name, &back), 0);
    assert_memory_equal(&a, &back, sizeof a);
  }
  assert_int_equal(nn_arch_preset("2x16s", &a), 0);
  assert_int_equal(a.reply, 0);
  /* Which blocks pool: every K-th counting from the last. */
  assert_int_equal(nn_arch_preset("6x64g2", &a), 0);
  bool want[6] = {false, true, false, true, false, true};
  for (int b = 0; b < 6; b++) assert_int_equal(nn_arch_pools(&a, b), want[b]);
  assert_int_equal(nn_arch_preset("3x8g5", &a), 0);
  assert_false(nn_arch_pools(&a, 0));
  assert_false(nn_arch_pools(&a, 1));
  assert_true(nn_arch_pools(&a, 2));
  char s[32];
  snprintf(s, sizeof s, "%dx%d", NN_MAX_BLOCKS, NN_MAX_CHANNELS);
  assert_int_equal(nn_arch_preset(s, &a), 0);
  assert_int_equal(a.channels, NN_MAX_CHANNELS);
  static const char *bad[] = {"", "x", "4x", "x16", "4x0", "4X16", "4x16x", "4x16 ", " 4x16",
                              "-1x16", "4x-16", "+4x16", "41x16", "4x513", "99999999999x16",
                              "4x99999999999", "Tiny", "tiny-G", "tiny-g2", "tinyg", "-g",
                              "tiny-g-g", "4x16G", "4x16g0", "4x16g02", "4x16g41", "4x16gg",
                              "4x16g-1", "4x16g 2", "0x8g", "g", "4xg", "tiny-sg", "tinys",
                              "tiny-S", "tiny-s-g", "tiny--s", "4x16sg", "4x16ss", "4x16-s",
                              "4x16S", "4x16s2", "4x16g0s", "s", "-s", "xs", "4x16gl", "4x16lg",
                              "4x16l2", "4x16ll", "4x16L", "tiny-gl", "tiny-lg", "tiny-sl",
                              "tinyl", "0x8l", "4x16sl", "-l", "l", "tiny-", "tiny-sa",
                              "tiny-al", "4x16aa", "4x16sa", "4x16A", "tinya", "4x16ag",
                              "4x16a2", "-a", "a", "tiny-16", "2x16rs", "2x16ra", "2x16rr",
                              "2x16R", "2x16r2", "tinyr", "r", "-r", "tiny-rs", "2x16va",
                              "2x16vv", "2x16sv", "2x16rv", "2x16V", "2x16v4", "tinyv", "v",
                              "-v", "tiny-vl", "4x16vg"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    a.blocks = -7;
    assert_int_equal(nn_arch_preset(bad[i], &a), XQ_EINVAL);
    assert_int_equal(a.blocks, -7); /* untouched */
  }
}

static void test_crc32(void **state) {
  (void)state;
  assert_int_equal(xq_crc32(0, "123456789", 9), 0xCBF43926u); /* the standard check value */
  assert_int_equal(xq_crc32(xq_crc32(0, "1234", 4), "56789", 5), 0xCBF43926u);
}

static void test_round_trip(void **state) {
  (void)state;
  char path[300];
  snprintf(path, sizeof path, "%s/a.xqzn", tmpdir);
  nn_model_t *m = tiny(1), *l = NULL;
  nn_file_meta_t meta = meta_of(0x1122334455667788ull), got;
  meta.campaign_id = 0xc0ffee0123456789ull;
  xq_errbuf_t eb = {{0}};
  assert_int_equal(nn_file_save(path, m, &meta, &eb), 0);
  int rc = nn_file_load(path, &l, &got, &eb);
  if (rc) fail_msg("load: %s", eb.msg);
  /* A plain net is written as version 2, which builds from before pooling read. */
  assert_int_equal(got.format_version, 2);
  assert_int_equal(got.campaign_id, 0xc0ffee0123456789ull);
  assert_int_equal(got.net_id, 0x1122334455667788ull);
  assert_int_equal(got.parent_id, 77);
  assert_int_equal(got.step, 1234);
  assert_int_equal(got.created, 1700000000);
  assert_int_equal(got.input_version, NN_INPUT_VERSION);
  assert_int_equal(got.arch.blocks, 1);
  assert_int_equal(got.arch.channels, 8);
  assert_int_equal(got.arch.value_hidden, 16);
  assert_memory_equal(m->params, l->params, m->nparams * 4);
  assert_memory_equal(m->stats, l->stats, m->nstats * 4);
  /* load_into: same architecture works, a different one is refused by name */
  assert_int_equal(nn_file_load_into(path, l, NULL, &eb), 0);
  nn_arch_t other = nn_arch_make(2, 8);
  nn_model_t *o;
  assert_int_equal(nn_model_new(&o, &other, NULL), 0);
  assert_int_equal(nn_file_load_into(path, o, NULL, &eb), XQ_EMISMATCH);
  assert_non_null(strstr(eb.msg, "blocks"));
  assert_int_equal(nn_file_info(path, &got, 1, &eb), 0);
  /* no temp file is left behind */
  char tmp[320];
  snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
  assert_int_not_equal(access(tmp, F_OK), 0);
  nn_model_free(&m);
  nn_model_free(&l);
  nn_model_free(&o);
}

/* Decodes buf and expects error code `want` with `needle` in the message. */
static void expect_reject(const unsigned char *buf, size_t len, int want, const char *needle) {
  nn_model_t *m = (nn_model_t *)1;
  xq_errbuf_t eb = {{0}};
  int rc = nn_file_decode(&m, NULL, buf, len, &eb);
  if (rc != want || !strstr(eb.msg, needle))
    fail_msg("expected %d '%s', got %d '%s'", want, needle, rc, eb.msg);
  assert_null(m);
}

/* The header CRC of a version-2, 3 or 4 image: bytes 0..99 and 104..127. */
static void refresh_header_crc(unsigned char *b) {
  uint32_t c = xq_crc32(xq_crc32(0, b, 100), b + 104, 24);
  for (int i = 0; i < 4; i++) b[100 + i] = (unsigned char)(c >> (8 * i));
}

/* Rewrites an image of a net without the survival head as version 3 wrote it: version 3,
 * no survival field (the bytes from 116 on reserved, zero), the same header CRC span. */
static void make_version3(unsigned char *b) {
  b[8] = 3;
  memset(b + 116, 0, 12);
  refresh_header_crc(b);
}

/* Rewrites an image of a net without pooling as version 2 wrote it: version 2, no global
 * pooling field (the bytes from 112 on reserved, zero), the same header CRC span. */
static void make_version2(unsigned char *b) {
  b[8] = 2;
  memset(b + 112, 0, 16);
  refresh_header_crc(b);
}

/* Rewrites an image of a net without pooling as version 1 wrote it: version 1, no
 * campaign id (the bytes from 104 on reserved, zero), the header CRC over 0..99 only. */
static void make_version1(unsigned char *b) {
  b[8] = 1;
  memset(b + 104, 0, 24);
  uint32_t c = xq_crc32(0, b, 100);
  for (int i = 0; i < 4; i++) b[100 + i] = (unsigned char)(c >> (8 * i));
}

/* Rewrites the checkpoint at path as an older build wrote it: its embedded net image
 * through make (make_version1 or make_version2), then the body and header CRCs. */
static void downgrade_checkpoint(const char *path, void (*make)(unsigned char *)) {
  unsigned char *img;
  size_t ilen;
  assert_int_equal(xq_read_file(path, 1 << 30, &img, &ilen, NULL), 0);
  make(img + NN_CKPT_HEADER_SIZE);
  uint32_t body = xq_crc32(0, img + NN_CKPT_HEADER_SIZE, ilen - NN_CKPT_HEADER_SIZE);
  for (int i = 0; i < 4; i++) img[48 + i] = (unsigned char)(body >> (8 * i));
  uint32_t hc = xq_crc32(0, img, 52);
  for (int i = 0; i < 4; i++) img[52 + i] = (unsigned char)(hc >> (8 * i));
  const void *parts[1] = {img};
  assert_int_equal(xq_atomic_write(path, parts, &ilen, 1, NULL), 0);
  free(img);
}

/* A checkpoint of m whose net image make() rewrote as format `version` wrote it loads,
 * with that version, the optimiser's step and the same parameters. */
static void check_old_checkpoint(const nn_model_t *m, const nn_file_meta_t *meta,
                                 void (*make)(unsigned char *), int version, const char *name) {
  char path[300];
  snprintf(path, sizeof path, "%s/%s", tmpdir, name);
  nn_sgd_t o = {.momentum = 0.9f}, oc = {0};
  nn_model_t *l = NULL;
  nn_file_meta_t got;
  xq_errbuf_t eb = {{0}};
  assert_int_equal(nn_sgd_init(&o, m, NULL), 0);
  o.step = 50 + version;
  assert_int_equal(nn_checkpoint_save(path, m, meta, &o, NULL, &eb), 0);
  downgrade_checkpoint(path, make);
  if (nn_checkpoint_load(path, &l, &got, &oc, NULL, &eb))
    fail_msg("checkpoint with a version %d image: %s", version, eb.msg);
  assert_int_equal(got.format_version, version);
  assert_int_equal(oc.step, 50 + version);
  assert_memory_equal(m->params, l->params, m->nparams * 4);
  nn_sgd_close(&o);
  nn_sgd_close(&oc);
  nn_model_free(&l);
}

/* A pooling net keeps its architecture and its pooling weights through the file, and
 * is refused where a net of the same BxC without pooling is expected. */
static void test_round_trip_pooled(void **state) {
  (void)state;
  char path[300];
  snprintf(path, sizeof path, "%s/g.xqzn", tmpdir);
  nn_model_t *m = small(1, 1), *l = NULL, *plain = NULL;
  assert_non_null(m->p.gpool_w[0]);
  assert_non_null(m->p.gpool_w[1]);
  nn_file_meta_t meta = meta_of(3), got;
  xq_errbuf_t eb = {{0}};
  assert_int_equal(nn_file_save(path, m, &meta, &eb), 0);
  if (nn_file_load(path, &l, &got, &eb)) fail_msg("load: %s", eb.msg);
  assert_int_equal(got.format_version, 3); /* pooling, no survival head */
  assert_int_equal(got.arch.gpool_every, 1);
  assert_memory_equal(&got.arch, &m->arch, sizeof got.arch);
  assert_int_equal(l->nparams, m->nparams);
  assert_memory_equal(m->params, l->params, m->nparams * 4);
  assert_memory_equal(m->p.gpool_w[1], l->p.gpool_w[1], 2 * 8 * 8 * 4);
  nn_arch_t a = nn_arch_make(2, 8);
  assert_int_equal(nn_model_new(&plain, &a, NULL), 0);
  assert_int_equal(nn_file_load_into(path, plain, NULL, &eb), XQ_EMISMATCH);
  assert_non_null(strstr(eb.msg, "global pooling every 1, expected 0"));
  /* The pooling field is range-checked like every architecture field. */
  unsigned char *buf;
  size_t len;
  assert_int_equal(nn_file_encode(&buf, &len, m, &meta, NULL), 0);
  buf[112] = 41;
  refresh_header_crc(buf);
  expect_reject(buf, len, XQ_ERANGE, "global pooling every 41");
  buf[112] = 2; /* a valid value, but 2x8g2 has fewer parameters than the payload */
  refresh_header_crc(buf);
  expect_reject(buf, len, XQ_EMISMATCH, "a 2x8g2 net has");
  free(buf);
  nn_model_free(&m);
  nn_model_free(&l);
  nn_model_free(&plain);
}

/* buf (a plain net's image) with format version `version` (0: as written) and header
 * byte `off` set to `val`, its header CRC refreshed, is refused with want and needle. */
static void expect_field_reject(const unsigned char *buf, size_t len, int version, int off,
                                unsigned char val, int want, const char *needle) {
  unsigned char *b = malloc(len);
  memcpy(b, buf, len);
  if (version) b[8] = (unsigned char)version;
  b[off] = val;
  refresh_header_crc(b);
  expect_reject(b, len, want, needle);
  free(b);
}

static void test_each_error(void **state) {
  (void)state;
  nn_model_t *m = tiny(2);
  nn_file_meta_t meta = meta_of(5);
  unsigned char *buf, *b;
  size_t len;
  assert_int_equal(nn_file_encode(&buf, &len, m, &meta, NULL), 0);
  b = malloc(len);
#define RESET() memcpy(b, buf, len)
  RESET();
  expect_reject(b, 0, XQ_ETRUNC, "truncated");
  expect_reject(b, 100, XQ_ETRUNC, "truncated header");
  expect_reject(b, len - 1, XQ_ETRUNC, "truncated payload");
  b[0] = 'Y';
  expect_reject(b, len, XQ_EFORMAT, "bad magic");
  RESET();
  b[8] = NN_FILE_VERSION + 1;
  expect_reject(b, len, XQ_EVERSION, "format version 7, this build reads versions 1 to 6: the"
                " file was written by a newer xqzero, upgrade this one");
  RESET();
  b[8] = 0;
  expect_reject(b, len, XQ_EVERSION, "format version 0");
  RESET();
  b[106] ^= 1; /* campaign id: covered by the header CRC since version 2 */
  expect_reject(b, len, XQ_ECHECKSUM, "header checksum");
  /* a plain net is written as version 2: the reply field's bytes are reserved */
  expect_field_reject(buf, len, 0, 124, 1, XQ_EFORMAT, "reserved header byte 124");
  /* and in version 5 */
  expect_field_reject(buf, len, 5, 124, 1, XQ_EFORMAT, "reserved header byte 124");
  /* the reply field is 0 or 1 */
  expect_field_reject(buf, len, 6, 124, 2, XQ_ERANGE, "opponent-reply head 2");
  /* a net without the head claiming one: its payload is short */
  expect_field_reject(buf, len, 6, 124, 1, XQ_EMISMATCH, "a 1x8r net has");
  /* a plain net is written as version 2: the lines field's bytes are reserved */
  expect_field_reject(buf, len, 0, 120, 1, XQ_EFORMAT, "reserved header byte 120");
  /* and in version 4 */
  expect_field_reject(buf, len, 4, 120, 1, XQ_EFORMAT, "reserved header byte 120");
  /* the lines field is 0 or 1 */
  expect_field_reject(buf, len, 5, 120, 2, XQ_ERANGE, "line convolutions 2");
  /* a net without lines claiming them: its payload is short */
  expect_field_reject(buf, len, 5, 120, 1, XQ_EMISMATCH, "a 1x8l net has");
  RESET();
  b[8] = 5;
  b[112] = 1; /* lines and global pooling together */
  b[120] = 1;
  refresh_header_crc(b);
  expect_reject(b, len, XQ_ERANGE, "line convolutions and global pooling together");
  RESET();
  make_version1(b);
  b[108] = 1; /* version 1: the campaign id's bytes were reserved */
  expect_reject(b, len, XQ_EFORMAT, "reserved header byte 108");
  RESET();
  make_version2(b);
  b[112] = 1; /* version 2: the global pooling field's bytes were reserved */
  refresh_header_crc(b);
  expect_reject(b, len, XQ_EFORMAT, "reserved header byte 112");
  RESET();
  make_version3(b);
  b[116] = 1; /* version 3: the survival field's bytes were reserved */
  refresh_header_crc(b);
  expect_reject(b, len, XQ_EFORMAT, "reserved header byte 116");
  /* a plain net is written as version 2; the survival field is version 4's, 0 or 1 */
  expect_field_reject(buf, len, 4, 116, 2, XQ_ERANGE, "survival head 2");
  /* a net without the head claiming one: its payload is short */
  expect_field_reject(buf, len, 4, 116, 1, XQ_EMISMATCH, "a 1x8s net has");
  RESET();
  b[50] ^= 1; /* net id, header CRC not updated */
  expect_reject(b, len, XQ_ECHECKSUM, "header checksum");
  RESET();
  b[NN_FILE_HEADER_SIZE + 17] ^= 0x40;
  expect_reject(b, len, XQ_ECHECKSUM, "payload checksum");
  RESET();
  b[24] = 3; /* blocks 1 -> 3: the payload no longer fits the architecture */
  refresh_header_crc(b);
  expect_reject(b, len, XQ_EMISMATCH, "payload size");
  RESET();
  b[24] = 200;
  refresh_header_crc(b);
  expect_reject(b, len, XQ_ERANGE, "blocks 200");
  RESET();
  b[16] = 9; /* input-plane version */
  refresh_header_crc(b);
  expect_reject(b, len, XQ_EMISMATCH, "input-plane version");
  RESET();
  b[32] = 3; /* policy channels */
  refresh_header_crc(b);
  expect_reject(b, len, XQ_ERANGE, "policy head channels");
  unsigned char *big = calloc(1, len + 4);
  memcpy(big, buf, len);
  expect_reject(big, len + 4, XQ_EFORMAT, "trailing");
  free(big);
  xq_errbuf_t eb = {{0}};
  nn_model_t *l;
  char path[300];
  snprintf(path, sizeof path, "%s/missing.xqzn", tmpdir);
  assert_int_equal(nn_file_load(path, &l, NULL, &eb), XQ_EIO);
  assert_non_null(strstr(eb.msg, "missing.xqzn"));
  free(b);
  free(buf);
  nn_model_free(&m);
}

/* A version-1 file (written before campaign ids) still loads, with campaign id 0, and so
 * does a checkpoint whose model image is version 1: existing campaigns keep resuming. */
static void test_version1_loads(void **state) {
  (void)state;
  nn_model_t *m = tiny(3), *l = NULL;
  nn_file_meta_t meta = meta_of(9), got;
  meta.campaign_id = 0xabcdef;
  unsigned char *buf;
  size_t len;
  xq_errbuf_t eb = {{0}};
  assert_int_equal(nn_file_encode(&buf, &len, m, &meta, NULL), 0);
  make_version1(buf);
  int rc = nn_file_decode(&l, &got, buf, len, &eb);
  if (rc) fail_msg("version 1 image: %s", eb.msg);
  assert_int_equal(got.format_version, 1);
  assert_int_equal(got.campaign_id, 0);
  assert_int_equal(got.net_id, 9);
  assert_memory_equal(m->params, l->params, m->nparams * 4);
  nn_model_free(&l);
  /* A checkpoint around a version-1 image: header and body CRCs as version 1 wrote them. */
  char path[300];
  snprintf(path, sizeof path, "%s/v1.xqzc", tmpdir);
  nn_sgd_t o = {.momentum = 0.9f}, oc = {0};
  assert_int_equal(nn_sgd_init(&o, m, NULL), 0);
  o.step = 1234;
  assert_int_equal(nn_checkpoint_save(path, m, &meta, &o, NULL, &eb), 0);
  downgrade_checkpoint(path, make_version1);
  rc = nn_checkpoint_load(path, &l, &got, &oc, NULL, &eb);
  if (rc) fail_msg("checkpoint with a version 1 image: %s", eb.msg);
  assert_int_equal(got.campaign_id, 0);
  assert_int_equal(oc.step, 1234);
  /* A checkpoint written now records the campaign id. */
  assert_int_equal(nn_checkpoint_save(path, m, &meta, &o, NULL, &eb), 0);
  nn_model_free(&l);
  nn_sgd_close(&oc);
  assert_int_equal(nn_checkpoint_load(path, &l, &got, &oc, NULL, &eb), 0);
  assert_int_equal(got.campaign_id, 0xabcdef);
  free(buf);
  nn_sgd_close(&o);
  nn_sgd_close(&oc);
  nn_model_free(&l);
  nn_model_free(&m);
}

/* A version-2 file (written before global pooling) loads as a net without pooling, with
 * the same parameters, and so does a checkpoint around one: every existing net and
 * checkpoint keeps working. */
static void test_version2_loads(void **state) {
  (void)state;
  nn_model_t *m = tiny(5), *l = NULL;
  nn_file_meta_t meta = meta_of(11), got;
  meta.campaign_id = 0x5eed;
  unsigned char *buf;
  size_t len;
  xq_errbuf_t eb = {{0}};
  assert_int_equal(nn_file_encode(&buf, &len, m, &meta, NULL), 0);
  make_version2(buf);
  int rc = nn_file_decode(&l, &got, buf, len, &eb);
  if (rc) fail_msg("version 2 image: %s", eb.msg);
  assert_int_equal(got.format_version, 2);
  assert_int_equal(got.arch.gpool_every, 0);
  assert_int_equal(got.campaign_id, 0x5eed);
  assert_memory_equal(&got.arch, &m->arch, sizeof got.arch);
  assert_memory_equal(m->params, l->params, m->nparams * 4);
  assert_memory_equal(m->stats, l->stats, m->nstats * 4);
  nn_model_free(&l);
  check_old_checkpoint(m, &meta, make_version2, 2, "v2.xqzc");
  free(buf);
  nn_model_free(&m);
}

/* A version-3 file (written before the survival head) loads as a net without the head,
 * with the same parameters, and so does a checkpoint around one. */
static void test_version3_loads(void **state) {
  (void)state;
  nn_model_t *m = small(6, 1), *l = NULL;
  nn_file_meta_t meta = meta_of(12), got;
  meta.campaign_id = 0xc0ffee;
  unsigned char *buf;
  size_t len;
  xq_errbuf_t eb = {{0}};
  assert_int_equal(nn_file_encode(&buf, &len, m, &meta, NULL), 0);
  make_version3(buf);
  int rc = nn_file_decode(&l, &got, buf, len, &eb);
  if (rc) fail_msg("version 3 image: %s", eb.msg);
  assert_int_equal(got.format_version, 3);
  assert_int_equal(got.arch.survival, 0);
  assert_int_equal(got.arch.gpool_every, 1);
  assert_int_equal(got.campaign_id, 0xc0ffee);
  assert_memory_equal(&got.arch, &m->arch, sizeof got.arch);
  assert_memory_equal(m->params, l->params, m->nparams * 4);
  assert_memory_equal(m->stats, l->stats, m->nstats * 4);
  assert_null(l->p.surv_w);
  nn_model_free(&l);
  check_old_checkpoint(m, &meta, make_version3, 3, "v3.xqzc");
  free(buf);
  nn_model_free(&m);
}

/* Saves m to path and loads it back: written as format version `version`, with the same
 * architecture and parameters; loading it into `plain` (a net without m's option) is
 * refused with `refusal` in the reason. Returns the loaded net (the caller frees it). */
static nn_model_t *round_trip_refused(const char *path, const nn_model_t *m, uint32_t version,
                                      nn_model_t *plain, const char *refusal) {
  nn_model_t *l = NULL;
  nn_file_meta_t meta = meta_of(13), got;
  xq_errbuf_t eb = {{0}};
  assert_int_equal(nn_file_save(path, m, &meta, &eb), 0);
  if (nn_file_load(path, &l, &got, &eb)) fail_msg("load: %s", eb.msg);
  assert_int_equal(got.format_version, version);
  assert_memory_equal(&got.arch, &m->arch, sizeof got.arch);
  assert_memory_equal(m->params, l->params, m->nparams * 4);
  assert_int_equal(nn_file_load_into(path, plain, NULL, &eb), XQ_EMISMATCH);
  if (!strstr(eb.msg, refusal)) fail_msg("refusal '%s' does not say '%s'", eb.msg, refusal);
  return l;
}

/* A net of `size` from seed 4, and path = the temporary directory's `file`. */
static nn_model_t *variant_net(const char *size, char *path, size_t n, const char *file) {
  snprintf(path, n, "%s/%s", tmpdir, file);
  nn_arch_t a;
  assert_int_equal(nn_arch_preset(size, &a), 0);
  nn_model_t *m = NULL;
  assert_int_equal(nn_model_new(&m, &a, NULL), 0);
  nn_model_init(m, 4);
  return m;
}

/* A net with the survival head keeps it through the file (its two tensors last in the
 * table, so the rest of the payload is laid out as without it), and is refused where a
 * net without the head is expected, naming the field. */
static void test_round_trip_survival(void **state) {
  (void)state;
  char path[300];
  nn_model_t *m = variant_net("1x8s", path, sizeof path, "s.xqzn"), *l = NULL, *plain = tiny(4);
  for (size_t i = 0; i < m->nstats; i++) m->stats[i] = plain->stats[i];
  assert_int_equal(m->nparams, plain->nparams + 8 + 1);
  assert_string_equal(m->table[m->ntensors - 2].name, "survival.w");
  assert_string_equal(m->table[m->ntensors - 1].name, "survival.b");
  assert_true(m->table[m->ntensors - 2].decay);
  assert_false(m->table[m->ntensors - 1].decay);
  /* The same seed draws the same weights everywhere but the head. */
  assert_memory_equal(m->params, plain->params, plain->nparams * 4);
  m->p.surv_b[0] = 0.25f;
  l = round_trip_refused(path, m, 4, plain, "survival head 1, expected 0");
  assert_int_equal(l->arch.survival, 1);
  assert_true(l->p.surv_b[0] == 0.25f);
  nn_model_free(&m);
  nn_model_free(&l);
  nn_model_free(&plain);
}

/* A net with the opponent-reply head keeps it through the file (version 6, its one tensor
 * last, after the survival head's), and is refused where a net without it is expected. */
static void test_round_trip_reply(void **state) {
  (void)state;
  char path[300];
  nn_model_t *m = variant_net("1x8sr", path, sizeof path, "r.xqzn"), *l = NULL, *surv = NULL;
  surv = variant_net("1x8s", path, sizeof path, "r.xqzn");
  assert_int_equal(m->nparams, surv->nparams + 2 * 8);
  assert_string_equal(m->table[m->ntensors - 2].name, "survival.b");
  assert_string_equal(m->table[m->ntensors - 1].name, "reply.w");
  assert_int_equal(m->table[m->ntensors - 1].shape[0], 2);
  assert_true(m->table[m->ntensors - 1].decay);
  /* The same seed draws the same weights everywhere but the head. */
  assert_memory_equal(m->params, surv->params, surv->nparams * 4);
  m->p.reply_w[15] = -0.5f;
  l = round_trip_refused(path, m, 6, surv, "opponent-reply head 1, expected 0");
  assert_int_equal(l->arch.reply, 1);
  assert_true(l->p.reply_w[15] == -0.5f);
  nn_model_free(&m);
  nn_model_free(&l);
  nn_model_free(&surv);
}

/* A net with line convolutions keeps them through the file (version 5), with its rank
 * and file weights after each block's first conv, and is refused where a plain net of the
 * same BxC is expected, naming the field. */
static void test_round_trip_lines(void **state) {
  (void)state;
  char path[300];
  nn_model_t *m = variant_net("2x8l", path, sizeof path, "l.xqzn"), *l = NULL, *plain = NULL;
  nn_arch_t pa = nn_arch_make(2, 8);
  assert_int_equal(nn_model_new(&plain, &pa, NULL), 0);
  assert_int_equal(m->nparams, plain->nparams + 2 * 8 * 8 * NN_LINE_TAPS);
  /* stem (3 tensors), block0.conv1 (3), then the block's line weights */
  assert_string_equal(m->table[6].name, "block0.rank.w");
  assert_string_equal(m->table[7].name, "block0.file.w");
  assert_string_equal(m->table[8].name, "block0.conv2.w");
  assert_true(m->table[6].decay);
  assert_int_equal(m->table[7].shape[2], 10);
  xq_rng_t r;
  xq_rng_seed(&r, 40);
  tu_fill_block_biases(m, &r, 0.3f);
  l = round_trip_refused(path, m, 5, plain, "line convolutions 1, expected 0");
  assert_int_equal(l->arch.lines, 1);
  assert_memory_equal(m->p.file_w[1], l->p.file_w[1], 8 * 8 * 10 * 4);
  nn_model_free(&m);
  nn_model_free(&l);
  nn_model_free(&plain);
}

/* A net with the attack planes records input version 2 and 20 planes, keeps the flag
 * through the file, is refused where a net without them is expected (naming the field),
 * and a file whose input version and plane count disagree is refused. */
static void test_round_trip_attacks(void **state) {
  (void)state;
  char path[300];
  nn_model_t *m = variant_net("1x8a", path, sizeof path, "a.xqzn"), *l = NULL, *plain = tiny(4);
  assert_int_equal(m->nparams, plain->nparams + 8 * NN_ATTACK_PLANES * 9);
  assert_int_equal(m->table[0].shape[1], NN_INPUT_PLANES_MAX); /* the stem's input channels */
  l = round_trip_refused(path, m, 2, plain, "attack planes 1, expected 0");
  assert_int_equal(l->arch.attacks, 1);
  nn_file_meta_t got;
  xq_errbuf_t eb = {{0}};
  nn_model_free(&l);
  assert_int_equal(nn_file_load(path, &l, &got, &eb), 0);
  assert_int_equal(got.input_version, NN_INPUT_VERSION_ATTACKS);
  /* Input version 2 with 18 planes, or version 1 with 20: refused before the payload. */
  nn_file_meta_t meta = meta_of(5);
  size_t len;
  unsigned char *b;
  assert_int_equal(nn_file_encode(&b, &len, m, &meta, NULL), 0);
  assert_int_equal(b[16], NN_INPUT_VERSION_ATTACKS);
  assert_int_equal(b[20], NN_INPUT_PLANES_MAX);
  b[20] = NN_INPUT_PLANES;
  refresh_header_crc(b);
  expect_reject(b, len, XQ_EMISMATCH, "input plane count");
  b[16] = NN_INPUT_VERSION;
  b[20] = NN_INPUT_PLANES_MAX;
  refresh_header_crc(b);
  expect_reject(b, len, XQ_EMISMATCH, "input plane count");
  free(b);
  nn_model_free(&m);
  nn_model_free(&l);
  nn_model_free(&plain);
}

/* A net with the wide value head (1x8v: 2 value channels) keeps it through the file, in
 * the value-channel field every format version has, and is refused where the one-channel
 * head is expected; the field takes 1 or the wide head's count, nothing else. */
static void test_round_trip_wide_value(void **state) {
  (void)state;
  char path[300];
  nn_model_t *m = variant_net("1x8v", path, sizeof path, "v.xqzn"), *l = NULL, *plain = tiny(4);
  assert_int_equal(m->arch.value_channels, 2);
  /* value.conv gains C weights and 2 BN parameters, value.fc1 one row of 90 per hidden unit */
  assert_int_equal(m->nparams, plain->nparams + 8 + 2 + 90 * 16);
  l = round_trip_refused(path, m, 2, plain, "file has value channels 2, expected 1");
  nn_file_meta_t meta = meta_of(5);
  size_t len;
  unsigned char *b;
  assert_int_equal(nn_file_encode(&b, &len, m, &meta, NULL), 0);
  assert_int_equal(b[36], 2);
  b[36] = 3;
  refresh_header_crc(b);
  expect_reject(b, len, XQ_ERANGE, "value head channels 3, expected 1 or 2");
  b[36] = 1; /* a valid count, but the plain head has fewer parameters than the payload */
  refresh_header_crc(b);
  expect_reject(b, len, XQ_EMISMATCH, "a 1x8 net has");
  free(b);
  nn_model_free(&m);
  nn_model_free(&l);
  nn_model_free(&plain);
}

static void test_fuzz_loader(void **state) {
  (void)state;
  nn_model_t *m = tiny(3);
  nn_file_meta_t meta = meta_of(6);
  unsigned char *buf;
  size_t len;
  assert_int_equal(nn_file_encode(&buf, &len, m, &meta, NULL), 0);
  unsigned char *b = malloc(len + 64);
  xq_rng_t r;
  xq_rng_seed(&r, 99);
  int rejected = 0, trials = 3000;
  for (int t = 0; t < trials; t++) {
    memcpy(b, buf, len);
    size_t n = len;
    size_t at = 0;
    int kind = (int)xq_rng_below(&r, 4);
    if (kind == 0) {
      n = (size_t)xq_rng_below(&r, len); /* truncation */
    } else if (kind == 1) { /* flip a few bits anywhere, often in the header */
      int flips = 1 + (int)xq_rng_below(&r, 4);
      for (int i = 0; i < flips; i++) {
        size_t pos = xq_rng_below(&r, 4) ? xq_rng_below(&r, NN_FILE_HEADER_SIZE) : xq_rng_below(&r, len);
        b[pos] ^= (unsigned char)(1u << xq_rng_below(&r, 8));
      }
    } else if (kind == 2) { /* header field replaced by random bytes, header CRC fixed up */
      at = xq_rng_below(&r, 100);
      b[at] = (unsigned char)xq_rng_next(&r);
      refresh_header_crc(b);
      if (at >= 48 && at < 80) continue; /* ids, step, time: any value is valid */
    } else { /* garbage appended */
      n = len + 1 + xq_rng_below(&r, 63);
      for (size_t i = len; i < n; i++) b[i] = (unsigned char)xq_rng_next(&r);
    }
    nn_model_t *l = NULL;
    xq_errbuf_t eb = {{0}};
    int rc = nn_file_decode(&l, NULL, b, n, &eb);
    if (rc == 0 && kind == 2 && at == 8 && b[8] >= NN_FILE_VERSION_MIN && b[8] <= NN_FILE_VERSION) {
      /* An older version number: this net (no campaign id, pooling or survival head) has
       * zeros in every field the older version lacks, so it reads as the same net. */
      assert_memory_equal(l->params, m->params, m->nparams * 4);
      nn_model_free(&l);
      continue;
    }
    if (rc == 0) {
      /* A mutation the format cannot see must not have changed the contents. */
      if (memcmp(b, buf, len) != 0 || n != len) fail_msg("mutation %d accepted (kind %d)", t, kind);
      nn_model_free(&l);
    } else {
      assert_null(l);
      assert_true(rc < 0 && eb.msg[0] != 0);
      rejected++;
    }
  }
  assert_true(rejected > trials / 2);
  free(b);
  free(buf);
  nn_model_free(&m);
}

static void run_checkpoint_resume(int gpool_every) {
  char path[300];
  snprintf(path, sizeof path, "%s/c.xqzc", tmpdir);
  xq_rng_t r;
  xq_rng_seed(&r, 5);
  tu_batch_t b1, b2;
  tu_batch_make(&b1, 4, 20, 3, &r);
  tu_batch_make(&b2, 4, 20, 3, &r);
  nn_loss_cfg_t cfg = {1, 1, 1e-4f, 1, 1, false};
  nn_model_t *a = small(4, gpool_every), *c = NULL;
  nn_plan_t *p;
  assert_int_equal(nn_plan_new(&p, &a->arch, 4, true, NULL), 0);
  nn_sgd_t oa = {.momentum = 0.9f, .nesterov = true}, oc = {0};
  assert_int_equal(nn_lr_parse(&oa.schedule, "0:0.01,2:0.005", NULL), 0);
  assert_int_equal(nn_sgd_init(&oa, a, NULL), 0);
  nn_loss_t loss;
  nn_train_step(a, p, &oa, &b1.b, &cfg, &loss);
  nn_train_step(a, p, &oa, &b2.b, &cfg, &loss);
  nn_file_meta_t meta = meta_of(8);
  xq_errbuf_t eb = {{0}};
  assert_int_equal(nn_checkpoint_save(path, a, &meta, &oa, NULL, &eb), 0);
  nn_file_meta_t got;
  int rc = nn_checkpoint_load(path, &c, &got, &oc, NULL, &eb);
  if (rc) fail_msg("checkpoint load: %s", eb.msg);
  assert_int_equal(oc.step, 2);
  assert_int_equal(got.step, 2);
  assert_true(oc.nesterov);
  assert_true(oc.momentum == 0.9f);
  oc.schedule = oa.schedule;
  /* Two more steps on both: identical bits. */
  for (int i = 0; i < 2; i++) {
    nn_train_step(a, p, &oa, i ? &b1.b : &b2.b, &cfg, &loss);
    nn_train_step(c, p, &oc, i ? &b1.b : &b2.b, &cfg, &loss);
  }
  assert_memory_equal(a->params, c->params, a->nparams * 4);
  assert_memory_equal(a->stats, c->stats, a->nstats * 4);
  assert_memory_equal(oa.velocity, oc.velocity, a->nparams * 4);
  /* A corrupted checkpoint is rejected with a reason. */
  unsigned char *img;
  size_t len;
  assert_int_equal(xq_read_file(path, 1 << 30, &img, &len, NULL), 0);
  img[len - 3] ^= 1;
  const void *parts[1] = {img};
  assert_int_equal(xq_atomic_write(path, parts, &len, 1, NULL), 0);
  nn_model_t *d;
  nn_sgd_t od = {0};
  assert_int_equal(nn_checkpoint_load(path, &d, NULL, &od, NULL, &eb), XQ_ECHECKSUM);
  assert_null(d);
  assert_int_equal(nn_checkpoint_load(path, &d, NULL, &od, NULL, &eb), XQ_ECHECKSUM);
  free(img);
  nn_sgd_close(&oa);
  nn_sgd_close(&oc);
  tu_batch_free(&b1);
  tu_batch_free(&b2);
  nn_plan_free(&p);
  nn_model_free(&a);
  nn_model_free(&c);
}

static void test_checkpoint_resume(void **state) {
  (void)state;
  run_checkpoint_resume(0);
}

/* The same with global pooling in both blocks (its weights and their momentum). */
static void test_checkpoint_resume_pooled(void **state) {
  (void)state;
  run_checkpoint_resume(1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_arch_names),
      cmocka_unit_test(test_crc32),
      cmocka_unit_test(test_round_trip),
      cmocka_unit_test(test_round_trip_pooled),
      cmocka_unit_test(test_each_error),
      cmocka_unit_test(test_version1_loads),
      cmocka_unit_test(test_version2_loads),
      cmocka_unit_test(test_version3_loads),
      cmocka_unit_test(test_round_trip_survival),
      cmocka_unit_test(test_round_trip_reply),
      cmocka_unit_test(test_round_trip_lines),
      cmocka_unit_test(test_round_trip_attacks),
      cmocka_unit_test(test_round_trip_wide_value),
      cmocka_unit_test(test_fuzz_loader),
      cmocka_unit_test(test_checkpoint_resume),
      cmocka_unit_test(test_checkpoint_resume_pooled),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
