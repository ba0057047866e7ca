/*
 * cmd_bench_coordinator.c: `xqz bench coordinator`: a load generator for a running
 * xqz-coordinator. It pre-generates a pool of valid, distinct game records (random legal
 * games of 40-120 plies, every ply a full search with a few visit counts on legal moves,
 * ended by the rules or by the length cap exactly as xq_adjudicate says), then N DEALER
 * sockets each say Hello as a worker and stream GameRecords with increasing seq (the pool
 * over again when it runs out: those are copies the coordinator refuses), keeping
 * up to --inflight unacknowledged records per socket. With --records PATH the pool is
 * instead recorded real games: a campaign's segment files (PATH/games/seg-*.bin) or a
 * file of `xqz selfplay` (.xqzg), sent again under the bench's own worker ids and seqs.
 * --rate (games/s) or --position-rate (positions/s) sets the offered rate over all sockets
 * (0: as fast as the in-flight windows allow). Acks (accepted/rejected), the
 * positions of acked records (their full-search plies: the samples the coordinator keeps)
 * and each record's ack latency (send to Ack) are counted; an optional trainer socket
 * keeps --prefetch BatchRequests in flight (at most --trainer-rate a second: a slow
 * trainer) and counts Batches, samples and Waits and each served batch's latency (request
 * to Batch). Progress goes to stderr every second, the summary with the latencies' p50
 * and p99 to stdout (--json: one JSON line).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

#include "cli_options.h"
#include "commands.h"
#include "rules/fen.h"
#include "rules/movegen.h"
#include "rules/policy_index.h"
#include "rules/rules.h"
#include "records/game_record.h"
#include "records/segment_file.h"
#include "support/rng.h"
#include "wire/messages.h"
#include "wire/peer.h"
#include "wire/wire.h"

#define BENCH_MAX_WORKERS 1024
#define BENCH_MAX_INFLIGHT 100000
#define BENCH_MAX_PREFETCH 64
#define BENCH_RECORDS_POOL 100000 /* records read from segments when --pool is not given */

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
  double *sent_at;   /* when it was sent (s, monotonic), by seq % ring */
  int ring;
} bench_worker_t;

/* Latencies (ms) in a growing array; percentiles at the end. */
typedef struct {
  float *v;
  size_t n, cap;
} bench_lat_t;

static void lat_add(bench_lat_t *l, double ms) {
  if (l->n == l->cap) {
    size_t cap = l->cap ? l->cap * 2 : 4096;
    float *v = realloc(l->v, cap * sizeof *v);
    if (!v) return; /* out of memory: the sample is dropped, the counts stay right */
    l->v = v;
    l->cap = cap;
  }
  l->v[l->n++] = (float)ms;
}

static int cmp_float(const void *a, const void *b) {
  float x = *(const float *)a, y = *(const float *)b;
  return (x > y) - (x < y);
}

