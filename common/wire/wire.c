/*
 * wire.c: packing, validated unpacking and ZeroMQ framing of envelopes. A peer is never
 * trusted: sizes are checked before anything is allocated for a message, the memory (and so
 * the work) one decode may take is bounded by the message's size (a budgeted allocator:
 * protobuf-c would otherwise spend hundreds of bytes on an empty submessage of three), and
 * every malformed message is drained completely so the socket stays in step.
 */
#include "wire/wire.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zmq.h>

/* The C table and the proto's ErrorCode are one table: a new row in one needs the other. */
#define XQ_WIRE_ERROR_CHECK(name, code, text)                                          \
  _Static_assert((int)XQZ__ERROR_CODE__ERROR_##name == code, "proto ErrorCode " #name \
                 " differs from XQ_WIRE_ERROR_MAP");
XQ_WIRE_ERROR_MAP(XQ_WIRE_ERROR_CHECK)
#undef XQ_WIRE_ERROR_CHECK

const char *xq_wire_error_text(uint32_t code) {
  switch (code) {
#define XQ_WIRE_ERROR_CASE(name, c, text) \
  case c:                                 \
    return text;
    XQ_WIRE_ERROR_MAP(XQ_WIRE_ERROR_CASE)
#undef XQ_WIRE_ERROR_CASE
    default:
      return "unknown error code";
  }
}

void xq_wire_init(Xqz__Envelope *env) {
  xqz__envelope__init(env);
  env->version = XQ_PROTOCOL_VERSION;
}

int xq_wire_pack(const Xqz__Envelope *env, uint8_t **buf, size_t *len) {
  size_t n = xqz__envelope__get_packed_size(env);
  if (n > XQ_WIRE_MAX_MESSAGE) return XQ_ERANGE;
  uint8_t *b = malloc(n ? n : 1);
  if (!b) return XQ_ENOMEM;
  xqz__envelope__pack(env, b);
  *buf = b;
  *len = n;
  return 0;
}

void xq_wire_version_text(char *buf, size_t n, uint32_t peer_version, const char *self) {
  snprintf(buf, n, "it speaks protocol %u, this %s speaks %u (upgrade one of them)",
           peer_version, self, XQ_PROTOCOL_VERSION);
}

bool xq_wire_is_version_refusal(const Xqz__Envelope *env) {
  return env && env->body_case == XQZ__ENVELOPE__BODY_ERROR && env->error &&
         env->error->code == XQ_ERROR_PROTOCOL_VERSION;
}

size_t xq_wire_decode_budget(size_t len) {
  return (size_t)XQ_WIRE_DECODE_FACTOR * len + XQ_WIRE_DECODE_SLACK;
}

/* What one unpack may still allocate: limit bytes in all, counted with XQ_WIRE_ALLOC_COST
 * per block (malloc's own overhead), including the scratch protobuf-c frees before it
 * returns, so the bound is on the work as well as on the memory. used passes limit only
 * when an allocation was refused. */
typedef struct {
  size_t used, limit;
} xq_wire_budget_t;

#define XQ_WIRE_ALLOC_COST 16u

static void *budget_alloc(void *data, size_t n) {
  xq_wire_budget_t *b = data;
  size_t cost = n + XQ_WIRE_ALLOC_COST;
  if (cost < n || cost > b->limit - b->used) {
    b->used = b->limit + 1; /* remembered: the budget, not the input, ended the decode */
    return NULL;
  }
  void *p = malloc(n ? n : 1);
  if (p) b->used += cost;
  return p;
}

/* Blocks are freed with free(): the unpacked envelope is later released with protobuf-c's
 * default allocator (xq_wire_free), so both must be malloc's. Nothing is given back to the
 * budget. */
static void budget_free(void *data, void *p) {
  (void)data;
  free(p);
}

int xq_wire_unpack(const uint8_t *buf, size_t len, Xqz__Envelope **out, xq_errbuf_t *eb) {
  return xq_wire_unpack_head(buf, len, out, NULL, eb);
}

int xq_wire_unpack_head(const uint8_t *buf, size_t len, Xqz__Envelope **out,
                        xq_wire_head_t *head, xq_errbuf_t *eb) {
  *out = NULL;
  if (head) {
    memset(head, 0, sizeof *head);
    head->fd = -1;
  }
  if (len > XQ_WIRE_MAX_MESSAGE)
    return xq_err_set(eb, XQ_ERANGE, "message of %zu bytes exceeds the %u-byte limit", len,
                      XQ_WIRE_MAX_MESSAGE);
  xq_wire_budget_t budget = {0, xq_wire_decode_budget(len)};
  ProtobufCAllocator alloc = {budget_alloc, budget_free, &budget};
  Xqz__Envelope *env = xqz__envelope__unpack(&alloc, len, buf);
  if (!env && budget.used > budget.limit)
    return xq_err_set(eb, XQ_ERANGE, "envelope of %zu bytes refused: decoding it would take"
                      " more than %zu bytes of memory (%u times its size plus %u)", len,
                      budget.limit, XQ_WIRE_DECODE_FACTOR, XQ_WIRE_DECODE_SLACK);
  if (!env) return xq_err_set(eb, XQ_EFORMAT, "malformed envelope (%zu bytes)", len);
  if (head) {
    head->version = env->version;
    head->request_id = env->request_id;
  }
  if (env->version != XQ_PROTOCOL_VERSION) {
    char text[160];
    xq_wire_version_text(text, sizeof text, env->version, "program");
    xqz__envelope__free_unpacked(env, NULL);
    return xq_err_set(eb, XQ_EVERSION, "the peer's message is refused: %s", text);
  }
  if (env->body_case == XQZ__ENVELOPE__BODY__NOT_SET) {
    xqz__envelope__free_unpacked(env, NULL);
    return xq_err_set(eb, XQ_EFORMAT, "envelope without a body");
  }
  *out = env;
  return 0;
}

