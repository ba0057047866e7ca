/*
 * cmd_enrol.c: `xqz enrol-token [--ttl 1h]` asks a running coordinator (an AdminRequest,
 * so with CURVE the --key given must be in its curve_admin_dir) for a one-time enrolment
 * token and prints it with the commands that add a worker with it. The coordinator makes
 * the token and keeps only its hash (docs/protocol.md, Enrolment); it is shown here once.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "remote.h"
#include "wire/messages.h"
#include "wire/wire.h"

static void usage(FILE *f) {
  fprintf(f, "usage: xqz enrol-token [--ttl DURATION] [options]\n\n"
             "Makes a one-time enrolment token on the running coordinator (CURVE only): one\n"
             "worker key that is not yet allowed may join with it, once, as a worker (never\n"
             "admin or trainer), until it expires. Prints the token and the worker's commands.\n"
             "options:\n"
             "  --ttl DURATION      how long the token stays valid: 90s, 30m, 1h, 2d (default 1h,\n"
             "                      60s to 7d)\n");
  fputs(XQZ_REMOTE_OPTIONS_HELP, f);
}

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

int xqz_cmd_enrol_token(int argc, char **argv) {
  long ttl = 3600;
  xqz_remote_t r;
  xqz_remote_init(&r, "enrol-token");
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
      usage(stdout);
      return 0;
    }
    int k = xqz_remote_option(&r, argc, argv, &i);
    if (k < 0) return 2;
    if (k) continue;
    if (!strcmp(a, "--ttl") && i + 1 < argc) {
      ttl = parse_ttl(argv[++i]);
      if (ttl < 60) {
        fprintf(stderr, "xqz enrol-token: --ttl must be 60s to 7d (e.g. 30m, 1h, 2d), not"
                " '%s'\n", argv[i]);
        return 2;
      }
    } else {
      fprintf(stderr, "xqz enrol-token: unexpected argument '%s' (see --help)\n", a);
      return 2;
    }
  }
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
