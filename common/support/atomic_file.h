/*
 * atomic_file.h: write a whole file so that readers see either the old or the new
 * contents, never a torn mix, even across a crash: write "<path>.tmp.<pid>", fsync it,
 * rename it over path, fsync the directory.
 */
#ifndef XQ_ATOMIC_FILE_H
#define XQ_ATOMIC_FILE_H

#include <stddef.h>

#include "support/error.h"

/* Writes the n_parts buffers in order as the new contents of path. Returns 0 or XQ_EIO
 * (reason in eb); on failure the old file, if any, is left untouched. */
int xq_atomic_write(const char *path, const void *const *parts, const size_t *sizes,
                    int n_parts, xq_errbuf_t *eb);

/* fsyncs directory dir, so that the files created, renamed or removed in it last a crash.
 * 0 or -1 (errno set). */
int xq_fsync_dir(const char *dir);

/* Reads a whole file into a malloc'd buffer (*data, caller frees) of *size bytes, at most
 * max_size (else XQ_ERANGE). Returns 0 or a negative XQ_E... code. */
int xq_read_file(const char *path, size_t max_size, unsigned char **data, size_t *size,
                 xq_errbuf_t *eb);

#endif
