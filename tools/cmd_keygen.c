/*
 * cmd_keygen.c: `xqz keygen [--dir DIR] [--force] NAME` writes a CURVE key pair,
 * DIR/NAME.pub (the public key, safe to copy anywhere) and DIR/NAME.secret (mode 0600,
 * stays on the machine that uses it). docs/operations.md, "Security", says where each
 * file goes.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_options.h"
#include "commands.h"
#include "wire/curve.h"

/* The command line's options. */
typedef struct {
  const char *dir;
  bool force;
} keygen_opts_t;

static const xq_opt_t rows[] = {
    {"dir", XQ_OPTION_TEXT, XQ_OPT_FIELD(keygen_opts_t, dir), ".", 0, 0, .arg = "DIR",
     .help = "where the pair is written"},
    {"force", XQ_OPTION_FLAG, XQ_OPT_FIELD(keygen_opts_t, force), NULL, 0, 0,
     .help = "replace an existing pair"},
};
static const xq_opts_t TABLE = {rows, (int)(sizeof rows / sizeof rows[0]), XQ_OPTS_IN_RANGE};

static void usage(FILE *f) {
  fprintf(f, "usage: xqz keygen [--dir DIR] [--force] NAME\n\n"
             "Writes a CURVE key pair: DIR/NAME.pub (public key, 40 Z85 characters) and\n"
             "DIR/NAME.secret (secret key, mode 0600). An existing pair is kept unless\n"
             "--force is given.\n"
             "  coordinator: curve_secret_key = NAME.secret; clients get NAME.pub (--server-key)\n"
             "  worker/trainer/CLI: --key NAME.secret; NAME.pub goes into the coordinator's\n"
             "  curve_allow_dir (and curve_admin_dir for operators)\n");
  xq_opts_help(&TABLE, f, 10);
}

int xqz_cmd_keygen(int argc, char **argv) {
  keygen_opts_t o = {0};
  xq_opts_defaults(&TABLE, &o);
  const char **words = calloc((size_t)argc + 1, sizeof *words);
  int nwords = 0;
  if (!words) return 1;
  int st = xqz_options_parse("keygen", &TABLE, &o, argc, argv, words, &nwords, usage);
  const char *name = nwords ? words[0] : NULL;
  if (st < 0 && nwords > 1) st = xqz_usage_error("keygen", "unexpected argument '%s'", words[1]);
  if (st < 0 && !name) st = xqz_usage_error("keygen", "name the pair: xqz keygen NAME");
  free(words);
  if (st >= 0) return st;
  const char *dir = o.dir;
  bool force = o.force;
  char pub[XQ_Z85_KEY_LEN + 1];
  xq_errbuf_t eb;
  if (xq_curve_keygen(dir, name, force, pub, &eb) < 0) {
    fprintf(stderr, "xqz keygen: %s\n", eb.msg);
    return 1;
  }
  printf("public key: %s\n", pub);
  printf("wrote %s/%s.pub (public: give it to the coordinator's curve_allow_dir, or to clients"
         " as --server-key)\n", dir, name);
  printf("wrote %s/%s.secret (secret, mode 0600: keep it on this machine)\n", dir, name);
  return 0;
}
