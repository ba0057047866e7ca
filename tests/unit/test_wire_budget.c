/*
 * test_wire_budget.c: the decoding budget of common/wire/wire.c (XQ_WIRE_DECODE_FACTOR).
 * An envelope of empty repeated submessages (3 bytes each on the wire, hundreds in memory)
 * is refused with XQ_ERANGE before anyone looks at its type, and the process's peak memory
 * grows by about the budget, not by the ~70x the submessages would take (issue 47: an 8 MiB
 * message had cost +583 MiB). The largest honest messages still decode: a Batch of 8192
 * samples and a Status of 2000 workers. The worker and the trainer decode with the same
 * function, so this covers them too.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wire/messages.h"
#include "wire/wire.h"

/* The process's peak resident memory (VmHWM) in KiB. */
static long peak_kib(void) {
  FILE *f = fopen("/proc/self/status", "r");
  assert_non_null(f);
  char line[256];
  long kib = -1;
  while (fgets(line, sizeof line, f))
    if (sscanf(line, "VmHWM: %ld kB", &kib) == 1) break;
  fclose(f);
  assert_true(kib > 0);
  return kib;
}

/* An envelope (version 1) whose Status holds n empty WorkerStatus entries, hand-written:
 * the encoder would not make one this large this cheaply. */
static uint8_t *empty_workers_envelope(size_t n, size_t *len) {
  /* 08 01: version = 1. Envelope.status is field 20 (LEN), Status.worker_list field 22
   * (LEN): each entry is b2 01 00. */
  const size_t body = 3 * n;
  uint8_t *buf = malloc(body + 32);
  assert_non_null(buf);
  size_t k = 0;
  buf[k++] = 0x08;
  buf[k++] = 0x01;
  uint32_t tag = (XQZ__ENVELOPE__BODY_STATUS << 3) | 2;
  while (tag >= 0x80) {
    buf[k++] = (uint8_t)(tag | 0x80);
    tag >>= 7;
  }
  buf[k++] = (uint8_t)tag;
  size_t v = body;
  while (v >= 0x80) {
    buf[k++] = (uint8_t)(v | 0x80);
    v >>= 7;
  }
  buf[k++] = (uint8_t)v;
  for (size_t i = 0; i < n; i++) {
    buf[k++] = 0xb2;
    buf[k++] = 0x01;
    buf[k++] = 0x00;
  }
  *len = k;
  return buf;
}

static void test_empty_submessages_refused(void **state) {
  (void)state;
  size_t len;
  uint8_t *buf = empty_workers_envelope((8u << 20) / 3, &len);
  /* The hand-written envelope is what it claims: a small one of the same shape decodes. */
  size_t small_len;
  uint8_t *small = empty_workers_envelope(10, &small_len);
  Xqz__Envelope *env = NULL;
  xq_errbuf_t eb;
  assert_int_equal(xq_wire_unpack(small, small_len, &env, &eb), 0);
  assert_int_equal(env->body_case, XQZ__ENVELOPE__BODY_STATUS);
  assert_int_equal(env->status->n_worker_list, 10);
  xq_wire_free(&env);
  free(small);

  long before = peak_kib();
  int rc = xq_wire_unpack(buf, len, &env, &eb);
  long grew_mib = (peak_kib() - before) / 1024;
  fprintf(stderr, "8 MiB of empty submessages: rc=%d, peak memory +%ld MiB (budget %zu MiB)"
          " error=\"%s\"\n", rc, grew_mib, xq_wire_decode_budget(len) >> 20,
          rc ? eb.msg : "");
  if (rc == 0) xq_wire_free(&env);
  assert_int_equal(rc, XQ_ERANGE);
  assert_null(env);
  assert_non_null(strstr(eb.msg, "bytes of memory"));
  /* The budget is 8x + 1 MiB (65 MiB here); the sanitizer's shadow memory adds its own. */
  assert_true(grew_mib < 160);
  free(buf);
}

