/*
 * chaos_peer.c: the hostile and careless peers of the chaos soak (scripts/bench/chaos.py),
 * one attack per run against a coordinator's ROUTER, each the way issue 47 found it:
 *
 *   xqz-chaos-peer slow-reader ROUTER SECONDS  two connections send 400 NetRequests each for
 *                                              the best net and never read a reply
 *   xqz-chaos-peer amplify ROUTER              an 8 MiB envelope of empty repeated Samples
 *   xqz-chaos-peer collide ROUTER              claims, as its own routing ids, the ids libzmq
 *                                              would hand out next, then connects without one
 *   xqz-chaos-peer foreign ROUTER              a Hello naming another campaign
 *   xqz-chaos-peer junk ROUTER                 frames that are not envelopes, and an envelope
 *                                              of another protocol version
 *   xqz-chaos-peer member ROUTER SECONDS       a second trainer on the members' host: it
 *                                              claims member slot 1 (a takeover, as a
 *                                              restarted member would), asks batches for slot
 *                                              2, which it does not hold, the checkpoint of a
 *                                              net no order names, uploads a candidate whose
 *                                              checkpoint's CRC is wrong, holds the slot for
 *                                              SECONDS and leaves: the real member must win
 *                                              its slot back
 *
 * Exit status 0 when the attack was delivered (the coordinator's survival is the soak's to
 * judge), 2 on a usage error, 1 when this side could not even connect.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

#include "wire/messages.h"
#include "wire/wire.h"

#define MAX_COLLIDE 64

static void usage(void) {
  fprintf(stderr,
          "usage: xqz-chaos-peer MODE ROUTER [SECONDS]\n"
          "MODE: slow-reader, amplify, collide, foreign, junk, member (see the file's header)\n");
  exit(2);
}

/* A DEALER connected to router with the given routing id (NULL: libzmq's own) and a
 * receive queue of one message, so that unread replies back up into the coordinator. */
static void *dealer(void *ctx, const char *router, const void *rid, size_t rid_len) {
  void *s = zmq_socket(ctx, ZMQ_DEALER);
  int one = 1, linger = 0, small = 4096;
  zmq_setsockopt(s, ZMQ_RCVHWM, &one, sizeof one);
  zmq_setsockopt(s, ZMQ_RCVBUF, &small, sizeof small);
  zmq_setsockopt(s, ZMQ_LINGER, &linger, sizeof linger);
  if (rid) zmq_setsockopt(s, ZMQ_ROUTING_ID, rid, rid_len);
  if (zmq_connect(s, router) != 0) {
    fprintf(stderr, "chaos-peer: cannot connect to %s: %s\n", router, zmq_strerror(zmq_errno()));
    exit(1);
  }
  return s;
}

static void send_env(void *s, Xqz__Envelope *env) {
  if (xq_wire_send(s, NULL, 0, env, ZMQ_DONTWAIT) != 0)
    fprintf(stderr, "chaos-peer: send: %s\n", zmq_strerror(zmq_errno()));
}

static void sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

/* Asks the best net's id with a Hello, then requests it 400 times per connection. */
static void slow_reader(void *ctx, const char *router, int seconds) {
  void *s[2];
  for (int c = 0; c < 2; c++) {
    s[c] = dealer(ctx, router, NULL, 0);
    Xqz__Envelope env;
    Xqz__Hello h;
    char id[32];
    snprintf(id, sizeof id, "chaos-slow-%d-%d", (int)getpid(), c);
    xq_msg_hello(&env, &h, XQZ__ROLE__ROLE_WORKER, id, "chaos", 1, 0);
    send_env(s[c], &env);
  }
  /* The Welcome names the best net; read it on the first connection only. */
  uint64_t best = 1;
  Xqz__Envelope *reply = NULL;
  xq_errbuf_t eb = {0};
  zmq_pollitem_t pi = {s[0], 0, ZMQ_POLLIN, 0};
  if (zmq_poll(&pi, 1, 3000) > 0 && xq_wire_recv(s[0], NULL, NULL, &reply, 0, &eb) == 0 &&
      reply->body_case == XQZ__ENVELOPE__BODY_WELCOME && reply->welcome->best_net_id)
    best = reply->welcome->best_net_id;
  xq_wire_free(&reply);
  for (int i = 0; i < 400; i++)
    for (int c = 0; c < 2; c++) {
      Xqz__Envelope env;
      Xqz__NetRequest nr;
      xq_msg_net_request(&env, &nr, best, 0, XQ_WIRE_NET_CHUNK);
      env.request_id = (uint64_t)i + 1;
      send_env(s[c], &env);
    }
  printf("slow-reader: 800 NetRequests for net %016" PRIx64 ", not reading for %d s\n", best,
         seconds);
  fflush(stdout);
  sleep_ms(1000L * seconds);
  for (int c = 0; c < 2; c++) zmq_close(s[c]);
}

