/*
 * web.h: the coordinator's web endpoints, served by http.c on the coordinator's own loop
 * at the `http` setting's address (loopback by default, "" = off):
 *
 *   /                  the dashboard page (dashboard.html, compiled in)
 *   /metrics           Prometheus text (metrics.c)
 *   /api/status        the Status message as JSON (status_json.h)
 *   /api/promotions    every decided gating match as JSON, oldest first;
 *                      ?after=MATCH_ID gives only the later ones
 *
 * Everything is read-only and built from the same Status as `xqz status`.
 */
#ifndef XQC_WEB_H
#define XQC_WEB_H

#include "coord.h"

/* Starts the endpoint on c->loop (nothing when c->cfg.http is empty). */
int xqc_web_start(xqc_t *c, xq_errbuf_t *eb);
/* Stops it; the loop must run once more to finish closing (see http.h). */
void xqc_web_stop(xqc_t *c);

#endif
