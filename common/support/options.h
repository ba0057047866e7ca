/*
 * options.h: one options engine for the daemons and the tools (house style 7: configuration
 * is a table). A program describes its options as rows {name, kind, where the value goes,
 * default, bounds or allowed names, help}; the engine sets the defaults, parses
 * `--name value`, `--name=value` and a bare `--flag`, sets a value by name (a caller that
 * reads an INI file hands each `name = value` to xq_opts_set), prints --help and writes a
 * value back as text, all from those rows.
 *
 * Names match with '-' and '_' taken as the same character, and a name that matches no row
 * gets the nearest one as a suggestion (opt_name.h). The table's style keeps the words each
 * program has always used in its messages: the coordinator's settings ("sims: 0 outside
 * [1, 100000]", also in campaign.ini), the trainer's ("--prefetch: '9' is not a whole
 * number in [1, 8]") and the worker's ("--threads must be a number from 1 to 256, not '0'").
 *
 * Values go into a caller-owned struct at each row's offset; the engine keeps no state.
 */
#ifndef XQ_OPTIONS_H
#define XQ_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "support/error.h"

typedef enum {
  XQ_OPTION_INT,    /* a whole number into an int or an int64_t (size says which), lo..hi */
  XQ_OPTION_UINT,   /* a whole number, decimal or 0x-hex, into a uint64_t (a seed, an id) */
  XQ_OPTION_DOUBLE, /* a finite number into a double, lo..hi */
  XQ_OPTION_STRING, /* a copy of the text into a char array of size bytes */
  XQ_OPTION_TEXT,   /* a const char * to the text itself: argv or the default, never copied */
  XQ_OPTION_ENUM,   /* an int (or an enum): the index of the text in the row's names */
  XQ_OPTION_FLAG,   /* a bool, set by the bare name; it takes no value */
} xq_opt_kind_t;

/* The words of the messages (see the top of this file). */
typedef enum {
  XQ_OPTS_SETTINGS, /* bare names, "unknown setting 'x'; did you mean 'y'?" */
  XQ_OPTS_IN_RANGE, /* "--x: 'v' is not a whole number in [lo, hi]", "unknown option" */
  XQ_OPTS_FROM_TO,  /* "--x must be a number from lo to hi, not 'v'", "unknown option" */
} xq_opts_style_t;

/* A check of a string value beyond its length; returns 0, or a negative XQ_E... code with
 * the reason, which names the option, in eb. */
typedef int (*xq_opt_check_t)(const char *name, const char *value, xq_errbuf_t *eb);

typedef struct {
  const char *name;         /* as the table spells it: "games-per-thread", "min_positions" */
  xq_opt_kind_t kind;
  size_t off, size;         /* the field's offset in the caller's struct and its size */
  const char *def;          /* the default as text; NULL: none (the field is left alone) */
  double lo, hi;            /* XQ_OPTION_INT, XQ_OPTION_DOUBLE: the bounds, both included */
  const char *help;         /* NULL: another spelling of a listed row, left out of --help */
  const char *const *names; /* XQ_OPTION_ENUM: the values in enum order, NULL-terminated */
  xq_opt_check_t check;     /* XQ_OPTION_STRING, XQ_OPTION_TEXT: a further check, or NULL */
  const char *arg;          /* --help: the value's placeholder; NULL: N, X, S or the names */
  const char *shown;        /* --help: the default as shown, when def is not the words */
} xq_opt_t;

/* The bound of an XQ_OPTION_UINT row that takes any uint64_t. */
#define XQ_OPTS_U64_MAX 18446744073709551615.0

/* A row's field in struct type: its offset and size (row initialisers start with
 * `"name", XQ_OPTION_INT, XQ_OPT_FIELD(my_opts_t, threads), ...`). */
#define XQ_OPT_FIELD(type, f) offsetof(type, f), sizeof(((type *)0)->f)

