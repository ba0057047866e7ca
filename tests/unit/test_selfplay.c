/*
 * test_selfplay.c: batched self-play with the uniform evaluator: the requested number of
 * games, valid records (replayed by the decoder), consistent counters, resignation and
 * false-resign accounting, determinism for a fixed seed with one thread, a small job
 * shared among the threads, and defaults that agree with the coordinator's.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "config.h" /* coordinator/config.h: the campaign's settings table */
#include "search/selfplay.h"

typedef struct {
  int games;
  int64_t full_plies;
  uint32_t hash;
} sink_t;

static int sink(void *ctx, const xq_game_record_t *rec, const xq_selfplay_stats_t *tot) {
  sink_t *s = ctx;
  s->games++;
  assert_int_equal(tot->games, s->games);
  assert_int_not_equal(rec->result, XQ_RESULT_NONE);
  unsigned char *buf;
  size_t len;
  assert_int_equal(xq_record_encode(rec, &buf, &len), 0);
  xq_game_record_t q;
  xq_record_init(&q);
  xq_errbuf_t eb = {{0}};
  if (xq_record_decode(&q, buf, len, &eb)) fail_msg("record invalid: %s", eb.msg);
  for (int i = 0; i < rec->nplies; i++) {
    if (!rec->plies[i].full) continue;
    s->full_plies++;
    assert_true(rec->plies[i].nvisits > 0);
  }
  for (size_t i = 0; i < len; i++) s->hash = s->hash * 31u + buf[i];
  free(buf);
  xq_record_free(&q);
  return 0;
}

static void config(xq_selfplay_config_t *cfg) {
  xq_selfplay_config_default(cfg);
  cfg->sims_full = 24;
  cfg->sims_fast = 8;
  cfg->full_frac = 0.5f;
  cfg->parallel = 4;
  cfg->mcts.max_plies = 40;
  cfg->mcts.node_budget = 4096;
  cfg->cache_size = 1024;
  cfg->seed = 11;
}

static void test_games(void **state) {
  (void)state;
  xq_selfplay_config_t cfg;
  config(&cfg);
  cfg.threads = 2;
  sink_t s = {0};
  xq_selfplay_stats_t st;
  xq_errbuf_t eb = {{0}};
  assert_int_equal(xq_selfplay_run(&cfg, NULL, 10, sink, &s, &st, &eb), 0);
  assert_int_equal(st.games, 10);
  assert_int_equal(s.games, 10);
  assert_int_equal(st.positions, s.full_plies);
  int64_t r = 0;
  for (int k = 0; k <= XQ_REASON_RESIGN; k++) r += st.reasons[k];
  assert_int_equal(r, 10);
  assert_true(st.sims > 0 && st.evals > 0);
  assert_int_equal(st.reasons[XQ_REASON_RESIGN], 0); /* uniform values never resign */
}

static void test_deterministic(void **state) {
  (void)state;
  xq_selfplay_config_t cfg;
  config(&cfg);
  sink_t a = {0}, b = {0};
  assert_int_equal(xq_selfplay_run(&cfg, NULL, 6, sink, &a, NULL, NULL), 0);
  assert_int_equal(xq_selfplay_run(&cfg, NULL, 6, sink, &b, NULL, NULL), 0);
  assert_int_equal(a.hash, b.hash);
  cfg.seed = 12;
  sink_t c = {0};
  assert_int_equal(xq_selfplay_run(&cfg, NULL, 6, sink, &c, NULL, NULL), 0);
  assert_int_not_equal(a.hash, c.hash);
}

/* After temp_plies the move is the most visited one (temp_final 0), or drawn with
 * visits^(1/temp_final) (temp_final > 0). With the uniform evaluator, no noise and every
 * search full, the only randomness left is that draw: games repeat without it and differ
 * with it. */
