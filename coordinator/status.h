/*
 * status.h: the coordinator's state as one Status message (proto/xqz.proto). It is the
 * single source of every view: the StatusRequest reply (`xqz status`), the HTTP
 * endpoints (/api/status, /metrics, the dashboard) and the periodic status log line.
 *
 * Ownership: xqc_status_build allocates the whole message tree; free it with
 * xqc_status_free.
 */
#ifndef XQC_STATUS_H
#define XQC_STATUS_H

#include "coord.h"

int xqc_status_build(xqc_t *c, Xqz__Status **out);
void xqc_status_free(Xqz__Status **s);

#endif
