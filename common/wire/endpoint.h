/*
 * endpoint.h: the one check of a ZeroMQ endpoint given by a user (--coordinator, --pub,
 * the coordinator's router and pub settings), made before any socket is opened, so a
 * mistake is named with its fix instead of zmq_connect's "Invalid argument".
 */
#ifndef XQ_ENDPOINT_H
#define XQ_ENDPOINT_H

#include "support/error.h"

/* 0 when ep looks like a ZeroMQ endpoint (TRANSPORT://ADDRESS, and tcp:// with a
 * HOST:PORT); otherwise XQ_EINVAL with a message naming ep and the fix, e.g. for
 * "127.0.0.1:5655": "... needs its transport: tcp://127.0.0.1:5655". what names the
 * option in the message ("--coordinator"). */
int xq_endpoint_check(const char *ep, const char *what, xq_errbuf_t *eb);

#endif
