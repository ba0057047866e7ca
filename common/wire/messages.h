/*
 * messages.h: one constructor per message of the Envelope oneof (proto/xqz.proto), used by
 * every program that sends one (the daemons, the tools, the benches and the tests), so the
 * path the tests drive is the daemons' own.
 *
 * Each xq_msg_NAME(env, m, ...) initialises the envelope (xq_wire_init: this protocol
 * version, request_id 0) and the message m, sets the fields every sender sets from its
 * arguments, and links m as the envelope's body. The caller sets the optional rest on m
 * (and env->request_id) afterwards. Both are the caller's; the message and the strings,
 * bytes and submessages it points to must outlive the envelope's use (packing). Nothing
 * is allocated. A NULL string argument is sent as "" (the same on the wire in proto3).
 *
 * Exceptions, said where they stand: a Job links an ArenaJob the caller filled, and a
 * Status or Promotions (large, built elsewhere) is linked as it is, not initialised.
 */
#ifndef XQ_MESSAGES_H
#define XQ_MESSAGES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "xqz.pb-c.h"

/* A Hello: the peer's role, worker id, host name and search threads, this software's
 * version, and the campaign the peer believes in (0: not known yet). Optional: features. */
void xq_msg_hello(Xqz__Envelope *env, Xqz__Hello *h, Xqz__Role role, const char *worker_id,
                  const char *host, uint32_t threads, uint64_t campaign_id);
/* A Welcome: the worker id, the best net (0: none yet), the self-play settings (may be
 * NULL), the heartbeat interval and the campaign id. */
void xq_msg_welcome(Xqz__Envelope *env, Xqz__Welcome *w, const char *worker_id,
                    uint64_t best_net_id, Xqz__SelfplaySettings *settings,
                    uint32_t heartbeat_ms, uint64_t campaign_id);
/* A Heartbeat: the worker id, the net it plays with and the games it has played.
 * Optional: paused, pause_reason. */
void xq_msg_heartbeat(Xqz__Envelope *env, Xqz__Heartbeat *h, const char *worker_id,
                      uint64_t net_id, uint64_t games_done);
/* A JobRequest from worker_id. */
void xq_msg_job_request(Xqz__Envelope *env, Xqz__JobRequest *r, const char *worker_id);
/* A self-play Job: games of net_id under settings (may be NULL); sp is initialised here. */
void xq_msg_job_selfplay(Xqz__Envelope *env, Xqz__Job *job, Xqz__SelfplayJob *sp,
                         uint64_t net_id, Xqz__SelfplaySettings *settings, uint32_t games);
/* An arena Job: aj is the caller's, already initialised and filled (an ArenaJob has too
 * many fields for arguments); it is linked, not touched. */
void xq_msg_job_arena(Xqz__Envelope *env, Xqz__Job *job, Xqz__ArenaJob *aj);
/* A GameRecord: one game in the game-record format (docs/game-records.md) under
 * (worker_id, seq). */
void xq_msg_game(Xqz__Envelope *env, Xqz__GameRecord *g, const char *worker_id, uint64_t seq,
                 const void *record, size_t len);
/* An Ack of (worker_id, seq): accepted, or refused for good with a reason. */
void xq_msg_ack(Xqz__Envelope *env, Xqz__Ack *a, const char *worker_id, uint64_t seq,
                bool accepted, const char *reason);
/* An ArenaResult: a pair's two results (+1, 0, -1 for A) under (match_id, pair_index).
 * Optional: reason_a_red, reason_a_black. */
void xq_msg_arena_result(Xqz__Envelope *env, Xqz__ArenaResult *r, const char *worker_id,
                         uint64_t match_id, uint32_t pair_index, int32_t result_a_red,
                         int32_t result_a_black);
/* A NetRequest: up to max_bytes (0: the coordinator's chunk) of net_id from offset. */
void xq_msg_net_request(Xqz__Envelope *env, Xqz__NetRequest *r, uint64_t net_id,
                        uint64_t offset, uint32_t max_bytes);
