/* messages.c: the shared message constructors (messages.h). */
#include "wire/messages.h"

#include "support/version.h"
#include "wire/wire.h"

void xq_msg_hello(Xqz__Envelope *env, Xqz__Hello *h, Xqz__Role role, const char *worker_id,
                  const char *host, uint32_t threads, uint64_t campaign_id) {
  xq_wire_init(env);
  xqz__hello__init(h);
  h->role = role;
  h->worker_id = (char *)worker_id;
  h->host = (char *)host;
  h->threads = threads;
  h->software_version = (char *)XQ_SOFTWARE_NAME;
  h->campaign_id = campaign_id;
  env->body_case = XQZ__ENVELOPE__BODY_HELLO;
  env->hello = h;
}

void xq_msg_candidate(Xqz__Envelope *env, Xqz__CandidateNet *cn, const void *net, size_t len,
                      uint64_t step) {
  xq_wire_init(env);
  xqz__candidate_net__init(cn);
  cn->net.data = (uint8_t *)net;
  cn->net.len = len;
  cn->step = step;
  env->body_case = XQZ__ENVELOPE__BODY_CANDIDATE;
  env->candidate = cn;
}

void xq_msg_game(Xqz__Envelope *env, Xqz__GameRecord *g, const char *worker_id, uint64_t seq,
                 const void *record, size_t len) {
  xq_wire_init(env);
  xqz__game_record__init(g);
  g->worker_id = (char *)worker_id;
  g->seq = seq;
  g->record.data = (uint8_t *)record;
  g->record.len = len;
  env->body_case = XQZ__ENVELOPE__BODY_GAME;
  env->game = g;
}
