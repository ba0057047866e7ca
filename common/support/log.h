/*
 * log.h: one log line format for every xqzero daemon, for operators:
 *
 *   2026-11-29T17:08:21.123Z INFO  coordinator promoted net key=value ...
 *
 * time (UTC, milliseconds), level, component, then a message whose trailing key=value
 * fields are written by the caller in the format string. Lines go to stderr (or the
 * stream set with xq_log_set_stream) in one write so concurrent threads do not interleave.
 */
#ifndef XQ_LOG_H
#define XQ_LOG_H

#include <stddef.h>
#include <stdio.h>

typedef enum { XQ_LOG_DEBUG = 0, XQ_LOG_INFO, XQ_LOG_WARN, XQ_LOG_ERROR } xq_log_level_t;

/* Lines below this level are dropped: DEBUG lines are written only by a build with
 * -DXQ_LOG_MIN_LEVEL=XQ_LOG_DEBUG. */
#ifndef XQ_LOG_MIN_LEVEL
#define XQ_LOG_MIN_LEVEL XQ_LOG_INFO
#endif
/* Destination stream (default stderr). */
void xq_log_set_stream(FILE *f);
/* Copies s into out (n > 0 bytes, always terminated, cut short when full) with each
 * control character (below 0x20, and 0x7f) written as \xNN; returns the length. xq_log
 * applies it to every message. */
size_t xq_log_escape(char *out, size_t n, const char *s);
/* Writes one line; fmt is printf-style (no trailing newline; control characters are
 * escaped as by xq_log_escape). */
void xq_log(xq_log_level_t level, const char *component, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#define XQ_LOGD(comp, ...) xq_log(XQ_LOG_DEBUG, comp, __VA_ARGS__)
#define XQ_LOGI(comp, ...) xq_log(XQ_LOG_INFO, comp, __VA_ARGS__)
#define XQ_LOGW(comp, ...) xq_log(XQ_LOG_WARN, comp, __VA_ARGS__)
#define XQ_LOGE(comp, ...) xq_log(XQ_LOG_ERROR, comp, __VA_ARGS__)

#endif
