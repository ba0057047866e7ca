/*
 * opt_name.h: option names as users type them. The daemons' settings tables spell names
 * one way (the worker and trainer with dashes, the coordinator with underscores, as in
 * campaign.ini); a user types the other spelling as often, so a name matches with '-' and
 * '_' taken as the same character (issue 49 item 5). A name that matches nothing gets the
 * nearest table name as a suggestion: "unknown option '--theads'; did you mean --threads?".
 */
#ifndef XQ_OPT_NAME_H
#define XQ_OPT_NAME_H

#include <stdbool.h>

/* true when given and name are the same with '-' and '_' taken as equal. */
bool xq_opt_name_eq(const char *given, const char *name);

/* The nearest of the names offered (xq_opt_near_add) to `given`, by edit distance with
 * '-' == '_' and case ignored; a name that is not close is no suggestion. Caller-owned,
 * holds pointers to the strings it is given. */
typedef struct {
  const char *given;
  const char *best; /* NULL: nothing close yet */
  int dist;
} xq_opt_near_t;

void xq_opt_near_init(xq_opt_near_t *n, const char *given);
void xq_opt_near_add(xq_opt_near_t *n, const char *name);
/* The suggestion, or NULL when no offered name is close to the given one. */
const char *xq_opt_near_best(const xq_opt_near_t *n);

#endif