/* Envelope{version, batch{samples: N empty}} built by hand: 2 bytes a Sample. */
static void amplify(void *ctx, const char *router) {
  const size_t n = 4u << 20; /* 8 MiB of samples */
  size_t inner = 2 * n, cap = inner + 32, len = 0;
  uint8_t *b = malloc(cap);
  if (!b) exit(1);
  b[len++] = 0x08; /* field 1, varint: the protocol version */
  b[len++] = XQ_PROTOCOL_VERSION;
  b[len++] = 0xb2; /* field 22 (batch), length-delimited */
  b[len++] = 0x01;
  for (size_t v = inner; ; v >>= 7) {
    b[len++] = (uint8_t)((v & 0x7f) | (v >= 0x80 ? 0x80 : 0));
    if (v < 0x80) break;
  }
  for (size_t i = 0; i < n; i++) {
    b[len++] = 0x0a;
    b[len++] = 0x00;
  }
  void *s = dealer(ctx, router, NULL, 0);
  if (zmq_send(s, b, len, 0) < 0) fprintf(stderr, "chaos-peer: send: %s\n", zmq_strerror(zmq_errno()));
  printf("amplify: sent a %zu-byte envelope of %zu empty samples\n", len, n);
  sleep_ms(2000);
  zmq_close(s);
  free(b);
}

/* libzmq's generated ids are 0x00 + a 32-bit counter whose first value this process can
 * read from a ROUTER of its own; claim the next ids, then connect without an id. */
static void collide(void *ctx, const char *router) {
  void *r = zmq_socket(ctx, ZMQ_ROUTER);
  void *probe = zmq_socket(ctx, ZMQ_DEALER);
  int linger = 0;
  zmq_setsockopt(r, ZMQ_LINGER, &linger, sizeof linger);
  zmq_setsockopt(probe, ZMQ_LINGER, &linger, sizeof linger);
  uint8_t first[16];
  int got = -1;
  if (zmq_bind(r, "inproc://chaos-probe") == 0 && zmq_connect(probe, "inproc://chaos-probe") == 0 &&
      zmq_send(probe, "x", 1, 0) == 1)
    got = zmq_recv(r, first, sizeof first, 0);
  zmq_close(probe);
  zmq_close(r);
  uint32_t base = 0;
  if (got == 5 && first[0] == 0)
    base = (uint32_t)first[1] << 24 | (uint32_t)first[2] << 16 | (uint32_t)first[3] << 8 | first[4];
  void *claim[MAX_COLLIDE];
  for (int i = 0; i < MAX_COLLIDE; i++) {
    uint32_t v = base + (uint32_t)i;
    uint8_t rid[5] = {0, (uint8_t)(v >> 24), (uint8_t)(v >> 16), (uint8_t)(v >> 8), (uint8_t)v};
    claim[i] = dealer(ctx, router, rid, sizeof rid);
  }
  sleep_ms(500);
  void *anon[8];
  for (int i = 0; i < 8; i++) {
    anon[i] = dealer(ctx, router, NULL, 0);
    Xqz__Envelope env;
    Xqz__StatusRequest sr;
    xq_msg_status_request(&env, &sr);
    send_env(anon[i], &env);
  }
  printf("collide: claimed %d ids from 00%08" PRIx32 ", then 8 connections without an id\n",
         MAX_COLLIDE, base);
  sleep_ms(1500);
  for (int i = 0; i < 8; i++) zmq_close(anon[i]);
  for (int i = 0; i < MAX_COLLIDE; i++) zmq_close(claim[i]);
}

/* A Hello from a peer that believes in a campaign of its own. */
static void foreign(void *ctx, const char *router) {
  void *s = dealer(ctx, router, NULL, 0);
  Xqz__Envelope env;
  Xqz__Hello h;
  xq_msg_hello(&env, &h, XQZ__ROLE__ROLE_WORKER, "chaos-foreign", "chaos", 1,
               0x0123456789abcdefull ^ (uint64_t)getpid());
  send_env(s, &env);
  Xqz__Envelope *reply = NULL;
  xq_errbuf_t eb = {0};
  zmq_pollitem_t pi = {s, 0, ZMQ_POLLIN, 0};
  const char *what = "no answer";
  if (zmq_poll(&pi, 1, 3000) > 0 && xq_wire_recv(s, NULL, NULL, &reply, 0, &eb) == 0)
    what = reply->body_case == XQZ__ENVELOPE__BODY_ERROR ? "refused" : "ACCEPTED";
  printf("foreign: a Hello of another campaign: %s\n", what);
  xq_wire_free(&reply);
  zmq_close(s);
}

