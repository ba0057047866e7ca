/*
 * ini_value.c: read or replace one key of an INI file (see ini_value.h).
 */
#include "support/ini_value.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/atomic_file.h"

#define INI_MAX_BYTES (1u << 20)

/* When the line [p, end) sets key, the start of its value (after '=' or ':', blanks
 * skipped) and its trimmed length; else NULL. */
static const char *line_value(const char *p, const char *end, const char *key, size_t *len) {
  while (p < end && (*p == ' ' || *p == '\t')) p++;
  size_t k = strlen(key);
  if ((size_t)(end - p) <= k || memcmp(p, key, k) != 0) return NULL;
  p += k;
  while (p < end && (*p == ' ' || *p == '\t')) p++;
  if (p == end || (*p != '=' && *p != ':')) return NULL;
  p++;
  while (p < end && (*p == ' ' || *p == '\t')) p++;
  const char *e = end;
  while (e > p && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r')) e--;
  /* An inline comment (" ; ...") is not part of the value, as inih reads it. */
  for (const char *q = p; q < e; q++)
    if (*q == ';' && (q == p || q[-1] == ' ' || q[-1] == '\t')) {
      e = q;
      while (e > p && (e[-1] == ' ' || e[-1] == '\t')) e--;
      break;
    }
  *len = (size_t)(e - p);
  return p;
}

/* The last line of buf that sets key: its start and end (before '\n'); NULL if none. */
static const char *find_last(const char *buf, size_t size, const char *key, const char **lend,
                             const char **val, size_t *vlen) {
  const char *found = NULL, *p = buf, *end = buf + size;
  while (p < end) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    const char *le = nl ? nl : end;
    size_t len;
    const char *v = line_value(p, le, key, &len);
    if (v) {
      found = p;
      *lend = le;
      *val = v;
      *vlen = len;
    }
    p = nl ? nl + 1 : end;
  }
  return found;
}

int xq_ini_get(const char *path, const char *key, char *out, size_t n, xq_errbuf_t *eb) {
  unsigned char *data = NULL;
  size_t size = 0;
  int rc = xq_read_file(path, INI_MAX_BYTES, &data, &size, eb);
  if (rc < 0) return XQ_EIO;
  const char *lend, *v;
  size_t vlen;
  const char *line = find_last((const char *)data, size, key, &lend, &v, &vlen);
  if (line) snprintf(out, n, "%.*s", (int)vlen, v);
  free(data);
  return line ? 1 : 0;
}

int xq_ini_set(const char *path, const char *key, const char *value, xq_errbuf_t *eb) {
  unsigned char *data = NULL;
  size_t size = 0;
  int rc = xq_read_file(path, INI_MAX_BYTES, &data, &size, eb);
  if (rc < 0) return rc;
  const char *buf = (const char *)data, *lend = NULL, *v = NULL;
  size_t vlen = 0;
  const char *line = find_last(buf, size, key, &lend, &v, &vlen);
  if (line && vlen == strlen(value) && memcmp(v, value, vlen) == 0) {
    free(data);
    return 0;
  }
  size_t nl = strlen(key) + strlen(value) + 8;
  char *repl = malloc(nl);
  if (!repl) {
    free(data);
    return xq_err_set(eb, XQ_ENOMEM, "%s: out of memory", path);
  }
  int m = snprintf(repl, nl, "%s = %s", key, value);
  const void *parts[4];
  size_t sizes[4];
  int np = 0;
  if (line) { /* before, the new line, the rest from the old line's end */
    parts[np] = buf, sizes[np++] = (size_t)(line - buf);
    parts[np] = repl, sizes[np++] = (size_t)m;
    parts[np] = lend, sizes[np++] = size - (size_t)(lend - buf);
  } else {
    parts[np] = buf, sizes[np++] = size;
    if (size && buf[size - 1] != '\n') parts[np] = "\n", sizes[np++] = 1;
    repl[m++] = '\n';
    parts[np] = repl, sizes[np++] = (size_t)m;
  }
  rc = xq_atomic_write(path, parts, sizes, np, eb);
  free(repl);
  free(data);
  return rc < 0 ? rc : 1;
}
