/*
 * ini_value.h: one "key = value" line of an INI file such as a campaign's campaign.ini,
 * read or replaced without a full parse: for the tools that need one setting of a
 * campaign (xqz status --campaign reads its router) and for the coordinator, which records
 * the endpoints it really listens on. Comment lines (';' or '#') and sections are left
 * alone; the last line of a key wins, as inih reads it.
 */
#ifndef XQ_INI_VALUE_H
#define XQ_INI_VALUE_H

#include <stddef.h>

#include "support/error.h"

/* The value of key in the file at path, trimmed, into out (n bytes). Returns 1 found,
 * 0 not set there, or XQ_EIO (cannot read path; reason in eb). */
int xq_ini_get(const char *path, const char *key, char *out, size_t n, xq_errbuf_t *eb);
/* Sets key to value in the file at path: its last line is replaced, or a line is added at
 * the end; the file is rewritten atomically (temp, fsync, rename) and only when the value
 * changes. Returns 1 changed, 0 already so, or a negative XQ_E... code. */
int xq_ini_set(const char *path, const char *key, const char *value, xq_errbuf_t *eb);

#endif
