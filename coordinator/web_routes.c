/*
 * web_routes.c: the routes of web_routes.h over the HTTP server of web/http.c. Each request
 * builds what it shows from scratch (a Status or the match list from the database): a
 * dashboard polls every few seconds and Prometheus every 15 s or so, far too rarely to
 * need a cache.
 */
#include "web_routes.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "web/http.h"
#include "web/metrics.h"
#include "status.h"
#include "support/log.h"
#include "wire/status_json.h"

#define COMP "coordinator"
#define JSON_TYPE "application/json"

/* The page's bytes, generated from dashboard.html at build time (embed.cmake). */
extern const char xqc_dashboard_html[];
extern const size_t xqc_dashboard_html_len;

static void set_text(xqc_http_response_t *res, int status, const char *msg) {
  res->status = status;
  res->content_type = "text/plain; charset=utf-8";
  res->body = msg;
  res->len = strlen(msg);
  res->owned = false;
}

/* Hands a malloc'd body to the server, or answers 500 when building it failed. */
static void set_owned(xqc_http_response_t *res, const char *type, char *body) {
  if (!body) {
    set_text(res, 500, "internal error: out of memory or database error (see the coordinator log)\n");
    return;
  }
  res->content_type = type;
  res->body = body;
  res->len = strlen(body);
  res->owned = true;
}

/* Status as text: fmt is xq_status_json or xqc_metrics_text. */
static char *status_text(xqc_t *c, char *(*fmt)(const Xqz__Status *)) {
  Xqz__Status *st = NULL;
  if (xqc_status_build(c, &st) < 0) return NULL;
  char *t = fmt(st);
  xqc_status_free(&st);
  return t;
}

/* Every decided match after `after`, oldest first: xqc_promotions_build pages through the
 * database XQC_PROMOTIONS_MAX at a time, so ask until a page comes back short. */
static char *matches_text(xqc_t *c, uint64_t after) {
  Xqz__Promotions **pages = NULL;
  Xqz__MatchStatus **all = NULL;
  size_t npages = 0, n = 0;
  char *json = NULL;
  bool ok = true;
  for (;;) {
    Xqz__Promotions *p = NULL;
    Xqz__Promotions **np = realloc(pages, (npages + 1) * sizeof *np);
    if (!np || xqc_promotions_build(c, after, &p) < 0) {
      if (np) pages = np;
      ok = false;
      break;
    }
    pages = np;
    pages[npages++] = p;
    Xqz__MatchStatus **na = realloc(all, (n + p->n_matches + 1) * sizeof *na);
    if (!na) {
      ok = false;
      break;
    }
    all = na;
    if (p->n_matches) memcpy(all + n, p->matches, p->n_matches * sizeof *all); /* NULL when 0 */
    n += p->n_matches;
    if (p->n_matches < XQC_PROMOTIONS_MAX) break;
    after = p->matches[p->n_matches - 1]->match_id;
  }
  if (ok) json = xq_matches_json(all, n);
  for (size_t i = 0; i < npages; i++) xqc_promotions_free(&pages[i]);
  free(pages);
  free(all);
  return json;
}

/* ?after=N in a query string into *after (0 when absent). Returns -1 when it is there but
 * not a match id (a whole number): the caller answers 400 rather than the whole list. */
static int query_after(const char *q, uint64_t *after) {
  *after = 0;
  for (const char *p = q; p && *p; p = strchr(p, '&') ? strchr(p, '&') + 1 : NULL) {
    if (strncmp(p, "after=", 6) != 0) continue;
    const char *v = p + 6;
    char *end;
    errno = 0;
    unsigned long long x = strtoull(v, &end, 10);
    if (v[0] < '0' || v[0] > '9' || errno || (*end && *end != '&')) return -1;
    *after = x;
    return 0;
  }
  return 0;
}

void xqc_web_on_request(void *user, const xqc_http_request_t *rq, xqc_http_response_t *res) {
  xqc_t *c = user;
  if (strcmp(rq->path, "/") == 0 || strcmp(rq->path, "/index.html") == 0) {
    res->content_type = "text/html; charset=utf-8";
    res->body = xqc_dashboard_html;
    res->len = xqc_dashboard_html_len;
  } else if (strcmp(rq->path, "/metrics") == 0) {
    set_owned(res, XQC_METRICS_CONTENT_TYPE, status_text(c, xqc_metrics_text));
  } else if (strcmp(rq->path, "/api/status") == 0) {
    set_owned(res, JSON_TYPE, status_text(c, xq_status_json));
  } else if (strcmp(rq->path, "/api/promotions") == 0) {
    uint64_t after;
    if (query_after(rq->query, &after) < 0)
      set_text(res, 400, "bad query: after must be a match id, a whole number such as the"
               " match_id of the last match seen (/api/promotions?after=0 lists them all)\n");
    else
      set_owned(res, JSON_TYPE, matches_text(c, after));
  } else {
    set_text(res, 404, "not found; this server has /, /metrics, /api/status and /api/promotions\n");
  }
}

int xqc_web_start(xqc_t *c, xq_errbuf_t *eb) {
  if (!c->cfg.http[0]) {
    XQ_LOGI(COMP, "http endpoint off (setting http is empty)");
    return 0;
  }
  int rc = xqc_http_start(&c->http, c->loop, c->cfg.http, NULL, xqc_web_on_request, c, eb);
  if (rc < 0) return rc;
  XQ_LOGI(COMP, "http endpoint listening (dashboard /, Prometheus /metrics) addr=%s port=%d",
          c->cfg.http, xqc_http_port(c->http));
  return 0;
}

void xqc_web_stop(xqc_t *c) { xqc_http_stop(&c->http); }
