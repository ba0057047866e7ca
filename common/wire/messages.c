/* messages.c: the message constructors (messages.h), one per body of the envelope. */
#include "wire/messages.h"

#include "support/version.h"
#include "wire/wire.h"

/* A string field from an argument: NULL is sent as "". */
static char *str(const char *s) { return (char *)(s ? s : ""); }

void xq_msg_hello(Xqz__Envelope *env, Xqz__Hello *h, Xqz__Role role, const char *worker_id,
                  const char *host, uint32_t threads, uint64_t campaign_id) {
  xq_wire_init(env);
  xqz__hello__init(h);
  h->role = role;
  h->worker_id = str(worker_id);
  h->host = str(host);
  h->threads = threads;
  h->software_version = (char *)XQ_SOFTWARE_NAME;
  h->campaign_id = campaign_id;
  env->body_case = XQZ__ENVELOPE__BODY_HELLO;
  env->hello = h;
}

void xq_msg_welcome(Xqz__Envelope *env, Xqz__Welcome *w, const char *worker_id,
                    uint64_t best_net_id, Xqz__SelfplaySettings *settings,
                    uint32_t heartbeat_ms, uint64_t campaign_id) {
  xq_wire_init(env);
  xqz__welcome__init(w);
  w->worker_id = str(worker_id);
  w->best_net_id = best_net_id;
  w->settings = settings;
  w->heartbeat_ms = heartbeat_ms;
  w->campaign_id = campaign_id;
  env->body_case = XQZ__ENVELOPE__BODY_WELCOME;
  env->welcome = w;
}

void xq_msg_heartbeat(Xqz__Envelope *env, Xqz__Heartbeat *h, const char *worker_id,
                      uint64_t net_id, uint64_t games_done) {
  xq_wire_init(env);
  xqz__heartbeat__init(h);
  h->worker_id = str(worker_id);
  h->net_id = net_id;
  h->games_done = games_done;
  env->body_case = XQZ__ENVELOPE__BODY_HEARTBEAT;
  env->heartbeat = h;
}

void xq_msg_job_request(Xqz__Envelope *env, Xqz__JobRequest *r, const char *worker_id) {
  xq_wire_init(env);
  xqz__job_request__init(r);
  r->worker_id = str(worker_id);
  env->body_case = XQZ__ENVELOPE__BODY_JOB_REQUEST;
  env->job_request = r;
}

void xq_msg_job_selfplay(Xqz__Envelope *env, Xqz__Job *job, Xqz__SelfplayJob *sp,
                         uint64_t net_id, Xqz__SelfplaySettings *settings, uint32_t games) {
  xq_wire_init(env);
  xqz__job__init(job);
  xqz__selfplay_job__init(sp);
  sp->net_id = net_id;
  sp->settings = settings;
  sp->games = games;
  job->kind_case = XQZ__JOB__KIND_SELFPLAY;
  job->selfplay = sp;
  env->body_case = XQZ__ENVELOPE__BODY_JOB;
  env->job = job;
}

void xq_msg_job_arena(Xqz__Envelope *env, Xqz__Job *job, Xqz__ArenaJob *aj) {
  xq_wire_init(env);
  xqz__job__init(job);
  job->kind_case = XQZ__JOB__KIND_ARENA;
  job->arena = aj;
  env->body_case = XQZ__ENVELOPE__BODY_JOB;
  env->job = job;
}

void xq_msg_game(Xqz__Envelope *env, Xqz__GameRecord *g, const char *worker_id, uint64_t seq,
                 const void *record, size_t len) {
  xq_wire_init(env);
  xqz__game_record__init(g);
  g->worker_id = str(worker_id);
  g->seq = seq;
  g->record.data = (uint8_t *)record;
  g->record.len = len;
  env->body_case = XQZ__ENVELOPE__BODY_GAME;
  env->game = g;
}

