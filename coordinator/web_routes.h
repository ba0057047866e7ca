/*
 * web_routes.h: the routes of the coordinator's web endpoint, served by web/http.c on the
 * coordinator's own loop at the `http` setting's address (loopback by default, "" = off):
 *
 *   /                  the dashboard page (dashboard.html, compiled in)
 *   /metrics           Prometheus text (metrics.c)
 *   /api/status        the Status message as JSON (status_json.h)
 *   /api/promotions    every decided gating match as JSON, oldest first;
 *                      ?after=MATCH_ID gives only the later ones
 *
 * Everything is read-only and built from the same Status as `xqz status`. Top floor: the
 * routes read the coordinator's state (coord.h); web/ holds the server and the formats.
 */
#ifndef XQC_WEB_ROUTES_H
#define XQC_WEB_ROUTES_H

#include "coord.h"
#include "web/http.h"

/* Starts the endpoint on c->loop (nothing when c->cfg.http is empty). */
int xqc_web_start(xqc_t *c, xq_errbuf_t *eb);
/* The routes above: answers one request for the coordinator `user` (an xqc_t). The
 * endpoint serves it; the HTTP unit test starts a server of its own limits on it. */
void xqc_web_on_request(void *user, const xqc_http_request_t *rq, xqc_http_response_t *res);
/* Stops it; the loop must run once more to finish closing (see http.h). */
void xqc_web_stop(xqc_t *c);

#endif
