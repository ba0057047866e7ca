/* cli_options.c: an xqz subcommand's command line through its options table (cli_options.h). */
#include "cli_options.h"

#include <stdarg.h>

int xqz_options_parse(const char *cmd, const xq_opts_t *t, void *obj, int argc, char **argv,
                      const char **words, int *nwords, void (*usage)(FILE *f)) {
  xq_errbuf_t eb;
  int rc = xq_opts_parse_words(t, obj, argc, argv, NULL, words, nwords, &eb);
  if (rc == XQ_OPTS_HELP || rc == XQ_OPTS_VERSION) {
    usage(stdout);
    return 0;
  }
  if (rc < 0) return xqz_usage_error(cmd, "%s", eb.msg);
  return -1;
}

int xqz_usage_error(const char *cmd, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "xqz %s: ", cmd);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  return 2;
}
