/*
 * http_parse.h: the request head parser of http.c, apart from the sockets so that it can
 * be tested and fuzzed on its own. It accepts exactly
 *
 *   METHOD SP TARGET SP HTTP/1.x CRLF (HEADER-NAME ":" text CRLF)* CRLF
 *
 * (bare LF line ends too), with a token METHOD, a TARGET of printable ASCII starting with
 * '/', and header lines that are only checked for shape (their contents are unused).
 */
#ifndef XQC_HTTP_PARSE_H
#define XQC_HTTP_PARSE_H

#include <stddef.h>

#include "http.h"

/* Length of the head in b[0..n) up to and including its blank line ("\r\n\r\n" or
 * "\n\n"), or 0 while there is none. The search starts at `from` (bytes before it were
 * searched already; pass the previous n minus 3). */
size_t xqc_http_head_end(const char *b, size_t n, size_t from);

/* Parses the head h[0..len) in place (h[len] must be writable; pieces are NUL-terminated
 * inside h). Returns 0 for a GET or HEAD, with rq pointing into h; otherwise the status
 * to answer, 400 or 405, with *why a static one-line reason. rq->method is set (else
 * NULL) as soon as the request line is read, so a HEAD can be answered without a body
 * even when its headers are bad. */
int xqc_http_parse_head(char *h, size_t len, xqc_http_request_t *rq, const char **why);

#endif
