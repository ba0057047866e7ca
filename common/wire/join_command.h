/*
 * join_command.h: the command that adds a worker on another machine to a campaign, from the
 * coordinator's settings: its ROUTER and PUB endpoints as another machine reaches them (a
 * bind to every interface becomes this host's name or address), and with CURVE the
 * coordinator's public key file to copy over and the directory the worker's public key goes
 * into. The coordinator logs it at start; `xqz join-command` prints it again.
 */
#ifndef XQ_JOIN_COMMAND_H
#define XQ_JOIN_COMMAND_H

#include <stddef.h>

typedef struct {
  const char *router, *pub;     /* bind endpoints (campaign.ini's router and pub) */
  const char *curve_secret_key; /* the coordinator's .secret file; "" or NULL: no CURVE */
  const char *curve_allow_dir;  /* where the workers' .pub files go (with CURVE) */
} xq_join_in_t;

/* Writes the steps into out (n bytes), one per line, each ending in '\n': without CURVE one
 * line, the xqz-worker command; with CURVE the key steps first. warn (wn bytes) gets a
 * warning, or "" when none: an endpoint bound to loopback (no other machine reaches it) or
 * a public key file that is not beside the secret. */
void xq_join_command(const xq_join_in_t *in, char *out, size_t n, char *warn, size_t wn);

#endif
