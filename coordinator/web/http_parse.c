/*
 * http_parse.c: the request head parser (see http_parse.h). Every check is on bytes the
 * caller has already bounded (len <= the server's head_max); nothing is allocated.
 */
#include "http_parse.h"

#include <stdbool.h>
#include <string.h>

size_t xqc_http_head_end(const char *b, size_t n, size_t from) {
  for (size_t i = from; i < n; i++) {
    if (b[i] != '\n') continue;
    if (i >= 1 && b[i - 1] == '\n') return i + 1;
    if (i >= 2 && b[i - 1] == '\r' && b[i - 2] == '\n') return i + 1;
  }
  return 0;
}

static bool is_tchar(unsigned char ch) { /* RFC 9110 token characters */
  return (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') ||
         (ch && strchr("!#$%&'*+-.^_`|~", ch));
}

static int bad(const char **why, const char *msg) {
  *why = msg;
  return 400;
}

/* Header lines after the request line: a name, a colon, no control bytes but tab. */
static int check_headers(char *line, const char **why) {
  while (*line) {
    char *e = strchr(line, '\n');
    size_t len = e ? (size_t)(e - line) : strlen(line);
    if (len && line[len - 1] == '\r') len--;
    if (len == 0) return 0; /* the blank line */
    char *colon = memchr(line, ':', len);
    if (!colon || colon == line) return bad(why, "bad request: malformed header line\n");
    for (size_t i = 0; i < len; i++)
      if ((unsigned char)line[i] < 0x20 && line[i] != '\t')
        return bad(why, "bad request: control byte in a header\n");
    if (!e) return 0;
    line = e + 1;
  }
  return 0;
}

int xqc_http_parse_head(char *h, size_t len, xqc_http_request_t *rq, const char **why) {
  *rq = (xqc_http_request_t){NULL, NULL, ""};
  if (memchr(h, '\0', len)) return bad(why, "bad request: NUL byte in the request head\n");
  h[len] = '\0';
  char *eol = strchr(h, '\n');
  if (!eol) return bad(why, "bad request: no request line\n");
  if (eol > h && eol[-1] == '\r') eol[-1] = '\0';
  *eol = '\0';
  /* Request line: METHOD SP TARGET SP HTTP/1.x, exactly. */
  char *method = h, *sp1 = strchr(h, ' ');
  char *target = sp1 ? sp1 + 1 : NULL, *sp2 = target ? strchr(target, ' ') : NULL;
  char *version = sp2 ? sp2 + 1 : NULL;
  if (!sp1 || !sp2 || strchr(version, ' ') || sp1 == method || sp2 == target)
    return bad(why, "bad request: request line is not METHOD TARGET VERSION\n");
  *sp1 = *sp2 = '\0';
  for (char *p = method; *p; p++)
    if (!is_tchar((unsigned char)*p)) return bad(why, "bad request: malformed method\n");
  rq->method = method;
  if (strcmp(version, "HTTP/1.1") != 0 && strcmp(version, "HTTP/1.0") != 0)
    return bad(why, "bad request: only HTTP/1.0 and HTTP/1.1 are spoken here\n");
  if (target[0] != '/')
    return bad(why, "bad request: the target must be a path starting with '/'\n");
  for (char *p = target; *p; p++)
    if ((unsigned char)*p <= 0x20 || (unsigned char)*p >= 0x7f)
      return bad(why, "bad request: bytes outside printable ASCII in the target\n");
  int rc = check_headers(eol + 1, why);
  if (rc) return rc;
  if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0) {
    *why = "method not allowed: this server is read-only (GET, HEAD)\n";
    return 405;
  }
  char *q = strchr(target, '?');
  if (q) *q++ = '\0';
  rq->path = target;
  rq->query = q ? q : "";
  return 0;
}
