/* reply.c: answering a peer on the ROUTER (see reply.h). */
#include "reply.h"

#include <zmq.h>

#include "coord.h"
#include "support/log.h"
#include "wire/messages.h"
#include "wire/wire.h"

#define COMP "coordinator"

void xqc_reply(xqc_t *c, const uint8_t *rid, size_t rid_len, Xqz__Envelope *env) {
  int rc = xq_wire_send(c->router, rid, rid_len, env, ZMQ_DONTWAIT);
  if (rc < 0) XQ_LOGW(COMP, "reply not sent (peer gone or slow) err=\"%s\"", xq_strerror(rc));
  else c->stats.reply_bytes += xqz__envelope__get_packed_size(env); /* per peer in dispatch */
}

void xqc_reply_error(xqc_t *c, const uint8_t *rid, size_t rid_len, uint64_t request_id,
                     unsigned code, const char *msg) {
  Xqz__Envelope env;
  Xqz__Error e;
  xq_msg_error(&env, &e, code, msg);
  env.request_id = request_id;
  xqc_reply(c, rid, rid_len, &env);
}

void xqc_reply_wait(xqc_t *c, const uint8_t *rid, size_t rid_len, uint64_t request_id,
                    uint32_t ms, const char *why) {
  Xqz__Envelope env;
  Xqz__Wait w;
  xq_msg_wait(&env, &w, ms, why);
  env.request_id = request_id;
  xqc_reply(c, rid, rid_len, &env);
}
