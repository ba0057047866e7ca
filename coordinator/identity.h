/*
 * identity.h: the coordinator's checks that a peer, a request or a net belongs to this
 * campaign. Every campaign has a random 64-bit id (campaign_db.h); a Hello and a
 * BatchRequest carry the id the peer believes in (0: it does not know yet, e.g. a fresh
 * worker or an older build), every net file records one (nn_file.h; 0 in files written
 * before campaign ids). A peer of another campaign is refused with an Error of code
 * XQ_ERROR_CAMPAIGN naming both ids and what to do; a candidate net of another campaign or
 * of another architecture than net_size is refused with an Ack naming the reason.
 * Each check replies and logs by itself; the handler returns when it says false.
 */
#ifndef XQC_IDENTITY_H
#define XQC_IDENTITY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "coord.h"
#include "nn/nn_file.h"

/* Hello: false (and an Error sent) when the peer is older than min_peer_version (Error
 * XQ_ERROR_PROTOCOL_VERSION naming the version to install) or names another campaign. */
bool xqc_identity_hello_ok(xqc_t *c, xqc_peer_t *p, uint64_t rq, const Xqz__Hello *h);
/* BatchRequest: the same for the trainer; records its version (c->stats.trainer_version). */
bool xqc_identity_batch_ok(xqc_t *c, xqc_peer_t *p, uint64_t rq, const Xqz__BatchRequest *r);
/* A decoded CandidateNet: false with the reason in why (for its Ack) when the net is of
 * another campaign or its architecture is not the campaign's net_size. A net without a
 * campaign id (an older trainer) is accepted with a warning. */
bool xqc_identity_candidate_ok(xqc_t *c, const xqc_peer_t *p, const nn_file_meta_t *meta,
                               char *why, size_t n);

/* Copies a peer's free text (host name, version, architecture) into out (n bytes) with
 * every byte that is not printable ASCII, and every quote or backslash, replaced by '?': it
 * is stored, shown by the views and logged inside quotes. s NULL reads as "". */
void xqc_clean_text(char *out, size_t n, const char *s);

#endif
