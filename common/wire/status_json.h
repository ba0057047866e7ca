/*
 * status_json.h: JSON text of the coordinator's Status and of a list of gating matches,
 * shared by `xqz status --json`, `xqz promotions --json` and the coordinator's HTTP API
 * (/api/status, /api/promotions) so the two can never disagree. Field names are the
 * proto field names; net ids are 16-digit hex strings (JSON numbers lose 64-bit ids).
 *
 * Ownership: both return a malloc'd NUL-terminated string (NULL when out of memory).
 */
#ifndef XQ_STATUS_JSON_H
#define XQ_STATUS_JSON_H

#include <stddef.h>

#include "xqz.pb-c.h"

char *xq_status_json(const Xqz__Status *s);
/* Status.population alone (`xqz population --json`): "null" when p is NULL. */
char *xq_population_json(const Xqz__Population *p);
char *xq_matches_json(Xqz__MatchStatus *const *matches, size_t n);

#endif
