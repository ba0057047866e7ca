/*
 * log.c: the shared log line (see log.h). The whole line is formatted into one buffer and
 * written with a single fputs + fflush so lines from several threads never interleave.
 * Control characters in the message (a peer's worker id with a newline, say) are written
 * as \xNN, so no field can end the line early and forge another one.
 */
#include "support/log.h"

#include <assert.h>
#include <stdarg.h>
#include <stdbool.h>
#include <string.h>
#include <time.h>

static FILE *g_stream = NULL;

void xq_log_set_stream(FILE *f) { g_stream = f; }

static const char *level_name(xq_log_level_t l) {
  switch (l) {
  case XQ_LOG_DEBUG: return "DEBUG";
  case XQ_LOG_INFO: return "INFO ";
  case XQ_LOG_WARN: return "WARN ";
  default: return "ERROR";
  }
}

size_t xq_log_escape(char *out, size_t n, const char *s) {
  assert(n > 0);
  size_t k = 0;
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    bool ctl = *p < 0x20 || *p == 0x7f;
    size_t need = ctl ? 4 : 1;
    if (k + need >= n) break;
    if (ctl) k += (size_t)snprintf(out + k, n - k, "\\x%02x", *p);
    else out[k++] = (char)*p;
  }
  out[k] = '\0';
  return k;
}

void xq_log(xq_log_level_t level, const char *component, const char *fmt, ...) {
  if (level < XQ_LOG_MIN_LEVEL) return;
  char line[2048];
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  struct tm tm;
  gmtime_r(&ts.tv_sec, &tm);
  int n = snprintf(line, sizeof line, "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ %s %s ",
                   tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
                   tm.tm_sec, ts.tv_nsec / 1000000L, level_name(level),
                   component ? component : "-");
  if (n < 0) return;
  char msg[2048];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if ((size_t)n < sizeof line) xq_log_escape(line + n, sizeof line - (size_t)n, msg);
  size_t len = strlen(line);
  if (len >= sizeof line - 1) len = sizeof line - 2;
  line[len] = '\n';
  line[len + 1] = '\0';
  FILE *f = g_stream ? g_stream : stderr;
  fputs(line, f);
  fflush(f);
}
