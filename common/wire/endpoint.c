/*
 * endpoint.c: the check of a user-given ZeroMQ endpoint (see endpoint.h).
 */
#include "wire/endpoint.h"

#include <stdlib.h>
#include <string.h>

int xq_endpoint_check(const char *ep, const char *what, xq_errbuf_t *eb) {
  if (!ep || !*ep)
    return xq_err_set(eb, XQ_EINVAL, "%s is empty: give an endpoint such as"
                      " tcp://127.0.0.1:5555", what);
  const char *sep = strstr(ep, "://");
  if (!sep)
    return xq_err_set(eb, XQ_EINVAL, "%s '%s' is not a ZeroMQ endpoint: it needs its"
                      " transport, as in tcp://%s", what, ep, ep);
  if (strncmp(ep, "tcp://", 6) != 0) return 0; /* ipc://, inproc://: ZeroMQ judges */
  const char *host = sep + 3, *colon = strrchr(host, ':');
  char *end = NULL;
  long port = colon ? strtol(colon + 1, &end, 10) : 0;
  if (colon && !strcmp(colon + 1, "*")) return 0; /* a bind to any free port */
  /* Say which part is missing or wrong: "tcp://127.0.0.1" lacks only its port. An IPv6
   * address ("tcp://[::1]") has colons of its own: its port follows the ']'. */
  const char *bracket = strrchr(host, ']');
  if (!*host)
    return xq_err_set(eb, XQ_EINVAL, "%s '%s' has no host and no port: give"
                      " tcp://HOST:PORT, as in tcp://127.0.0.1:5555", what, ep);
  if (!colon || (bracket && colon < bracket))
    return xq_err_set(eb, XQ_EINVAL, "%s '%s' has no port: add one, as in %s:5555", what, ep,
                      ep);
  if (colon == host)
    return xq_err_set(eb, XQ_EINVAL, "%s '%s' has no host: give one before the port, as in"
                      " tcp://127.0.0.1%s", what, ep, colon);
  if (end == colon + 1 || *end || port < 0 || port > 65535)
    return xq_err_set(eb, XQ_EINVAL, "%s '%s': the port '%s' is not a number from 0 to 65535:"
                      " give tcp://HOST:PORT, as in tcp://127.0.0.1:5555", what, ep, colon + 1);
  return 0;
}
