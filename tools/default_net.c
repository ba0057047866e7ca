/*
 * default_net.c: the default net of `xqz play` and `xqz engine` (default_net.h).
 */
#include "default_net.h"

#include <stdlib.h>
#include <unistd.h>

#ifndef XQZ_SHIPPED_NET
#error "the build defines XQZ_SHIPPED_NET, the path of nets/xqzero.xqzn (tools/CMakeLists.txt)"
#endif

const char *xqz_default_net(xq_errbuf_t *eb) {
  const char *env = getenv("XQZ_NET");
  if (env && *env) {
    if (access(env, R_OK) == 0) return env;
    xq_err_set(eb, XQ_EINVAL, "XQZ_NET names %s, which cannot be read: fix or unset XQZ_NET, "
               "or give --net FILE or --campaign DIR", env);
    return NULL;
  }
  if (access(XQZ_SHIPPED_NET, R_OK) == 0) return XQZ_SHIPPED_NET;
  xq_err_set(eb, XQ_EINVAL, "no net given and the shipped net %s is not there (was the source "
             "tree moved?): give --net FILE or --campaign DIR, or set XQZ_NET", XQZ_SHIPPED_NET);
  return NULL;
}
