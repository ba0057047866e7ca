/*
 * admin.h: AdminRequest: ban, unban (admin.c); dispatch has checked the admin role.
 * Top floor: the functions take the coordinator's state (coord.h, which includes this
 * header after xqc_t).
 */
#ifndef XQC_ADMIN_H
#define XQC_ADMIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "peers/peers.h"
#include "xqz.pb-c.h"

typedef struct xqc_s xqc_t; /* coord.h */

void xqc_admin_request(xqc_t *c, xqc_peer_t *p, uint64_t request_id,
                       const Xqz__AdminRequest *r);
/* Answers an AdminRequest the sender may not make (AdminResult ok=false, why). */
void xqc_admin_refuse(xqc_t *c, xqc_peer_t *p, uint64_t rq, const char *why);
/* Answers an AdminRequest: ok, a message, and a token (NULL: none; xqz enrol-token's). */
void xqc_admin_reply(xqc_t *c, xqc_peer_t *p, uint64_t rq, bool ok, const char *msg,
                     const char *token);
/* Sets every worker statistics entry's banned flag from the bans (after a change). */
void xqc_admin_mark_workers(xqc_t *c);

#endif
