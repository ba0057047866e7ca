/*
 * remote.h: what the xqz commands that talk to a running coordinator share (status,
 * promotions, and any later operator command): the connection options
 * (--coordinator ADDR, --server-key FILE --key FILE, --timeout MS), one request with the
 * failures explained (no answer, another protocol version, an Error reply), and the
 * table row of a gating match.
 */
#ifndef XQZ_REMOTE_H
#define XQZ_REMOTE_H

#include <stdbool.h>
#include <stdio.h>

#include "wire/client.h"
#include "xqz.pb-c.h"

#define XQZ_REMOTE_DEFAULT_ADDR "tcp://127.0.0.1:5555"
#define XQZ_REMOTE_OPTIONS_HELP                                                           \
  "  --coordinator ADDR  the coordinator's ROUTER address (default " XQZ_REMOTE_DEFAULT_ADDR \
  ")\n"                                                                                   \
  "  --campaign DIR      the coordinator of the campaign in DIR (the router address its\n"  \
  "                      campaign.ini records); --coordinator wins over it\n"              \
  "  --server-key FILE   the coordinator's CURVE public key (.pub), with --key\n"          \
  "  --key FILE          this client's CURVE secret key (.secret), with --server-key\n"    \
  "  --timeout MS        how long to wait for an answer (default 5000)\n"

typedef struct {
  const char *cmd; /* "status", for messages */
  const char *addr, *server_key, *key;
  const char *campaign;     /* --campaign DIR: the address comes from DIR/campaign.ini */
  bool addr_given;          /* --coordinator was given */
  char campaign_addr[256];  /* the address read from DIR/campaign.ini */
  int timeout_ms;
  bool version_mismatch; /* the coordinator speaks another protocol: asking again is useless */
  xq_client_t cl;
} xqz_remote_t;

void xqz_remote_init(xqz_remote_t *r, const char *cmd);
/* Takes argv[*i] (and its value, advancing *i) when it is a connection option: 1 taken,
 * 0 not one of them, -1 bad usage (printed). */
int xqz_remote_option(xqz_remote_t *r, int argc, char **argv, int *i);
/* Finds the address (--coordinator, else --campaign DIR's campaign.ini, else the default),
 * loads the keys and connects; prints the reason and returns nonzero on failure. */
int xqz_remote_open(xqz_remote_t *r);
void xqz_remote_close(xqz_remote_t *r);
/* Sends env and returns the reply when its body is `want`; otherwise prints why (no
 * answer, another protocol version, the coordinator's Error) and returns NULL. The reply
 * is freed by the caller with xq_wire_free. */
Xqz__Envelope *xqz_remote_call(xqz_remote_t *r, Xqz__Envelope *env,
                               Xqz__Envelope__BodyCase want);

/* A gating match as one table row (xqz status, xqz promotions). */
/* An Elo for the screen: "+12", "-3", "0" for anything that rounds to zero (never "+0",
 * "-0" or 5.68e-14), "+inf"/"-inf", "-" for NaN; decimals after the point. Returns buf. */
const char *xqz_elo_text(char *buf, size_t cap, double elo, int decimals);
/* A match's Elo with its 95% interval: "+35 ± 40"; "0 (draws only)" when no game was
 * decisive (the interval is undefined, not 0); "+inf [+200, +inf]" or "(interval open)"
 * when an end is infinite; "- (no games)". Returns buf. */
const char *xqz_match_elo_text(char *buf, size_t cap, const Xqz__MatchStatus *m);
void xqz_match_header(FILE *f);
void xqz_match_row(FILE *f, const Xqz__MatchStatus *m);
/* Strength against the anchors (oldest first, as Status and Promotions carry them):
 * the newest score per anchor as one line, "71% vs greedy (20 games, net 1a2b…, promotion
 * 3), 3% vs alphabeta:1 (…)" ("none measured yet" when n is 0), and one table row per
 * measured net with a column per anchor (xqz promotions). */
void xqz_anchor_line(FILE *f, Xqz__AnchorPoint *const *a, size_t n);
void xqz_anchor_table(FILE *f, Xqz__AnchorPoint *const *a, size_t n);

#endif
