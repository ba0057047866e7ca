/*
 * http.c: the HTTP/1.1 server of http.h. One connection is one request:
 *
 *   READING   the request head accumulates in a head_max buffer until a blank line;
 *             a full buffer without one is answered 431, a malformed head 400, a method
 *             other than GET/HEAD 405, the rest goes to the handler;
 *   WRITING   status line + headers + body in one uv_write;
 *   DRAINING  after the write the server shuts its side down and reads (discarding) until
 *             the client closes, so unread request bytes cannot turn the close into a reset
 *             that would destroy the response before the client reads it;
 *   CLOSING   both handles (socket and deadline timer) closed; the connection is freed by
 *             the second close callback, never inside its own callback chain.
 *
 * Each phase has a deadline (limits.timeout_ms); a client that is too slow is cut off. The
 * head itself is parsed by http_parse.c.
 */
#include "http.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http_parse.h"
#include "support/net_addr.h"
#include "support/log.h"

#define COMP "coordinator"

typedef enum { C_READING, C_WRITING, C_DRAINING, C_CLOSING } conn_state_t;

typedef struct conn_s {
  uv_tcp_t tcp;
  uv_timer_t timer;
  uv_write_t wr;
  uv_shutdown_t sd;
  struct xqc_http_s *srv;
  struct conn_s *prev, *next;
  conn_state_t state;
  int open_handles;
  bool head_only;          /* a HEAD request: headers without the body */
  size_t n;                /* bytes in head */
  xqc_http_response_t res; /* body owned per res.owned */
  char hdr[512];           /* response status line and headers */
  char head[];             /* (head_max + 1) request head, NUL-terminated when parsed */
} conn_t;

struct xqc_http_s {
  uv_loop_t *loop;
  uv_tcp_t listener;
  xqc_http_limits_t lim;
  xqc_http_handler_t fn;
  void *user;
  conn_t *conns; /* doubly linked list of live connections */
  int nconns;
  int port;
  bool listener_open, stopping, at_cap;
  bool accept_failing; /* an accept error was logged; logged again after one succeeds */
  char addr[160];
  char scratch[4096]; /* read buffer for discarded bytes */
};

static const char *reason_phrase(int status) {
  switch (status) {
  case 200: return "OK";
  case 400: return "Bad Request";
  case 404: return "Not Found";
  case 405: return "Method Not Allowed";
  case 431: return "Request Header Fields Too Large";
  case 500: return "Internal Server Error";
  case 503: return "Service Unavailable";
  default: return "Unknown";
  }
}

static void server_maybe_free(xqc_http_t *s) {
  if (s->stopping && !s->listener_open && s->nconns == 0) free(s);
}

static void on_conn_closed(uv_handle_t *h) {
  conn_t *c = h->data;
  if (--c->open_handles > 0) return;
  xqc_http_t *s = c->srv;
  if (c->prev) c->prev->next = c->next;
  else s->conns = c->next;
  if (c->next) c->next->prev = c->prev;
  s->nconns--;
  if (c->res.owned) free((void *)c->res.body);
  free(c);
  server_maybe_free(s);
}

static void conn_close(conn_t *c) {
  if (c->state == C_CLOSING) return;
  c->state = C_CLOSING;
  uv_read_stop((uv_stream_t *)&c->tcp);
  uv_timer_stop(&c->timer);
  uv_close((uv_handle_t *)&c->tcp, on_conn_closed);
  uv_close((uv_handle_t *)&c->timer, on_conn_closed);
}

static void on_deadline(uv_timer_t *t) { conn_close(t->data); }

static void on_shutdown(uv_shutdown_t *sd, int status) {
  conn_t *c = sd->data;
  if (status < 0) conn_close(c); /* includes UV_ECANCELED after a close: a no-op then */
}

static void on_written(uv_write_t *wr, int status) {
  conn_t *c = wr->data;
  if (c->state == C_CLOSING) return;
  if (status < 0 || uv_shutdown(&c->sd, (uv_stream_t *)&c->tcp, on_shutdown) < 0) {
    conn_close(c);
    return;
  }
  c->state = C_DRAINING;
}

