/*
 * cli_options.h: how an xqz subcommand reads its command line with its table of options
 * (support/options.h), so that every command answers --help and a bad command line the
 * same way: the usage on stdout and status 0, or one line on stderr, "xqz CMD: what is
 * wrong", and status 2.
 */
#ifndef XQZ_CLI_OPTIONS_H
#define XQZ_CLI_OPTIONS_H

#include <stdio.h>

#include "support/options.h"

/* Parses argv (argv[0] is the subcommand) into obj after the caller's defaults; words and
 * nwords take the arguments that are no options (NULL: the command takes none). Returns
 * -1 to go on, or the exit status: 0 after printing usage for --help, 2 after saying what
 * is wrong. */
int xqz_options_parse(const char *cmd, const xq_opts_t *t, void *obj, int argc, char **argv,
                      const char **words, int *nwords, void (*usage)(FILE *f));
/* A bad command line found after parsing (a missing option, two that exclude each other),
 * said as xqz_options_parse says one; returns 2. */
int xqz_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
