/*
 * json_check.h: checks a JSON text with python3's json module, for the tests of JSON
 * writers (status_json.c, population/events.c). Header-only, included after cmocka.h.
 */
#ifndef XQZ_JSON_CHECK_H
#define XQZ_JSON_CHECK_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* Loads text as JSON into d and runs the python statement check on it (an assert); true
 * when both pass, and when python3 is missing (nothing to check with). */
static inline bool th_python_json(const char *text, const char *check) {
  if (system("command -v python3 >/dev/null 2>&1") != 0) return true;
  char path[] = "/tmp/xqz-json-XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  FILE *f = fdopen(fd, "w");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); %s'"
           " %s", check, path);
  int rc = system(cmd);
  remove(path);
  return rc == 0;
}

#endif