static void test_large_batch_decodes(void **state) {
  (void)state;
  enum { N = 8192, PI = 40 };
  Xqz__Sample *s = calloc(N, sizeof *s);
  Xqz__Sample **ptrs = calloc(N, sizeof *ptrs);
  uint32_t idx[PI];
  float prob[PI];
  uint8_t board[90], survive[12];
  memset(board, 3, sizeof board);
  memset(survive, 0xff, sizeof survive);
  for (int i = 0; i < PI; i++) {
    idx[i] = (uint32_t)(i * 50);
    prob[i] = 1.0f / PI;
  }
  for (int i = 0; i < N; i++) {
    xqz__sample__init(&s[i]);
    s[i].board.data = board;
    s[i].board.len = sizeof board;
    s[i].side = 1;
    s[i].rule60 = 3;
    s[i].n_pi_index = s[i].n_pi_prob = (size_t)(1 + i % PI);
    s[i].pi_index = idx;
    s[i].pi_prob = prob;
    s[i].z = 1.0f;
    s[i].survive.data = survive;
    s[i].survive.len = sizeof survive;
    s[i].reply = 200;
    ptrs[i] = &s[i];
  }
  Xqz__Envelope env;
  Xqz__Batch b;
  xq_msg_batch(&env, &b, ptrs, N);
  uint8_t *buf;
  size_t len;
  assert_int_equal(xq_wire_pack(&env, &buf, &len), 0);
  Xqz__Envelope *out = NULL;
  xq_errbuf_t eb;
  int rc = xq_wire_unpack(buf, len, &out, &eb);
  if (rc) fail_msg("an honest Batch of %d samples (%zu bytes) refused: %s", N, len, eb.msg);
  assert_int_equal(out->batch->n_samples, N);
  xq_wire_free(&out);
  /* The minimal honest sample (a board and nothing else) is the worst ratio of a Batch. */
  for (int i = 0; i < N; i++) {
    s[i].n_pi_index = s[i].n_pi_prob = 0;
    s[i].survive.len = 0;
  }
  free(buf);
  assert_int_equal(xq_wire_pack(&env, &buf, &len), 0);
  rc = xq_wire_unpack(buf, len, &out, &eb);
  if (rc) fail_msg("a Batch of bare samples (%zu bytes) refused: %s", len, eb.msg);
  xq_wire_free(&out);
  free(buf);
  free(ptrs);
  free(s);
}

static void test_large_status_decodes(void **state) {
  (void)state;
  enum { N = 2000 };
  Xqz__WorkerStatus *w = calloc(N, sizeof *w);
  Xqz__WorkerStatus **ptrs = calloc(N, sizeof *ptrs);
  uint64_t reasons[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  for (int i = 0; i < N; i++) {
    xqz__worker_status__init(&w[i]);
    w[i].worker_id = "w";
    w[i].host = "";
    w[i].software_version = "";
    w[i].key = "";
    w[i].n_by_reason = 12;
    w[i].by_reason = reasons;
    ptrs[i] = &w[i];
  }
  Xqz__Envelope env;
  Xqz__Status st;
  xqz__status__init(&st);
  st.n_worker_list = N;
  st.worker_list = ptrs;
  xq_msg_status(&env, &st);
  uint8_t *buf;
  size_t len;
  assert_int_equal(xq_wire_pack(&env, &buf, &len), 0);
  Xqz__Envelope *out = NULL;
  xq_errbuf_t eb;
  int rc = xq_wire_unpack(buf, len, &out, &eb);
  if (rc) fail_msg("an honest Status of %d workers (%zu bytes) refused: %s", N, len, eb.msg);
  assert_int_equal(out->status->n_worker_list, N);
  xq_wire_free(&out);
  free(buf);
  free(ptrs);
  free(w);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_empty_submessages_refused),
      cmocka_unit_test(test_large_batch_decodes),
      cmocka_unit_test(test_large_status_decodes),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
