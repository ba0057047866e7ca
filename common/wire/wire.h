/*
 * wire.h: the envelope on the wire. Every ZeroMQ message carries one packed
 * Xqz__Envelope (proto/xqz.proto). Decoding never trusts the sender: it checks the size
 * limit before unpacking, the protocol version after, and that a body is present.
 *
 * Sockets: the coordinator binds a ROUTER (requests from workers, the trainer and the
 * CLI) and a PUB (NetAnnounce). Clients use a DEALER: each message is one frame (the
 * packed envelope); on the ROUTER side the first frame is the peer's routing id.
 */
#ifndef XQ_WIRE_H
#define XQ_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "support/error.h"
#include "support/version.h"
#include "xqz.pb-c.h"

#define XQ_PROTOCOL_VERSION 1
#define XQ_STR_(x) #x
#define XQ_STR(x) XQ_STR_(x)
/* What `xqz version` and every program's --version print: "xqzero 0.2.0 (protocol 1)". */
#define XQ_VERSION_LINE XQ_SOFTWARE_NAME " (protocol " XQ_STR(XQ_PROTOCOL_VERSION) ")"
/* How the coordinator's refusal of a worker or trainer older than its min_peer_version
 * begins (an Error of code XQ_ERROR_PROTOCOL_VERSION, on which every build stops): the
 * peers tell it from a protocol mismatch by this prefix. */
#define XQ_WIRE_TOO_OLD "software version too old"
/*
 * Error.code: one table for every program (proto/xqz.proto's ErrorCode has the same
 * numbers; wire.c checks that they agree at compile time). X(name, code, meaning):
 *   PROTOCOL_VERSION: that Error's envelope carries the peer's own version, so the peer
 *     can decode it;
 *   BANNED: any request but a GameRecord from a banned worker id or key (a banned
 *     sender's games get Ack accepted=false, reason "banned by the operator");
 *   CAMPAIGN: a peer (Hello, BatchRequest) that names another campaign; the message names
 *     both campaign ids and what to do; retrying cannot help;
 *   NOT_ALLOWED: a request the sender's role may not make (a worker's BatchRequest, say);
 *     the message names the role needed and how to get it;
 *   WORKER_ID: a worker id that another key or connection owns, or that holds bytes a
 *     worker id may not (control characters, spaces, quotes);
 *   HELLO_FIRST: a request that needs the sender's identity from a connection that has not
 *     said Hello (an arena result a worker queued before its coordinator restarted); the
 *     sender says Hello and sends it again, nothing is counted against it.
 */
#define XQ_WIRE_ERROR_MAP(X)                                                  \
  X(MALFORMED, 1, "malformed message")                                        \
  X(UNEXPECTED, 2, "unexpected message type")                                 \
  X(NOT_FOUND, 3, "not found")                                                \
  X(BAD_FIELD, 4, "a field is out of range")                                  \
  X(INTERNAL, 5, "the coordinator could not do it")                          \
  X(PROTOCOL_VERSION, 6, "another protocol version")                          \
  X(BANNED, 7, "banned by the operator")                                      \
  X(CAMPAIGN, 8, "another campaign")                                          \
  X(NOT_ALLOWED, 9, "not allowed for the sender's role")                      \
  X(WORKER_ID, 10, "the worker id is refused")                               \
  X(HELLO_FIRST, 11, "this connection has not said Hello")

typedef enum {
#define XQ_WIRE_ERROR_ENUM(name, code, text) XQ_ERROR_##name = code,
  XQ_WIRE_ERROR_MAP(XQ_WIRE_ERROR_ENUM)
#undef XQ_WIRE_ERROR_ENUM
} xq_wire_error_t;

/* The meaning of an Error.code ("unknown error code" for one not in the table). */
const char *xq_wire_error_text(uint32_t code);

/* Hello.features bits: what a worker can do beyond protocol 1 as first released. */
#define XQ_FEATURE_ANCHOR_JOBS 1u /* plays ArenaJobs whose B is a built-in player (anchor_b) */
#define XQ_FEATURE_ARENA_PRECISION 2u /* plays an ArenaJob in its precision field's arithmetic */
#define XQ_FEATURE_BF16 4u /* ... bf16 included: the CPU runs the bf16 path (nn_bf16.h) */
#define XQ_FEATURE_HOLDING 8u /* lists in Hello.holding every arena pair it holds */
/* The most Hello.holding entries a coordinator reads (a worker holds a few pairs: one
 * queued, one playing, its unanswered results); a longer list is ignored whole. */
#define XQ_HOLDING_MAX 64
/* Largest envelope accepted: a large net (10x128, ~14 MB) fits in one CandidateNet. */
#define XQ_WIRE_MAX_MESSAGE (64u << 20)
/* ZMQ_MAXMSGSIZE of every socket: the largest envelope plus slack (the coordinator's
 * max_message_bytes setting defaults to this). */