void xq_msg_ack(Xqz__Envelope *env, Xqz__Ack *a, const char *worker_id, uint64_t seq,
                bool accepted, const char *reason) {
  xq_wire_init(env);
  xqz__ack__init(a);
  a->worker_id = str(worker_id);
  a->seq = seq;
  a->accepted = accepted;
  a->reason = str(reason);
  env->body_case = XQZ__ENVELOPE__BODY_ACK;
  env->ack = a;
}

void xq_msg_arena_result(Xqz__Envelope *env, Xqz__ArenaResult *r, const char *worker_id,
                         uint64_t match_id, uint32_t pair_index, int32_t result_a_red,
                         int32_t result_a_black) {
  xq_wire_init(env);
  xqz__arena_result__init(r);
  r->worker_id = str(worker_id);
  r->match_id = match_id;
  r->pair_index = pair_index;
  r->result_a_red = result_a_red;
  r->result_a_black = result_a_black;
  env->body_case = XQZ__ENVELOPE__BODY_ARENA_RESULT;
  env->arena_result = r;
}

void xq_msg_net_request(Xqz__Envelope *env, Xqz__NetRequest *r, uint64_t net_id,
                        uint64_t offset, uint32_t max_bytes) {
  xq_wire_init(env);
  xqz__net_request__init(r);
  r->net_id = net_id;
  r->offset = offset;
  r->max_bytes = max_bytes;
  env->body_case = XQZ__ENVELOPE__BODY_NET_REQUEST;
  env->net_request = r;
}

void xq_msg_checkpoint_request(Xqz__Envelope *env, Xqz__CheckpointRequest *r, uint64_t net_id,
                               uint32_t member_slot) {
  xq_wire_init(env);
  xqz__checkpoint_request__init(r);
  r->net_id = net_id;
  r->member_slot = member_slot;
  env->body_case = XQZ__ENVELOPE__BODY_CHECKPOINT_REQUEST;
  env->checkpoint_request = r;
}
void xq_msg_checkpoint(Xqz__Envelope *env, Xqz__Checkpoint *ck, uint64_t net_id, uint64_t step,
                       uint32_t crc32, const void *data, size_t len) {
  xq_wire_init(env);
  xqz__checkpoint__init(ck);
  ck->net_id = net_id;
  ck->step = step;
  ck->crc32 = crc32;
  ck->data.data = (uint8_t *)data; /* only read by the packer */
  ck->data.len = len;
  env->body_case = XQZ__ENVELOPE__BODY_CHECKPOINT;
  env->checkpoint = ck;
}
void xq_msg_net_chunk(Xqz__Envelope *env, Xqz__NetChunk *ch, uint64_t net_id, uint64_t offset,
                      uint64_t total, uint32_t file_crc32, const void *data, size_t len) {
  xq_wire_init(env);
  xqz__net_chunk__init(ch);
  ch->net_id = net_id;
  ch->offset = offset;
  ch->total = total;
  ch->file_crc32 = file_crc32;
  ch->data.data = (uint8_t *)data; /* only read by the packer */
  ch->data.len = len;
  env->body_case = XQZ__ENVELOPE__BODY_NET_CHUNK;
  env->net_chunk = ch;
}

void xq_msg_net_announce(Xqz__Envelope *env, Xqz__NetAnnounce *a, uint64_t net_id,
                         uint64_t size, uint32_t file_crc32) {
  xq_wire_init(env);
  xqz__net_announce__init(a);
  a->net_id = net_id;
  a->size = size;
  a->file_crc32 = file_crc32;
  env->body_case = XQZ__ENVELOPE__BODY_NET_ANNOUNCE;
  env->net_announce = a;
}

void xq_msg_batch_request(Xqz__Envelope *env, Xqz__BatchRequest *br, uint32_t size,
                          uint64_t trainer_step) {
  xq_wire_init(env);
  xqz__batch_request__init(br);
  br->size = size;
  br->trainer_step = trainer_step;
  env->body_case = XQZ__ENVELOPE__BODY_BATCH_REQUEST;
  env->batch_request = br;
}

