/*
 * net_addr.h: network addresses as an operator writes them in a setting, checked before
 * anything is opened or created: HOST:PORT for a socket the program listens on itself
 * (resolved to a socket address), and the ZeroMQ endpoints a daemon binds. Errors name
 * the setting (what), the address and what is wrong with it.
 */
#ifndef XQ_NET_ADDR_H
#define XQ_NET_ADDR_H

#include <sys/socket.h>

#include "support/error.h"

/* Splits "HOST:PORT" / "[IPv6]:PORT" / "*:PORT" (every interface) and resolves it for a
 * listening TCP socket (numeric PORT 0..65535; 0 picks a free port). XQ_EINVAL when
 * addr is malformed or its host does not resolve. */
int xq_addr_resolve(const char *what, const char *addr, struct sockaddr_storage *ss,
                    xq_errbuf_t *eb);

/* Checks a ZeroMQ bind endpoint: tcp://HOST:PORT (HOST an address, a name, an interface
 * or *; PORT 0..65535 or *) or ipc://PATH. Only the syntax: a busy port shows at the
 * bind. XQ_EINVAL naming what is wrong. */
int xq_addr_check_zmq_bind(const char *what, const char *endpoint, xq_errbuf_t *eb);

#endif
