/*
 * enrol.h: one-time enrolment tokens (docs/protocol.md, Enrolment). With CURVE, an admin
 * asks for a token (AdminRequest ACTION_ENROL_TOKEN, `xqz enrol-token`); the coordinator
 * makes 16 random bytes with getrandom(2), answers them once as 32 hex digits, and keeps
 * only their keyed BLAKE2b-256 hash (libsodium's crypto_generichash) with the expiry in
 * campaign.db (enrol_tokens). While a token is open, the ZAP handler lets a key that is in
 * no allow dir connect (auth.h: enrol_until_s), and such a connection may send only an
 * EnrolRequest (peers.c, roles.h). A token that matches (constant-time over every row) is
 * consumed by one UPDATE that changes exactly one row, and only then is the connection's
 * own key written into curve_allow_dir (temp, fsync, rename, fsync the directory): the
 * worker role, never admin or trainer. Refusals say unknown, expired or used, and count as
 * faults against the connection.
 *
 * Top floor: the functions take the coordinator's state (coord.h).
 */
#ifndef XQC_ENROL_H
#define XQC_ENROL_H

#include <stdint.h>

#include "peers/peers.h"
#include "support/error.h"
#include "xqz.pb-c.h"

typedef struct xqc_s xqc_t;

#define XQC_ENROL_TOKEN_BYTES 16   /* 128 random bits */
#define XQC_ENROL_HASH_BYTES 32
#define XQC_ENROL_TTL_DEFAULT_S 3600
#define XQC_ENROL_TTL_MAX_S (7 * 86400)
#define XQC_ENROL_OPEN_MAX 64      /* open tokens at most (unused, unexpired) */

/* At start, after campaign.db is open: creates enrol_tokens when missing and opens
 * enrolment in the ZAP handler while a stored token is open. */
int xqc_enrol_open(xqc_t *c, xq_errbuf_t *eb);
/* AdminRequest ACTION_ENROL_TOKEN from peer p (dispatch checked the admin role). */
void xqc_enrol_token(xqc_t *c, xqc_peer_t *p, uint64_t rq, const Xqz__AdminRequest *r);
/* The keyed hash a token is stored under (out: XQC_ENROL_HASH_BYTES). */
void xqc_enrol_hash(const uint8_t token[XQC_ENROL_TOKEN_BYTES],
                    uint8_t out[XQC_ENROL_HASH_BYTES]);

#endif
