/*
 * cmd_ban.c: `xqz ban TARGET [--reason TEXT]` and `xqz unban TARGET` send an AdminRequest
 * to a running coordinator and print its AdminResult. TARGET is a worker id or a CURVE
 * public key (Z85). With CURVE on, the key given by --key must be in the coordinator's
 * curve_admin_dir; without CURVE, the coordinator takes admin requests from anyone.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_options.h"
#include "commands.h"
#include "remote.h"
#include "wire/messages.h"
#include "wire/wire.h"

/* The command line. */
typedef struct {
  xqz_remote_t r;
  const char *reason;
} admin_opts_t;

/* ban's rows; unban takes all but the first. */
static const xq_opt_t rows[] = {
    {"reason", XQ_OPTION_TEXT, XQ_OPT_FIELD(admin_opts_t, reason), "", 0, 0, .arg = "TEXT",
     .help = "why (kept with the ban and logged)"},
    XQZ_REMOTE_ROWS(admin_opts_t, r),
};
enum { NROWS = (int)(sizeof rows / sizeof rows[0]) };
static const xq_opts_t BAN = {rows, NROWS, XQ_OPTS_IN_RANGE};
static const xq_opts_t UNBAN = {rows + 1, NROWS - 1, XQ_OPTS_IN_RANGE};

static void ban_usage(FILE *f) {
  fprintf(f, "usage: xqz ban TARGET [--reason TEXT] [options]\n\n"
             "Bans TARGET (a worker id or a CURVE public key): its games are refused,\n"
             "its positions leave the replay window; its stored games are kept on disk.\n"
             "options:\n");
  xq_opts_help(&BAN, f, 18);
}

static void unban_usage(FILE *f) {
  fprintf(f, "usage: xqz unban TARGET [options]\n\n"
             "Lifts the ban on TARGET: its new games are accepted again.\n"
             "options:\n");
  xq_opts_help(&UNBAN, f, 18);
}

static int admin(int argc, char **argv, Xqz__AdminRequest__Action action) {
  bool ban = action == XQZ__ADMIN_REQUEST__ACTION__ACTION_BAN;
  const char *cmd = ban ? "ban" : "unban";
  const xq_opts_t *table = ban ? &BAN : &UNBAN;
  admin_opts_t o;
  memset(&o, 0, sizeof o); /* a row without a default leaves its field alone */
  xqz_remote_init(&o.r, cmd);
  o.reason = "";
  xq_opts_defaults(table, &o);
  const char **words = calloc((size_t)argc + 1, sizeof *words);
  int nwords = 0;
  if (!words) return 1;
  int st = xqz_options_parse(cmd, table, &o, argc, argv, words, &nwords,
                             ban ? ban_usage : unban_usage);
  const char *target = nwords ? words[0] : NULL;
  if (st < 0 && nwords > 1) st = xqz_usage_error(cmd, "unexpected argument '%s'", words[1]);
  if (st < 0 && (!target || !target[0]))
    st = xqz_usage_error(cmd, "which worker? give its id or CURVE public key");
  free(words);
  if (st >= 0) return st;
  const char *reason = o.reason;
  xqz_remote_t r = o.r;
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
