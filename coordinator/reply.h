/*
 * reply.h: answering a peer on the ROUTER. Every handler replies through these: they send
 * without blocking (a vanished or slow peer loses the reply, which is logged, never fatal)
 * and count the bytes sent in c->stats.reply_bytes, which dispatch charges to the peer
 * (guard.h).
 * The envelope stays the caller's: nothing here takes ownership.
 */
#ifndef XQC_REPLY_H
#define XQC_REPLY_H

#include <stddef.h>
#include <stdint.h>

#include "xqz.pb-c.h"

typedef struct xqc_s xqc_t; /* coord.h */

/* Sends env to the peer with routing id rid. */
void xqc_reply(xqc_t *c, const uint8_t *rid, size_t rid_len, Xqz__Envelope *env);
/* Sends an Error (code: XQ_ERROR_*, wire.h) answering request_id. */
void xqc_reply_error(xqc_t *c, const uint8_t *rid, size_t rid_len, uint64_t request_id,
                     unsigned code, const char *msg);
/* Sends a Wait answering request_id: retry in ms milliseconds, why says what is awaited. */
void xqc_reply_wait(xqc_t *c, const uint8_t *rid, size_t rid_len, uint64_t request_id,
                    uint32_t ms, const char *why);

#endif
