/*
 * test_curve.c: CURVE key files (common/wire/curve.c): keygen writes a pair whose public
 * key is the one derived from the secret (0600), refuses to overwrite either file without
 * force and then leaves both untouched; the reader skips comments and blank lines but
 * takes a key that starts with '#' (a Z85 digit); bad files are errors; a client needs
 * both of its files or neither.
 */
#define _DEFAULT_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zmq.h>

#include "wire/curve.h"

static char g_dir[64];

static void write_text(const char *name, const char *text) {
  char p[128];
  snprintf(p, sizeof p, "%s/%s", g_dir, name);
  FILE *f = fopen(p, "w");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
}

static int read_key(const char *name, char key[41]) {
  char p[128];
  xq_errbuf_t eb;
  snprintf(p, sizeof p, "%s/%s", g_dir, name);
  return xq_curve_read_key(p, key, &eb);
}

static void test_keygen_and_read(void **state) {
  (void)state;
  if (!xq_curve_available()) skip();
  snprintf(g_dir, sizeof g_dir, "/tmp/xqz-curve-XXXXXX");
  assert_non_null(mkdtemp(g_dir));
  char pub[41], pub2[41], k[41], sec[41], derived[41];
  xq_errbuf_t eb;
  assert_int_equal(xq_curve_keygen(g_dir, "a", false, pub, &eb), 0);
  assert_int_equal(strlen(pub), 40);
  assert_int_equal(read_key("a.pub", k), 0);
  assert_string_equal(k, pub);
  assert_int_equal(read_key("a.secret", sec), 0);
  assert_int_equal(zmq_curve_public(derived, sec), 0);
  assert_string_equal(derived, pub);
  char p[128];
  struct stat sb;
  snprintf(p, sizeof p, "%s/a.secret", g_dir);
  assert_int_equal(stat(p, &sb), 0);
  assert_int_equal(sb.st_mode & 0777, 0600);

  /* No overwrite without force, and a refusal writes nothing: remove the .pub only, then
   * the existing .secret still blocks and no new .pub appears. */
  assert_true(xq_curve_keygen(g_dir, "a", false, pub2, &eb) < 0);
  assert_non_null(strstr(eb.msg, "--force"));
  snprintf(p, sizeof p, "%s/a.pub", g_dir);
  assert_int_equal(unlink(p), 0);
  assert_true(xq_curve_keygen(g_dir, "a", false, pub2, &eb) < 0);
  assert_int_not_equal(access(p, F_OK), 0);
  assert_int_equal(xq_curve_keygen(g_dir, "a", true, pub2, &eb), 0);
  assert_string_not_equal(pub2, pub);
  assert_true(xq_curve_keygen(g_dir, "x/y", false, pub2, &eb) < 0);

  /* Comments and blank lines before the key; a key with '#' in it. */
  char text[200];
  snprintf(text, sizeof text, "# a comment\n\n  %s  \n", pub);
  write_text("c.pub", text);
  assert_int_equal(read_key("c.pub", k), 0);
  assert_string_equal(k, pub);
  uint8_t bin[32];
  char hk[41];
  for (int tries = 0;; tries++) { /* a key with '#' inside */
    for (int i = 0; i < 32; i++) bin[i] = (uint8_t)rand();
    assert_non_null(zmq_z85_encode(hk, bin, 32));
    if (strchr(hk, '#')) break;
    assert_true(tries < 100000);
  }
  snprintf(text, sizeof text, "%s\n", hk);
  write_text("h.pub", text);
  assert_int_equal(read_key("h.pub", k), 0);
  assert_string_equal(k, hk);

  /* Bad files. */
  write_text("bad.pub", "not a key\n");
  assert_true(read_key("bad.pub", k) < 0);
  write_text("empty.pub", "# only a comment\n");
  assert_true(read_key("empty.pub", k) < 0);
  assert_true(read_key("missing.pub", k) < 0);

  /* Client: both files or neither. */
  xq_curve_t c;
  char s1[128], s2[128];
  snprintf(s1, sizeof s1, "%s/a.pub", g_dir);
  snprintf(s2, sizeof s2, "%s/a.secret", g_dir);
  assert_int_equal(xq_curve_client_load(&c, NULL, NULL, &eb), 0);
  assert_false(c.on);
  assert_true(xq_curve_client_load(&c, s1, NULL, &eb) < 0);
  assert_true(xq_curve_client_load(&c, s1, s2, &eb) == 0);
  assert_true(c.on);
  assert_string_equal(c.public_key, pub2);
  assert_int_equal(xq_curve_server_load(&c, s2, &eb), 0);
  assert_true(c.on);

  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf %s", g_dir);
  assert_int_equal(system(cmd), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_keygen_and_read)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
