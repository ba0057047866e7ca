/*
 * fake_coord.h: a fake coordinator in the test process, for the tests that run the xqz-worker
 * binary against it (test_worker_link, test_worker_hostile, test_worker_arena_precision,
 * test_worker_guest). It binds a ROUTER (and, when asked, a PUB) on free loopback ports,
 * receives the worker's requests one at a time and answers them with the message
 * constructors (wire/messages.h); what it answers is each test's own serve(). Also here:
 * tiny net images to serve, starting and waiting for the worker, and counting log lines;
 * and, for the trainer's tests (test_trainer_loop, test_trainer_population), training
 * samples from random games and Batches of them.
 * Every failure is a cmocka assertion. Link fake_coord.c; include after cmocka.h.
 */
#ifndef XQZ_FAKE_COORD_H
#define XQZ_FAKE_COORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "records/sample.h"
#include "xqz.pb-c.h"

typedef struct {
  void *ctx, *router, *pub; /* pub: NULL unless opened with one */
  char router_ep[64], pub_ep[64];
} fake_coord_t;

/* Binds the ROUTER (and a PUB when with_pub) on free loopback ports. */
void fake_coord_open(fake_coord_t *f, bool with_pub);
/* Closes the ROUTER and binds a new one on the same endpoint (a coordinator's restart),
 * retrying for up to 5 s while the port frees. */
void fake_coord_rebind(fake_coord_t *f);
void fake_coord_close(fake_coord_t *f);

/* Waits up to 50 ms for one request: the envelope (free it with xq_wire_free) and its
 * sender's routing id in rid (256 bytes), or NULL when none came or it did not decode. */
Xqz__Envelope *fake_coord_recv(fake_coord_t *f, uint8_t *rid, size_t *rid_len);
/* Sends env to the peer rid as the answer to request rq. */
void fake_coord_reply(fake_coord_t *f, const uint8_t *rid, size_t rid_len, Xqz__Envelope *env,
                      uint64_t rq);
/* Answers the Hello `in` with a Welcome: best net, settings (may be NULL), heartbeat. */
void fake_coord_welcome(fake_coord_t *f, const uint8_t *rid, size_t rid_len,
                        const Xqz__Envelope *in, uint64_t best, Xqz__SelfplaySettings *s,
                        uint32_t heartbeat_ms);
/* Answers the self-play JobRequest rq: games of net under s. */
void fake_coord_selfplay(fake_coord_t *f, const uint8_t *rid, size_t rid_len, uint64_t rq,
                         uint64_t net, Xqz__SelfplaySettings *s, uint32_t games);
/* Answers the JobRequest rq with a short arena pair of match 42 (net_a against net_b from
 * the start position, 4 simulations, 12 plies) in precision prec. */
void fake_coord_arena(fake_coord_t *f, const uint8_t *rid, size_t rid_len, uint64_t rq,
                      uint64_t net_a, uint64_t net_b, uint32_t pair, Xqz__ArenaPrecision prec);
/* Answers the GameRecord `in` with an Ack that accepts it. */
void fake_coord_ack(fake_coord_t *f, const uint8_t *rid, size_t rid_len,
                    const Xqz__Envelope *in);
/* Answers the NetRequest `in` from the file image net (len bytes): at most the request's
 * max_bytes and chunk bytes from its offset, which must lie inside the file. */
void fake_coord_chunk(fake_coord_t *f, const uint8_t *rid, size_t rid_len,
                      const Xqz__Envelope *in, const unsigned char *net, size_t len,
                      size_t chunk);

/* The file image of a tiny net (seeded weights) with this id; the caller frees *buf. */
void fake_net(uint64_t id, uint64_t seed, unsigned char **buf, size_t *len);

/* Starts the xqz-worker binary against f: --coordinator, --pub (f's PUB, or a closed port),
 * --threads 1, --cache DIR/cache, --spool DIR/spool, --id id, then args (NULL-terminated,
 * may be NULL). Its stderr goes to logp (NULL: this process's); env ("NAME=VALUE", may be
 * NULL) is set in the worker only. The worker dies with this process. */
pid_t fake_worker_start(const fake_coord_t *f, const char *dir, const char *id,
                        const char *logp, const char *env, const char *const *args);
/* Waits up to timeout_s for pid to exit, calling serve(arg) (when not NULL; else sleeping
 * 50 ms) meanwhile: true with its wait status in *status when it exited. */
bool fake_worker_wait(pid_t pid, double timeout_s, void (*serve)(void *), void *arg,
                      int *status);
/* SIGTERM to pid, then fake_worker_wait up to 20 s (serving as there), else SIGKILL. */
void fake_worker_stop(pid_t pid, void (*serve)(void *), void *arg);

/* n samples from random games played by the rules (seeded: the same n and seed give the
 * same samples, each with survival and reply targets); the caller frees the array. */
xq_sample_t *fake_samples(int n, uint64_t seed);
/* A Batch into env and b of `count` samples (at most 64) drawn at random from s[0..n),
 * after a hostile one (z = 5, which the trainer must drop) when bad. The messages live in
 * static scratch: one batch at a time, sent before the next is made. */
void fake_batch(Xqz__Envelope *env, Xqz__Batch *b, const xq_sample_t *s, int n, int count,
                bool bad);

/* Lines of the file at path holding a (and b, when not NULL); 0 when it is missing. */
int fake_log_count(const char *path, const char *a, const char *b);
/* Monotonic seconds. */
double fake_now_s(void);
void fake_sleep_ms(long ms);

#endif
