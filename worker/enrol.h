/*
 * enrol.h: `xqz-worker --enrol TOKEN`: before it starts, the worker presents a one-time
 * enrolment token (from `xqz enrol-token`) on a connection of its own with its CURVE key;
 * the coordinator, if the token is good, adds this key to its curve_allow_dir (the worker
 * role only), and the worker then connects as usual. docs/protocol.md, Enrolment.
 */
#ifndef XQ_WORKER_ENROL_H
#define XQ_WORKER_ENROL_H

#include "support/error.h"
#include "wire/curve.h"

/* Enrols curve's client key with token at coordinator. 0 when the key is allowed now (or
 * was already); XQ_EINVAL when the token was refused (why in eb: unknown, expired, used);
 * XQ_EIO when the coordinator did not answer (eb says the likely causes). */
int xq_worker_enrol(const char *coordinator, const xq_curve_t *curve, const char *token,
                    int timeout_ms, xq_errbuf_t *eb);

#endif
