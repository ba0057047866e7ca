/*
 * anchor_list.h: the `anchors` setting (anchors.h) as a list of built-in player specs.
 */
#ifndef XQC_ANCHOR_LIST_H
#define XQC_ANCHOR_LIST_H

#include "support/error.h"

#define XQC_ANCHORS_MAX 4
#define XQC_ANCHOR_SPEC_MAX 32

/* Splits the `anchors` setting (comma-separated) into specs (at most XQC_ANCHORS_MAX,
 * each a built-in player, no repeats); XQ_ERANGE naming the bad one and the valid ones.
 * An empty list is valid (no anchors). */
int xqc_anchor_list(const char *list, char specs[][XQC_ANCHOR_SPEC_MAX], int *n,
                    xq_errbuf_t *eb);

#endif
