/*
 * anchor_list.c: the `anchors` setting read as a list of built-in players (anchor_list.h).
 * Apart from anchors.c so that the settings check (config.c) needs nothing else.
 */
#include "anchor_list.h"

#include <stdio.h>
#include <string.h>

#include "search/players.h"

int xqc_anchor_list(const char *list, char specs[][XQC_ANCHOR_SPEC_MAX], int *n,
                    xq_errbuf_t *eb) {
  *n = 0;
  const char *p = list;
  while (*p) {
    const char *end = strchr(p, ',');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    char spec[XQC_ANCHOR_SPEC_MAX];
    if (len == 0 || len >= sizeof spec)
      return xq_err_set(eb, XQ_ERANGE, "anchors: '%s' has an empty or overlong entry; give"
                        " built-in players separated by commas, e.g. greedy,alphabeta:1", list);
    memcpy(spec, p, len);
    spec[len] = 0;
    if (!xq_player_is_builtin(spec))
      return xq_err_set(eb, XQ_ERANGE, "anchors: '%s' is not a built-in player; use random,"
                        " greedy or alphabeta:D (D = 1..8), separated by commas", spec);
    for (int i = 0; i < *n; i++)
      if (!strcmp(specs[i], spec))
        return xq_err_set(eb, XQ_ERANGE, "anchors: '%s' is listed twice; list it once", spec);
    if (*n == XQC_ANCHORS_MAX)
      return xq_err_set(eb, XQ_ERANGE, "anchors: more than %d players in '%s'; list fewer",
                        XQC_ANCHORS_MAX, list);
    snprintf(specs[(*n)++], XQC_ANCHOR_SPEC_MAX, "%s", spec);
    p += len + (end ? 1 : 0);
    if (end && !*p)
      return xq_err_set(eb, XQ_ERANGE, "anchors: '%s' ends with a comma; remove it", list);
  }
  return 0;
}
