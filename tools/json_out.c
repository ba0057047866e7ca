/*
 * json_out.c: JSON printing helpers for the xqz subcommands (see json_out.h).
 */
#include "json_out.h"

#include <stdio.h>

void xqz_json_str(const char *s) {
  putchar('"');
  for (; *s; s++) {
    if (*s == '"' || *s == '\\') printf("\\%c", *s);
    else if ((unsigned char)*s < 0x20) printf("\\u%04x", *s);
    else putchar(*s);
  }
  putchar('"');
}
