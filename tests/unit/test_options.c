/*
 * test_options.c: the options engine (common/support/options.c) on a table of every kind:
 * the defaults, `--name value`, `--name=value` and a bare flag, '-' == '_' in names, a
 * value set by name as an INI line gives it, each error in each style's words (not a
 * number, out of bounds, too long, not one of the names, a row's own check, an unknown
 * name with and without a suggestion, a missing value, a value for a flag, a stray word),
 * whole numbers written 1e3, values printed back, --help from the rows, and the words of a
 * command that takes paths between its options.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/options.h"

typedef struct {
  int64_t window;
  int threads;
  double reuse;
  char router[16];
  const char *cache;
  int mode;
  bool force;
  const char *only_given;
  uint64_t seed;
} opts_t;

static int check_no_space(const char *name, const char *v, xq_errbuf_t *eb) {
  return strchr(v, ' ') ? xq_err_set(eb, XQ_ERANGE, "%s: no spaces please", name) : 0;
}

static const char *const MODES[] = {"sprt", "threshold", "none", NULL};

#define F(f) XQ_OPT_FIELD(opts_t, f)
static const xq_opt_t ROWS[] = {
    {"window", XQ_OPTION_INT, F(window), "50000", 100, 1e8, .help = "replay window"},
    {"games-per-thread", XQ_OPTION_INT, F(threads), "32", 1, 4096, .help = "games at once",
     .arg = "G"},
    {"reuse", XQ_OPTION_DOUBLE, F(reuse), "4", 0.1, 1000, .help = "pacing"},
    {"router", XQ_OPTION_STRING, F(router), "tcp://a:1", 0, 0, .help = "bind address",
     .check = check_no_space},
    {"cache", XQ_OPTION_TEXT, F(cache), "xqz-cache", 0, 0, .help = "net cache", .arg = "DIR"},
    {"gating", XQ_OPTION_ENUM, F(mode), "none", 0, 0, .help = "gating mode", .names = MODES},
    {"force", XQ_OPTION_FLAG, F(force), NULL, 0, 0, .help = "replace the file"},
    {"enrol", XQ_OPTION_TEXT, F(only_given), NULL, 0, 0, .help = "a token", .shown = "none"},
    {"enroll", XQ_OPTION_TEXT, F(only_given), NULL, 0, 0, .help = NULL}, /* not in --help */
    {"seed", XQ_OPTION_UINT, F(seed), "1", 0, XQ_OPTS_U64_MAX, .help = "random seed"},
};
enum { NROWS = (int)(sizeof ROWS / sizeof ROWS[0]) };

static const xq_opts_t SETTINGS = {ROWS, NROWS, XQ_OPTS_SETTINGS};
static const xq_opts_t IN_RANGE = {ROWS, NROWS, XQ_OPTS_IN_RANGE};
static const xq_opts_t FROM_TO = {ROWS, NROWS, XQ_OPTS_FROM_TO};

static opts_t fresh(const xq_opts_t *t) {
  opts_t o;
  memset(&o, 0xab, sizeof o); /* the defaults must set every row that has one */
  o.only_given = NULL;
  xq_opts_defaults(t, &o);
  return o;
}

/* Parses the NULL-terminated words of ap after a program name; returns its result. */
static int parse_list(const xq_opts_t *t, opts_t *o, bool *given, xq_errbuf_t *eb, va_list ap) {
  char *argv[16] = {"prog"};
  int argc = 1;
  for (char *w; (w = va_arg(ap, char *)) != NULL;) argv[argc++] = w;
  return xq_opts_parse_argv(t, o, argc, argv, given, eb);
}

static int parse(const xq_opts_t *t, opts_t *o, bool *given, xq_errbuf_t *eb, ...) {
  va_list ap;
  va_start(ap, eb);
  int rc = parse_list(t, o, given, eb, ap);
  va_end(ap);
  return rc;
}

/* The words after msg, parsed from the defaults, are refused with the message msg. */
static void expect_error(const xq_opts_t *t, const char *msg, ...) {
  opts_t o = fresh(t);
  xq_errbuf_t eb = {{0}};
  va_list ap;
  va_start(ap, msg);
  int rc = parse_list(t, &o, NULL, &eb, ap);
  va_end(ap);
  assert_true(rc < 0);
  assert_string_equal(eb.msg, msg);
}

static void test_defaults(void **state) {
  (void)state;
  opts_t o = fresh(&SETTINGS);
  assert_int_equal(o.window, 50000);
  assert_int_equal(o.threads, 32);
  assert_true(o.reuse == 4);
  assert_string_equal(o.router, "tcp://a:1");
  assert_string_equal(o.cache, "xqz-cache");
  assert_int_equal(o.mode, 2);
  assert_false(o.force);
  assert_null(o.only_given); /* no default: left alone */
  assert_true(o.seed == 1);
}

