/*
 * join_command.c: the command that adds a worker on another machine (join_command.h). The
 * endpoints are ZeroMQ bind endpoints: a tcp bind to host "*" or 0.0.0.0 is reached at this
 * host's name when that resolves to an address other than loopback, else at its first
 * IPv4 address that is not loopback; a loopback bind is kept and warned about.
 */
#include "join_command.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* true when addr (an IPv4 or IPv6 socket address) is loopback. */
static bool is_loopback_sa(const struct sockaddr *sa) {
  if (sa->sa_family == AF_INET)
    return (ntohl(((const struct sockaddr_in *)(const void *)sa)->sin_addr.s_addr) >> 24) == 127;
  if (sa->sa_family == AF_INET6)
    return IN6_IS_ADDR_LOOPBACK(&((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr);
  return false;
}

/* This host as other machines reach it, into out (n bytes). */
static void reachable_host(char *out, size_t n) {
  char name[256] = "";
  if (gethostname(name, sizeof name - 1) == 0 && name[0]) {
    struct addrinfo hints = {0}, *res = NULL;
    hints.ai_socktype = SOCK_STREAM;
    bool ok = false;
    if (getaddrinfo(name, NULL, &hints, &res) == 0) {
      for (struct addrinfo *r = res; r && !ok; r = r->ai_next) ok = !is_loopback_sa(r->ai_addr);
      freeaddrinfo(res);
    }
    if (ok) {
      snprintf(out, n, "%s", name);
      return;
    }
  }
  struct ifaddrs *ifs = NULL;
  if (getifaddrs(&ifs) == 0) {
    for (struct ifaddrs *i = ifs; i; i = i->ifa_next)
      if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET && !is_loopback_sa(i->ifa_addr)) {
        inet_ntop(AF_INET, &((const struct sockaddr_in *)(const void *)i->ifa_addr)->sin_addr,
                  out, (socklen_t)n);
        freeifaddrs(ifs);
        return;
      }
    freeifaddrs(ifs);
  }
  snprintf(out, n, "%s", name[0] ? name : "THIS-HOST");
}

/* The bind endpoint as a client connects to it, into out; true when only this machine can
 * (a loopback host or ipc://). */
static bool reachable(const char *bind, char *out, size_t n) {
  const char *host = strstr(bind, "://");
  if (strncmp(bind, "tcp://", 6) != 0 || !host) {
    snprintf(out, n, "%s", bind);
    return true; /* ipc:// or inproc://: this machine only */
  }
  host += 3;
  const char *colon = strrchr(host, ':');
  size_t hl = colon ? (size_t)(colon - host) : strlen(host);
  const char *port = colon ? colon : "";
  if ((hl == 1 && host[0] == '*') || (hl == 7 && !strncmp(host, "0.0.0.0", 7))) {
    char me[256];
    reachable_host(me, sizeof me);
    snprintf(out, n, "tcp://%s%s", me, port);
    return false;
  }
  snprintf(out, n, "%s", bind);
  return (hl >= 4 && !strncmp(host, "127.", 4)) || (hl == 9 && !strncmp(host, "localhost", 9)) ||
         (hl == 5 && !strncmp(host, "[::1]", 5));
}

void xq_join_command(const xq_join_in_t *in, char *out, size_t n, char *warn, size_t wn) {
  char router[300], pub[300];
  bool lo = reachable(in->router, router, sizeof router);
  lo = reachable(in->pub, pub, sizeof pub) || lo;
  warn[0] = '\0';
  if (lo)
    snprintf(warn, wn, "the coordinator listens on loopback only (router %s, pub %s): no other"
             " machine can join; set router = tcp://*:PORT and pub = tcp://*:PORT+1 in"
             " campaign.ini (and open both ports in the firewall), then restart it",
             in->router, in->pub);
  const char *sec = in->curve_secret_key ? in->curve_secret_key : "";
  if (!*sec) {
    snprintf(out, n, "xqz-worker --coordinator %s --pub %s\n", router, pub);
    return;
  }
  /* The public key beside the secret one: NAME.secret -> NAME.pub (xqz keygen's pair). */
  char pubkey[600];
  size_t sl = strlen(sec);
  if (sl > 7 && !strcmp(sec + sl - 7, ".secret"))
    snprintf(pubkey, sizeof pubkey, "%.*s.pub", (int)(sl - 7), sec);
  else
    snprintf(pubkey, sizeof pubkey, "%s.pub", sec);
  if (!*warn && access(pubkey, R_OK) != 0)
    snprintf(warn, wn, "the coordinator's public key %s is not beside its secret key: copy the"
             " .pub that xqz keygen wrote with %s instead", pubkey, sec);
  const char *allow = in->curve_allow_dir && *in->curve_allow_dir ? in->curve_allow_dir
                                                                    : "CURVE_ALLOW_DIR";
  snprintf(out, n,
           "1. on the worker machine: xqz keygen --dir ~/.xqz worker\n"
           "2. copy the worker's ~/.xqz/worker.pub into %s/ here (e.g. scp WORKER:.xqz/worker.pub"
           " %s/HOSTNAME.pub; no restart needed)\n"
           "3. copy %s to the worker machine's ~/.xqz/coordinator.pub\n"
           "4. on the worker machine: xqz-worker --coordinator %s --pub %s --server-key"
           " ~/.xqz/coordinator.pub --key ~/.xqz/worker.secret\n",
           allow, allow, pubkey, router, pub);
}