static int distinct_games(float temp_final) {
  xq_selfplay_config_t cfg;
  config(&cfg);
  cfg.temp_plies = 0;
  cfg.temp_final = temp_final;
  cfg.full_frac = 1.0f;
  cfg.mcts.noise_frac = 0.0f;
  cfg.parallel = 1;
  uint32_t hashes[6];
  int distinct = 0;
  for (int g = 0; g < 6; g++) {
    sink_t s = {0};
    cfg.seed = 100 + (uint64_t)g;
    assert_int_equal(xq_selfplay_run(&cfg, NULL, 1, sink, &s, NULL, NULL), 0);
    int seen = 0;
    for (int j = 0; j < distinct; j++) seen |= hashes[j] == s.hash;
    if (!seen) hashes[distinct++] = s.hash;
  }
  return distinct;
}

static void test_temperature_after_opening(void **state) {
  (void)state;
  assert_int_equal(distinct_games(0.0f), 1);
  assert_true(distinct_games(1.0f) >= 5);
}

static void test_resign(void **state) {
  (void)state;
  xq_selfplay_config_t cfg;
  config(&cfg);
  cfg.resign_threshold = 0.5f; /* value 0 is "losing": every game resigns unless disabled */
  cfg.resign_moves = 2;
  cfg.no_resign_frac = 0.5f;
  sink_t s = {0};
  xq_selfplay_stats_t st;
  assert_int_equal(xq_selfplay_run(&cfg, NULL, 12, sink, &s, &st, NULL), 0);
  assert_true(st.reasons[XQ_REASON_RESIGN] > 0);
  assert_int_equal(st.resign_checked, 12 - st.reasons[XQ_REASON_RESIGN]);
  /* with max_plies 40 and random play the no-resign games are mostly draws: false */
  assert_true(st.false_resigns > 0);
  assert_true(st.false_resigns <= st.resign_checked);
}

/* The sink runs on the thread that played the game: count the distinct threads. */
typedef struct {
  pthread_t who[8];
  int n, games;
} threads_seen_t;

static int thread_sink(void *ctx, const xq_game_record_t *rec, const xq_selfplay_stats_t *tot) {
  (void)rec;
  (void)tot;
  threads_seen_t *t = ctx;
  t->games++;
  for (int i = 0; i < t->n; i++)
    if (pthread_equal(t->who[i], pthread_self())) return 0;
  if (t->n < 8) t->who[t->n++] = pthread_self();
  return 0;
}

/* A job smaller than one thread's slots is shared: with 4 games, 2 threads and 32 slots
 * each, both threads play (each takes at most its share, 2), so both cores work. */
static void test_small_job_shared(void **state) {
  (void)state;
  xq_selfplay_config_t cfg;
  config(&cfg);
  cfg.threads = 2;
  cfg.parallel = 32;
  for (int round = 0; round < 3; round++) {
    threads_seen_t t = {0};
    assert_int_equal(xq_selfplay_run(&cfg, NULL, 4, thread_sink, &t, NULL, NULL), 0);
    assert_int_equal(t.games, 4);
    assert_int_equal(t.n, 2);
  }
}

/* The standalone self-play (`xqz selfplay`, the worker before a job's settings) and a
 * campaign's jobs (the coordinator's table, parsed from its default text) start from the
 * same self-play settings: selfplay_defaults.h. */
static void test_defaults_agree_with_coordinator(void **state) {
  (void)state;
  xq_selfplay_config_t sp;
  xq_selfplay_config_default(&sp);
  xqc_config_t co;
  xqc_config_defaults(&co);
  assert_int_equal(sp.temp_plies, co.temp_plies);
  assert_float_equal(sp.temp_final, (float)co.temp_final, 0);
  assert_float_equal(sp.resign_threshold, (float)co.resign_threshold, 0);
  assert_float_equal(sp.no_resign_frac, (float)co.no_resign_frac, 0);
  assert_float_equal(sp.full_frac, (float)co.full_frac, 0);
  assert_float_equal(sp.mcts.noise_frac, (float)co.noise_frac, 0);
  assert_float_equal(sp.mcts.dirichlet_alpha, (float)co.dirichlet_alpha, 0);
  assert_int_equal(sp.temp_plies, 20);                 /* what campaigns have run with */
  assert_float_equal(sp.resign_threshold, -0.95f, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_games),
      cmocka_unit_test(test_deterministic),
      cmocka_unit_test(test_resign),
      cmocka_unit_test(test_temperature_after_opening),
      cmocka_unit_test(test_small_job_shared),
      cmocka_unit_test(test_defaults_agree_with_coordinator),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
