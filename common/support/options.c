/* options.c: the options engine (options.h): defaults, parsing, messages and help from one
 * table of rows. */

#include "support/options.h"

#include <assert.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "support/opt_name.h"

int xq_opts_find(const xq_opts_t *t, const char *name) {
  for (int i = 0; i < t->n; i++)
    if (xq_opt_name_eq(name, t->rows[i].name)) return i;
  return -1;
}

/* names as "a|b|c" in buf. */
static const char *join_names(char *buf, size_t size, const char *const *names) {
  size_t n = 0;
  buf[0] = '\0';
  for (int i = 0; names[i] && n < size; i++)
    n += (size_t)snprintf(buf + n, size - n, "%s%s", i ? "|" : "", names[i]);
  return buf;
}

/* The row's name as its messages spell it: bare for settings, else "--name". */
static const char *shown_name(const xq_opts_t *t, const xq_opt_t *r, char *buf, size_t n) {
  snprintf(buf, n, "%s%s", t->style == XQ_OPTS_SETTINGS ? "" : "--", r->name);
  return buf;
}

/* A bound as text: whole numbers in full up to ten digits ("10000000"), others as %g. */
static const char *bound(double v, char *buf, size_t n) {
  if (v == floor(v) && fabs(v) < 1e10) snprintf(buf, n, "%.0f", v);
  else snprintf(buf, n, "%g", v);
  return buf;
}

/* A whole number: as strtoll reads it, or a finite double with no fraction ("1e6"). */
static bool parse_whole(const char *v, long long *out) {
  char *end;
  errno = 0;
  long long x = strtoll(v, &end, 10);
  if (!errno && end != v && !*end) {
    *out = x;
    return true;
  }
  errno = 0;
  double d = strtod(v, &end);
  if (errno || end == v || *end || !isfinite(d) || d != floor(d) || fabs(d) > 9.2e18)
    return false;
  *out = (long long)d;
  return true;
}

/* A bad number for row r: the style's words for "not a number" or "out of bounds". */
static int bad_number(const xq_opts_t *t, const xq_opt_t *r, const char *v, bool parsed,
                      double x, long long whole_x, xq_errbuf_t *eb) {
  bool whole = r->kind == XQ_OPTION_INT || r->kind == XQ_OPTION_UINT;
  switch (t->style) {
  case XQ_OPTS_SETTINGS:
    if (!parsed)
      return xq_err_set(eb, XQ_ERANGE, "%s: not %s: '%s'", r->name,
                        whole ? "an integer" : "a number", v);
    if (whole)
      return xq_err_set(eb, XQ_ERANGE, "%s: %lld outside [%.0f, %.0f]", r->name, whole_x, r->lo,
                        r->hi);
    return xq_err_set(eb, XQ_ERANGE, "%s: %g outside [%g, %g]", r->name, x, r->lo, r->hi);
  case XQ_OPTS_IN_RANGE:
    return xq_err_set(eb, XQ_ERANGE, "--%s: '%s' is not a %s in [%g, %g]", r->name, v,
                      whole ? "whole number" : "number", r->lo, r->hi);
  case XQ_OPTS_FROM_TO: {
    char lo[32], hi[32];
    return xq_err_set(eb, XQ_ERANGE, "--%s must be a number from %s to %s, not '%s'", r->name,
                      bound(r->lo, lo, sizeof lo), bound(r->hi, hi, sizeof hi), v);
  }
  }
  return XQ_ERANGE;
}

static int set_int(const xq_opts_t *t, const xq_opt_t *r, char *field, const char *v,
                   xq_errbuf_t *eb) {
  long long x;
  if (!parse_whole(v, &x)) return bad_number(t, r, v, false, 0, 0, eb);
  if ((double)x < r->lo || (double)x > r->hi) return bad_number(t, r, v, true, 0, x, eb);
  if (r->size == sizeof(int64_t)) {
    *(int64_t *)(void *)field = x;
  } else {
    assert(r->size == sizeof(int) && r->lo >= INT32_MIN && r->hi <= INT32_MAX);
    *(int *)(void *)field = (int)x;
  }
  return 0;
}

