/*
 * cmd_bench_coordinator.c: `xqz bench coordinator`: a load generator for a running
 * xqz-coordinator. It pre-generates a pool of valid, distinct game records (random legal
 * games of 40-120 plies, every ply a full search with a few visit counts on legal moves,
 * ended by the rules or by the length cap exactly as xq_adjudicate says), then N DEALER
 * sockets each say Hello as a worker and stream GameRecords with increasing seq (the pool
 * over again when it runs out: those are copies the coordinator refuses), keeping
 * up to --inflight unacknowledged records per socket. Acks (accepted/rejected) and the
 * positions of acked records are counted; an optional trainer socket loops BatchRequest
 * (at most --trainer-rate a second: a slow trainer) and counts Batches and Waits. Progress goes to stderr every second, the summary to
 * stdout (--json: one JSON line).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

#include "commands.h"
#include "rules/fen.h"
#include "rules/movegen.h"
#include "rules/policy_index.h"
#include "rules/rules.h"
#include "search/game_record.h"
#include "support/rng.h"
#include "wire/wire.h"

#define BENCH_MAX_WORKERS 1024
#define BENCH_MAX_INFLIGHT 100000

typedef struct {
  unsigned char *buf;
  size_t len;
  int positions;
} bench_rec_t;

typedef struct {
  void *sock;
  char id[64];
  bool welcomed;
  uint64_t next_seq; /* next seq to send (starts at 1) */
  int inflight;
  int *pos_of;       /* positions of the record sent with seq, by seq % ring */
  int ring;
} bench_worker_t;

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void usage(void) {
  fprintf(stderr, "usage: xqz bench coordinator --endpoint tcp://127.0.0.1:PORT [--workers N]\n"
                  "         [--seconds S] [--inflight K] [--pool P] [--trainer] [--batch B]\n"
                  "         [--trainer-rate BATCHES_PER_S (0: as fast as served)]\n"
                  "         [--seed X] [--json]\n");
}

/* One random legal game of target length 40..120 plies, ended by the rules or the cap. */
static int make_record(xq_rng_t *rng, xq_pos_t *pos, xq_game_record_t *r, bench_rec_t *out) {
  int target = 40 + (int)xq_rng_below(rng, 81);
  xq_record_reset(r, XQ_START_FEN, 42);
  if (xq_fen_parse(pos, XQ_START_FEN, NULL)) return -1;
  xq_outcome_t o = xq_adjudicate(pos, 0);
  for (int i = 0; i < target && o.result == XQ_RESULT_NONE; i++) {
    xq_move_t mv[XQ_MAX_MOVES];
    int n = xq_gen_legal(pos, mv);
    if (n <= 0) return -1;
    int pick = (int)xq_rng_below(rng, (uint64_t)n);
    xq_visit_t v[4];
    int nv = 0;
    v[nv].index = (uint16_t)xq_policy_index_for(mv[pick], pos->side);
    v[nv++].count = 20 + (uint32_t)xq_rng_below(rng, 40);
    for (int k = 0; k < 3 && k < n; k++) {
      int j = (pick + 1 + k * 7) % n;
      if (j == pick) continue;
      bool dup = false;
      uint16_t idx = (uint16_t)xq_policy_index_for(mv[j], pos->side);
      for (int q = 0; q < nv; q++) dup |= v[q].index == idx;
      if (dup) continue;
      v[nv].index = idx;
      v[nv++].count = 1 + (uint32_t)xq_rng_below(rng, 10);
    }
    float value = (float)(xq_rng_uniform(rng) * 2.0 - 1.0);
    if (xq_record_add(r, mv[pick], true, value, v, nv)) return -1;
    xq_pos_make(pos, mv[pick]);
    o = xq_adjudicate(pos, 0);
  }
  if (o.result != XQ_RESULT_NONE) {
    r->result = o.result;
    r->reason = o.reason;
  } else {
    r->result = XQ_RESULT_DRAW;
    r->reason = XQ_REASON_LENGTH_CAP;
  }
  out->positions = r->nplies;
  return xq_record_encode(r, &out->buf, &out->len) ? -1 : 0;
}

static void *dealer(void *ctx, const char *endpoint) {
  void *s = zmq_socket(ctx, ZMQ_DEALER);
  if (!s) return NULL;
  xq_wire_socket_setup(s);
  int linger = 0;
  zmq_setsockopt(s, ZMQ_LINGER, &linger, sizeof linger);
  int hwm = 0; /* unlimited: the in-flight window bounds the queue */
  zmq_setsockopt(s, ZMQ_SNDHWM, &hwm, sizeof hwm);
  zmq_setsockopt(s, ZMQ_RCVHWM, &hwm, sizeof hwm);
  if (zmq_connect(s, endpoint) != 0) {
    zmq_close(s);
    return NULL;
  }
  return s;
}

