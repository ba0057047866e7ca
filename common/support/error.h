/*
 * error.h: xqzero's error codes. Functions return 0 on success or a negative XQ_E... code;
 * one X-macro table gives the codes and their messages, so the two can never drift apart.
 * Functions that parse user or peer input also fill a caller-supplied message buffer with
 * the specific problem (see xq_err_set), because "bad FEN" alone helps nobody.
 */
#ifndef XQ_ERROR_H
#define XQ_ERROR_H

#include <stddef.h>

#define XQ_ERRNO_MAP(X)                                         \
  X(EINVAL, "invalid argument")                                 \
  X(ENOMEM, "out of memory")                                    \
  X(EIO, "input/output error")                                  \
  X(EFEN, "malformed FEN")                                      \
  X(EMOVE, "malformed or illegal move")                         \
  X(EFORMAT, "malformed file")                                  \
  X(EVERSION, "unsupported format version")                     \
  X(ECHECKSUM, "checksum mismatch")                             \
  X(ETRUNC, "truncated input")                                  \
  X(EMISMATCH, "mismatched architecture or version")            \
  X(ERANGE, "value out of range")                              \
  X(ENOSPC, "no space left on device")                          \
  X(EBUSY, "in use by another process")

typedef enum {
  XQ_OK = 0,
#define XQ_ERR_ENUM(name, msg) XQ_##name,
  XQ_ERR_FIRST_ = -100,
  XQ_ERRNO_MAP(XQ_ERR_ENUM)
#undef XQ_ERR_ENUM
  XQ_ERR_LAST_
} xq_err_t;

/* Returns a static, human-readable message for an error code (never NULL). */
const char *xq_strerror(int err);

/* A caller-owned buffer for the specific reason of a failure. May be NULL. */
typedef struct {
  char msg[256];
} xq_errbuf_t;

/* printf-style: writes the reason into eb (when non-NULL) and returns code. A reason that
 * does not fit is cut and ends in "...". */
int xq_err_set(xq_errbuf_t *eb, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