/* The q-quantile (0..1) by the nearest rank; sorts l. 0 when empty. */
static double lat_quantile(bench_lat_t *l, double q) {
  if (!l->n) return 0.0;
  qsort(l->v, l->n, sizeof *l->v, cmp_float);
  size_t k = (size_t)(q * (double)l->n);
  return l->v[k < l->n ? k : l->n - 1];
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
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

typedef struct {
  bench_rec_t *pool;
  int n, cap;
  xq_game_record_t r;
  int bad;
} seg_load_t;

/* One stored record into the pool; its positions are its full-search plies. */
static int load_visit(void *user, const char *worker_id, uint64_t seq, const unsigned char *rec,
                      size_t len) {
  (void)worker_id;
  (void)seq;
  seg_load_t *L = user;
  if (L->n >= L->cap) return 1;
  xq_errbuf_t eb;
  if (xq_record_decode(&L->r, rec, len, &eb) != 0) {
    L->bad++;
    return 0;
  }
  int full = 0;
  for (int i = 0; i < L->r.nplies; i++) full += L->r.plies[i].full;
  if (full == 0) return 0; /* no samples: nothing for the window */
  bench_rec_t *out = &L->pool[L->n];
  out->buf = malloc(len);
  if (!out->buf) return XQ_ENOMEM;
  memcpy(out->buf, rec, len);
  out->len = len;
  out->positions = full;
  L->n++;
  return 0;
}

/* Up to cap records from a file of `xqz selfplay` (.xqzg); each is re-encoded. */
static int load_xqzg(const char *path, seg_load_t *L) {
  FILE *f = fopen(path, "rb");
  xq_errbuf_t eb = {0};
  if (!f) {
    fprintf(stderr, "bench coordinator: --records %s: %s\n", path, strerror(errno));
    return -1;
  }
  int rc = xq_record_read_header(f, &eb);
  xq_game_record_t r;
  xq_record_init(&r);
  while (rc == 0 && L->n < L->cap) {
    int x = xq_record_read(f, &r, &eb);
    if (x == 0) break; /* end of file */
    if (x < 0) {
      rc = x;
      break;
    }
    unsigned char *buf = NULL;
    size_t len = 0;
    if (xq_record_encode(&r, &buf, &len) != 0) {
      rc = -1;
      break;
    }
    x = load_visit(L, "", 0, buf, len);
    free(buf);
    if (x < 0) rc = -1;
  }
  xq_record_free(&r);
  fclose(f);
  if (rc != 0) fprintf(stderr, "bench coordinator: --records %s: %s\n", path, eb.msg);
  return rc;
}

/* Up to cap records from the segment files of dir (a campaign directory or its games/),
 * or from a file of `xqz selfplay`. */
static int load_records(const char *dir, int cap, bench_rec_t *pool, int *n) {
  struct stat st;
  if (stat(dir, &st) == 0 && S_ISREG(st.st_mode)) {
    seg_load_t L = {.pool = pool, .cap = cap};
    xq_record_init(&L.r);
    int rc = load_xqzg(dir, &L);
    xq_record_free(&L.r);
    *n = L.n;
    if (rc == 0 && L.n == 0) {
      fprintf(stderr, "bench coordinator: --records %s: no game with a full-search ply\n", dir);
      rc = -1;
    }
    return rc;
  }
  seg_load_t L = {.pool = pool, .cap = cap};
  xq_record_init(&L.r);
  xq_errbuf_t eb = {{0}};
  int rc = xq_seg_scan_dir(dir, load_visit, &L, NULL, 0, &eb); /* damage is skipped */
  if (rc > 0) rc = 0; /* the pool is full */
  if (rc < 0)
    fprintf(stderr, "bench coordinator: --records %s: %s\n", dir, eb.msg[0] ? eb.msg : xq_strerror(rc));
  xq_record_free(&L.r);
  if (L.bad) fprintf(stderr, "bench coordinator: %d stored records do not decode; skipped\n", L.bad);
  *n = L.n;
  if (rc == 0 && L.n == 0) {
    fprintf(stderr, "bench coordinator: --records %s: no record with a full-search ply\n", dir);
    rc = -1;
  }
  return rc;
}

static void *dealer(void *ctx, const char *endpoint) {
  /* Unlimited high-water marks: the in-flight window bounds the queue. */
  const xq_peer_opts_t opts = {.set_sndhwm = true, .set_rcvhwm = true, .set_linger = true};
  void *s = NULL;
  xq_errbuf_t eb = {{0}};
  if (xq_peer_open(&s, ctx, endpoint, NULL, &opts, &eb) < 0)
    fprintf(stderr, "xqz bench coordinator: a simulated worker: %s\n", eb.msg);
  return s;
}

static int send_hello(void *s, const char *id, Xqz__Role role) {
  Xqz__Envelope env;
  Xqz__Hello h;
  xq_msg_hello(&env, &h, role, id, "localhost", 1, 0);
  env.request_id = 1;
  return xq_wire_send(s, NULL, 0, &env, 0);
}

static int send_game(bench_worker_t *w, const bench_rec_t *rec) {
  Xqz__Envelope env;
  Xqz__GameRecord g;
  xq_msg_game(&env, &g, w->id, w->next_seq, rec->buf, rec->len);
  env.request_id = w->next_seq;
  return xq_wire_send(w->sock, NULL, 0, &env, ZMQ_DONTWAIT);
}

static int send_batch_request(void *s, uint32_t size, uint64_t step) {
  Xqz__Envelope env;
  Xqz__BatchRequest br;
  xq_msg_batch_request(&env, &br, size, step);
  env.request_id = step;
  return xq_wire_send(s, NULL, 0, &env, 0);
}

typedef struct {
  uint64_t acked, accepted, rejected, positions, batches, waits, samples, errors;
} bench_counts_t;

/* The trainer socket's requests in flight. */
typedef struct {
  uint64_t rq[BENCH_MAX_PREFETCH];
  double sent[BENCH_MAX_PREFETCH];
  int n;
} bench_ahead_t;

/* Removes request rq; its send time in *sent. false when it is not in flight. */
static bool ahead_take(bench_ahead_t *a, uint64_t rq, double *sent) {
  for (int i = 0; i < a->n; i++) {
    if (a->rq[i] != rq) continue;
    *sent = a->sent[i];
    a->rq[i] = a->rq[a->n - 1];
    a->sent[i] = a->sent[a->n - 1];
    a->n--;
    return true;
  }
  return false;
}

/* The command line. */
typedef struct {
  const char *endpoint, *records;
  int workers, inflight, pool_n, batch, prefetch;
  double seconds, trainer_rate, rate, prate;
  bool trainer, json;
  int64_t seed;
} bench_opts_t;

#define O(f) XQ_OPT_FIELD(bench_opts_t, f)
static const xq_opt_t rows[] = {
    {"endpoint", XQ_OPTION_TEXT, O(endpoint), NULL, 0, 0, .arg = "tcp://127.0.0.1:PORT",
     .help = "the coordinator's ROUTER (required)"},
    {"workers", XQ_OPTION_INT, O(workers), "4", 0, BENCH_MAX_WORKERS,
     .help = "simulated workers, each a connection (0: with --trainer only)"},
    {"seconds", XQ_OPTION_DOUBLE, O(seconds), "20", 0.001, 1e7, .arg = "S",
     .help = "how long to run"},
    {"inflight", XQ_OPTION_INT, O(inflight), "64", 1, BENCH_MAX_INFLIGHT, .arg = "K",
     .help = "games each worker has sent and not had acknowledged"},
    {"pool", XQ_OPTION_INT, O(pool_n), NULL, 1, 1e8, .arg = "P",
     .help = "records in the pool the workers send from", .shown = "512; 100000 with --records"},
    {"records", XQ_OPTION_TEXT, O(records), NULL, 0, 0, .arg = "CAMPAIGN_DIR|FILE.xqzg",
     .help = "send these recorded games instead of random legal ones"},
    {"rate", XQ_OPTION_DOUBLE, O(rate), "0", 0, 1e9, .arg = "GAMES_PER_S",
     .help = "games sent a second, all workers together (0: as fast as acknowledged)"},
    {"position-rate", XQ_OPTION_DOUBLE, O(prate), "0", 0, 1e9, .arg = "POSITIONS_PER_S",
     .help = "positions sent a second instead of games (0: as fast as acknowledged)"},
    {"trainer", XQ_OPTION_FLAG, O(trainer), NULL, 0, 0,
     .help = "also play the trainer: ask for batches"},
    {"batch", XQ_OPTION_INT, O(batch), "256", 1, 8192, .arg = "B",
     .help = "positions per batch the trainer asks for"},
    {"trainer-rate", XQ_OPTION_DOUBLE, O(trainer_rate), "0", 0, 1e9, .arg = "BATCHES_PER_S",
     .help = "batches asked a second (0: as fast as served)"},
    {"prefetch", XQ_OPTION_INT, O(prefetch), "1", 1, BENCH_MAX_PREFETCH, .arg = "K",
     .help = "trainer requests in flight"},
    {"seed", XQ_OPTION_INT, O(seed), "1", 0, 9.2e18, .arg = "X",
     .help = "seed of the random games"},
    {"json", XQ_OPTION_FLAG, O(json), NULL, 0, 0, .help = "one JSON line instead of the table"},
};
static const xq_opts_t TABLE = {rows, (int)(sizeof rows / sizeof rows[0]), XQ_OPTS_IN_RANGE};

static void usage(FILE *f) {
  fprintf(f, "usage: xqz bench coordinator --endpoint tcp://127.0.0.1:PORT [options]\n");
  xq_opts_help(&TABLE, f, 36);
}

/* Returns 0, 1 after printing the usage for --help, or 2 after saying what is wrong with
 * the command line. */
#define CMD "bench coordinator"
static int parse_opts(bench_opts_t *o, int argc, char **argv) {
  memset(o, 0, sizeof *o);
  xq_opts_defaults(&TABLE, o);
  o->pool_n = -1;
  int st = xqz_options_parse(CMD, &TABLE, o, argc, argv, NULL, NULL, usage);
  if (st >= 0) return st == 0 ? 1 : 2;
  if (o->pool_n < 0) o->pool_n = o->records ? BENCH_RECORDS_POOL : 512;
  if (!o->endpoint) return xqz_usage_error(CMD, "--endpoint is required");
  if (o->workers == 0 && !o->trainer)
    return xqz_usage_error(CMD, "--workers 0 needs --trainer: nothing would run");
  if (o->rate > 0 && o->prate > 0)
    return xqz_usage_error(CMD, "give --rate or --position-rate, not both");
  return 0;
}

/* The pool of records: read (--records) or random legal games. *pool_n becomes the number
 * made. Returns the pool, or NULL (said on stderr). */
static bench_rec_t *build_pool(const bench_opts_t *o, int *pool_n) {
  bench_rec_t *pool = calloc((size_t)o->pool_n, sizeof *pool);
  xq_pos_t *pos = malloc(sizeof *pos);
  if (!pool || !pos) {
    free(pool);
    free(pos);
    return NULL;
  }
  double tg = now_s();
  int built = 0;
  bool ok = true;
  if (o->records) {
    ok = load_records(o->records, o->pool_n, pool, &built) == 0;
  } else {
    xq_game_record_t r;
    xq_record_init(&r);
    xq_rng_t rng;
    xq_rng_seed(&rng, (uint64_t)o->seed);
    for (; built < o->pool_n; built++) {
      if (make_record(&rng, pos, &r, &pool[built])) {
        fprintf(stderr, "bench coordinator: cannot build record %d\n", built);
        ok = false;
        break;
      }
    }
    xq_record_free(&r);
  }
  free(pos);
  if (!ok) { /* pool is calloc'd: a record not made has buf NULL */
    for (int i = 0; i < o->pool_n; i++) free(pool[i].buf);
    free(pool);
    return NULL;
  }
  uint64_t positions = 0, bytes = 0;
  for (int i = 0; i < built; i++) {
    positions += (uint64_t)pool[i].positions;
    bytes += pool[i].len;
  }
  fprintf(stderr, "bench coordinator: pool of %d %s records, %.1f positions and %.0f bytes each,"
                  " %s in %.2f s\n", built, o->records ? "recorded" : "random",
          (double)positions / built, (double)bytes / built, o->records ? "read" : "built",
          now_s() - tg);
  *pool_n = built;
  return pool;
}

/* One run: the sockets, what is in flight and what was counted. */
typedef struct {
  const bench_opts_t *o;
  bench_rec_t *pool;
  int pool_n, pool_next, rr;
  bool pool_wrapped;
  void *ctx;
  bench_worker_t *w;     /* (workers) */
  void *tr;              /* the trainer's socket, or NULL */
  zmq_pollitem_t *items; /* (workers + 1) */
  int nitems;
  bench_ahead_t ahead;
  bench_lat_t ack_lat, batch_lat;
  double tr_next, next_game;
  uint64_t tr_step, offered;
  bool paced;
  bench_counts_t c;
} bench_t;

/* The workers' and the trainer's sockets, each welcomed (within 10 s). 0 or -1. */
static int connect_peers(bench_t *b) {
  const bench_opts_t *o = b->o;
  unsigned pid = (unsigned)getpid();
  for (int i = 0; i < o->workers; i++) {
    bench_worker_t *x = &b->w[i];
    snprintf(x->id, sizeof x->id, "bench-%u-%d", pid, i);
    x->next_seq = 1;
    x->ring = o->inflight * 2;
    x->pos_of = calloc((size_t)x->ring, sizeof *x->pos_of);
    x->sent_at = calloc((size_t)x->ring, sizeof *x->sent_at);
    x->sock = dealer(b->ctx, o->endpoint);
    if (!x->sock || !x->pos_of || !x->sent_at ||
        send_hello(x->sock, x->id, XQZ__ROLE__ROLE_WORKER)) {
      fprintf(stderr, "bench coordinator: cannot connect/say hello to %s\n", o->endpoint);
      return -1;
    }
    b->items[i] = (zmq_pollitem_t){x->sock, 0, ZMQ_POLLIN, 0};
  }
  if (o->trainer) {
    b->tr = dealer(b->ctx, o->endpoint);
    if (!b->tr || send_hello(b->tr, "bench-trainer", XQZ__ROLE__ROLE_TRAINER)) {
      fprintf(stderr, "bench coordinator: cannot connect the trainer to %s\n", o->endpoint);
      return -1;
    }
    b->items[o->workers] = (zmq_pollitem_t){b->tr, 0, ZMQ_POLLIN, 0};
  }
  b->nitems = o->workers + (o->trainer ? 1 : 0);
  int welcomed = 0;
  bool tr_welcomed = false;
  double tw = now_s();
  while (welcomed < b->nitems) {
    if (now_s() - tw > 10.0) {
      fprintf(stderr, "bench coordinator: %d of %d peers welcomed after 10 s\n", welcomed,
              b->nitems);
      return -1;
    }
    if (zmq_poll(b->items, b->nitems, 200) < 0 && errno != EINTR) return -1;
    for (int i = 0; i < b->nitems; i++) {
      if (!(b->items[i].revents & ZMQ_POLLIN)) continue;
      Xqz__Envelope *e = NULL;
      xq_errbuf_t eb;
      if (xq_wire_recv(b->items[i].socket, NULL, NULL, &e, ZMQ_DONTWAIT, &eb) == 0) {
        if (e->body_case == XQZ__ENVELOPE__BODY_WELCOME) {
          if (i < o->workers && !b->w[i].welcomed) b->w[i].welcomed = true, welcomed++;
          else if (i == o->workers && !tr_welcomed) tr_welcomed = true, welcomed++;
        }
        xq_wire_free(&e);
      }
    }
  }
  return 0;
}

/* Fills the workers' windows, round robin from where the last pass stopped; with --rate,
 * game k of the run is due at t0 + k / rate (with --position-rate, when the games before it
 * hold position-rate x (t - t0) positions), and a backlog (every window full) is forgiven
 * beyond 0.1 s, so the offered rate never turns into a burst. */
static void fill_workers(bench_t *b, double tnow) {
  const bench_opts_t *o = b->o;
  if (b->paced && b->next_game < tnow - 0.1) b->next_game = tnow - 0.1;
  for (int k = 0; k < o->workers; k++) {
    bench_worker_t *x = &b->w[b->rr];
    while (x->inflight < o->inflight && (!b->paced || b->next_game <= tnow)) {
      const bench_rec_t *rec = &b->pool[b->pool_next];
      if (send_game(x, rec) != 0) break; /* EAGAIN: later */
      x->pos_of[x->next_seq % (uint64_t)x->ring] = rec->positions;
      x->sent_at[x->next_seq % (uint64_t)x->ring] = tnow;
      x->next_seq++;
      x->inflight++;
      b->offered++;
      b->pool_next = (b->pool_next + 1) % b->pool_n;
      if (b->pool_next == 0 && !b->pool_wrapped) {
        b->pool_wrapped = true;
        fprintf(stderr, "bench coordinator: every record of the pool was sent; the"
                " coordinator refuses the copies that follow (raise --pool to cover the"
                " run)\n");
      }
      if (b->paced) {
        b->next_game += o->rate > 0 ? 1.0 / o->rate : rec->positions / o->prate;
        break; /* the next game goes to the next socket */
      }
    }
    b->rr = (b->rr + 1) % o->workers;
    if (b->paced && b->next_game > tnow) break;
  }
}

/* The trainer's requests up to --prefetch in flight (at most --trainer-rate a second);
 * returns the poll timeout (ms) until the next one or the next paced game is due. */
static long trainer_requests(bench_t *b, double tnow) {
  const bench_opts_t *o = b->o;
  while (b->tr && b->ahead.n < o->prefetch && tnow >= b->tr_next) {
    if (send_batch_request(b->tr, (uint32_t)o->batch, ++b->tr_step) != 0) break;
    b->ahead.rq[b->ahead.n] = b->tr_step;
    b->ahead.sent[b->ahead.n++] = tnow;
    if (o->trainer_rate > 0) b->tr_next = tnow + 1.0 / o->trainer_rate;
  }
  long timeout = 100;
  if (b->tr && b->ahead.n < o->prefetch) {
    long ms = (long)((b->tr_next - tnow) * 1000.0) + 1;
    if (ms < timeout) timeout = ms < 0 ? 0 : ms;
  }
  if (b->paced) {
    long ms = (long)((b->next_game - tnow) * 1000.0) + 1;
    if (ms < timeout) timeout = ms < 0 ? 0 : ms;
  }
  return timeout;
}

/* One reply on socket i (a worker's, or the trainer's at i == workers). */
static void on_reply(bench_t *b, int i, Xqz__Envelope *e) {
  const bench_opts_t *o = b->o;
  bench_counts_t *c = &b->c;
  double sent;
  if (i < o->workers && e->body_case == XQZ__ENVELOPE__BODY_ACK &&
      !strcmp(e->ack->worker_id, b->w[i].id)) {
    bench_worker_t *x = &b->w[i];
    uint64_t seq = e->ack->seq, slot = seq % (uint64_t)x->ring;
    c->acked++;
    lat_add(&b->ack_lat, (now_s() - x->sent_at[slot]) * 1000.0);
    if (e->ack->accepted) {
      c->accepted++;
      c->positions += (uint64_t)x->pos_of[slot];
    } else {
      c->rejected++;
      if (c->rejected <= 3)
        fprintf(stderr, "bench coordinator: rejected %s seq %llu: %s\n", x->id,
                (unsigned long long)seq, e->ack->reason);
    }
    if (x->inflight > 0) x->inflight--;
  } else if (i == o->workers && e->body_case == XQZ__ENVELOPE__BODY_BATCH &&
             ahead_take(&b->ahead, e->request_id, &sent)) {
    c->batches++;
    c->samples += e->batch->n_samples;
    lat_add(&b->batch_lat, (now_s() - sent) * 1000.0);
  } else if (i == o->workers && e->body_case == XQZ__ENVELOPE__BODY_WAIT &&
             ahead_take(&b->ahead, e->request_id, &sent)) {
    c->waits++;
    double ms = e->wait->retry_ms > 50 ? 50 : e->wait->retry_ms;
    b->tr_next = now_s() + ms / 1000.0;
  } else {
    c->errors++;
    if (e->body_case == XQZ__ENVELOPE__BODY_ERROR && c->errors <= 3)
      fprintf(stderr, "bench coordinator: error %u: %s\n", e->error->code, e->error->message);
    if (i == o->workers) ahead_take(&b->ahead, e->request_id, &sent);
  }
}

/* Reads every reply there is; false when the poll failed. */
static bool drain_replies(bench_t *b, long timeout) {
  if (zmq_poll(b->items, b->nitems, timeout) < 0 && errno != EINTR) return false;
  for (int i = 0; i < b->nitems; i++) {
    if (!(b->items[i].revents & ZMQ_POLLIN)) continue;
    for (;;) {
      Xqz__Envelope *e = NULL;
      xq_errbuf_t eb;
      int x = xq_wire_recv(b->items[i].socket, NULL, NULL, &e, ZMQ_DONTWAIT, &eb);
      if (x == XQ_EIO) break; /* nothing more to read now */
      if (x != 0) {
        b->c.errors++;
        continue;
      }
      on_reply(b, i, e);
      xq_wire_free(&e);
    }
  }
  return true;
}

/* The summary on stdout (--json: one JSON line). */
static void report(bench_t *b, double dt) {
  const bench_opts_t *o = b->o;
  const bench_counts_t *c = &b->c;
  double a50 = lat_quantile(&b->ack_lat, 0.5), a99 = lat_quantile(&b->ack_lat, 0.99);
  double b50 = lat_quantile(&b->batch_lat, 0.5), b99 = lat_quantile(&b->batch_lat, 0.99);
  if (o->json) {
    printf("{\"workers\":%d,\"inflight\":%d,\"trainer\":%s,\"batch\":%d,\"prefetch\":%d,"
           "\"seconds\":%.3f,\"offered_per_s\":%.1f,"
           "\"records_acked\":%llu,\"records_per_s\":%.1f,\"positions_acked\":%llu,"
           "\"positions_per_s\":%.1f,\"rejected\":%llu,\"ack_p50_ms\":%.3f,"
           "\"ack_p99_ms\":%.3f,\"batches\":%llu,\"batches_per_s\":%.2f,"
           "\"samples_per_s\":%.1f,\"batch_p50_ms\":%.3f,\"batch_p99_ms\":%.3f,"
           "\"waits\":%llu,\"errors\":%llu}\n",
           o->workers, o->inflight, o->trainer ? "true" : "false", o->batch, o->prefetch, dt,
           b->offered / dt, (unsigned long long)c->accepted, c->accepted / dt,
           (unsigned long long)c->positions, c->positions / dt,
           (unsigned long long)c->rejected, a50, a99, (unsigned long long)c->batches,
           c->batches / dt, c->samples / dt, b50, b99, (unsigned long long)c->waits,
           (unsigned long long)c->errors);
    return;
  }
  printf("workers %d inflight %d trainer %s: %.1f s\n", o->workers, o->inflight,
         o->trainer ? "yes" : "no", dt);
  printf("  records/s acked   %10.0f (%llu; %.0f/s offered)\n", c->accepted / dt,
         (unsigned long long)c->accepted, b->offered / dt);
  printf("  positions/s acked %10.0f (%llu)\n", c->positions / dt,
         (unsigned long long)c->positions);
  printf("  ack latency       %10.2f ms p50, %.2f ms p99\n", a50, a99);
  printf("  rejected          %10llu\n", (unsigned long long)c->rejected);
  printf("  batches/s         %10.2f (%llu batches, %llu waits, %.0f samples/s)\n",
         c->batches / dt, (unsigned long long)c->batches, (unsigned long long)c->waits,
         c->samples / dt);
  if (c->batches)
    printf("  batch latency     %10.2f ms p50, %.2f ms p99 (%d in flight)\n", b50, b99,
           o->prefetch);
  if (c->errors) printf("  errors            %10llu\n", (unsigned long long)c->errors);
}

/* Sends and counts until --seconds are over, with a progress line a second on stderr. */
static void run(bench_t *b, double t0) {
  double tend = t0 + b->o->seconds, tlast = t0, tnow;
  bench_counts_t last = {0};
  while ((tnow = now_s()) < tend) {
    fill_workers(b, tnow);
    if (!drain_replies(b, trainer_requests(b, tnow))) break;
    tnow = now_s();
    if (tnow - tlast >= 1.0) {
      double dt = tnow - tlast;
      const bench_counts_t *c = &b->c;
      fprintf(stderr, "  t=%5.1fs records/s %8.0f positions/s %9.0f rejected %llu "
                      "batches/s %6.1f samples/s %8.0f waits/s %6.1f\n", tnow - t0,
              (double)(c->accepted - last.accepted) / dt,
              (double)(c->positions - last.positions) / dt, (unsigned long long)c->rejected,
              (double)(c->batches - last.batches) / dt, (double)(c->samples - last.samples) / dt,
              (double)(c->waits - last.waits) / dt);
      last = *c;
      tlast = tnow;
    }
  }
}

int xqz_bench_coordinator(int argc, char **argv) {
  bench_opts_t o;
  memset(&o, 0, sizeof o); /* a row without a default leaves its field alone */
  int prc = parse_opts(&o, argc, argv);
  if (prc) return prc == 1 ? 0 : 2;
  bench_t b = {.o = &o};
  b.pool = build_pool(&o, &b.pool_n);
  if (!b.pool) return 1;
  b.ctx = zmq_ctx_new();
  b.w = calloc((size_t)(o.workers ? o.workers : 1), sizeof *b.w);
  b.items = calloc((size_t)o.workers + 1, sizeof *b.items);
  if (!b.ctx || !b.w || !b.items) return 1;
  int rc = 1;
  if (connect_peers(&b) == 0) {
    double t0 = now_s();
    b.paced = o.rate > 0 || o.prate > 0;
    b.next_game = t0;
    run(&b, t0);
    report(&b, now_s() - t0);
    rc = b.c.rejected || b.c.errors ? 1 : 0;
  }
  for (int i = 0; i < o.workers; i++) {
    xq_peer_close(&b.w[i].sock);
    free(b.w[i].pos_of);
    free(b.w[i].sent_at);
  }
  xq_peer_close(&b.tr);
  zmq_ctx_term(b.ctx);
  for (int i = 0; i < b.pool_n; i++) free(b.pool[i].buf);
  free(b.pool);
  free(b.w);
  free(b.items);
  free(b.ack_lat.v);
  free(b.batch_lat.v);
  return rc;
}
