/*
 * remote.h: what the xqz commands that talk to a running coordinator share (status,
 * promotions, and any later operator command): the connection options as rows of the
 * command's options table (--coordinator ADDR, --campaign DIR, --server-key FILE --key
 * FILE, --timeout MS; support/options.h), one request with the
 * failures explained (no answer, another protocol version, an Error reply), and the
 * table row of a gating match.
 */
#ifndef XQZ_REMOTE_H
#define XQZ_REMOTE_H

#include <stdbool.h>
#include <stdio.h>

#include "support/options.h"
#include "wire/client.h"
#include "xqz.pb-c.h"

#define XQZ_REMOTE_DEFAULT_ADDR "tcp://127.0.0.1:5555"

typedef struct {
  const char *cmd; /* "status", for messages */
  const char *addr;         /* --coordinator, else NULL until xqz_remote_open */
  const char *server_key, *key;
  const char *campaign;     /* --campaign DIR: the address comes from DIR/campaign.ini */
  char campaign_addr[256];  /* the address read from DIR/campaign.ini */
  int timeout_ms;
  bool version_mismatch; /* the coordinator speaks another protocol: asking again is useless */
  xq_client_t cl;
} xqz_remote_t;

/* Before the defaults of the command's table are set: they include the rows below. */
void xqz_remote_init(xqz_remote_t *r, const char *cmd);
/* --coordinator: a ZeroMQ endpoint. */
int xqz_remote_check_addr(const char *name, const char *v, xq_errbuf_t *eb);
/* The connection options as rows of the table of options struct `type`, whose member `r`
 * is its xqz_remote_t. */
#define XQZ_REMOTE_ROWS(type, r)                                                                \
  {"coordinator", XQ_OPTION_TEXT, XQ_OPT_FIELD(type, r.addr), NULL, 0, 0, .arg = "ADDR",         \
   .check = xqz_remote_check_addr, .shown = XQZ_REMOTE_DEFAULT_ADDR,                            \
   .help = "the coordinator's ROUTER address"},                                                 \
  {"campaign", XQ_OPTION_TEXT, XQ_OPT_FIELD(type, r.campaign), NULL, 0, 0, .arg = "DIR",         \
   .help = "the coordinator of the campaign in DIR (the router address its campaign.ini"        \
   " records); --coordinator wins over it"},                                                    \
  {"server-key", XQ_OPTION_TEXT, XQ_OPT_FIELD(type, r.server_key), NULL, 0, 0, .arg = "FILE",    \
   .help = "the coordinator's CURVE public key (.pub), with --key"},                            \
  {"key", XQ_OPTION_TEXT, XQ_OPT_FIELD(type, r.key), NULL, 0, 0, .arg = "FILE",                  \
   .help = "this client's CURVE secret key (.secret), with --server-key"},                      \
  {"timeout", XQ_OPTION_INT, XQ_OPT_FIELD(type, r.timeout_ms), "5000", 1, 600000, .arg = "MS",   \
   .help = "how long to wait for an answer"}
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
