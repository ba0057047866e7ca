/*
 * keyset.h: a directory of CURVE public keys, one *.pub file per client (as written by
 * `xqz keygen`; the file name without .pub names the key in the logs). The directory is
 * read again when its modification time changes, so adding or removing a file takes
 * effect without a restart (replacing a file's contents in place does not change the
 * directory's time: remove and add it instead).
 *
 * Ownership: the caller owns the struct; xqc_keyset_close frees it.
 */
#ifndef XQC_KEYSET_H
#define XQC_KEYSET_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "support/error.h"
#include "wire/curve.h"

typedef struct {
  char key[XQ_Z85_KEY_LEN + 1];
  char name[64];
} xqc_keyset_entry_t;

typedef struct {
  char dir[512];
  const char *what;        /* "curve_allow_dir", for the logs */
  struct timespec mtime;   /* of the directory when last read */
  xqc_keyset_entry_t *v;   /* (n) */
  int n, cap;
} xqc_keyset_t;

/* Reads dir (which must exist and be readable). */
int xqc_keyset_open(xqc_keyset_t *k, const char *dir, const char *what, xq_errbuf_t *eb);
void xqc_keyset_close(xqc_keyset_t *k);
/* The name of the file holding key (re-reading the directory first if it changed), or
 * NULL when the key is not in the set. */
const char *xqc_keyset_find(xqc_keyset_t *k, const char *key);

#endif
