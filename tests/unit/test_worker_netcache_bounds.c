/*
 * test_worker_netcache_bounds.c: a net fetch (common/nn/netcache.c, as the worker and the
 * trainer use it) believes a NetChunk's announced size only when the header in the first
 * chunk names an architecture of exactly that size (issue 47, item 14): a coordinator
 * announcing 2^31-1 bytes gets an error and no allocation; an honest fetch still works.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nn/nn_file.h"
#include "support/crc32.h"
#include "nn/netcache.h"

#define ID 0x5555aaaa6666bbbbull

static unsigned char *g_net;
static size_t g_len;
static char g_dir[64];

static int setup(void **state) {
  (void)state;
  nn_arch_t arch;
  assert_int_equal(nn_arch_preset("tiny", &arch), 0);
  nn_model_t *m = NULL;
  assert_int_equal(nn_model_new(&m, &arch, NULL), 0);
  nn_model_init(m, 5);
  nn_file_meta_t meta;
  memset(&meta, 0, sizeof meta);
  meta.net_id = ID;
  assert_int_equal(nn_file_encode(&g_net, &g_len, m, &meta, NULL), 0);
  nn_model_free(&m);
  snprintf(g_dir, sizeof g_dir, "/tmp/xqz-netcache-XXXXXX");
  assert_non_null(mkdtemp(g_dir));
  return 0;
}

static int teardown(void **state) {
  (void)state;
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf %s", g_dir);
  if (system(cmd) != 0) fprintf(stderr, "cleanup failed\n");
  free(g_net);
  return 0;
}

/* One chunk of the real file from offset 0, told the file is `total` bytes. */
static int first_chunk(xq_netfetch_t *f, uint64_t total, size_t len, xq_errbuf_t *eb) {
  xq_netfetch_begin(f, ID);
  return xq_netfetch_add(f, g_dir, ID, 0, total, xq_crc32(0, g_net, g_len), g_net, len, eb);
}

static void test_huge_size_refused_before_allocating(void **state) {
  (void)state;
  xq_netfetch_t f;
  xq_errbuf_t eb = {{0}};
  int rc = first_chunk(&f, 0x7fffffffull, 4096, &eb);
  assert_true(rc < 0);
  assert_null(f.buf); /* nothing allocated for the claimed size */
  assert_non_null(strstr(eb.msg, "out of range"));
  xq_netfetch_close(&f);
  /* Within the ceiling but not the header's architecture's size: refused too. */
  rc = first_chunk(&f, g_len + 4096, 4096, &eb);
  assert_true(rc < 0);
  assert_null(f.buf);
  assert_non_null(strstr(eb.msg, "its header's architecture makes"));
  xq_netfetch_close(&f);
  /* A first chunk without the whole header cannot vouch for any size. */
  rc = first_chunk(&f, g_len, 64, &eb);
  assert_true(rc < 0);
  assert_null(f.buf);
  xq_netfetch_close(&f);
  /* Garbage instead of a header. */
  unsigned char junk[256];
  memset(junk, 0x5a, sizeof junk);
  xq_netfetch_begin(&f, ID);
  rc = xq_netfetch_add(&f, g_dir, ID, 0, 1u << 20, 0, junk, sizeof junk, &eb);
  assert_true(rc < 0);
  assert_null(f.buf);
  xq_netfetch_close(&f);
}

static void test_honest_fetch_still_works(void **state) {
  (void)state;
  xq_netfetch_t f;
  xq_errbuf_t eb = {{0}};
  uint32_t crc = xq_crc32(0, g_net, g_len);
  xq_netfetch_begin(&f, ID);
  int rc = 0;
  for (size_t off = 0; off < g_len && rc == 0; off += 4096) {
    size_t n = g_len - off < 4096 ? g_len - off : 4096;
    rc = xq_netfetch_add(&f, g_dir, ID, off, g_len, crc, g_net + off, n, &eb);
  }
  if (rc != 1) fail_msg("fetch: %d %s", rc, eb.msg);
  xq_netfetch_close(&f);
  assert_int_equal(xq_netcache_has(g_dir, ID), 1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_huge_size_refused_before_allocating),
      cmocka_unit_test(test_honest_fetch_still_works),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
