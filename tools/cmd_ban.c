/*
 * cmd_ban.c: `xqz ban TARGET [--reason TEXT]` and `xqz unban TARGET` send an AdminRequest
 * to a running coordinator and print its AdminResult. TARGET is a worker id or a CURVE
 * public key (Z85). With CURVE on, the key given by --key must be in the coordinator's
 * curve_admin_dir; without CURVE, the coordinator takes admin requests from anyone.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "remote.h"
#include "wire/messages.h"
#include "wire/wire.h"

static void usage(FILE *f, const char *cmd) {
  bool ban = !strcmp(cmd, "ban");
  fprintf(f, "usage: xqz %s TARGET%s [options]\n\n", cmd, ban ? " [--reason TEXT]" : "");
  if (ban)
    fprintf(f, "Bans TARGET (a worker id or a CURVE public key): its games are refused,\n"
               "its positions leave the replay window; its stored games are kept on disk.\n");
  else
    fprintf(f, "Lifts the ban on TARGET: its new games are accepted again.\n");
  fprintf(f, "options:\n");
  if (ban) fprintf(f, "  --reason TEXT       why (kept with the ban and logged)\n");
  fputs(XQZ_REMOTE_OPTIONS_HELP, f);
}

static int admin(int argc, char **argv, Xqz__AdminRequest__Action action) {
  const char *target = NULL, *reason = "";
  bool ban = action == XQZ__ADMIN_REQUEST__ACTION__ACTION_BAN;
  xqz_remote_t r;
  xqz_remote_init(&r, argv[0]);
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
      usage(stdout, r.cmd);
      return 0;
    }
    int k = xqz_remote_option(&r, argc, argv, &i);
    if (k < 0) return 2;
    if (k) continue;
    if (ban && !strcmp(a, "--reason") && i + 1 < argc) {
      reason = argv[++i];
    } else if (a[0] == '-' || target) {
      fprintf(stderr, "xqz %s: unexpected argument '%s' (see --help)\n", r.cmd, a);
      return 2;
    } else {
      target = a;
    }
  }
  if (!target || !target[0]) {
    usage(stderr, r.cmd);
    return 2;
  }
  if (xqz_remote_open(&r)) return 1;
  Xqz__Envelope env;
  Xqz__AdminRequest rq;
  xq_msg_admin_request(&env, &rq, action, target);
  rq.reason = (char *)reason;
  Xqz__Envelope *reply = xqz_remote_call(&r, &env, XQZ__ENVELOPE__BODY_ADMIN_RESULT);
  xqz_remote_close(&r);
  if (!reply) return 1;
  const char *msg = reply->admin_result->message ? reply->admin_result->message : "";
  int status = reply->admin_result->ok ? 0 : 1;
  if (status == 0) printf("%s\n", msg);
  else fprintf(stderr, "xqz %s: refused: %s\n", r.cmd, msg);
  xq_wire_free(&reply);
  return status;
}

int xqz_cmd_ban(int argc, char **argv) {
  return admin(argc, argv, XQZ__ADMIN_REQUEST__ACTION__ACTION_BAN);
}

int xqz_cmd_unban(int argc, char **argv) {
  return admin(argc, argv, XQZ__ADMIN_REQUEST__ACTION__ACTION_UNBAN);
}