/* Sends the response held in c->res (without its body for HEAD). */
static void conn_respond(conn_t *c) {
  xqc_http_response_t *r = &c->res;
  int n = snprintf(c->hdr, sizeof c->hdr,
                   "HTTP/1.1 %d %s\r\n"
                   "Content-Type: %s\r\n"
                   "Content-Length: %zu\r\n"
                   "Connection: close\r\n"
                   "Cache-Control: no-store\r\n"
                   "X-Content-Type-Options: nosniff\r\n"
                   /* Nothing served may load anything from elsewhere. */
                   "Content-Security-Policy: default-src 'self'; script-src 'unsafe-inline'; "
                   "style-src 'unsafe-inline'; img-src 'self' data:\r\n"
                   "%s\r\n",
                   r->status, reason_phrase(r->status),
                   r->content_type ? r->content_type : "text/plain; charset=utf-8", r->len,
                   r->status == 405 ? "Allow: GET, HEAD\r\n" : "");
  if (n < 0 || (size_t)n >= sizeof c->hdr) {
    conn_close(c);
    return;
  }
  uv_buf_t bufs[2] = {uv_buf_init(c->hdr, (unsigned)n),
                      uv_buf_init((char *)(r->body ? r->body : ""), (unsigned)r->len)};
  c->state = C_WRITING;
  if (uv_timer_start(&c->timer, on_deadline, c->srv->lim.timeout_ms, 0) < 0) {
    conn_close(c); /* no deadline, no write: a client that never reads would hold it */
    return;
  }
  c->wr.data = c;
  if (uv_write(&c->wr, (uv_stream_t *)&c->tcp, bufs, c->head_only || r->len == 0 ? 1 : 2,
               on_written) < 0)
    conn_close(c);
}

static void respond_error(conn_t *c, int status, const char *msg) {
  if (c->res.owned) free((void *)c->res.body);
  c->res = (xqc_http_response_t){status, "text/plain; charset=utf-8", msg, strlen(msg), false};
  conn_respond(c);
}

/* Answers the complete head c->head[0..head_len). */
static void conn_handle(conn_t *c, size_t head_len) {
  xqc_http_request_t rq;
  const char *why = NULL;
  int status = xqc_http_parse_head(c->head, head_len, &rq, &why);
  c->head_only = rq.method && strcmp(rq.method, "HEAD") == 0;
  if (status) {
    respond_error(c, status, why);
    return;
  }
  c->res = (xqc_http_response_t){200, "text/plain; charset=utf-8", "", 0, false};
  c->srv->fn(c->srv->user, &rq, &c->res);
  conn_respond(c);
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf) {
  (void)suggested;
  conn_t *c = h->data;
  if (c->state == C_READING) *buf = uv_buf_init(c->head + c->n, (unsigned)(c->srv->lim.head_max - c->n));
  else *buf = uv_buf_init(c->srv->scratch, sizeof c->srv->scratch);
}

static void on_read(uv_stream_t *st, ssize_t nread, const uv_buf_t *buf) {
  (void)buf;
  conn_t *c = st->data;
  if (c->state == C_CLOSING) return;
  if (nread < 0) { /* EOF or error: the client is done, in any phase */
    conn_close(c);
    return;
  }
  if (c->state != C_READING || nread == 0) return; /* discarded, or EAGAIN */
  size_t from = c->n > 3 ? c->n - 3 : 0;
  c->n += (size_t)nread;
  size_t end = xqc_http_head_end(c->head, c->n, from);
  if (end) conn_handle(c, end);
  else if (c->n >= c->srv->lim.head_max)
    respond_error(c, 431, "request head too large (request line and headers over the limit)\n");
}

/* A connection whose timer could not be made: only its tcp handle is open. */
static void on_bare_closed(uv_handle_t *h) { free(h->data); }

/* Logs a failed accept step once per streak (EMFILE repeats on every connection). */
static void accept_failed(xqc_http_t *s, const char *call, int rc) {
  if (!s->accept_failing)
    XQ_LOGW(COMP, "http connection dropped: %s: %s (out of descriptors? the dashboard and"
            " /metrics answer again once one succeeds) addr=%s", call, uv_strerror(rc), s->addr);
  s->accept_failing = true;
}

