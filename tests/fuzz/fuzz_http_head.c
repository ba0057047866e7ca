/*
 * fuzz_http_head.c: libFuzzer target for the coordinator's HTTP request head parser
 * (coordinator/web/http_parse.c, compiled in). The input is copied into a heap buffer of
 * exactly its size plus the one writable byte the parser may use, so ASan catches any
 * read or write past it.
 *
 * Properties (abort on violation): xqc_http_head_end returns 0 or a length ending in a
 * blank line; the parser answers 0, 400 or 405; 400/405 come with a one-line reason; 0
 * only for GET or HEAD of a path that starts with '/' and holds printable ASCII without
 * '?'; 405 names the method. Run: see docs/testing.md.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "web/http_parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                                        \
  do {                                                                                     \
    if (!(cond)) {                                                                         \
      fprintf(stderr, "fuzz_http_head: %s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
      abort();                                                                             \
    }                                                                                      \
  } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > 16384) return 0;
  char *h = malloc(size + 1);
  if (!h) return 0;
  memcpy(h, data, size);
  size_t end = xqc_http_head_end(h, size, 0);
  CHECK(end <= size);
  if (end) CHECK(h[end - 1] == '\n' && (h[end - 2] == '\n' || h[end - 2] == '\r'));
  xqc_http_request_t rq;
  const char *why = NULL;
  int st = xqc_http_parse_head(h, size, &rq, &why);
  CHECK(st == 0 || st == 400 || st == 405);
  if (st) CHECK(why && why[0] && why[strlen(why) - 1] == '\n');
  if (st == 405) CHECK(rq.method != NULL);
  if (st == 0) {
    CHECK(strcmp(rq.method, "GET") == 0 || strcmp(rq.method, "HEAD") == 0);
    CHECK(rq.path[0] == '/');
    for (const char *p = rq.path; *p; p++) CHECK(*p > 0x20 && *p < 0x7f && *p != '?');
    CHECK(rq.query != NULL);
  }
  free(h);
  return 0;
}
