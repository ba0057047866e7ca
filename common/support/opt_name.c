/* opt_name.c: option-name matching and "did you mean" suggestions (opt_name.h). */

#include "support/opt_name.h"

#include <ctype.h>
#include <string.h>

/* One character as compared: '_' reads as '-', letters in lower case. */
static int fold(char c) { return c == '_' ? '-' : tolower((unsigned char)c); }

/* true when a and b are one character of a name: the same, or each a '-' or a '_'. */
static bool same(char a, char b) { return a == b || ((a == '-' || a == '_') && (b == '-' || b == '_')); }

bool xq_opt_name_eq(const char *given, const char *name) {
  while (*given && *name && same(*given, *name)) {
    given++;
    name++;
  }
  return *given == '\0' && *name == '\0';
}

enum { NEAR_MAX_LEN = 64 }; /* longer names are never suggested (none is this long) */

/* Edit distance (insert, delete, substitute, swap two neighbours) between a and b of at
 * most NEAR_MAX_LEN characters each. */
static int distance(const char *a, const char *b) {
  int la = (int)strlen(a), lb = (int)strlen(b);
  static const int BIG = 1 << 20;
  if (la > NEAR_MAX_LEN || lb > NEAR_MAX_LEN) return BIG;
  int d[NEAR_MAX_LEN + 1][NEAR_MAX_LEN + 1];
  for (int i = 0; i <= la; i++) d[i][0] = i;
  for (int j = 0; j <= lb; j++) d[0][j] = j;
  for (int i = 1; i <= la; i++)
    for (int j = 1; j <= lb; j++) {
      int cost = fold(a[i - 1]) != fold(b[j - 1]);
      int v = d[i - 1][j - 1] + cost;
      if (d[i - 1][j] + 1 < v) v = d[i - 1][j] + 1;
      if (d[i][j - 1] + 1 < v) v = d[i][j - 1] + 1;
      if (i > 1 && j > 1 && fold(a[i - 1]) == fold(b[j - 2]) && fold(a[i - 2]) == fold(b[j - 1]) &&
          d[i - 2][j - 2] + 1 < v)
        v = d[i - 2][j - 2] + 1;
      d[i][j] = v;
    }
  return d[la][lb];
}

void xq_opt_near_init(xq_opt_near_t *n, const char *given) {
  n->given = given;
  n->best = NULL;
  n->dist = 0;
}

void xq_opt_near_add(xq_opt_near_t *n, const char *name) {
  size_t len = strlen(n->given);
  /* Close: two edits (one for a name of four characters or fewer), or the given text is
   * the start of the name ("--checkpoint" for "--checkpoint-every-s"), counted as three. */
  int limit = len <= 4 ? 1 : 2;
  int d = distance(n->given, name);
  if (d > limit) {
    bool prefix = len >= 3 && strlen(name) > len;
    for (size_t i = 0; prefix && i < len; i++) prefix = fold(n->given[i]) == fold(name[i]);
    if (!prefix) return;
    d = limit + 1;
  }
  if (!n->best || d < n->dist) {
    n->best = name;
    n->dist = d;
  }
}

const char *xq_opt_near_best(const xq_opt_near_t *n) { return n->best; }