#define XQ_WIRE_MAX_FRAME ((int64_t)XQ_WIRE_MAX_MESSAGE + 4096)
/* Largest chunk of a net file sent in one NetChunk. */
#define XQ_WIRE_NET_CHUNK (1u << 20)

/* Decoding cost: an envelope of n bytes may take at most XQ_WIRE_DECODE_FACTOR * n +
 * XQ_WIRE_DECODE_SLACK bytes of allocations to unpack (counted with malloc's overhead, the
 * decoder's scratch included); past that it is refused (XQ_ERANGE) before anything looks at
 * its type. An empty repeated submessage is 2-3 bytes on the wire and about 250 in memory,
 * so without a bound 64 MiB of them would cost gigabytes. The honest messages stay well
 * below the bound: a Batch of 8192 samples about 2x its size, a Status about 4x
 * (tests/unit/test_wire_budget.c checks both). */
#define XQ_WIRE_DECODE_FACTOR 8u
#define XQ_WIRE_DECODE_SLACK (1u << 20)
/* The decoding budget of an envelope of len bytes (see XQ_WIRE_DECODE_FACTOR). */
size_t xq_wire_decode_budget(size_t len);

/* Initialises env with the current protocol version. */
void xq_wire_init(Xqz__Envelope *env);
/* Packs env into a new malloc'd buffer (*buf, *len). XQ_ENOMEM or XQ_ERANGE (too big). */
int xq_wire_pack(const Xqz__Envelope *env, uint8_t **buf, size_t *len);
/* Unpacks and validates; on success *out must be freed with xq_wire_free. On error
 * returns XQ_EFORMAT / XQ_EVERSION / XQ_ERANGE with the reason in eb. */
int xq_wire_unpack(const uint8_t *buf, size_t len, Xqz__Envelope **out, xq_errbuf_t *eb);
/* The envelope header of a received message, known whenever the envelope parsed, also
 * when its version was refused (XQ_EVERSION). */
typedef struct {
  uint32_t version;
  uint64_t request_id;
  /* Filled by xq_wire_recv_head only, even for a message that is then rejected (so a
   * fault can be charged to its key): the message's "User-Id" metadata, which on a CURVE
   * server whose ZAP handler answers with the client's Z85 public key is that key; empty
   * when the connection has none. */
  char user_id[41];
  /* Also from xq_wire_recv_head: the message's "Peer-Address" metadata, the numeric IP
   * address of the sending end of a TCP connection (as getnameinfo writes it); empty for
   * other transports. */
  char peer_address[64];
  /* Also from xq_wire_recv_head: the descriptor of the TCP connection the message came on
   * (ZMQ_SRCFD), -1 when unknown. libzmq owns it: only ever read its state (TCP_INFO). */
  int fd;
} xq_wire_head_t;
/* Like xq_wire_unpack; head (may be NULL) gets the header. */
int xq_wire_unpack_head(const uint8_t *buf, size_t len, Xqz__Envelope **out,
                        xq_wire_head_t *head, xq_errbuf_t *eb);
/* "it speaks protocol N, this <self> speaks M (upgrade one of them)" into buf. */
void xq_wire_version_text(char *buf, size_t n, uint32_t peer_version, const char *self);
/* true when env is the coordinator's Error refusing this program's protocol version. */
bool xq_wire_is_version_refusal(const Xqz__Envelope *env);
/* NULL-safe; sets *env to NULL. */
void xq_wire_free(Xqz__Envelope **env);

/* Sets the options every xqzero socket uses: a maximum message size just above
 * XQ_WIRE_MAX_MESSAGE (libzmq drops the peer's connection rather than allocating more)
 * and a short linger so a stopping process does not hang. Returns 0 or XQ_EIO. */
int xq_wire_socket_setup(void *sock);

/* ZeroMQ helpers. `routing_id` (NULL on DEALER sockets) is sent as the first frame. The
 * functions return 0, XQ_EIO (with errno from zmq, e.g. EAGAIN for a non-blocking socket
 * with nothing to read), or a decoding error. */
int xq_wire_send(void *sock, const void *routing_id, size_t routing_len,
                 const Xqz__Envelope *env, int flags);
/* Receives one message; a ROUTER socket's routing id is copied into rid (up to 255 bytes,
 * *rid_len set), pass rid = NULL on DEALER/SUB sockets. Extra or missing frames and
 * oversized messages are rejected (and drained). */
int xq_wire_recv(void *sock, uint8_t *rid, size_t *rid_len, Xqz__Envelope **out, int flags,
                 xq_errbuf_t *eb);
/* Like xq_wire_recv; head (may be NULL) gets the envelope header (see xq_wire_head_t). */
int xq_wire_recv_head(void *sock, uint8_t *rid, size_t *rid_len, Xqz__Envelope **out,
                      int flags, xq_wire_head_t *head, xq_errbuf_t *eb);

#endif
