/*
 * commands.h: the coordinator's command table and dispatch, in the manner of Valkey's
 * command table (src/commands.def read by processCommand in src/server.c). Every body case
 * of the Envelope oneof has one row (commands.def): its name, the roles allowed to send it,
 * its handler, how a sender without the role is refused, and its flags. Dispatch looks the
 * message up, checks the sender's roles against the row (this is where roles are enforced;
 * a peer's roles come from roles.h), and calls the handler. The permission check, the
 * dispatch and the tests read this one list, so they cannot disagree.
 *
 * Top floor: handlers take the coordinator's state (coord.h) and the peer, and answer
 * through reply.h.
 */
#ifndef XQC_COMMANDS_H
#define XQC_COMMANDS_H

#include <stdint.h>

#include "peers/peers.h"
#include "peers/roles.h"
#include "xqz.pb-c.h"

typedef struct xqc_s xqc_t; /* coord.h */

/* Answers the message env from peer p; rq is its request id. env is the caller's. */
typedef void xqc_command_fn(xqc_t *c, xqc_peer_t *p, uint64_t rq, const Xqz__Envelope *env);
/* Answers a message its sender's roles do not allow; why is the refusal for the peer. */
typedef void xqc_refuse_fn(xqc_t *c, xqc_peer_t *p, uint64_t rq, const char *why);

enum {
  /* The reply may be large (a net chunk, the status): answered only while the peer reads
   * its replies (guard.h), else refused and counted. */
  XQC_CMD_LARGE_REPLY = 1u << 0,
};

typedef struct {
  int body;               /* Xqz__Envelope body case */
  unsigned roles;         /* XQC_ROLE_* allowed to send it; 0: no peer may */
  xqc_command_fn *handler; /* NULL exactly when roles is 0 */
  xqc_refuse_fn *refuse;  /* NULL: refused with an Error XQ_ERROR_NOT_ALLOWED */
  const char *name;       /* the message type's name, for logs and refusals */
  unsigned flags;         /* XQC_CMD_* */
} xqc_command_t;

/* The row of a body case; NULL for one the table does not know (none, or a newer type). */
const xqc_command_t *xqc_command_find(int body);
/* Dispatches env from peer pi (an index in c->peers.list): a banned sender is refused, then the
 * roles are checked, then the row's handler answers; the bytes of the replies are charged
 * to the peer. env stays the caller's. */
void xqc_dispatch(xqc_t *c, int pi, const Xqz__Envelope *env);

/* The handlers of commands.def. requests.c answers the small requests from the loop's
 * state; the others unwrap the body for their room (ingest.c, promote.c, nets.c, admin.c). */
void xqc_cmd_hello(xqc_t *c, xqc_peer_t *p, uint64_t rq, const Xqz__Envelope *env);
void xqc_cmd_heartbeat(xqc_t *c, xqc_peer_t *p, uint64_t rq, const Xqz__Envelope *env);
void xqc_cmd_job_request(xqc_t *c, xqc_peer_t *p, uint64_t rq, const Xqz__Envelope *env);
void xqc_cmd_batch_request(xqc_t *c, xqc_peer_t *p, uint64_t rq, const Xqz__Envelope *env);
void xqc_cmd_status(xqc_t *c, xqc_peer_t *p, uint64_t rq, const Xqz__Envelope *env);
void xqc_cmd_promotions(xqc_t *c, xqc_peer_t *p, uint64_t rq, const Xqz__Envelope *env);
void xqc_cmd_net_request(xqc_t *c, xqc_peer_t *p, uint64_t rq, const Xqz__Envelope *env);
void xqc_cmd_game(xqc_t *c, xqc_peer_t *p, uint64_t rq, const Xqz__Envelope *env);
void xqc_cmd_arena_result(xqc_t *c, xqc_peer_t *p, uint64_t rq, const Xqz__Envelope *env);
void xqc_cmd_candidate(xqc_t *c, xqc_peer_t *p, uint64_t rq, const Xqz__Envelope *env);
void xqc_cmd_admin_request(xqc_t *c, xqc_peer_t *p, uint64_t rq, const Xqz__Envelope *env);
void xqc_cmd_enrol(xqc_t *c, xqc_peer_t *p, uint64_t rq, const Xqz__Envelope *env); /* enrol.c */
/* members_wire.c: a population member asks for the checkpoint its copy order names. */
void xqc_cmd_checkpoint_request(xqc_t *c, xqc_peer_t *p, uint64_t rq, const Xqz__Envelope *env);

#endif
