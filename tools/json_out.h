/*
 * json_out.h: the small JSON printing helpers the xqz subcommands share.
 */
#ifndef XQZ_JSON_OUT_H
#define XQZ_JSON_OUT_H

/* Prints s to stdout as a JSON string (quotes, backslashes and control bytes escaped). */
void xqz_json_str(const char *s);

#endif
