/*
 * client.h: one request, one reply, for short-lived clients of the coordinator (the xqz
 * CLI: status, promotions, ban). Opens a DEALER (wire/peer.h, with CURVE when curve->on),
 * sends the envelope, waits up to timeout_ms for the reply with the same request id.
 *
 * Ownership: xq_client_open/xq_client_close pair; a reply from xq_client_call is freed by
 * the caller with xq_wire_free.
 */
#ifndef XQ_CLIENT_H
#define XQ_CLIENT_H

#include "support/error.h"
#include "wire/curve.h"
#include "xqz.pb-c.h"

typedef struct {
  void *ctx, *sock;
  char addr[256];
  uint64_t next_request_id;
} xq_client_t;

/* curve may be NULL (plain). On failure nothing is left open (xq_client_close is safe). */
int xq_client_open(xq_client_t *cl, const char *addr, const xq_curve_t *curve, xq_errbuf_t *eb);
void xq_client_close(xq_client_t *cl);
/* Sends env (its request_id is set here) and waits for the answer. A timeout gives XQ_EIO
 * with a message that names the address and suggests the usual causes (coordinator down,
 * wrong address, CURVE key not allowed). An Error reply is returned as a reply, not an
 * error: the caller looks at (*reply)->body_case. */
int xq_client_call(xq_client_t *cl, Xqz__Envelope *env, int timeout_ms, Xqz__Envelope **reply,
                   xq_errbuf_t *eb);

#endif
