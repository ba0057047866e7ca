/*
 * metrics.h: the coordinator's Status (proto/xqz.proto) in the Prometheus text exposition
 * format (version 0.0.4), served at /metrics. Every family has HELP and TYPE lines; names
 * start with xqz_; counters end in _total; label values are escaped and made valid UTF-8,
 * since worker ids and host names come from peers.
 *
 * Ownership: returns a malloc'd NUL-terminated string (NULL when out of memory).
 */
#ifndef XQC_METRICS_H
#define XQC_METRICS_H

#include "xqz.pb-c.h"

#define XQC_METRICS_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

char *xqc_metrics_text(const Xqz__Status *s);

#endif