static int send_hello(void *s, const char *id, Xqz__Role role) {
  Xqz__Envelope env;
  Xqz__Hello h = XQZ__HELLO__INIT;
  xq_wire_init(&env);
  h.role = role;
  h.worker_id = (char *)id;
  h.host = "localhost";
  h.threads = 1;
  h.software_version = XQ_SOFTWARE_NAME;
  env.body_case = XQZ__ENVELOPE__BODY_HELLO;
  env.hello = &h;
  env.request_id = 1;
  return xq_wire_send(s, NULL, 0, &env, 0);
}

static int send_game(bench_worker_t *w, const bench_rec_t *rec) {
  Xqz__Envelope env;
  Xqz__GameRecord g = XQZ__GAME_RECORD__INIT;
  xq_wire_init(&env);
  g.worker_id = w->id;
  g.seq = w->next_seq;
  g.record.data = rec->buf;
  g.record.len = rec->len;
  env.body_case = XQZ__ENVELOPE__BODY_GAME;
  env.game = &g;
  env.request_id = w->next_seq;
  return xq_wire_send(w->sock, NULL, 0, &env, ZMQ_DONTWAIT);
}

static int send_batch_request(void *s, uint32_t size, uint64_t step) {
  Xqz__Envelope env;
  Xqz__BatchRequest br = XQZ__BATCH_REQUEST__INIT;
  xq_wire_init(&env);
  br.size = size;
  br.trainer_step = step;
  env.body_case = XQZ__ENVELOPE__BODY_BATCH_REQUEST;
  env.batch_request = &br;
  env.request_id = step;
  return xq_wire_send(s, NULL, 0, &env, 0);
}

typedef struct {
  uint64_t acked, accepted, rejected, positions, batches, waits, samples, errors;
} bench_counts_t;