void xq_wire_free(Xqz__Envelope **env) {
  if (env && *env) {
    xqz__envelope__free_unpacked(*env, NULL);
    *env = NULL;
  }
}

int xq_wire_send(void *sock, const void *routing_id, size_t routing_len,
                 const Xqz__Envelope *env, int flags) {
  uint8_t *buf;
  size_t len;
  int rc = xq_wire_pack(env, &buf, &len);
  if (rc) return rc;
  if (routing_id && zmq_send(sock, routing_id, routing_len, ZMQ_SNDMORE | flags) < 0) {
    free(buf);
    return XQ_EIO;
  }
  rc = zmq_send(sock, buf, len, flags) < 0 ? XQ_EIO : 0;
  free(buf);
  return rc;
}

/* Reads and discards the remaining frames of a message. */
static void drain(void *sock) {
  int more;
  size_t sz = sizeof more;
  while (zmq_getsockopt(sock, ZMQ_RCVMORE, &more, &sz) == 0 && more) {
    zmq_msg_t m;
    zmq_msg_init(&m);
    int rc = zmq_msg_recv(&m, sock, 0);
    zmq_msg_close(&m);
    if (rc < 0) return; /* the socket or context is closing: nothing left to drain */
    sz = sizeof more;
  }
}

static int has_more(void *sock) {
  int more = 0;
  size_t sz = sizeof more;
  if (zmq_getsockopt(sock, ZMQ_RCVMORE, &more, &sz) != 0) return 0; /* a closing socket */
  return more;
}

/* Copies a frame's metadata property `name` ("User-Id", set by a ZAP handler, or
 * "Peer-Address") into user (cap bytes); leaves it alone when there is none. */
static void property_of(zmq_msg_t *m, const char *name, char *user, size_t cap) {
  const char *u = zmq_msg_gets(m, name);
  if (!u) return;
  size_t n = strlen(u);
  if (n >= cap) n = cap - 1;
  memcpy(user, u, n);
  user[n] = '\0';
}

int xq_wire_recv(void *sock, uint8_t *rid, size_t *rid_len, Xqz__Envelope **out, int flags,
                 xq_errbuf_t *eb) {
  return xq_wire_recv_head(sock, rid, rid_len, out, flags, NULL, eb);
}

/* The connection's properties carried by frame m (User-Id, Peer-Address, its fd) into
 * head, where the frame has them: libzmq 4.3.4 gives the routing id frame of a prefetched
 * message none, so a body frame is the one to ask. */
static void connection_of(zmq_msg_t *m, xq_wire_head_t *head) {
  property_of(m, "User-Id", head->user_id, sizeof head->user_id);
  property_of(m, "Peer-Address", head->peer_address, sizeof head->peer_address);
  int fd = zmq_msg_get(m, ZMQ_SRCFD);
  if (fd >= 0) head->fd = fd;
}

int xq_wire_recv_head(void *sock, uint8_t *rid, size_t *rid_len, Xqz__Envelope **out,
                      int flags, xq_wire_head_t *head, xq_errbuf_t *eb) {
  *out = NULL;
  xq_wire_head_t conn;
  memset(&conn, 0, sizeof conn);
  conn.fd = -1;
  if (head) *head = conn;
  zmq_msg_t m;
  if (rid) {
    zmq_msg_init(&m);
    if (zmq_msg_recv(&m, sock, flags) < 0) {
      zmq_msg_close(&m);
      return XQ_EIO;
    }
    size_t n = zmq_msg_size(&m);
    if (n > 255) n = 255;
    memcpy(rid, zmq_msg_data(&m), n);
    *rid_len = n;
    connection_of(&m, &conn);
    zmq_msg_close(&m);
    if (!has_more(sock)) {
      if (head) *head = conn;
      return xq_err_set(eb, XQ_EFORMAT, "message without a body frame");
    }
    flags = 0; /* the rest of a message is already here */
  }
  zmq_msg_init(&m);
  if (zmq_msg_recv(&m, sock, flags) < 0) {
    zmq_msg_close(&m);
    return XQ_EIO;
  }
  connection_of(&m, &conn); /* also for a message refused below, so it is charged right */
  int rc;
  if (has_more(sock)) {
    drain(sock);
    rc = xq_err_set(eb, XQ_EFORMAT, "message with more than one body frame");
  } else {
    rc = xq_wire_unpack_head(zmq_msg_data(&m), zmq_msg_size(&m), out, head, eb);
  }
  zmq_msg_close(&m);
  if (head) {
    memcpy(head->user_id, conn.user_id, sizeof conn.user_id);
    memcpy(head->peer_address, conn.peer_address, sizeof conn.peer_address);
    head->fd = conn.fd;
  }
  return rc;
}

int xq_wire_socket_setup(void *sock) {
  int64_t max = XQ_WIRE_MAX_FRAME;
  int linger = 1000;
  if (zmq_setsockopt(sock, ZMQ_MAXMSGSIZE, &max, sizeof max)) return XQ_EIO;
  if (zmq_setsockopt(sock, ZMQ_LINGER, &linger, sizeof linger)) return XQ_EIO;
  return 0;
}
