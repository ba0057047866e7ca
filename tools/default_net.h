/*
 * default_net.h: the net `xqz play` and `xqz engine` use when given neither --net nor
 * --campaign, so that a fresh clone plays a real game at once: $XQZ_NET when set, else
 * the trained net shipped with the sources, nets/xqzero.xqzn (its provenance in
 * nets/README.md), found by the path the build recorded.
 */
#ifndef XQZ_DEFAULT_NET_H
#define XQZ_DEFAULT_NET_H

#include "support/error.h"

/* The default net's path, or NULL with eb saying where it looked and what to give
 * instead. The file is not loaded here. */
const char *xqz_default_net(xq_errbuf_t *eb);

#endif