static void on_connection(uv_stream_t *l, int status) {
  xqc_http_t *s = l->data;
  if (s->stopping) return;
  if (status < 0) {
    accept_failed(s, "listen", status);
    return;
  }
  conn_t *c = calloc(1, sizeof *c + s->lim.head_max + 1);
  if (!c) {
    accept_failed(s, "calloc", UV_ENOMEM);
    return;
  }
  c->srv = s;
  int rc = uv_tcp_init(s->loop, &c->tcp);
  if (rc < 0) {
    accept_failed(s, "uv_tcp_init", rc);
    free(c);
    return;
  }
  c->tcp.data = c;
  rc = uv_timer_init(s->loop, &c->timer);
  if (rc < 0) {
    accept_failed(s, "uv_timer_init", rc);
    uv_close((uv_handle_t *)&c->tcp, on_bare_closed);
    return;
  }
  c->tcp.data = c->timer.data = c->sd.data = c;
  c->open_handles = 2;
  c->next = s->conns;
  if (s->conns) s->conns->prev = c;
  s->conns = c;
  s->nconns++;
  rc = uv_accept(l, (uv_stream_t *)&c->tcp);
  if (rc < 0) {
    accept_failed(s, "uv_accept", rc);
    conn_close(c);
    return;
  }
  s->accept_failing = false;
  if (s->nconns > s->lim.max_conns) {
    /* Accept-and-close keeps the backlog from filling with clients that wait forever. */
    if (!s->at_cap)
      XQ_LOGW(COMP, "http connection cap reached, refusing new connections until some end"
              " addr=%s max_conns=%d", s->addr, s->lim.max_conns);
    s->at_cap = true;
    conn_close(c);
    return;
  }
  if (s->nconns < s->lim.max_conns) s->at_cap = false;
  if (uv_timer_start(&c->timer, on_deadline, s->lim.timeout_ms, 0) < 0 ||
      uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read) < 0)
    conn_close(c);
}

static void on_listener_closed(uv_handle_t *h) {
  xqc_http_t *s = h->data;
  s->listener_open = false;
  server_maybe_free(s);
}

int xqc_http_start(xqc_http_t **out, uv_loop_t *loop, const char *addr,
                   const xqc_http_limits_t *lim, xqc_http_handler_t fn, void *user,
                   xq_errbuf_t *eb) {
  *out = NULL;
  struct sockaddr_storage ss;
  int rc = xq_addr_resolve("http", addr, &ss, eb);
  if (rc < 0) return rc;
  xqc_http_t *s = calloc(1, sizeof *s);
  if (!s) return xq_err_set(eb, XQ_ENOMEM, "http server: out of memory");
  s->loop = loop;
  s->fn = fn;
  s->user = user;
  s->lim = lim ? *lim : (xqc_http_limits_t){0, 0, 0};
  if (!s->lim.head_max) s->lim.head_max = XQC_HTTP_HEAD_MAX;
  if (!s->lim.timeout_ms) s->lim.timeout_ms = XQC_HTTP_TIMEOUT_MS;
  if (!s->lim.max_conns) s->lim.max_conns = XQC_HTTP_MAX_CONNS;
  snprintf(s->addr, sizeof s->addr, "%s", addr);
  rc = uv_tcp_init(loop, &s->listener);
  if (rc < 0) {
    free(s);
    return xq_err_set(eb, XQ_EIO, "http: cannot serve %s: uv_tcp_init: %s", addr,
                      uv_strerror(rc));
  }
  s->listener.data = s;
  s->listener_open = true;
  rc = uv_tcp_bind(&s->listener, (const struct sockaddr *)&ss, 0);
  if (rc == 0) rc = uv_listen((uv_stream_t *)&s->listener, 128, on_connection);
  if (rc < 0) {
    xq_err_set(eb, XQ_EIO,
               "http: cannot listen on %s: %s (another coordinator on this port? choose"
               " another with --http=HOST:PORT, or turn the endpoint off with --http=)",
               addr, uv_strerror(rc));
    s->stopping = true;
    uv_close((uv_handle_t *)&s->listener, on_listener_closed);
    uv_run(loop, UV_RUN_NOWAIT); /* runs the close callback, which frees s */
    return XQ_EIO;
  }
  struct sockaddr_storage bound;
  int blen = sizeof bound;
  if (uv_tcp_getsockname(&s->listener, (struct sockaddr *)&bound, &blen) == 0)
    s->port = ntohs(bound.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&bound)->sin6_port
                                                : ((struct sockaddr_in *)&bound)->sin_port);
  *out = s;
  return 0;
}

int xqc_http_port(const xqc_http_t *h) { return h->port; }

void xqc_http_stop(xqc_http_t **hp) {
  xqc_http_t *s = hp ? *hp : NULL;
  if (!s) return;
  *hp = NULL;
  s->stopping = true;
  for (conn_t *c = s->conns; c; c = c->next) conn_close(c);
  uv_close((uv_handle_t *)&s->listener, on_listener_closed);
}
