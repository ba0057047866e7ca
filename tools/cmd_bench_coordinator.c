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

#include "commands.h"
#include "rules/fen.h"
#include "rules/movegen.h"
#include "rules/policy_index.h"
#include "rules/rules.h"
#include "search/game_record.h"
#include "search/segment_file.h"
#include "support/rng.h"
#include "wire/messages.h"
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

static void usage(void) {
  fprintf(stderr, "usage: xqz bench coordinator --endpoint tcp://127.0.0.1:PORT [--workers N]\n"
                  "         [--seconds S] [--inflight K] [--pool P] [--records CAMPAIGN_DIR|FILE.xqzg]\n"
                  "         [--rate GAMES_PER_S | --position-rate POSITIONS_PER_S (0: as fast as acked)]\n"
                  "         [--trainer] [--batch B]\n"
                  "         [--trainer-rate BATCHES_PER_S (0: as fast as served)]\n"
                  "         [--prefetch K (trainer requests in flight, 1..64)] [--seed X] [--json]\n");
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
  if (!out->buf) return -1;
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
  char games[4096];
  snprintf(games, sizeof games, "%s/games", dir);
  int *idx = NULL, nseg = 0;
  xq_errbuf_t eb;
  if (xq_seg_list(games, &idx, &nseg, &eb) != 0 || nseg == 0) {
    free(idx);
    idx = NULL;
    snprintf(games, sizeof games, "%s", dir);
    if (xq_seg_list(games, &idx, &nseg, &eb) != 0 || nseg == 0) {
      fprintf(stderr, "bench coordinator: --records %s: no segment files (seg-NNNNNN.bin) in it"
                      " or in its games/; give a campaign directory\n", dir);
      free(idx);
      return -1;
    }
  }
  seg_load_t L = {.pool = pool, .cap = cap};
  xq_record_init(&L.r);
  int rc = 0;
  for (int i = 0; i < nseg && L.n < cap && rc == 0; i++) {
    char path[4200];
    xq_seg_path(path, sizeof path, games, idx[i]);
    xq_seg_scan_t scan;
    if (xq_seg_scan(path, load_visit, NULL, &L, &scan, &eb) < 0) { /* damage is skipped */
      fprintf(stderr, "bench coordinator: cannot read %s: %s\n", path, eb.msg);
      rc = -1;
    }
  }
  xq_record_free(&L.r);
  free(idx);
  if (L.bad) fprintf(stderr, "bench coordinator: %d stored records do not decode; skipped\n", L.bad);
  *n = L.n;
  if (rc == 0 && L.n == 0) {
    fprintf(stderr, "bench coordinator: --records %s: no record with a full-search ply\n", dir);
    rc = -1;
  }
  return rc;
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

int xqz_bench_coordinator(int argc, char **argv) {
  const char *endpoint = NULL, *records = NULL;
  int workers = 4, inflight = 64, pool_n = -1, batch = 256, prefetch = 1;
  double seconds = 20.0, trainer_rate = 0.0, rate = 0.0, prate = 0.0;
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
    else if (!strcmp(a, "--records") && has) records = argv[++i];
    else if (!strcmp(a, "--rate") && has) rate = atof(argv[++i]);
    else if (!strcmp(a, "--position-rate") && has) prate = atof(argv[++i]);
    else if (!strcmp(a, "--batch") && has) batch = atoi(argv[++i]);
    else if (!strcmp(a, "--prefetch") && has) prefetch = atoi(argv[++i]);
    else if (!strcmp(a, "--seed") && has) seed = strtoull(argv[++i], NULL, 10);
    else if (!strcmp(a, "--trainer-rate") && has) trainer_rate = atof(argv[++i]);
    else if (!strcmp(a, "--trainer")) trainer = true;
    else if (!strcmp(a, "--json")) json = true;
    else {
      usage();
      return 2;
    }
  }
  if (pool_n < 0) pool_n = records ? BENCH_RECORDS_POOL : 512;
  if (!endpoint || workers < 0 || workers > BENCH_MAX_WORKERS || (workers == 0 && !trainer) ||
      seconds <= 0 || inflight < 1 || inflight > BENCH_MAX_INFLIGHT || pool_n < 1 ||
      batch < 1 || batch > 8192 || !(trainer_rate >= 0) || !(rate >= 0) || !(prate >= 0) ||
      (rate > 0 && prate > 0) || prefetch < 1 ||
      prefetch > BENCH_MAX_PREFETCH) {
    usage();
    return 2;
  }

  /* The pool of records. */
  bench_rec_t *pool = calloc((size_t)pool_n, sizeof *pool);
  xq_pos_t *pos = malloc(sizeof *pos);
  if (!pool || !pos) return 1;
  double tg = now_s();
  uint64_t pool_positions = 0, pool_bytes = 0;
  int built = 0;
  bool ok = true;
  if (records) {
    ok = load_records(records, pool_n, pool, &built) == 0;
  } else {
    xq_game_record_t r;
    xq_record_init(&r);
    xq_rng_t rng;
    xq_rng_seed(&rng, seed);
    for (; built < pool_n; built++) {
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
    for (int i = 0; i < pool_n; i++) free(pool[i].buf);
    free(pool);
    return 1;
  }
  pool_n = built;
  for (int i = 0; i < pool_n; i++) {
    pool_positions += (uint64_t)pool[i].positions;
    pool_bytes += pool[i].len;
  }
  fprintf(stderr, "bench coordinator: pool of %d %s records, %.1f positions and %.0f bytes each,"
                  " %s in %.2f s\n", pool_n, records ? "recorded" : "random",
          (double)pool_positions / pool_n, (double)pool_bytes / pool_n,
          records ? "read" : "built", now_s() - tg);

  void *ctx = zmq_ctx_new();
  bench_worker_t *w = calloc((size_t)(workers ? workers : 1), sizeof *w);
  zmq_pollitem_t *items = calloc((size_t)workers + 1, sizeof *items);
  if (!ctx || !w || !items) return 1;
  int rc = 1;
  void *tr = NULL;
  bool tr_welcomed = false;
  bench_ahead_t ahead = {.n = 0};
  bench_lat_t ack_lat = {0}, batch_lat = {0};
  double tr_next = 0;
  uint64_t tr_step = 0;
  unsigned pid = (unsigned)getpid();
  for (int i = 0; i < workers; i++) {
    snprintf(w[i].id, sizeof w[i].id, "bench-%u-%d", pid, i);
    w[i].next_seq = 1;
    w[i].ring = inflight * 2;
    w[i].pos_of = calloc((size_t)w[i].ring, sizeof *w[i].pos_of);
    w[i].sent_at = calloc((size_t)w[i].ring, sizeof *w[i].sent_at);
    w[i].sock = dealer(ctx, endpoint);
    if (!w[i].sock || !w[i].pos_of || !w[i].sent_at ||
        send_hello(w[i].sock, w[i].id, XQZ__ROLE__ROLE_WORKER)) {
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
  bool pool_wrapped = false;
  /* With --rate, game k of the run is due at t0 + k / rate (with --position-rate, when
   * the games before it hold position-rate x (t - t0) positions); a backlog (every window
   * full) is forgiven beyond 0.1 s, so the offered rate never turns into a burst. */
  bool paced = rate > 0 || prate > 0;
  double next_game = t0;
  int pool_next = 0, rr = 0;
  uint64_t offered = 0;
  while ((tnow = now_s()) < tend) {
    /* Fill the workers' windows, round robin from where the last pass stopped. */
    if (paced && next_game < tnow - 0.1) next_game = tnow - 0.1;
    for (int k = 0; k < workers; k++) {
      bench_worker_t *x = &w[rr];
      while (x->inflight < inflight && (!paced || next_game <= tnow)) {
        const bench_rec_t *rec = &pool[pool_next];
        if (send_game(x, rec) != 0) break; /* EAGAIN: later */
        x->pos_of[x->next_seq % (uint64_t)x->ring] = rec->positions;
        x->sent_at[x->next_seq % (uint64_t)x->ring] = tnow;
        x->next_seq++;
        x->inflight++;
        offered++;
        pool_next = (pool_next + 1) % pool_n;
        if (pool_next == 0 && !pool_wrapped) {
          pool_wrapped = true;
          fprintf(stderr, "bench coordinator: every record of the pool was sent; the"
                  " coordinator refuses the copies that follow (raise --pool to cover the"
                  " run)\n");
        }
        if (paced) {
          next_game += rate > 0 ? 1.0 / rate : rec->positions / prate;
          break; /* the next game goes to the next socket */
        }
      }
      rr = (rr + 1) % workers;
      if (paced && next_game > tnow) break;
    }
    while (tr && ahead.n < prefetch && tnow >= tr_next) {
      if (send_batch_request(tr, (uint32_t)batch, ++tr_step) != 0) break;
      ahead.rq[ahead.n] = tr_step;
      ahead.sent[ahead.n++] = tnow;
      if (trainer_rate > 0) tr_next = tnow + 1.0 / trainer_rate;
    }
    long timeout = 100;
    if (tr && ahead.n < prefetch) {
      long ms = (long)((tr_next - tnow) * 1000.0) + 1;
      if (ms < timeout) timeout = ms < 0 ? 0 : ms;
    }
    if (paced) {
      long ms = (long)((next_game - tnow) * 1000.0) + 1;
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
        double sent;
        if (i < workers && e->body_case == XQZ__ENVELOPE__BODY_ACK &&
            !strcmp(e->ack->worker_id, w[i].id)) {
          uint64_t seq = e->ack->seq, slot = seq % (uint64_t)w[i].ring;
          c.acked++;
          lat_add(&ack_lat, (now_s() - w[i].sent_at[slot]) * 1000.0);
          if (e->ack->accepted) {
            c.accepted++;
            c.positions += (uint64_t)w[i].pos_of[slot];
          } else {
            c.rejected++;
            if (c.rejected <= 3)
              fprintf(stderr, "bench coordinator: rejected %s seq %llu: %s\n", w[i].id,
                      (unsigned long long)seq, e->ack->reason);
          }
          if (w[i].inflight > 0) w[i].inflight--;
        } else if (i == workers && e->body_case == XQZ__ENVELOPE__BODY_BATCH &&
                   ahead_take(&ahead, e->request_id, &sent)) {
          c.batches++;
          c.samples += e->batch->n_samples;
          lat_add(&batch_lat, (now_s() - sent) * 1000.0);
        } else if (i == workers && e->body_case == XQZ__ENVELOPE__BODY_WAIT &&
                   ahead_take(&ahead, e->request_id, &sent)) {
          c.waits++;
          double ms = e->wait->retry_ms > 50 ? 50 : e->wait->retry_ms;
          tr_next = now_s() + ms / 1000.0;
        } else {
          c.errors++;
          if (e->body_case == XQZ__ENVELOPE__BODY_ERROR && c.errors <= 3)
            fprintf(stderr, "bench coordinator: error %u: %s\n", e->error->code,
                    e->error->message);
          if (i == workers) ahead_take(&ahead, e->request_id, &sent);
        }
        xq_wire_free(&e);
      }
    }
    tnow = now_s();
    if (tnow - tlast >= 1.0) {
      double dt = tnow - tlast;
      fprintf(stderr, "  t=%5.1fs records/s %8.0f positions/s %9.0f rejected %llu "
                      "batches/s %6.1f samples/s %8.0f waits/s %6.1f\n", tnow - t0,
              (double)(c.accepted - last.accepted) / dt,
              (double)(c.positions - last.positions) / dt, (unsigned long long)c.rejected,
              (double)(c.batches - last.batches) / dt, (double)(c.samples - last.samples) / dt,
              (double)(c.waits - last.waits) / dt);
      last = c;
      tlast = tnow;
    }
  }
  double dt = tnow - t0;
  double a50 = lat_quantile(&ack_lat, 0.5), a99 = lat_quantile(&ack_lat, 0.99);
  double b50 = lat_quantile(&batch_lat, 0.5), b99 = lat_quantile(&batch_lat, 0.99);
  if (json) {
    printf("{\"workers\":%d,\"inflight\":%d,\"trainer\":%s,\"batch\":%d,\"prefetch\":%d,"
           "\"seconds\":%.3f,\"offered_per_s\":%.1f,"
           "\"records_acked\":%llu,\"records_per_s\":%.1f,\"positions_acked\":%llu,"
           "\"positions_per_s\":%.1f,\"rejected\":%llu,\"ack_p50_ms\":%.3f,"
           "\"ack_p99_ms\":%.3f,\"batches\":%llu,\"batches_per_s\":%.2f,"
           "\"samples_per_s\":%.1f,\"batch_p50_ms\":%.3f,\"batch_p99_ms\":%.3f,"
           "\"waits\":%llu,\"errors\":%llu}\n",
           workers, inflight, trainer ? "true" : "false", batch, prefetch, dt, offered / dt,
           (unsigned long long)c.accepted, c.accepted / dt, (unsigned long long)c.positions,
           c.positions / dt, (unsigned long long)c.rejected, a50, a99,
           (unsigned long long)c.batches, c.batches / dt, c.samples / dt, b50, b99,
           (unsigned long long)c.waits, (unsigned long long)c.errors);
  } else {
    printf("workers %d inflight %d trainer %s: %.1f s\n", workers, inflight,
           trainer ? "yes" : "no", dt);
    printf("  records/s acked   %10.0f (%llu; %.0f/s offered)\n", c.accepted / dt,
           (unsigned long long)c.accepted, offered / dt);
    printf("  positions/s acked %10.0f (%llu)\n", c.positions / dt,
           (unsigned long long)c.positions);
    printf("  ack latency       %10.2f ms p50, %.2f ms p99\n", a50, a99);
    printf("  rejected          %10llu\n", (unsigned long long)c.rejected);
    printf("  batches/s         %10.2f (%llu batches, %llu waits, %.0f samples/s)\n",
           c.batches / dt, (unsigned long long)c.batches, (unsigned long long)c.waits,
           c.samples / dt);
    if (c.batches)
      printf("  batch latency     %10.2f ms p50, %.2f ms p99 (%d in flight)\n", b50, b99,
             prefetch);
    if (c.errors) printf("  errors            %10llu\n", (unsigned long long)c.errors);
  }
  rc = c.rejected || c.errors ? 1 : 0;
done:
  for (int i = 0; i < workers; i++) {
    if (w[i].sock) zmq_close(w[i].sock);
    free(w[i].pos_of);
    free(w[i].sent_at);
  }
  if (tr) zmq_close(tr);
  zmq_ctx_term(ctx);
  for (int i = 0; i < pool_n; i++) free(pool[i].buf);
  free(pool);
  free(w);
  free(items);
  free(ack_lat.v);
  free(batch_lat.v);
  return rc;
}
