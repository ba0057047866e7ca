/*
 * http.h: a small HTTP/1.1 server on a libuv loop, for the coordinator's read-only web
 * endpoints (web.c holds the routes). It is built for hostile input: GET and HEAD only, a
 * bounded request head, one deadline per connection against slow clients, a cap on
 * concurrent connections, one request per connection (Connection: close), and no byte
 * sequence that can crash it. It knows nothing of what it serves: a handler fills the
 * response for each well-formed GET or HEAD request.
 *
 * Ownership: xqc_http_start allocates the server; xqc_http_stop closes its handles and the
 * memory is freed by their close callbacks, so the loop must run once more after the stop
 * (as xqc_run does when it shuts down).
 */
#ifndef XQC_HTTP_H
#define XQC_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "support/error.h"

typedef struct xqc_http_s xqc_http_t;

typedef struct {
  const char *method; /* "GET" or "HEAD" */
  const char *path;   /* target up to '?', always starts with '/' */
  const char *query;  /* after '?', "" when none */
} xqc_http_request_t;

typedef struct {
  int status;               /* 200, 404, ... */
  const char *content_type; /* static string */
  const char *body;         /* body bytes (len of them) */
  size_t len;
  bool owned;               /* the server frees body (malloc'd) after sending it */
} xqc_http_response_t;

/* Fills res for one request; res starts as an empty 200 text/plain response. HEAD gets the
 * same headers as GET (the server drops the body). */
typedef void (*xqc_http_handler_t)(void *user, const xqc_http_request_t *rq,
                                   xqc_http_response_t *res);

typedef struct {
  size_t head_max;     /* request line + headers, bytes; beyond: 431 (default 8192) */
  uint64_t timeout_ms; /* per phase (reading the request, sending the reply; default 5000) */
  int max_conns;       /* concurrent connections; beyond, new ones are closed (default 64) */
} xqc_http_limits_t;

#define XQC_HTTP_HEAD_MAX 8192
#define XQC_HTTP_TIMEOUT_MS 5000
#define XQC_HTTP_MAX_CONNS 64

/* Listens on addr, "HOST:PORT" (HOST: an IPv4 address, a name such as localhost, "*" for
 * every interface, or "[IPv6]"; PORT 0 picks a free port). lim NULL = the defaults. */
int xqc_http_start(xqc_http_t **out, uv_loop_t *loop, const char *addr,
                   const xqc_http_limits_t *lim, xqc_http_handler_t fn, void *user,
                   xq_errbuf_t *eb);
/* The port actually bound (useful after PORT 0). */
int xqc_http_port(const xqc_http_t *h);
/* Stops listening and closes every connection; NULL-safe, sets *h to NULL. */
void xqc_http_stop(xqc_http_t **h);

#endif