static void test_argv_forms(void **state) {
  (void)state;
  opts_t o = fresh(&FROM_TO);
  bool given[NROWS] = {false};
  xq_errbuf_t eb = {{0}};
  assert_int_equal(parse(&FROM_TO, &o, given, &eb, "--window", "1e3", "--games_per_thread=7",
                         "--reuse", "0.5", "--router=tcp://b:2", "--cache", "dir", "--gating",
                         "sprt", "--force", "--seed=0xFFFFFFFFFFFFFFFF", NULL),
                   0);
  assert_int_equal(o.window, 1000); /* a whole number may be written 1e3 */
  assert_int_equal(o.threads, 7);
  assert_true(o.reuse == 0.5);
  assert_string_equal(o.router, "tcp://b:2");
  assert_string_equal(o.cache, "dir");
  assert_int_equal(o.mode, 0);
  assert_true(o.force);
  assert_true(o.seed == UINT64_MAX); /* 0x-hex, the whole range */
  for (int i = 0; i < NROWS; i++) assert_int_equal(given[i], i < 7 || i == 9); /* not --enrol(l) */
  /* --help and --version stop the parse and say so. */
  assert_int_equal(parse(&FROM_TO, &o, NULL, &eb, "--window", "200", "-h", NULL), XQ_OPTS_HELP);
  assert_int_equal(parse(&FROM_TO, &o, NULL, &eb, "--version", NULL), XQ_OPTS_VERSION);
}

static void test_settings_words(void **state) {
  (void)state;
  expect_error(&SETTINGS, "window: not an integer: 'abc'", "--window", "abc", NULL);
  expect_error(&SETTINGS, "window: not an integer: '1.5'", "--window", "1.5", NULL);
  expect_error(&SETTINGS, "window: 5 outside [100, 100000000]", "--window", "5", NULL);
  expect_error(&SETTINGS, "reuse: not a number: 'inf'", "--reuse", "inf", NULL);
  expect_error(&SETTINGS, "reuse: 2000 outside [0.1, 1000]", "--reuse=2000", NULL);
  expect_error(&SETTINGS, "router: value too long", "--router", "tcp://0123456789:1", NULL);
  expect_error(&SETTINGS, "router: no spaces please", "--router", "a b", NULL);
  expect_error(&SETTINGS, "gating: 'fast' is not one of sprt|threshold|none", "--gating", "fast",
               NULL);
  expect_error(&SETTINGS, "unknown setting '--windw'; did you mean 'window'? (see --help)",
               "--windw", "5", NULL);
  expect_error(&SETTINGS, "unknown setting '--frobnicate' (see --help)", "--frobnicate", NULL);
  expect_error(&SETTINGS, "option '--reuse' needs a value", "--reuse", NULL);
  expect_error(&SETTINGS, "unexpected argument 'x' (see --help)", "x", NULL);
  expect_error(&SETTINGS, "--force takes no value", "--force=1", NULL);
}

static void test_in_range_words(void **state) {
  (void)state;
  expect_error(&IN_RANGE, "--window: 'abc' is not a whole number in [100, 1e+08]", "--window",
               "abc", NULL);
  expect_error(&IN_RANGE, "--games-per-thread: '0' is not a whole number in [1, 4096]",
               "--games_per_thread", "0", NULL);
  expect_error(&IN_RANGE, "--reuse: 'x' is not a number in [0.1, 1000]", "--reuse", "x", NULL);
  expect_error(&IN_RANGE, "--router: value too long", "--router", "tcp://0123456789:1", NULL);
  expect_error(&IN_RANGE, "--gating: 'fast' is not one of sprt|threshold|none", "--gating",
               "fast", NULL);
  expect_error(&IN_RANGE, "unknown option '--gatting'; did you mean --gating? (see --help)",
               "--gatting", "none", NULL);
  expect_error(&IN_RANGE, "unknown option '--bogus' (see --help)", "--bogus", "2", NULL);
  /* A stray word is an unknown option too, with the name it probably meant. */
  expect_error(&IN_RANGE, "unknown option 'reuse'; did you mean --reuse? (see --help)", "reuse",
               NULL);
  expect_error(&IN_RANGE, "--reuse needs a value", "--reuse", NULL);
  expect_error(&IN_RANGE, "--seed: '-1' is not a whole number in [0, 1.84467e+19]", "--seed", "-1",
               NULL);
  expect_error(&IN_RANGE, "--seed: '0x' is not a whole number in [0, 1.84467e+19]", "--seed", "0x",
               NULL);
  expect_error(&IN_RANGE, "unknown option '-force'; did you mean --force? (see --help)", "-force",
               NULL);
}