static int set_uint(const xq_opts_t *t, const xq_opt_t *r, char *field, const char *v,
                    xq_errbuf_t *eb) {
  bool hex = v[0] == '0' && (v[1] == 'x' || v[1] == 'X');
  char *end;
  errno = 0;
  unsigned long long x = strtoull(v, &end, hex ? 16 : 10);
  if (errno || end == v || *end || v[0] == '-' || v[0] == '+' || v[0] == ' ')
    return bad_number(t, r, v, false, 0, 0, eb);
  if ((double)x < r->lo || (double)x > r->hi) return bad_number(t, r, v, true, 0, (long long)x, eb);
  assert(r->size == sizeof(uint64_t));
  *(uint64_t *)(void *)field = x;
  return 0;
}

static int set_double(const xq_opts_t *t, const xq_opt_t *r, char *field, const char *v,
                      xq_errbuf_t *eb) {
  char *end;
  errno = 0;
  double x = strtod(v, &end);
  if (errno || end == v || *end || !isfinite(x)) return bad_number(t, r, v, false, 0, 0, eb);
  if (x < r->lo || x > r->hi) return bad_number(t, r, v, true, x, 0, eb);
  assert(r->size == sizeof(double));
  *(double *)(void *)field = x;
  return 0;
}

int xq_opts_set_row(const xq_opts_t *t, int i, void *obj, const char *value, xq_errbuf_t *eb) {
  assert(i >= 0 && i < t->n);
  const xq_opt_t *r = &t->rows[i];
  char *field = (char *)obj + r->off;
  char name[160];
  switch (r->kind) {
  case XQ_OPTION_INT: return set_int(t, r, field, value, eb);
  case XQ_OPTION_UINT: return set_uint(t, r, field, value, eb);
  case XQ_OPTION_DOUBLE: return set_double(t, r, field, value, eb);
  case XQ_OPTION_STRING:
  case XQ_OPTION_TEXT: {
    if (r->kind == XQ_OPTION_STRING && strlen(value) >= r->size)
      return xq_err_set(eb, XQ_ERANGE, "%s: value too long", shown_name(t, r, name, sizeof name));
    int rc = r->check ? r->check(r->name, value, eb) : 0;
    if (rc < 0) return rc;
    if (r->kind == XQ_OPTION_STRING) memcpy(field, value, strlen(value) + 1);
    else *(const char **)(void *)field = value;
    return 0;
  }
  case XQ_OPTION_ENUM: {
    assert(r->size == sizeof(int));
    for (int k = 0; r->names[k]; k++)
      if (strcmp(r->names[k], value) == 0) {
        *(int *)(void *)field = k;
        return 0;
      }
    char list[160];
    return xq_err_set(eb, XQ_ERANGE, "%s: '%s' is not one of %s",
                      shown_name(t, r, name, sizeof name), value,
                      join_names(list, sizeof list, r->names));
  }
  case XQ_OPTION_FLAG:
    assert(r->size == sizeof(bool));
    *(bool *)(void *)field = true;
    return 0;
  }
  return XQ_EINVAL;
}

void xq_opts_defaults(const xq_opts_t *t, void *obj) {
  for (int i = 0; i < t->n; i++) {
    const xq_opt_t *r = &t->rows[i];
    if (r->kind == XQ_OPTION_FLAG) {
      *(bool *)(void *)((char *)obj + r->off) = false;
      continue;
    }
    if (!r->def) continue;
    xq_errbuf_t eb;
    int rc = xq_opts_set_row(t, i, obj, r->def, &eb);
    assert(rc == 0 && "an option's default is a valid value");
    (void)rc;
  }
}

