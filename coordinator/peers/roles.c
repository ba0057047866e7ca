/* roles.c: the decisions behind a peer's roles (see roles.h); which roles may send what is
 * the command table's (coordinator/commands.def). */
#include "roles.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

void xqc_roles_text(unsigned mask, char *buf, size_t n) {
  static const char *names[] = {"worker", "trainer", "admin", "observer", "enrol"};
  size_t k = 0;
  buf[0] = '\0';
  for (unsigned i = 0; i < 5; i++) {
    if (!(mask & (1u << i))) continue;
    int w = snprintf(buf + k, n - k, "%s%s", k ? " or " : "", names[i]);
    if (w < 0 || (size_t)w >= n - k) return;
    k += (size_t)w;
  }
}

bool xqc_address_is_loopback(const char *address) {
  if (!address || !address[0]) return false;
  struct in_addr a4;
  if (inet_pton(AF_INET, address, &a4) == 1) return (ntohl(a4.s_addr) >> 24) == 127;
  struct in6_addr a6;
  if (inet_pton(AF_INET6, address, &a6) != 1) return false;
  if (IN6_IS_ADDR_LOOPBACK(&a6)) return true;
  return IN6_IS_ADDR_V4MAPPED(&a6) && a6.s6_addr[12] == 127;
}

bool xqc_address_listed(const char *list, const char *address) {
  if (!list || !address || !address[0]) return false;
  size_t alen = strlen(address);
  for (const char *p = list; *p;) {
    p += strspn(p, ", \t");
    size_t n = strcspn(p, ", \t");
    if (n && n == alen && memcmp(p, address, n) == 0) return true;
    p += n;
  }
  return false;
}

unsigned xqc_roles_of(const xqc_role_facts_t *f) {
  if (f->curve && f->enrolling) return XQC_ROLE_ENROL; /* nothing else, whatever the rest */
  unsigned r = XQC_ROLE_WORKER | XQC_ROLE_OBSERVER;
  if (f->curve) {
    if (f->trainer_key) r |= XQC_ROLE_TRAINER;
    if (f->admin_key) r |= XQC_ROLE_ADMIN;
    return r;
  }
  bool local = xqc_address_is_loopback(f->address);
  if (local || xqc_address_listed(f->trainer_addresses, f->address)) r |= XQC_ROLE_TRAINER;
  if (local) r |= XQC_ROLE_ADMIN;
  return r;
}

bool xqc_endpoint_is_loopback(const char *endpoint) {
  if (!strncmp(endpoint, "ipc://", 6) || !strncmp(endpoint, "inproc://", 9)) return true;
  const char *host = strstr(endpoint, "://");
  if (!host) return false;
  host += 3;
  /* "tcp://HOST:PORT", "tcp://[V6]:PORT", and "tcp://IFACE;..." forms: take HOST. */
  char h[256];
  size_t n;
  if (host[0] == '[') {
    host++;
    n = strcspn(host, "]");
  } else {
    const char *colon = strrchr(host, ':');
    n = colon ? (size_t)(colon - host) : strlen(host);
  }
  if (n == 0 || n >= sizeof h) return false;
  memcpy(h, host, n);
  h[n] = '\0';
  return !strcmp(h, "localhost") || !strcmp(h, "lo") || xqc_address_is_loopback(h);
}
