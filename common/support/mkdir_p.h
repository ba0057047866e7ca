/*
 * mkdir_p.h: create a state directory and its missing parents, as `mkdir -p` does, so a
 * daemon given campaigns/lab1 in a fresh checkout creates both.
 */
#ifndef XQ_MKDIR_P_H
#define XQ_MKDIR_P_H

#include "support/error.h"

/* Creates path and any missing parent (mode 0755). An existing directory is fine; an
 * existing non-directory, or one that cannot be created, is XQ_EIO naming the path. */
int xq_mkdir_p(const char *path, xq_errbuf_t *eb);

#endif