int xq_opts_unknown(const xq_opts_t *t, const char *given, xq_errbuf_t *eb) {
  const char *bare = given + strspn(given, "-");
  xq_opt_near_t near;
  xq_opt_near_init(&near, bare);
  for (int i = 0; i < t->n; i++) xq_opt_near_add(&near, t->rows[i].name);
  const char *best = xq_opt_near_best(&near);
  if (t->style == XQ_OPTS_SETTINGS) {
    if (best)
      return xq_err_set(eb, XQ_EINVAL, "unknown setting '%s'; did you mean '%s'? (see --help)",
                        given, best);
    return xq_err_set(eb, XQ_EINVAL, "unknown setting '%s' (see --help)", given);
  }
  const char *more = t->style == XQ_OPTS_FROM_TO ? "try --help" : "see --help";
  if (best)
    return xq_err_set(eb, XQ_EINVAL, "unknown option '%s'; did you mean --%s? (%s)", given,
                      best, more);
  return xq_err_set(eb, XQ_EINVAL, "unknown option '%s' (%s)", given, more);
}

int xq_opts_set(const xq_opts_t *t, void *obj, const char *name, const char *value,
                xq_errbuf_t *eb) {
  int i = xq_opts_find(t, name);
  if (i < 0) return xq_opts_unknown(t, name, eb);
  return xq_opts_set_row(t, i, obj, value, eb);
}

/* The style's words for an option given without its value. */
static int missing_value(const xq_opts_t *t, const xq_opt_arg_t *a, xq_errbuf_t *eb) {
  switch (t->style) {
  case XQ_OPTS_SETTINGS:
    return xq_err_set(eb, XQ_EINVAL, "option '%s' needs a value", a->arg);
  case XQ_OPTS_IN_RANGE:
    return xq_err_set(eb, XQ_EINVAL, "--%s needs a value",
                      a->row >= 0 ? t->rows[a->row].name : a->name);
  case XQ_OPTS_FROM_TO:
    return xq_err_set(eb, XQ_EINVAL, "missing value for '%s' (try --help)", a->arg);
  }
  return XQ_EINVAL;
}

int xq_opts_next(const xq_opts_t *t, int argc, char **argv, int *i, bool unknown_ok,
                 xq_opt_arg_t *a, xq_errbuf_t *eb) {
  memset(a, 0, sizeof *a);
  a->row = -1;
  if (*i >= argc) return XQ_OPTS_END;
  const char *s = argv[(*i)++];
  a->arg = s;
  if (!strcmp(s, "--help") || !strcmp(s, "-h")) return XQ_OPTS_HELP;
  if (!strcmp(s, "--version")) return XQ_OPTS_VERSION;
  if (s[0] == '-' && s[1] && s[1] != '-') return xq_opts_unknown(t, s, eb); /* "-x" */
  if (strncmp(s, "--", 2) != 0 || !s[2]) { /* a word; "-" and "--" too */
    a->value = s;
    return XQ_OPTS_WORD;
  }
  const char *k = s + 2, *eq = strchr(k, '=');
  size_t len = eq ? (size_t)(eq - k) : strlen(k);
  if (len >= sizeof a->name) return xq_opts_unknown(t, s, eb);
  memcpy(a->name, k, len);
  a->name[len] = '\0';
  a->row = xq_opts_find(t, a->name);
  if (a->row < 0 && !unknown_ok) return xq_opts_unknown(t, s, eb);
  bool flag = a->row >= 0 && t->rows[a->row].kind == XQ_OPTION_FLAG;
  if (flag) {
    if (eq) return xq_err_set(eb, XQ_EINVAL, "--%s takes no value", t->rows[a->row].name);
    return XQ_OPTS_OPTION;
  }
  if (eq) {
    a->value = eq + 1;
  } else {
    if (*i >= argc) return missing_value(t, a, eb);
    a->value = argv[(*i)++];
  }
  return XQ_OPTS_OPTION;
}

