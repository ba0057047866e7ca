/*
 * net_addr.c: address settings checked before use (see net_addr.h).
 */
#include "support/net_addr.h"

#include <netdb.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/un.h>

int xq_addr_resolve(const char *what, const char *addr, struct sockaddr_storage *ss,
                    xq_errbuf_t *eb) {
  char host[128];
  const char *colon = strrchr(addr, ':');
  if (!colon || !colon[1])
    return xq_err_set(eb, XQ_EINVAL, "%s address '%s' is not HOST:PORT (e.g. 127.0.0.1:5580)",
                      what, addr);
  size_t hl = (size_t)(colon - addr);
  const char *hp = addr;
  if (hl >= 2 && addr[0] == '[' && addr[hl - 1] == ']') {
    hp++;
    hl -= 2;
  }
  if (hl == 0 || hl >= sizeof host)
    return xq_err_set(eb, XQ_EINVAL, "%s address '%s': missing or overlong host", what, addr);
  memcpy(host, hp, hl);
  host[hl] = '\0';
  char *end;
  long port = strtol(colon + 1, &end, 10);
  if (*end || port < 0 || port > 65535)
    return xq_err_set(eb, XQ_EINVAL, "%s address '%s': port must be 0..65535", what, addr);
  struct addrinfo hints, *res = NULL;
  memset(&hints, 0, sizeof hints);
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV | AI_PASSIVE;
  int rc = getaddrinfo(strcmp(host, "*") == 0 ? NULL : host, colon + 1, &hints, &res);
  if (rc != 0 || !res)
    return xq_err_set(eb, XQ_EINVAL, "%s address '%s': cannot resolve host '%s': %s", what,
                      addr, host, gai_strerror(rc));
  memcpy(ss, res->ai_addr, res->ai_addrlen);
  freeaddrinfo(res);
  return 0;
}

/* A host part of a tcp:// endpoint: letters, digits and . - _ : * % [ ] only (names,
 * interfaces, IPv4, [IPv6] with a zone). */
static bool host_chars_ok(const char *h, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_:*%[]", h[i]))
      return false;
  return true;
}

int xq_addr_check_zmq_bind(const char *what, const char *ep, xq_errbuf_t *eb) {
  if (strncmp(ep, "ipc://", 6) == 0) {
    size_t n = strlen(ep + 6);
    if (n == 0 || n >= sizeof ((struct sockaddr_un *)0)->sun_path)
      return xq_err_set(eb, XQ_EINVAL, "%s: '%s': an ipc:// path must have 1..%zu characters",
                        what, ep, sizeof ((struct sockaddr_un *)0)->sun_path - 1);
    return 0;
  }
  if (strncmp(ep, "tcp://", 6) != 0)
    return xq_err_set(eb, XQ_EINVAL,
                      "%s: '%s' is not a ZeroMQ endpoint: write tcp://HOST:PORT (e.g."
                      " tcp://127.0.0.1:5555, tcp://*:5555 for every interface) or ipc://PATH",
                      what, ep);
  const char *a = ep + 6, *colon = strrchr(a, ':'), *bracket = strrchr(a, ']');
  /* Say which part is missing: "tcp://127.0.0.1" lacks only its port (issue 49). */
  if (*a && (!colon || (bracket && colon < bracket)))
    return xq_err_set(eb, XQ_EINVAL, "%s: '%s' has no port: add one, as in %s:5555", what, ep,
                      ep);
  if (colon == a)
    return xq_err_set(eb, XQ_EINVAL, "%s: '%s' has no host: give an address, a name or *"
                      " before the port, as in tcp://127.0.0.1%s", what, ep, colon);
  if (!colon || !host_chars_ok(a, (size_t)(colon - a)))
    return xq_err_set(eb, XQ_EINVAL,
                      "%s: '%s': want tcp://HOST:PORT with HOST an address, a name or *"
                      " (e.g. tcp://127.0.0.1:5555)",
                      what, ep);
  const char *p = colon + 1;
  if (strcmp(p, "*") == 0) return 0;
  char *end;
  long port = strtol(p, &end, 10);
  if (*p < '0' || *p > '9' || *end || port < 0 || port > 65535)
    return xq_err_set(eb, XQ_EINVAL, "%s: '%s': the port must be 0..65535 or *", what, ep);
  return 0;
}
