/*
 * test_worker_netcache_prune.c: bounded disk for nets (issue 49). The worker's net cache
 * (xq_netcache_prune, common/nn/netcache.h) keeps the nets named in use and the newest
 * few whatever its cap, deletes the least recently used others down to the cap, and leaves
 * other files alone; xq_netcache_touch makes a net recently used. The coordinator's
 * nets/rejected/ (xqc_net_files_prune_rejected, coordinator/storage/net_files.h) keeps
 * its newest keep_rejected_nets files.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "storage/net_files.h"
#include "nn/netcache.h"

#define MB (1u << 20)

/* Writes a file of `bytes` bytes named for id in dir, last used `age_s` seconds ago. */
static void put(const char *dir, uint64_t id, size_t bytes, int age_s) {
  char p[1024];
  xq_netcache_path(dir, id, p, sizeof p);
  FILE *f = fopen(p, "w");
  assert_non_null(f);
  assert_int_equal(ftruncate(fileno(f), (off_t)bytes), 0);
  fclose(f);
  struct timespec ts[2];
  clock_gettime(CLOCK_REALTIME, &ts[0]);
  ts[0].tv_sec -= age_s;
  ts[1] = ts[0];
  assert_int_equal(utimensat(AT_FDCWD, p, ts, 0), 0);
}

static int has(const char *dir, uint64_t id) {
  char p[1024];
  xq_netcache_path(dir, id, p, sizeof p);
  return access(p, F_OK) == 0;
}

static void test_cache_cap(void **state) {
  (void)state;
  char dir[] = "/tmp/xqz-test-prune-XXXXXX";
  assert_non_null(mkdtemp(dir));
  /* Ten 1 MiB nets, id i last used (11 - i) minutes ago: net 10 is the newest. */
  for (uint64_t i = 1; i <= 10; i++) put(dir, i, MB, (int)(11 - i) * 60);
  char other[1100];
  snprintf(other, sizeof other, "%s/notes.txt", dir);
  FILE *f = fopen(other, "w");
  assert_non_null(f);
  fclose(f);
  /* Net 1 (the oldest) is the best net and net 2 the job's: they stay; so do the 3
   * newest (8, 9, 10). A 6 MiB cap leaves room for one more: net 7. */
  uint64_t keep[] = {1, 0, 2};
  xq_netcache_usage_t u;
  xq_errbuf_t eb = {{0}};
  assert_int_equal(xq_netcache_prune(dir, keep, 3, 3, 6ull * MB, &u, &eb), 0);
  assert_int_equal(u.removed, 4);
  assert_int_equal(u.files, 6);
  assert_int_equal(u.bytes, 6ull * MB);
  for (uint64_t i = 1; i <= 10; i++) assert_int_equal(has(dir, i), i <= 2 || i >= 7);
  assert_int_equal(access(other, F_OK), 0);
  /* A touched net is recently used: with a tighter cap net 7 goes before net 1 (kept) and
   * net 8 is now older than the touched net 2 (no longer named). */
  xq_netcache_touch(dir, 2);
  assert_int_equal(xq_netcache_prune(dir, keep, 1, 3, 4ull * MB, &u, &eb), 0);
  assert_int_equal(u.files, 4);
  assert_true(has(dir, 1) && has(dir, 2) && has(dir, 9) && has(dir, 10));
  assert_false(has(dir, 7) || has(dir, 8));
  /* Under the cap nothing goes. */
  assert_int_equal(xq_netcache_prune(dir, NULL, 0, 0, 100ull * MB, &u, &eb), 0);
  assert_int_equal(u.removed, 0);
  assert_int_equal(u.files, 4);
  /* A missing directory is an error naming it. */
  assert_int_equal(xq_netcache_prune("/nonexistent/xqz", NULL, 0, 0, 0, &u, &eb), XQ_EIO);
  assert_non_null(strstr(eb.msg, "/nonexistent/xqz"));
  char cmd[1100];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  assert_int_equal(system(cmd), 0);
}

static void test_rejected_nets(void **state) {
  (void)state;
  char dir[] = "/tmp/xqz-test-prune-XXXXXX";
  assert_non_null(mkdtemp(dir));
  char nets[1100], rej[1100];
  snprintf(nets, sizeof nets, "%s/nets", dir);
  snprintf(rej, sizeof rej, "%s/nets/rejected", dir);
  assert_int_equal(xqc_net_files_prune_rejected(dir, 2), 0); /* no rejected/ yet */
  assert_int_equal(mkdir(nets, 0755), 0);
  assert_int_equal(mkdir(rej, 0755), 0);
  for (uint64_t i = 1; i <= 5; i++) put(rej, 0x100 + i, 1000, (int)(6 - i) * 60);
  /* A candidate rejected now: moved to rejected/, and only the 3 newest stay there. */
  put(nets, 0x200, 1000, 0);
  xqc_net_files_decided(dir, 0x200, false, 3);
  assert_false(has(nets, 0x200));
  assert_true(has(rej, 0x200));
  assert_true(has(rej, 0x105) && has(rej, 0x104));
  assert_false(has(rej, 0x101) || has(rej, 0x102) || has(rej, 0x103));
  assert_int_equal(xqc_net_files_prune_rejected(dir, 1), 2);
  assert_true(has(rej, 0x200));
  char cmd[1100];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  assert_int_equal(system(cmd), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_cache_cap),
      cmocka_unit_test(test_rejected_nets),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
