/*
 * nets.c: the net-file cache (see nets.h) and the NetRequest handler that serves a net
 * in chunks from it.
 */
#include "nets.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "campaign.h"
#include "coord.h"
#include "nn/nn_file.h"
#include "support/atomic_file.h"
#include "support/crc32.h"
#include "wire/wire.h"

int xqc_nets_load(xqc_nets_t *n, const char *dir, uint64_t id, xq_errbuf_t *eb) {
  if (n->data && n->id == id) return 0;
  xqc_nets_close(n);
  char path[1024];
  xqc_net_path(path, sizeof path, dir, id);
  int rc = xq_read_file(path, NN_FILE_MAX_SIZE, &n->data, &n->size, eb);
  if (rc < 0) return rc;
  n->id = id;
  n->crc = xq_crc32(0, n->data, n->size);
  return 0;
}

void xqc_nets_close(xqc_nets_t *n) {
  free(n->data);
  memset(n, 0, sizeof *n);
}

void xqc_nets_request(xqc_t *c, xqc_peer_t *p, uint64_t rq, const Xqz__NetRequest *r) {
  xq_errbuf_t eb;
  xqc_nets_t *g = &c->nets;
  if (xqc_nets_load(g, c->dir, r->net_id, &eb) < 0) {
    char msg[300];
    snprintf(msg, sizeof msg, "net %016llx not found", (unsigned long long)r->net_id);
    xqc_reply_error(c, p->rid, p->rid_len, rq, XQ_ERROR_NOT_FOUND, msg);
    return;
  }
  if (r->offset > g->size) {
    xqc_peer_fault(c, p, "net request offset past the end");
    xqc_reply_error(c, p->rid, p->rid_len, rq, XQ_ERROR_BAD_FIELD,
                    "offset past the end of the net");
    return;
  }
  size_t max = r->max_bytes ? r->max_bytes : XQ_WIRE_NET_CHUNK;
  if (max > XQ_WIRE_NET_CHUNK) max = XQ_WIRE_NET_CHUNK;
  size_t n = g->size - (size_t)r->offset;
  if (n > max) n = max;
  Xqz__Envelope env;
  Xqz__NetChunk ch;
  xq_wire_init(&env);
  xqz__net_chunk__init(&ch);
  ch.net_id = r->net_id;
  ch.offset = r->offset;
  ch.total = g->size;
  ch.file_crc32 = g->crc;
  ch.data.data = g->data + r->offset;
  ch.data.len = n;
  env.request_id = rq;
  env.body_case = XQZ__ENVELOPE__BODY_NET_CHUNK;
  env.net_chunk = &ch;
  xqc_reply(c, p->rid, p->rid_len, &env);
}