/* Sends env on s and waits up to 3 s for the reply: "refused" (an Error, or an Ack that
 * refuses), "ACCEPTED" (anything else) or "no answer". */
static const char *ask(void *s, Xqz__Envelope *env) {
  send_env(s, env);
  Xqz__Envelope *reply = NULL;
  xq_errbuf_t eb = {0};
  zmq_pollitem_t pi = {s, 0, ZMQ_POLLIN, 0};
  const char *what = "no answer";
  if (zmq_poll(&pi, 1, 3000) > 0 && xq_wire_recv(s, NULL, NULL, &reply, 0, &eb) == 0)
    what = reply->body_case == XQZ__ENVELOPE__BODY_ERROR ||
                   (reply->body_case == XQZ__ENVELOPE__BODY_ACK && !reply->ack->accepted)
               ? "refused" : "ACCEPTED";
  xq_wire_free(&reply);
  return what;
}

/* A second trainer on the members' host (see the file's header). */
static void member(void *ctx, const char *router, int seconds) {
  void *s = dealer(ctx, router, NULL, 0);
  Xqz__Envelope env;
  Xqz__Hello h;
  xq_msg_hello(&env, &h, XQZ__ROLE__ROLE_TRAINER, "", "chaos", 1, 0);
  h.member_slot = 1;
  h.net_arch = (char *)"2x16";
  printf("member: Hello claiming slot 1: %s", ask(s, &env));
  Xqz__BatchRequest br;
  xq_msg_batch_request(&env, &br, 32, 0);
  br.member_slot = 2;
  printf("; batches for slot 2: %s", ask(s, &env));
  Xqz__CheckpointRequest cr;
  xq_msg_checkpoint_request(&env, &cr, 0x5eed5eed5eed5eedull, 1);
  printf("; a checkpoint no order names: %s", ask(s, &env));
  static const uint8_t junk_bytes[64] = {1, 2, 3};
  Xqz__CandidateNet cn;
  xq_msg_candidate(&env, &cn, junk_bytes, sizeof junk_bytes, 1);
  cn.checkpoint.data = (uint8_t *)junk_bytes;
  cn.checkpoint.len = sizeof junk_bytes;
  cn.checkpoint_crc32 = 12345;
  cn.member_slot = 1;
  printf("; a candidate with a bad checkpoint: %s\n", ask(s, &env));
  sleep_ms(1000L * seconds);
  zmq_close(s);
}

/* Bytes that are not an envelope, an empty frame, and an envelope of protocol 99. */
static void junk(void *ctx, const char *router) {
  void *s = dealer(ctx, router, NULL, 0);
  uint8_t noise[256];
  srand((unsigned)getpid());
  for (int i = 0; i < 50; i++) {
    size_t n = (size_t)(rand() % (int)sizeof noise);
    for (size_t k = 0; k < n; k++) noise[k] = (uint8_t)rand();
    zmq_send(s, noise, n, ZMQ_DONTWAIT);
  }
  const uint8_t v99[] = {0x08, 99, 0xca, 0x01, 0x00}; /* version 99, status_request {} */
  zmq_send(s, v99, sizeof v99, ZMQ_DONTWAIT);
  printf("junk: 50 random frames and one envelope of protocol 99\n");
  sleep_ms(500);
  zmq_close(s);
}

int main(int argc, char **argv) {
  if (argc < 3) usage();
  const char *mode = argv[1], *router = argv[2];
  int seconds = argc > 3 ? atoi(argv[3]) : 5;
  if (seconds < 0 || seconds > 3600) usage();
  void *ctx = zmq_ctx_new();
  if (!strcmp(mode, "slow-reader")) slow_reader(ctx, router, seconds);
  else if (!strcmp(mode, "amplify")) amplify(ctx, router);
  else if (!strcmp(mode, "collide")) collide(ctx, router);
  else if (!strcmp(mode, "foreign")) foreign(ctx, router);
  else if (!strcmp(mode, "junk")) junk(ctx, router);
  else if (!strcmp(mode, "member")) member(ctx, router, seconds);
  else usage();
  zmq_ctx_term(ctx);
  return 0;
}
