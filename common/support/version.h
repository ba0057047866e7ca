/*
 * version.h: the software version every xqzero program reports (`xqz version`,
 * `--version` on the daemons, Hello.software_version). The protocol version is separate:
 * XQ_PROTOCOL_VERSION in wire/wire.h; programs of different software versions talk as
 * long as their protocol versions are equal.
 */
#ifndef XQ_VERSION_H
#define XQ_VERSION_H

#define XQ_SOFTWARE_VERSION "0.2.0"
#define XQ_SOFTWARE_NAME "xqzero " XQ_SOFTWARE_VERSION

#endif
