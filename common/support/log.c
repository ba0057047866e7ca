/*
 * log.c: the shared log line (see log.h). The whole line is formatted into one buffer and
 * written with a single fputs + fflush so lines from several threads never interleave.
 */
#include "support/log.h"

#include <stdarg.h>
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
  va_list ap;
  va_start(ap, fmt);
  if ((size_t)n < sizeof line) vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
  va_end(ap);
  size_t len = strlen(line);
  if (len >= sizeof line - 1) len = sizeof line - 2;
  line[len] = '\n';
  line[len + 1] = '\0';
  FILE *f = g_stream ? g_stream : stderr;
  fputs(line, f);
  fflush(f);
}