int xq_opts_parse_words(const xq_opts_t *t, void *obj, int argc, char **argv, bool *given,
                        const char **words, int *nwords, xq_errbuf_t *eb) {
  int i = 1;
  if (nwords) *nwords = 0;
  for (;;) {
    xq_opt_arg_t a;
    int rc = xq_opts_next(t, argc, argv, &i, false, &a, eb);
    if (rc < 0 || rc == XQ_OPTS_HELP || rc == XQ_OPTS_VERSION) return rc;
    if (rc == XQ_OPTS_END) return 0;
    if (rc == XQ_OPTS_WORD && words) {
      words[(*nwords)++] = a.arg;
      continue;
    }
    if (rc == XQ_OPTS_WORD) {
      if (t->style == XQ_OPTS_SETTINGS)
        return xq_err_set(eb, XQ_EINVAL, "unexpected argument '%s' (see --help)", a.arg);
      return xq_opts_unknown(t, a.arg, eb);
    }
    rc = xq_opts_set_row(t, a.row, obj, a.value ? a.value : "", eb);
    if (rc < 0) return rc;
    if (given) given[a.row] = true;
  }
}

int xq_opts_parse_argv(const xq_opts_t *t, void *obj, int argc, char **argv, bool *given,
                       xq_errbuf_t *eb) {
  return xq_opts_parse_words(t, obj, argc, argv, given, NULL, NULL, eb);
}

void xq_opts_print_value(const xq_opts_t *t, int i, const void *obj, FILE *f) {
  const xq_opt_t *r = &t->rows[i];
  const char *field = (const char *)obj + r->off;
  switch (r->kind) {
  case XQ_OPTION_INT:
    if (r->size == sizeof(int64_t))
      fprintf(f, "%lld", (long long)*(const int64_t *)(const void *)field);
    else
      fprintf(f, "%d", *(const int *)(const void *)field);
    break;
  case XQ_OPTION_UINT:
    fprintf(f, "%llu", (unsigned long long)*(const uint64_t *)(const void *)field);
    break;
  case XQ_OPTION_DOUBLE: fprintf(f, "%g", *(const double *)(const void *)field); break;
  case XQ_OPTION_STRING: fputs(field, f); break;
  case XQ_OPTION_TEXT: {
    const char *s = *(const char *const *)(const void *)field;
    fputs(s ? s : "", f);
    break;
  }
  case XQ_OPTION_ENUM: fputs(r->names[*(const int *)(const void *)field], f); break;
  case XQ_OPTION_FLAG: fputs(*(const bool *)(const void *)field ? "true" : "false", f); break;
  }
}

void xq_opts_help(const xq_opts_t *t, FILE *f, int width) {
  for (int i = 0; i < t->n; i++) {
    const xq_opt_t *r = &t->rows[i];
    if (!r->help) continue; /* another spelling of a listed option */
    char list[160], head[256];
    const char *arg = r->arg;
    if (!arg) {
      switch (r->kind) {
      case XQ_OPTION_INT:
      case XQ_OPTION_UINT: arg = "N"; break;
      case XQ_OPTION_DOUBLE: arg = "X"; break;
      case XQ_OPTION_ENUM: arg = join_names(list, sizeof list, r->names); break;
      case XQ_OPTION_FLAG: arg = ""; break;
      default: arg = "S"; break;
      }
    }
    snprintf(head, sizeof head, "--%s%s%s", r->name, *arg ? " " : "", arg);
    fprintf(f, "  %-*s %s", width, head, r->help);
    char lo[32], hi[32];
    bool any_u64 = r->kind == XQ_OPTION_UINT && r->hi >= XQ_OPTS_U64_MAX; /* no bounds to say */
    if ((r->kind == XQ_OPTION_INT || r->kind == XQ_OPTION_UINT || r->kind == XQ_OPTION_DOUBLE) &&
        !any_u64)
      fprintf(f, ", %s..%s", bound(r->lo, lo, sizeof lo), bound(r->hi, hi, sizeof hi));
    const char *def = r->shown ? r->shown : r->def;
    if (def && *def) fprintf(f, " (default %s)", def);
    fputc('\n', f);
  }
}
