/* error.c: messages for the XQ_E... codes and the detailed-reason buffer. */
#include "support/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

const char *xq_strerror(int err) {
  switch (err) {
    case XQ_OK: return "success";
#define XQ_ERR_CASE(name, msg) case XQ_##name: return msg;
    XQ_ERRNO_MAP(XQ_ERR_CASE)
#undef XQ_ERR_CASE
    default: return "unknown error";
  }
}

int xq_err_set(xq_errbuf_t *eb, int code, const char *fmt, ...) {
  if (eb) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(eb->msg, sizeof eb->msg, fmt, ap);
    va_end(ap);
    /* A reason longer than the buffer ends in "..." so that nobody takes the cut text for
     * the whole of it. */
    if (n >= (int)sizeof eb->msg) memcpy(eb->msg + sizeof eb->msg - 4, "...", 4);
  }
  return code;
}
