/*
 * curve.h: CURVE keys for ZeroMQ (libzmq built with libsodium).
 *
 * Key files are text written by `xqz keygen NAME`: NAME.pub holds the 40-character Z85
 * public key on one line; NAME.secret (mode 0600) holds the Z85 secret key on one line.
 * The public key is always derived from the secret one (zmq_curve_public), so a secret
 * file alone identifies its owner. Blank lines and comment lines ('#') before the key are
 * ignored ('#' is also a Z85 digit, so a line that decodes as a key is always the key).
 *
 * A client (worker, trainer, xqz CLI) needs the server's public key and its own secret
 * key; the coordinator needs its own secret key and a directory of allowed *.pub files.
 */
#ifndef XQ_CURVE_H
#define XQ_CURVE_H

#include <stdbool.h>

#include "support/error.h"

#define XQ_Z85_KEY_LEN 40

typedef struct {
  bool on;                                  /* false: plain TCP, the other fields empty */
  char server_public[XQ_Z85_KEY_LEN + 1];   /* clients only */
  char public_key[XQ_Z85_KEY_LEN + 1];
  char secret_key[XQ_Z85_KEY_LEN + 1];
} xq_curve_t;

/* true when this libzmq supports CURVE. */
bool xq_curve_available(void);
/* Generates a key pair and writes DIR/NAME.pub and DIR/NAME.secret (0600). Refuses to
 * overwrite an existing file unless force. */
int xq_curve_keygen(const char *dir, const char *name, bool force, char public_out[41],
                    xq_errbuf_t *eb);
/* Reads one Z85 key (40 characters, validated by decoding) from a .pub or .secret file. */
int xq_curve_read_key(const char *path, char key[41], xq_errbuf_t *eb);
/* Client side: server public key file + own secret key file. Both NULL or empty: CURVE off
 * (c->on = false). Exactly one given is an error, and so is a .secret file as the server's
 * key or a .pub file as the own (swapped). */
int xq_curve_client_load(xq_curve_t *c, const char *server_pub_file, const char *secret_file,
                         xq_errbuf_t *eb);
/* Server side: own secret key file (NULL or empty: off). */
int xq_curve_server_load(xq_curve_t *c, const char *secret_file, xq_errbuf_t *eb);
/* Sets the socket options; call before connect/bind. No-op when !c->on. 0 or XQ_EIO. */
int xq_curve_apply_client(void *sock, const xq_curve_t *c, xq_errbuf_t *eb);
int xq_curve_apply_server(void *sock, const xq_curve_t *c, xq_errbuf_t *eb);

#endif
