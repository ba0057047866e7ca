/*
 * cmd_join.c: `xqz join-command [--campaign DIR]` prints the command that adds a worker on
 * another machine to the campaign in DIR (default: the current directory), as the
 * coordinator logs it at start (common/wire/join_command.h): its endpoints as other
 * machines reach them, and with CURVE where the keys go. It reads DIR/campaign.ini only;
 * nothing needs to run.
 */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cli_options.h"
#include "commands.h"
#include "support/ini_value.h"
#include "wire/join_command.h"

/* The command line's one option. */
typedef struct {
  const char *dir;
} join_opts_t;

static const xq_opt_t rows[] = {
    {"campaign", XQ_OPTION_TEXT, XQ_OPT_FIELD(join_opts_t, dir), ".", 0, 0, .arg = "DIR",
     .help = "the campaign's directory"},
};
static const xq_opts_t TABLE = {rows, (int)(sizeof rows / sizeof rows[0]), XQ_OPTS_IN_RANGE};

static void usage(FILE *f) {
  fprintf(f, "usage: xqz join-command [--campaign DIR]\n\n"
             "Prints the command that adds a worker on another machine to the campaign in\n"
             "DIR (default: the current directory), from its campaign.ini: the coordinator's\n"
             "endpoints as other machines reach them and, with CURVE, where the keys go.\n"
             "A warning goes to stderr when no other machine could join (loopback only).\n"
             "The coordinator logs the same lines at start.\n\n");
  xq_opts_help(&TABLE, f, 14);
}

/* key of campaign.ini at ini into out (n bytes), def when the file does not set it. 0, or
 * 1 after an error said on stderr. */
static int ini_value(const char *ini, const char *key, const char *def, char *out, size_t n) {
  xq_errbuf_t eb;
  int rc = xq_ini_get(ini, key, out, n, &eb);
  if (rc < 0) {
    fprintf(stderr, "xqz join-command: %s\n", eb.msg);
    return 1;
  }
  if (rc == 0) snprintf(out, n, "%s", def);
  return 0;
}

int xqz_cmd_join(int argc, char **argv) {
  join_opts_t o = {0};
  xq_opts_defaults(&TABLE, &o);
  int prc = xqz_options_parse("join-command", &TABLE, &o, argc, argv, NULL, NULL, usage);
  if (prc >= 0) return prc;
  const char *dir = o.dir;
  char ini[1100];
  snprintf(ini, sizeof ini, "%s/campaign.ini", dir);
  struct stat st;
  if (stat(ini, &st) != 0) {
    fprintf(stderr, "xqz join-command: %s has no campaign.ini: give --campaign DIR, the"
            " directory of a campaign (its coordinator writes campaign.ini at its first start)\n",
            dir);
    return 1;
  }
  /* The defaults are the coordinator's (coordinator/config.c); campaign.ini sets them all. */
  char router[256], pub[256], secret[512], allow[512];
  if (ini_value(ini, "router", "tcp://127.0.0.1:5555", router, sizeof router) ||
      ini_value(ini, "pub", "tcp://127.0.0.1:5556", pub, sizeof pub) ||
      ini_value(ini, "curve_secret_key", "", secret, sizeof secret) ||
      ini_value(ini, "curve_allow_dir", "", allow, sizeof allow))
    return 1;
  char steps[2048], warn[512];
  xq_join_in_t in = {router, pub, secret, allow};
  xq_join_command(&in, steps, sizeof steps, warn, sizeof warn);
  fputs(steps, stdout);
  if (warn[0]) fprintf(stderr, "xqz join-command: warning: %s\n", warn);
  return 0;
}
