/*
 * test_campaign_nets.c: a campaign's nets are easy to find. nets/best.xqzn is a relative
 * link to the best net, replaced (not edited) when the best changes; a rejected candidate
 * moves to nets/rejected/; xq_campaign_best_net finds the best net through the link,
 * through promotions.log for a campaign from before the link, and names the fix for a
 * directory that is not a campaign.
 */
#define _DEFAULT_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "support/campaign_nets.h"

static char g_root[64];

static void write_file(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
}

static int setup(void **state) {
  (void)state;
  snprintf(g_root, sizeof g_root, "/tmp/xqz-nets-XXXXXX");
  assert_non_null(mkdtemp(g_root));
  char p[256];
  snprintf(p, sizeof p, "%s/nets", g_root);
  assert_int_equal(mkdir(p, 0755), 0);
  const char *ids[] = {"00000000000000a1", "00000000000000b2", "00000000000000c3"};
  for (int i = 0; i < 3; i++) {
    snprintf(p, sizeof p, "%s/nets/%s.xqzn", g_root, ids[i]);
    write_file(p, ids[i]);
  }
  return 0;
}

static int teardown(void **state) {
  (void)state;
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf %s", g_root);
  assert_int_equal(system(cmd), 0);
  return 0;
}

static void test_link_follows_the_best(void **state) {
  (void)state;
  xq_errbuf_t eb = {{0}};
  char link[256], target[64], best[4096], want[4200];
  snprintf(link, sizeof link, "%s/nets/best.xqzn", g_root);
  assert_int_equal(xq_campaign_set_best(g_root, 0xa1, &eb), 0);
  ssize_t n = readlink(link, target, sizeof target - 1);
  assert_true(n > 0);
  target[n] = 0;
  assert_string_equal(target, "00000000000000a1.xqzn"); /* relative: the campaign may move */
  struct stat before, after;
  assert_int_equal(lstat(link, &before), 0);
  assert_int_equal(xq_campaign_set_best(g_root, 0xb2, &eb), 0);
  assert_int_equal(lstat(link, &after), 0);
  assert_true(before.st_ino != after.st_ino); /* a new link renamed over the old one */
  assert_int_equal(xq_campaign_best_net(g_root, best, sizeof best, &eb), 0);
  char real_root[4096];
  assert_non_null(realpath(g_root, real_root));
  snprintf(want, sizeof want, "%s/nets/00000000000000b2.xqzn", real_root);
  assert_string_equal(best, want);
  /* No temporary link is left behind. */
  char cmd[256];
  snprintf(cmd, sizeof cmd, "test -z \"$(ls -A %s/nets | grep tmp)\"", g_root);
  assert_int_equal(system(cmd), 0);
  /* A net that does not exist is refused, and the link is untouched. */
  assert_int_equal(xq_campaign_set_best(g_root, 0xdd, &eb), XQ_EIO);
  assert_non_null(strstr(eb.msg, "no such net file"));
  assert_int_equal(xq_campaign_best_net(g_root, best, sizeof best, &eb), 0);
  assert_string_equal(best, want);
}

static void test_rejected_kept_apart(void **state) {
  (void)state;
  xq_errbuf_t eb = {{0}};
  char p[256];
  assert_int_equal(xq_campaign_file_rejected(g_root, 0xc3, &eb), 0);
  snprintf(p, sizeof p, "%s/nets/00000000000000c3.xqzn", g_root);
  assert_int_not_equal(access(p, F_OK), 0);
  snprintf(p, sizeof p, "%s/nets/rejected/00000000000000c3.xqzn", g_root);
  assert_int_equal(access(p, F_OK), 0);
  assert_int_equal(xq_campaign_file_rejected(g_root, 0xc3, &eb), 0); /* moved already */
}

static void test_best_from_promotions_log(void **state) {
  (void)state;
  xq_errbuf_t eb = {{0}};
  char p[256], best[4096];
  snprintf(p, sizeof p, "%s/promotions.log", g_root);
  write_file(p, "{\"net\":\"00000000000000a1\",\"promoted\":true,\"first\":true}\n"
                "{\"net\":\"00000000000000b2\",\"promoted\":true}\n"
                "{\"net\":\"00000000000000c3\",\"promoted\":false}\n");
  assert_int_equal(xq_campaign_best_net(g_root, best, sizeof best, &eb), 0);
  snprintf(p, sizeof p, "%s/nets/00000000000000b2.xqzn", g_root);
  assert_string_equal(best, p);
}

static void test_not_a_campaign(void **state) {
  (void)state;
  xq_errbuf_t eb = {{0}};
  char p[256], best[4096];
  snprintf(p, sizeof p, "%s/nowhere", g_root);
  assert_int_equal(xq_campaign_best_net(p, best, sizeof best, &eb), XQ_EINVAL);
  assert_non_null(strstr(eb.msg, "no such directory"));
  assert_int_equal(xq_campaign_best_net("/tmp", best, sizeof best, &eb), XQ_EINVAL);
  assert_non_null(strstr(eb.msg, "not a campaign directory"));
  /* nets/ without a link or a logged promotion. */
  assert_int_equal(xq_campaign_best_net(g_root, best, sizeof best, &eb), XQ_EINVAL);
  assert_non_null(strstr(eb.msg, "no best net"));
  assert_int_equal(xq_campaign_set_best(g_root, 0xa1, &eb), 0);
  assert_int_equal(xq_campaign_best_net(g_root, best, 8, &eb), XQ_ERANGE);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_link_follows_the_best, setup, teardown),
      cmocka_unit_test_setup_teardown(test_rejected_kept_apart, setup, teardown),
      cmocka_unit_test_setup_teardown(test_best_from_promotions_log, setup, teardown),
      cmocka_unit_test_setup_teardown(test_not_a_campaign, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
