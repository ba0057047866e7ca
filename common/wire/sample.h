/*
 * sample.h: compact training samples (records/sample.h) to and from the wire's Sample
 * message.
 */
#ifndef XQ_WIRE_SAMPLE_H
#define XQ_WIRE_SAMPLE_H

#include <stdint.h>

#include "rules/board.h"
#include "support/error.h"
#include "records/sample.h"
#include "xqz.pb-c.h"

/* Conversions to and from the wire. to_proto points msg's arrays into scratch owned by
 * the caller (see the .c); from_proto validates every field (board codes, kings, indices,
 * probabilities, the position by the rules, the survival target's length and bits, the
 * reply's squares) and returns XQ_EFORMAT with a reason on any problem. pos is the
 * caller's scratch (a position is large; nothing is allocated here): on success it holds
 * the sample's position (xq_sample_position's, for the legal-move mask), so the sample is
 * checked and set up once. */
int xq_sample_from_proto(xq_sample_t *s, xq_pos_t *pos, const Xqz__Sample *msg,
                         xq_errbuf_t *eb);
/* Fills msg (initialised here) from s. msg's arrays point into s (board, survive) and into the
 * caller's scratch: idx_scratch and prob_scratch hold at least s->npi entries and must
 * outlive msg's use (packing). Nothing is allocated; do not free msg's fields. */
void xq_sample_to_proto(Xqz__Sample *msg, const xq_sample_t *s, uint32_t *idx_scratch,
                        float *prob_scratch);

#endif