/* A NetChunk: len bytes at offset of net_id, a file of total bytes and CRC-32 file_crc32. */
void xq_msg_net_chunk(Xqz__Envelope *env, Xqz__NetChunk *ch, uint64_t net_id, uint64_t offset,
                      uint64_t total, uint32_t file_crc32, const void *data, size_t len);
/* A NetAnnounce: net_id's file size and CRC-32. Optional: parent_id, elo. */
void xq_msg_net_announce(Xqz__Envelope *env, Xqz__NetAnnounce *a, uint64_t net_id,
                         uint64_t size, uint32_t file_crc32);
/* A BatchRequest: size samples (0: the coordinator's batch size) at trainer_step.
 * Optional: the loss report, campaign_id, software_version, candidate_every, max_steps. */
void xq_msg_batch_request(Xqz__Envelope *env, Xqz__BatchRequest *br, uint32_t size,
                          uint64_t trainer_step);
/* A Batch of n samples. Optional: window_positions, total_positions, best_net_id,
 * campaign_id. */
void xq_msg_batch(Xqz__Envelope *env, Xqz__Batch *b, Xqz__Sample **samples, size_t n);
/* A Wait: retry after retry_ms, and why. */
void xq_msg_wait(Xqz__Envelope *env, Xqz__Wait *w, uint32_t retry_ms, const char *reason);
/* A CandidateNet: a weights file image (nn_file_encode) and its training step. */
void xq_msg_candidate(Xqz__Envelope *env, Xqz__CandidateNet *cn, const void *net, size_t len,
                      uint64_t step);
/* A CheckpointRequest: a population member (1-based member_slot) asks for the checkpoint
 * of net_id, as its copy order names it. */
void xq_msg_checkpoint_request(Xqz__Envelope *env, Xqz__CheckpointRequest *r, uint64_t net_id,
                               uint32_t member_slot);
/* A Checkpoint: the .xqzc image of len bytes of net_id at step, with its CRC-32. */
void xq_msg_checkpoint(Xqz__Envelope *env, Xqz__Checkpoint *ck, uint64_t net_id, uint64_t step,
                       uint32_t crc32, const void *data, size_t len);
/* A StatusRequest (it has no fields). */
void xq_msg_status_request(Xqz__Envelope *env, Xqz__StatusRequest *sr);
/* A Status: s is the caller's, filled (xqz__status__init and its fields); linked only. */
void xq_msg_status(Xqz__Envelope *env, Xqz__Status *s);
/* An Error: an ErrorCode (XQ_ERROR_..., wire.h) and a message for the operator. */
void xq_msg_error(Xqz__Envelope *env, Xqz__Error *e, uint32_t code, const char *message);
/* A PromotionsRequest: the matches decided after after_match_id. */
void xq_msg_promotions_request(Xqz__Envelope *env, Xqz__PromotionsRequest *q,
                               uint64_t after_match_id);
/* A Promotions: pr is the caller's, filled; linked only. */
void xq_msg_promotions(Xqz__Envelope *env, Xqz__Promotions *pr);
/* An AdminRequest: action on target (may be NULL). Optional: reason, ttl_s. */
void xq_msg_admin_request(Xqz__Envelope *env, Xqz__AdminRequest *r,
                          Xqz__AdminRequest__Action action, const char *target);
/* An AdminResult: ok and a message for the operator. Optional: token. */
void xq_msg_admin_result(Xqz__Envelope *env, Xqz__AdminResult *r, bool ok,
                         const char *message);
/* An EnrolRequest: the one-time token and this host's name. */
void xq_msg_enrol_request(Xqz__Envelope *env, Xqz__EnrolRequest *r, const char *token,
                          const char *host);
/* An EnrolResult: ok exactly when reason is REASON_NONE, and a message for the operator.
 * Optional: key_name. */
void xq_msg_enrol_result(Xqz__Envelope *env, Xqz__EnrolResult *r,
                         Xqz__EnrolResult__Reason reason, const char *message);

#endif
