/*
 * cmd_enrol.c: `xqz enrol-token [--ttl 1h]` asks a running coordinator (an AdminRequest,
 * so with CURVE the --key given must be in its curve_admin_dir) for a one-time enrolment
 * token and prints it with the commands that add a worker with it. The coordinator makes
 * the token and keeps only its hash (docs/protocol.md, Enrolment); it is shown here once.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_options.h"
#include "commands.h"
#include "remote.h"
#include "wire/messages.h"
#include "wire/wire.h"


/* "90", "90s", "30m", "1h", "2d" into seconds; -1 when malformed. */
static long parse_ttl(const char *s) {
  char *end;
  long v = strtol(s, &end, 10);
  if (end == s || v <= 0) return -1;
  long mul = !*end || !strcmp(end, "s") ? 1 : !strcmp(end, "m") ? 60 : !strcmp(end, "h") ? 3600
             : !strcmp(end, "d") ? 86400 : -1;
  if (mul < 0 || v > 7L * 86400 / mul) return -1;
  return v * mul;
}

static int check_ttl(const char *name, const char *v, xq_errbuf_t *eb) {
  if (parse_ttl(v) >= 60) return 0;
  return xq_err_set(eb, XQ_ERANGE, "--%s must be 60s to 7d (e.g. 30m, 1h, 2d), not '%s'", name,
                    v);
}

/* The command line. */
typedef struct {
  xqz_remote_t r;
  const char *ttl;
} enrol_opts_t;

static const xq_opt_t rows[] = {
    {"ttl", XQ_OPTION_TEXT, XQ_OPT_FIELD(enrol_opts_t, ttl), "1h", 0, 0, .arg = "DURATION",
     .check = check_ttl, .help = "how long the token stays valid: 90s, 30m, 1h, 2d (60s to 7d)"},
    XQZ_REMOTE_ROWS(enrol_opts_t, r),
};
static const xq_opts_t TABLE = {rows, (int)(sizeof rows / sizeof rows[0]), XQ_OPTS_IN_RANGE};

static void usage(FILE *f) {
  fprintf(f, "usage: xqz enrol-token [--ttl DURATION] [options]\n\n"
             "Makes a one-time enrolment token on the running coordinator (CURVE only): one\n"
             "worker key that is not yet allowed may join with it, once, as a worker (never\n"
             "admin or trainer), until it expires. Prints the token and the worker's commands.\n"
             "options:\n");
  xq_opts_help(&TABLE, f, 18);
}

int xqz_cmd_enrol_token(int argc, char **argv) {
  enrol_opts_t o;
  memset(&o, 0, sizeof o); /* a row without a default leaves its field alone */
  xqz_remote_init(&o.r, "enrol-token");
  xq_opts_defaults(&TABLE, &o);
  int st = xqz_options_parse("enrol-token", &TABLE, &o, argc, argv, NULL, NULL, usage);
  if (st >= 0) return st;
  long ttl = parse_ttl(o.ttl); /* checked by its row */
  xqz_remote_t r = o.r;
  if (xqz_remote_open(&r)) return 1;
  Xqz__Envelope env;
  Xqz__AdminRequest rq;
  xq_msg_admin_request(&env, &rq, XQZ__ADMIN_REQUEST__ACTION__ACTION_ENROL_TOKEN, NULL);
  rq.ttl_s = (uint32_t)ttl;
  Xqz__Envelope *reply = xqz_remote_call(&r, &env, XQZ__ENVELOPE__BODY_ADMIN_RESULT);
  xqz_remote_close(&r);
  if (!reply) return 1;
  const Xqz__AdminResult *res = reply->admin_result;
  const char *msg = res->message ? res->message : "";
  int status = res->ok && res->token && res->token[0] ? 0 : 1;
  if (status == 0) printf("%s\n%s", res->token, msg);
  else fprintf(stderr, "xqz enrol-token: refused: %s\n", msg);
  xq_wire_free(&reply);
  return status;
}
