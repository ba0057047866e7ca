/*
 * nets.h: the net files of the campaign (nets/<id>.xqzn) as the coordinator serves them:
 * a one-entry cache of the file served last, with its size and CRC, so the chunks of one
 * download and the announce of a promotion read the file once.
 *
 * Ownership: the caller owns the struct (zeroed); xqc_nets_close frees the cached bytes.
 */
#ifndef XQC_NETS_H
#define XQC_NETS_H

#include <stddef.h>
#include <stdint.h>

#include "support/error.h"

typedef struct {
  uint64_t id;         /* net of the cached file; 0 when none */
  unsigned char *data; /* (size) the whole file */
  size_t size;
  uint32_t crc;        /* CRC-32 of the file, as NetChunk and NetAnnounce carry it */
} xqc_nets_t;

/* Makes net `id` of campaign `dir` the cached one (reading it unless it already is). */
int xqc_nets_load(xqc_nets_t *n, const char *dir, uint64_t id, xq_errbuf_t *eb);
void xqc_nets_close(xqc_nets_t *n);

#endif
