/*
 * nn_file.h: the weights file (.xqzn): a 128-byte little-endian header (magic, format
 * version, architecture, input-plane version, net id, parent id, training step,
 * creation time, payload CRC-32, header CRC-32, campaign id, global pooling, survival
 * head, line convolutions, opponent-reply head) and a float32 payload (parameters in
 * table order, then BN running statistics).
 * docs/weights-format.md gives every byte. Older versions still load: version 1 (before
 * campaign ids) with campaign id 0, versions 1 and 2 (before global pooling) as nets
 * without pooling, versions 1 to 3 (before the survival head) as nets without the head,
 * versions 1 to 4 (before line convolutions) as nets without them, versions 1 to 5 (before
 * the opponent-reply head) as nets without it.
 * A newer version is refused, naming the versions this build reads.
 *
 * Loading validates every field and names the first thing that is wrong (truncated,
 * bad magic, version, header or payload checksum, architecture, payload size) in the
 * error buffer; it never trusts a length field and never crashes on any input.
 * Saving is atomic (support/atomic_file.h).
 */
#ifndef NN_FILE_H
#define NN_FILE_H

#include <stddef.h>
#include <stdint.h>

#include "nn/nn_model.h"
#include "support/error.h"

#define NN_FILE_MAGIC "XQZN\r\n\x1a\n"
#define NN_FILE_VERSION 6     /* newest read and written; 2 added the campaign id, 3 global
                               * pooling, 4 the survival head, 5 line convolutions, 6 the
                               * opponent-reply head. A net is
                               * written in the oldest version >= 2 that holds it
                               * (nn_file_version_for), so older builds keep reading nets
                               * without the newer parts */
#define NN_FILE_VERSION_MIN 1 /* oldest version read (campaign id 0 = unknown) */
#define NN_FILE_HEADER_SIZE 128
#define NN_FILE_MAX_SIZE ((size_t)1 << 31) /* far above any supported architecture */

typedef struct {
  nn_arch_t arch;
  uint32_t format_version;
  uint32_t input_version; /* read from a file; the writer records its net's own
                           * (nn_arch_input_version), whatever this says */
  uint64_t net_id;
  uint64_t parent_id;     /* 0 for a freshly initialised net */
  int64_t step;           /* training steps behind these weights */
  int64_t created;        /* unix seconds */
  uint64_t nparams, nstats;
  uint32_t payload_crc;
  uint64_t campaign_id;   /* the campaign the net belongs to; 0 = unknown (version 1) */
} nn_file_meta_t;

/* The format version a net of architecture a is written in: the oldest that holds it (2
 * for a plain net, 3 with global pooling, 4 with the survival head, 5 with line
 * convolutions, 6 with the opponent-reply head). */
int nn_file_version_for(const nn_arch_t *a);
/* Serialises m with meta (arch, format version, counts and CRC are filled from m) into a
 * malloc'd buffer the caller frees. Returns 0 or XQ_ENOMEM. */
int nn_file_encode(unsigned char **buf, size_t *len, const nn_model_t *m,
                   const nn_file_meta_t *meta, xq_errbuf_t *eb);
/* Parses and validates a header only (the first NN_FILE_HEADER_SIZE bytes of buf). */
int nn_file_decode_header(nn_file_meta_t *meta, const unsigned char *buf, size_t len,
                          xq_errbuf_t *eb);
/* Parses a whole file image into a new model (*out, caller frees with nn_model_free).
 * On error *out is NULL. meta may be NULL. */
int nn_file_decode(nn_model_t **out, nn_file_meta_t *meta, const unsigned char *buf,
                   size_t len, xq_errbuf_t *eb);

/* Checks a whole file image without building a model: the header (as decode_header),
 * the payload counts against the architecture, the exact length and the payload CRC-32.
 * The checksums are the ones recorded when the file was written, so this tells a file
 * damaged since (a flipped byte, a truncation) from an intact one. meta may be NULL. */
int nn_file_verify(nn_file_meta_t *meta, const unsigned char *buf, size_t len, xq_errbuf_t *eb);
/* The exact size of the file of the architecture in meta (from decode_header), into *size;
 * XQ_ERANGE when it would pass NN_FILE_MAX_SIZE. A reader that is told a file's size by a
 * peer checks it against this before allocating anything. */
int nn_file_expected_size(const nn_file_meta_t *meta, size_t *size, xq_errbuf_t *eb);

/* Writes m atomically to path. */
int nn_file_save(const char *path, const nn_model_t *m, const nn_file_meta_t *meta,
                 xq_errbuf_t *eb);
/* Loads path into a new model. */
int nn_file_load(const char *path, nn_model_t **out, nn_file_meta_t *meta, xq_errbuf_t *eb);
/* Loads path into an existing model, which must have the same architecture (else
 * XQ_EMISMATCH naming the differing field). m is unchanged on failure. */
int nn_file_load_into(const char *path, nn_model_t *m, nn_file_meta_t *meta, xq_errbuf_t *eb);
/* Reads and validates only the header of path (for `xqz net info`); the payload CRC
 * is checked too when check_payload is non-zero. */
int nn_file_info(const char *path, nn_file_meta_t *meta, int check_payload, xq_errbuf_t *eb);

/* A fresh random 64-bit net id (from time, pid and a counter, mixed by splitmix64). */
uint64_t nn_file_new_id(void);

#endif