typedef struct {
  const xq_opt_t *rows;
  int n;
  xq_opts_style_t style;
} xq_opts_t;

/* Sets every row that has a default to it, and every flag to false; a row without a default
 * leaves its field as it is, so zero the struct first (xqz promotions once read an
 * uninitialised --plot and wrote a chart to a garbage path). The defaults must be valid
 * (asserted). */
void xq_opts_defaults(const xq_opts_t *t, void *obj);
/* The index of the row named name ('-' == '_'), or -1. */
int xq_opts_find(const xq_opts_t *t, const char *name);
/* Sets row i from text; XQ_ERANGE (a bad value) or the check's code, the reason in eb. */
int xq_opts_set_row(const xq_opts_t *t, int i, void *obj, const char *value, xq_errbuf_t *eb);
/* Sets the row named name: an INI line `name = value`, or an option kept for later. A name
 * that matches no row is XQ_EINVAL, with the nearest name as a suggestion. */
int xq_opts_set(const xq_opts_t *t, void *obj, const char *name, const char *value,
                xq_errbuf_t *eb);
/* The "unknown option" message for given (as typed, dashes and all), with the nearest row's
 * name when one is close; returns XQ_EINVAL. */
int xq_opts_unknown(const xq_opts_t *t, const char *given, xq_errbuf_t *eb);

/* What xq_opts_next found. */
enum {
  XQ_OPTS_END = 0,     /* no argument left */
  XQ_OPTS_OPTION = 1,  /* an option: *a is filled */
  XQ_OPTS_HELP = 2,    /* --help or -h */
  XQ_OPTS_VERSION = 3, /* --version */
  XQ_OPTS_WORD = 4,    /* an argument that is no option, "-" included (a->value is it) */
};

/* One option of a command line, as xq_opts_next splits it. */
typedef struct {
  const char *arg;   /* the argument as typed: "--sims=8", "--games_per_thread" */
  char name[128];    /* its name, without the dashes and "=value" */
  const char *value; /* its value; NULL for a flag */
  int row;           /* its row, or -1 when the table has none (unknown_ok) */
} xq_opt_arg_t;

/* The next argument of argv from *i (start at 1); moves *i past it and its value. Returns
 * one of the XQ_OPTS_... above, or XQ_EINVAL with the reason in eb: a name that matches
 * no row (unless unknown_ok: then a->row is -1 and the next argument is its value), a
 * single-dash option other than -h ("-x"), a missing value, or a value given to a flag. */
int xq_opts_next(const xq_opts_t *t, int argc, char **argv, int *i, bool unknown_ok,
                 xq_opt_arg_t *a, xq_errbuf_t *eb);

/* Parses a whole command line (argv[0] is the program) into obj, after the defaults the
 * caller set. given (t->n entries, or NULL) marks the rows the command line set. Returns
 * 0, XQ_OPTS_HELP, XQ_OPTS_VERSION, or a negative XQ_E... code with the reason in eb (an
 * argument that is no option is refused too). */
int xq_opts_parse_argv(const xq_opts_t *t, void *obj, int argc, char **argv, bool *given,
                       xq_errbuf_t *eb);

/* As xq_opts_parse_argv, for a command that also takes words (paths, a FEN): the
 * arguments that are no options go to words (room for argc), in order, *nwords of them. */
int xq_opts_parse_words(const xq_opts_t *t, void *obj, int argc, char **argv, bool *given,
                        const char **words, int *nwords, xq_errbuf_t *eb);

/* Writes row i's value in obj as text, as xq_opts_set_row reads it back. */
void xq_opts_print_value(const xq_opts_t *t, int i, const void *obj, FILE *f);
/* --help: one line a row, "  --NAME ARG" padded to width, the help, the bounds or the
 * allowed names, and "(default D)" when there is a default to show. */
void xq_opts_help(const xq_opts_t *t, FILE *f, int width);

#endif
