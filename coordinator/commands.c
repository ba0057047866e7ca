/*
 * commands.c: the command table and dispatch (see commands.h). The rows are in
 * commands.def; the check of a sender's roles against them is here, and only here.
 */
#include "commands.h"

#include <stdio.h>

#include "coord.h"
#include "peers/guard.h"
#include "support/log.h"
#include "wire/wire.h"

#define COMP "coordinator"

#define XQC_COMMAND(body, roles, handler, refuse, name, flags) \
  {XQZ__ENVELOPE__BODY_##body, roles, handler, refuse, name, flags},
static const xqc_command_t k_commands[] = {
#include "commands.def"
};
#undef XQC_COMMAND

const xqc_command_t *xqc_command_find(int body) {
  for (size_t i = 0; i < sizeof k_commands / sizeof k_commands[0]; i++)
    if (k_commands[i].body == body) return &k_commands[i];
  return NULL;
}

/* The handlers whose work lives in another room: each unwraps its body. */
void xqc_cmd_game(xqc_t *c, xqc_peer_t *p, uint64_t rq, const Xqz__Envelope *env) {
  xqc_ingest_game(c, p, rq, env->game);
}
void xqc_cmd_arena_result(xqc_t *c, xqc_peer_t *p, uint64_t rq, const Xqz__Envelope *env) {
  xqc_promote_arena_result(c, p, rq, env->arena_result);
}
void xqc_cmd_candidate(xqc_t *c, xqc_peer_t *p, uint64_t rq, const Xqz__Envelope *env) {
  xqc_promote_candidate(c, p, rq, env->candidate);
}
void xqc_cmd_admin_request(xqc_t *c, xqc_peer_t *p, uint64_t rq, const Xqz__Envelope *env) {
  xqc_admin_request(c, p, rq, env->admin_request);
}

/* true when p's roles allow cmd; else false with the refusal for the peer in why (n bytes),
 * counted and logged once per connection. A peer's roles are looked up (roles.h, through
 * peers.c) only for a message every peer may not send. */
static bool allowed(xqc_t *c, xqc_peer_t *p, const xqc_command_t *cmd, char *why, size_t n) {
  unsigned need = cmd->roles;
  if (!need) return true; /* not a request: dispatch refuses it as unexpected */
  unsigned have = XQC_ROLE_WORKER | XQC_ROLE_OBSERVER; /* every peer: no lookup needed */
  if (!(need & have)) have = xqc_peer_roles(c, p);
  if (need & have) return true;
  char roles[64];
  xqc_roles_text(need, roles, sizeof roles);
  const char *how;
  if (c->peers.auth.on)
    how = need & XQC_ROLE_ADMIN ? "this key is not in the coordinator's curve_admin_dir"
                                : "this key is not in the coordinator's curve_trainer_dir";
  else
    how = need & XQC_ROLE_ADMIN ? "without CURVE only loopback peers may; turn CURVE on to"
                                  " administer from another host"
                                : "without CURVE only loopback peers and trainer_addresses"
                                  " may";
  snprintf(why, n, "not allowed: %s needs the %s role; %s (peer address %s)", cmd->name, roles,
           how, p->address[0] ? p->address : "unknown");
  c->stats.role_refusals++;
  if (!p->role_refused) {
    char id[XQC_IDENTITY_MAX];
    xqc_peer_identity(p, id, sizeof id);
    p->role_refused = true;
    XQ_LOGW(COMP, "request refused: the peer's roles do not allow it (logged once per"
            " connection) peer=%s message=%s reason=\"%s\"", id, cmd->name, why);
  }
  return false;
}

/* false (refused, counted as a fault) when p asks for another large reply while more than
 * XQC_GUARD_UNREAD_MAX bytes of its replies are unread (guard.h). */
static bool reader_ok(xqc_t *c, xqc_peer_t *p, const xqc_command_t *cmd, uint64_t rq) {
  uint64_t unread;
  if (!cmd || !(cmd->flags & XQC_CMD_LARGE_REPLY) || xqc_guard_unread_ok(p, &unread))
    return true;
  char why[200];
  snprintf(why, sizeof why, "%llu bytes of replies unread: read them before asking for more"
           " (at most %u unread)", (unsigned long long)unread, XQC_GUARD_UNREAD_MAX);
  xqc_peer_error(c, p, why);
  if (!p->cut) xqc_reply_error(c, p->rid, p->rid_len, rq, XQ_ERROR_BAD_FIELD, why);
  return false;
}

static void dispatch_body(xqc_t *c, xqc_peer_t *p, const Xqz__Envelope *env) {
  uint64_t rq = env->request_id;
  if (p->hello) {
    xqc_worker_t *w = xqc_workers_find(&c->stats.workers, p->worker_id);
    if (w) xqc_worker_touch(w, xqc_now_ms());
  }
  /* A banned peer's games get a refusing Ack (ingest.c) so it stops resending them;
   * anything else it asks gets an Error. */
  if (env->body_case != XQZ__ENVELOPE__BODY_GAME &&
      (xqc_peer_banned(c, p) || xqc_bans_match(&c->peers.bans, xqc_named_worker(env), NULL))) {
    xqc_reply_error(c, p->rid, p->rid_len, rq, XQ_ERROR_BANNED, "banned");
    return;
  }
  const xqc_command_t *cmd = xqc_command_find((int)env->body_case);
  char why[400];
  if (cmd && !allowed(c, p, cmd, why, sizeof why)) {
    if (cmd->refuse) cmd->refuse(c, p, rq, why);
    else xqc_reply_error(c, p->rid, p->rid_len, rq, XQ_ERROR_NOT_ALLOWED, why);
    return;
  }
  if (!reader_ok(c, p, cmd, rq)) return;
  if (!cmd || !cmd->handler) { /* none of ours, or one of our own replies */
    xqc_peer_fault(c, p, "unexpected message type");
    xqc_reply_error(c, p->rid, p->rid_len, rq, XQ_ERROR_UNEXPECTED, "unexpected message type");
    return;
  }
  cmd->handler(c, p, rq, env);
}

void xqc_dispatch(xqc_t *c, int pi, const Xqz__Envelope *env) {
  uint64_t before = c->stats.reply_bytes;
  dispatch_body(c, &c->peers.list[pi], env);
  c->peers.list[pi].sent_bytes += c->stats.reply_bytes - before;
}
