/*
 * messages.h: one constructor per peer message that several programs send (the worker,
 * `xqz bench coordinator` and the tests), so the path the tests drive is the daemons' own.
 * Each fills an envelope (initialised here, request_id 0) and the message it points to;
 * both are the caller's, and the message and the strings and bytes it points to must
 * outlive the envelope's use (packing). Nothing is allocated.
 */
#ifndef XQ_MESSAGES_H
#define XQ_MESSAGES_H

#include <stddef.h>
#include <stdint.h>

#include "xqz.pb-c.h"

/* A Hello: the peer's role, worker id, host name and search threads, this software's
 * version, and the campaign the peer believes in (0: not known yet). */
void xq_msg_hello(Xqz__Envelope *env, Xqz__Hello *h, Xqz__Role role, const char *worker_id,
                  const char *host, uint32_t threads, uint64_t campaign_id);
/* A GameRecord: one game in the game-record format (docs/game-records.md) under
 * (worker_id, seq). */
void xq_msg_game(Xqz__Envelope *env, Xqz__GameRecord *g, const char *worker_id, uint64_t seq,
                 const void *record, size_t len);
/* A CandidateNet: a weights file image (nn_file_encode) and its training step. */
void xq_msg_candidate(Xqz__Envelope *env, Xqz__CandidateNet *cn, const void *net, size_t len,
                      uint64_t step);

#endif