void xq_msg_batch(Xqz__Envelope *env, Xqz__Batch *b, Xqz__Sample **samples, size_t n) {
  xq_wire_init(env);
  xqz__batch__init(b);
  b->n_samples = n;
  b->samples = samples;
  env->body_case = XQZ__ENVELOPE__BODY_BATCH;
  env->batch = b;
}

void xq_msg_wait(Xqz__Envelope *env, Xqz__Wait *w, uint32_t retry_ms, const char *reason) {
  xq_wire_init(env);
  xqz__wait__init(w);
  w->retry_ms = retry_ms;
  w->reason = str(reason);
  env->body_case = XQZ__ENVELOPE__BODY_WAIT;
  env->wait = w;
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

void xq_msg_status_request(Xqz__Envelope *env, Xqz__StatusRequest *sr) {
  xq_wire_init(env);
  xqz__status_request__init(sr);
  env->body_case = XQZ__ENVELOPE__BODY_STATUS_REQUEST;
  env->status_request = sr;
}

void xq_msg_status(Xqz__Envelope *env, Xqz__Status *s) {
  xq_wire_init(env);
  env->body_case = XQZ__ENVELOPE__BODY_STATUS;
  env->status = s;
}

void xq_msg_error(Xqz__Envelope *env, Xqz__Error *e, uint32_t code, const char *message) {
  xq_wire_init(env);
  xqz__error__init(e);
  e->code = code;
  e->message = str(message);
  env->body_case = XQZ__ENVELOPE__BODY_ERROR;
  env->error = e;
}

void xq_msg_promotions_request(Xqz__Envelope *env, Xqz__PromotionsRequest *q,
                               uint64_t after_match_id) {
  xq_wire_init(env);
  xqz__promotions_request__init(q);
  q->after_match_id = after_match_id;
  env->body_case = XQZ__ENVELOPE__BODY_PROMOTIONS_REQUEST;
  env->promotions_request = q;
}

void xq_msg_promotions(Xqz__Envelope *env, Xqz__Promotions *pr) {
  xq_wire_init(env);
  env->body_case = XQZ__ENVELOPE__BODY_PROMOTIONS;
  env->promotions = pr;
}

void xq_msg_admin_request(Xqz__Envelope *env, Xqz__AdminRequest *r,
                          Xqz__AdminRequest__Action action, const char *target) {
  xq_wire_init(env);
  xqz__admin_request__init(r);
  r->action = action;
  r->target = str(target);
  env->body_case = XQZ__ENVELOPE__BODY_ADMIN_REQUEST;
  env->admin_request = r;
}

void xq_msg_admin_result(Xqz__Envelope *env, Xqz__AdminResult *r, bool ok,
                         const char *message) {
  xq_wire_init(env);
  xqz__admin_result__init(r);
  r->ok = ok;
  r->message = str(message);
  env->body_case = XQZ__ENVELOPE__BODY_ADMIN_RESULT;
  env->admin_result = r;
}

void xq_msg_enrol_request(Xqz__Envelope *env, Xqz__EnrolRequest *r, const char *token,
                          const char *host) {
  xq_wire_init(env);
  xqz__enrol_request__init(r);
  r->token = str(token);
  r->host = str(host);
  env->body_case = XQZ__ENVELOPE__BODY_ENROL_REQUEST;
  env->enrol_request = r;
}

void xq_msg_enrol_result(Xqz__Envelope *env, Xqz__EnrolResult *r,
                         Xqz__EnrolResult__Reason reason, const char *message) {
  xq_wire_init(env);
  xqz__enrol_result__init(r);
  r->ok = reason == XQZ__ENROL_RESULT__REASON__REASON_NONE;
  r->reason = reason;
  r->message = str(message);
  env->body_case = XQZ__ENVELOPE__BODY_ENROL_RESULT;
  env->enrol_result = r;
}