static void test_from_to_words(void **state) {
  (void)state;
  expect_error(&FROM_TO, "--games-per-thread must be a number from 1 to 4096, not '0'",
               "--games_per_thread", "0", NULL);
  expect_error(&FROM_TO, "--window must be a number from 100 to 100000000, not '5'", "--window",
               "5", NULL);
  expect_error(&FROM_TO, "--reuse must be a number from 0.1 to 1000, not 'nan'", "--reuse",
               "nan", NULL);
  expect_error(&FROM_TO, "unknown option '--windw'; did you mean --window? (try --help)",
               "--windw", "5", NULL);
  expect_error(&FROM_TO, "missing value for '--games_per_thread' (try --help)",
               "--games_per_thread", NULL);
}

/* A command that takes words (paths) gets them in order, between its options. */
static void test_words(void **state) {
  (void)state;
  opts_t o = fresh(&IN_RANGE);
  char *argv[] = {"prog", "a.bin", "--force", "b.bin", "--cache=c", "-", NULL};
  const char *words[6];
  int n = -1;
  xq_errbuf_t eb = {{0}};
  assert_int_equal(xq_opts_parse_words(&IN_RANGE, &o, 6, argv, NULL, words, &n, &eb), 0);
  assert_int_equal(n, 3);
  assert_string_equal(words[0], "a.bin");
  assert_string_equal(words[1], "b.bin");
  assert_string_equal(words[2], "-");
  assert_true(o.force);
  assert_string_equal(o.cache, "c");
}

/* A caller that reads an INI file hands each `name = value` to xq_opts_set. */
static void test_set_by_name(void **state) {
  (void)state;
  opts_t o = fresh(&SETTINGS);
  xq_errbuf_t eb = {{0}};
  assert_int_equal(xq_opts_set(&SETTINGS, &o, "games_per_thread", "9", &eb), 0);
  assert_int_equal(o.threads, 9);
  assert_int_equal(xq_opts_set(&SETTINGS, &o, "window", "9223372036854775807", &eb), XQ_ERANGE);
  assert_string_equal(eb.msg, "window: 9223372036854775807 outside [100, 100000000]");
  assert_int_equal(xq_opts_set(&SETTINGS, &o, "windows", "200", &eb), XQ_EINVAL);
  assert_string_equal(eb.msg, "unknown setting 'windows'; did you mean 'window'? (see --help)");
  assert_int_equal(xq_opts_find(&SETTINGS, "GAMES_per-thread"), -1); /* case counts */
  assert_int_equal(xq_opts_find(&SETTINGS, "games_per-thread"), 1);
  assert_int_equal(xq_opts_set(&SETTINGS, &o, "enroll", "t0k", &eb), 0); /* another spelling */
  assert_string_equal(o.only_given, "t0k");
}

/* Each value printed back reads as the same value. */
static void test_print_value(void **state) {
  (void)state;
  opts_t o = fresh(&SETTINGS);
  char expect[][24] = {"50000", "32", "4", "tcp://a:1", "xqz-cache", "none", "false", "", "", "1"};
  for (int i = 0; i < NROWS; i++) {
    char buf[64] = {0};
    FILE *f = fmemopen(buf, sizeof buf, "w");
    assert_non_null(f);
    xq_opts_print_value(&SETTINGS, i, &o, f);
    fclose(f);
    assert_string_equal(buf, expect[i]);
    if (ROWS[i].kind == XQ_OPTION_FLAG || !buf[0]) continue;
    opts_t back = fresh(&SETTINGS);
    xq_errbuf_t eb;
    assert_int_equal(xq_opts_set_row(&SETTINGS, i, &back, buf, &eb), 0);
  }
}

/* true when help has the line "  HEAD REST" with HEAD padded to 24 columns. */
static bool has_line(const char *help, const char *head, const char *rest) {
  char line[256];
  snprintf(line, sizeof line, "  %-24s %s\n", head, rest);
  return strstr(help, line) != NULL;
}

static void test_help(void **state) {
  (void)state;
  char buf[2048] = {0};
  FILE *f = fmemopen(buf, sizeof buf, "w");
  assert_non_null(f);
  xq_opts_help(&IN_RANGE, f, 24);
  fclose(f);
  assert_true(has_line(buf, "--window N", "replay window, 100..100000000 (default 50000)"));
  assert_true(has_line(buf, "--games-per-thread G", "games at once, 1..4096 (default 32)"));
  assert_true(has_line(buf, "--reuse X", "pacing, 0.1..1000 (default 4)"));
  assert_true(has_line(buf, "--cache DIR", "net cache (default xqz-cache)"));
  assert_true(has_line(buf, "--gating sprt|threshold|none", "gating mode (default none)"));
  assert_true(has_line(buf, "--force", "replace the file"));
  assert_true(has_line(buf, "--enrol S", "a token (default none)"));
  assert_null(strstr(buf, "--enroll"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_defaults),       cmocka_unit_test(test_argv_forms),
      cmocka_unit_test(test_settings_words), cmocka_unit_test(test_in_range_words),
      cmocka_unit_test(test_from_to_words),  cmocka_unit_test(test_set_by_name),
      cmocka_unit_test(test_print_value),    cmocka_unit_test(test_help),
      cmocka_unit_test(test_words),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
