/*
 * cmd_keygen.c: `xqz keygen [--dir DIR] [--force] NAME` writes a CURVE key pair,
 * DIR/NAME.pub (the public key, safe to copy anywhere) and DIR/NAME.secret (mode 0600,
 * stays on the machine that uses it). docs/operations.md, "Security", says where each
 * file goes.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "wire/curve.h"

static void usage(FILE *f) {
  fprintf(f, "usage: xqz keygen [--dir DIR] [--force] NAME\n\n"
             "Writes a CURVE key pair: DIR/NAME.pub (public key, 40 Z85 characters) and\n"
             "DIR/NAME.secret (secret key, mode 0600). DIR defaults to the current directory.\n"
             "An existing pair is kept unless --force is given.\n"
             "  coordinator: curve_secret_key = NAME.secret; clients get NAME.pub (--server-key)\n"
             "  worker/trainer/CLI: --key NAME.secret; NAME.pub goes into the coordinator's\n"
             "  curve_allow_dir (and curve_admin_dir for operators)\n");
}

int xqz_cmd_keygen(int argc, char **argv) {
  const char *dir = ".", *name = NULL;
  bool force = false;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
      usage(stdout);
      return 0;
    }
    if (!strcmp(a, "--force")) {
      force = true;
    } else if (!strcmp(a, "--dir")) {
      if (i + 1 >= argc) {
        fprintf(stderr, "xqz keygen: --dir needs a directory\n");
        return 2;
      }
      dir = argv[++i];
    } else if (a[0] == '-' || name) {
      fprintf(stderr, "xqz keygen: unexpected argument '%s' (see --help)\n", a);
      return 2;
    } else {
      name = a;
    }
  }
  if (!name) {
    usage(stderr);
    return 2;
  }
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