int xqz_bench_coordinator(int argc, char **argv) {
  const char *endpoint = NULL;
  int workers = 4, inflight = 64, pool_n = 512, batch = 256;
  double seconds = 20.0, trainer_rate = 0.0;
  bool trainer = false, json = false;
  uint64_t seed = 1;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    bool has = i + 1 < argc;
    if (!strcmp(a, "--endpoint") && has) endpoint = argv[++i];
    else if (!strcmp(a, "--workers") && has) workers = atoi(argv[++i]);
    else if (!strcmp(a, "--seconds") && has) seconds = atof(argv[++i]);
    else if (!strcmp(a, "--inflight") && has) inflight = atoi(argv[++i]);
    else if (!strcmp(a, "--pool") && has) pool_n = atoi(argv[++i]);
    else if (!strcmp(a, "--batch") && has) batch = atoi(argv[++i]);
    else if (!strcmp(a, "--seed") && has) seed = strtoull(argv[++i], NULL, 10);
    else if (!strcmp(a, "--trainer-rate") && has) trainer_rate = atof(argv[++i]);
    else if (!strcmp(a, "--trainer")) trainer = true;
    else if (!strcmp(a, "--json")) json = true;
    else {
      usage();
      return 2;
    }
  }
  if (!endpoint || workers < 0 || workers > BENCH_MAX_WORKERS || (workers == 0 && !trainer) ||
      seconds <= 0 || inflight < 1 || inflight > BENCH_MAX_INFLIGHT || pool_n < 1 ||
      batch < 1 || batch > 8192 || !(trainer_rate >= 0)) {
    usage();
    return 2;
  }

  /* The pool of records. */
  bench_rec_t *pool = calloc((size_t)pool_n, sizeof *pool);
  xq_pos_t *pos = malloc(sizeof *pos);
  if (!pool || !pos) return 1;
  xq_game_record_t r;
  xq_record_init(&r);
  xq_rng_t rng;
  xq_rng_seed(&rng, seed);
  double tg = now_s();
  uint64_t pool_positions = 0, pool_bytes = 0;
  for (int i = 0; i < pool_n; i++) {
    if (make_record(&rng, pos, &r, &pool[i])) {
      fprintf(stderr, "bench coordinator: cannot build record %d\n", i);
      return 1;
    }
    pool_positions += (uint64_t)pool[i].positions;
    pool_bytes += pool[i].len;
  }
  xq_record_free(&r);
  free(pos);
  fprintf(stderr, "bench coordinator: pool of %d records, %.1f positions and %.0f bytes each, "
                  "built in %.2f s\n", pool_n, (double)pool_positions / pool_n,
          (double)pool_bytes / pool_n, now_s() - tg);

  void *ctx = zmq_ctx_new();
  bench_worker_t *w = calloc((size_t)(workers ? workers : 1), sizeof *w);
  zmq_pollitem_t *items = calloc((size_t)workers + 1, sizeof *items);
  if (!ctx || !w || !items) return 1;
  int rc = 1;
  void *tr = NULL;
  bool tr_welcomed = false, tr_waiting_reply = false;
  double tr_next = 0;
  uint64_t tr_step = 0;
  unsigned pid = (unsigned)getpid();
  for (int i = 0; i < workers; i++) {
    snprintf(w[i].id, sizeof w[i].id, "bench-%u-%d", pid, i);
    w[i].next_seq = 1;
    w[i].ring = inflight * 2;
    w[i].pos_of = calloc((size_t)w[i].ring, sizeof *w[i].pos_of);
    w[i].sock = dealer(ctx, endpoint);
    if (!w[i].sock || !w[i].pos_of || send_hello(w[i].sock, w[i].id, XQZ__ROLE__ROLE_WORKER)) {
      fprintf(stderr, "bench coordinator: cannot connect/say hello to %s\n", endpoint);
      goto done;
    }
    items[i].socket = w[i].sock;
    items[i].events = ZMQ_POLLIN;
  }
  if (trainer) {
    tr = dealer(ctx, endpoint);
    if (!tr || send_hello(tr, "bench-trainer", XQZ__ROLE__ROLE_TRAINER)) {
      fprintf(stderr, "bench coordinator: cannot connect the trainer to %s\n", endpoint);
      goto done;
    }
    items[workers].socket = tr;
    items[workers].events = ZMQ_POLLIN;
  }
  int nitems = workers + (trainer ? 1 : 0);

  /* Welcomes (10 s). */
  int welcomed = 0, need = nitems;
  double tw = now_s();
  while (welcomed < need) {
    if (now_s() - tw > 10.0) {
      fprintf(stderr, "bench coordinator: %d of %d peers welcomed after 10 s\n", welcomed, need);
      goto done;
    }
    if (zmq_poll(items, nitems, 200) < 0 && errno != EINTR) goto done;
    for (int i = 0; i < nitems; i++) {
      if (!(items[i].revents & ZMQ_POLLIN)) continue;
      Xqz__Envelope *e = NULL;
      xq_errbuf_t eb;
      if (xq_wire_recv(items[i].socket, NULL, NULL, &e, ZMQ_DONTWAIT, &eb) == 0) {
        if (e->body_case == XQZ__ENVELOPE__BODY_WELCOME) {
          if (i < workers && !w[i].welcomed) w[i].welcomed = true, welcomed++;
          else if (i == workers && !tr_welcomed) tr_welcomed = true, welcomed++;
        }
        xq_wire_free(&e);
      }
    }
  }

  bench_counts_t c = {0}, last = {0};
  double t0 = now_s(), tend = t0 + seconds, tlast = t0, tnow = t0;
  int pool_next = 0;
  bool pool_wrapped = false;
  while ((tnow = now_s()) < tend) {
    /* Fill every worker's window. */
    for (int i = 0; i < workers; i++) {
      while (w[i].inflight < inflight) {
        const bench_rec_t *rec = &pool[pool_next];
        if (send_game(&w[i], rec) != 0) break; /* EAGAIN: later */
        w[i].pos_of[w[i].next_seq % (uint64_t)w[i].ring] = rec->positions;
        w[i].next_seq++;
        w[i].inflight++;
        pool_next = (pool_next + 1) % pool_n;
        if (pool_next == 0 && !pool_wrapped) {
          pool_wrapped = true;
          fprintf(stderr, "bench coordinator: every record of the pool was sent; the"
                  " coordinator refuses the copies that follow (raise --pool to cover the"
                  " run)\n");
        }
      }
    }
    if (tr && !tr_waiting_reply && tnow >= tr_next) {
      if (send_batch_request(tr, (uint32_t)batch, ++tr_step) == 0) tr_waiting_reply = true;
    }
    long timeout = 100;
    if (tr && !tr_waiting_reply) {
      long ms = (long)((tr_next - tnow) * 1000.0) + 1;
      if (ms < timeout) timeout = ms < 0 ? 0 : ms;
    }
    if (zmq_poll(items, nitems, timeout) < 0 && errno != EINTR) break;
    for (int i = 0; i < nitems; i++) {
      if (!(items[i].revents & ZMQ_POLLIN)) continue;
      for (;;) {
        Xqz__Envelope *e = NULL;
        xq_errbuf_t eb;
        int x = xq_wire_recv(items[i].socket, NULL, NULL, &e, ZMQ_DONTWAIT, &eb);
        if (x == XQ_EIO) break; /* nothing more to read now */
        if (x != 0) {
          c.errors++;
          continue;
        }
        if (i < workers && e->body_case == XQZ__ENVELOPE__BODY_ACK &&
            !strcmp(e->ack->worker_id, w[i].id)) {
          uint64_t seq = e->ack->seq;
          c.acked++;
          if (e->ack->accepted) {
            c.accepted++;
            c.positions += (uint64_t)w[i].pos_of[seq % (uint64_t)w[i].ring];
          } else {
            c.rejected++;
            if (c.rejected <= 3)
              fprintf(stderr, "bench coordinator: rejected %s seq %llu: %s\n", w[i].id,
                      (unsigned long long)seq, e->ack->reason);
          }
          if (w[i].inflight > 0) w[i].inflight--;
        } else if (i == workers && e->body_case == XQZ__ENVELOPE__BODY_BATCH) {
          c.batches++;
          c.samples += e->batch->n_samples;
          tr_waiting_reply = false;
          tr_next = trainer_rate > 0 ? now_s() + 1.0 / trainer_rate : 0;
        } else if (i == workers && e->body_case == XQZ__ENVELOPE__BODY_WAIT) {
          c.waits++;
          tr_waiting_reply = false;
          double ms = e->wait->retry_ms > 50 ? 50 : e->wait->retry_ms;
          tr_next = now_s() + ms / 1000.0;
        } else {
          c.errors++;
          if (e->body_case == XQZ__ENVELOPE__BODY_ERROR && c.errors <= 3)
            fprintf(stderr, "bench coordinator: error %u: %s\n", e->error->code,
                    e->error->message);
          if (i == workers) tr_waiting_reply = false;
        }
        xq_wire_free(&e);
      }
    }
    tnow = now_s();
    if (tnow - tlast >= 1.0) {
      double dt = tnow - tlast;
      fprintf(stderr, "  t=%5.1fs records/s %8.0f positions/s %9.0f rejected %llu "
                      "batches/s %6.1f waits/s %6.1f\n", tnow - t0,
              (double)(c.accepted - last.accepted) / dt,
              (double)(c.positions - last.positions) / dt, (unsigned long long)c.rejected,
              (double)(c.batches - last.batches) / dt, (double)(c.waits - last.waits) / dt);
      last = c;
      tlast = tnow;
    }
  }
  double dt = tnow - t0;
  if (json) {
    printf("{\"workers\":%d,\"inflight\":%d,\"trainer\":%s,\"batch\":%d,\"seconds\":%.3f,"
           "\"records_acked\":%llu,\"records_per_s\":%.1f,\"positions_acked\":%llu,"
           "\"positions_per_s\":%.1f,\"rejected\":%llu,\"batches\":%llu,\"batches_per_s\":%.2f,"
           "\"samples_per_s\":%.1f,\"waits\":%llu,\"errors\":%llu}\n",
           workers, inflight, trainer ? "true" : "false", batch, dt,
           (unsigned long long)c.accepted, c.accepted / dt, (unsigned long long)c.positions,
           c.positions / dt, (unsigned long long)c.rejected, (unsigned long long)c.batches,
           c.batches / dt, c.samples / dt, (unsigned long long)c.waits,
           (unsigned long long)c.errors);
  } else {
    printf("workers %d inflight %d trainer %s: %.1f s\n", workers, inflight,
           trainer ? "yes" : "no", dt);
    printf("  records/s acked   %10.0f (%llu)\n", c.accepted / dt, (unsigned long long)c.accepted);
    printf("  positions/s acked %10.0f (%llu)\n", c.positions / dt,
           (unsigned long long)c.positions);
    printf("  rejected          %10llu\n", (unsigned long long)c.rejected);
    printf("  batches/s         %10.2f (%llu batches, %llu waits, %.0f samples/s)\n",
           c.batches / dt, (unsigned long long)c.batches, (unsigned long long)c.waits,
           c.samples / dt);
    if (c.errors) printf("  errors            %10llu\n", (unsigned long long)c.errors);
  }
  rc = c.rejected || c.errors ? 1 : 0;
done:
  for (int i = 0; i < workers; i++) {
    if (w[i].sock) zmq_close(w[i].sock);
    free(w[i].pos_of);
  }
  if (tr) zmq_close(tr);
  zmq_ctx_term(ctx);
  for (int i = 0; i < pool_n; i++) free(pool[i].buf);
  free(pool);
  free(w);
  free(items);
  return rc;
}
