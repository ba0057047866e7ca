/*
 * test_game_record.c: game records round-trip through the file format; the reader
 * rejects truncation, bit flips, bad magic, version, illegal moves and bad fields with
 * an error (never a crash).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdlib.h>

#include "rules/policy_index.h"
#include "records/game_record.h"
#include "support/crc32.h"
#include "support/le.h"
#include "test_helpers.h"

static void make_record(xq_game_record_t *r) {
  xq_record_init(r);
  xq_record_reset(r, XQ_START_FEN, 0x1234567890abcdefull);
  xq_pos_t pos;
  th_parse(&pos, XQ_START_FEN);
  const char *mv[] = {"h2e2", "h9g7", "h0g2", "i9h9"};
  for (int i = 0; i < 4; i++) {
    xq_move_t m;
    assert_int_equal(xq_move_parse_legal(&pos, mv[i], &m, NULL), 0);
    xq_visit_t v[2] = {{(uint16_t)xq_policy_index_for(m, pos.side), 70},
                       {5, (uint32_t)(30 + i)}};
    assert_int_equal(xq_record_add(r, m, i != 2, 0.25f * (float)i - 0.3f, v, 2), 0);
    xq_pos_make(&pos, m);
  }
  r->result = XQ_RESULT_DRAW;
  r->reason = XQ_REASON_LENGTH_CAP;
}

static void test_roundtrip(void **state) {
  (void)state;
  xq_game_record_t r, q;
  make_record(&r);
  xq_record_init(&q);
  char *mem = NULL;
  size_t memlen = 0;
  FILE *f = open_memstream(&mem, &memlen);
  assert_int_equal(xq_record_write_header(f, NULL), 0);
  assert_int_equal(xq_record_write(f, &r, NULL), 0);
  assert_int_equal(xq_record_write(f, &r, NULL), 0);
  fclose(f);
  f = fmemopen(mem, memlen, "rb");
  xq_errbuf_t eb = {{0}};
  assert_int_equal(xq_record_read_header(f, &eb), 0);
  for (int k = 0; k < 2; k++) {
    assert_int_equal(xq_record_read(f, &q, &eb), 1);
    assert_string_equal(q.start_fen, r.start_fen);
    assert_true(q.net_id == r.net_id);
    assert_int_equal(q.result, r.result);
    assert_int_equal(q.reason, r.reason);
    assert_int_equal(q.nplies, 4);
    assert_int_equal(q.nvisits, 6);
    for (int i = 0; i < 4; i++) {
      assert_int_equal(q.plies[i].move, r.plies[i].move);
      assert_int_equal(q.plies[i].full, r.plies[i].full);
      assert_true(q.plies[i].value == r.plies[i].value);
      assert_int_equal(q.plies[i].nvisits, i == 2 ? 0 : 2);
    }
    for (int i = 0; i < 6; i++) { /* field by field: the struct has padding */
      assert_int_equal(q.visits[i].index, r.visits[i].index);
      assert_int_equal(q.visits[i].count, r.visits[i].count);
    }
  }
  assert_int_equal(xq_record_read(f, &q, &eb), 0);
  fclose(f);

  /* every truncation and every single-bit flip is an error, never a crash */
  char *buf = malloc(memlen);
  for (size_t cut = 0; cut < memlen; cut++) {
    f = fmemopen(mem, cut ? cut : 1, "rb");
    int rc = cut < 12 ? xq_record_read_header(f, &eb) : 0;
    if (cut >= 12) {
      xq_record_read_header(f, &eb);
      int a = xq_record_read(f, &q, &eb);
      int b = a == 1 ? xq_record_read(f, &q, &eb) : a;
      rc = a < 0 || b < 0 ? -1 : 0;
      if (cut != 12 && cut != (memlen - 12) / 2 + 12) assert_true(rc < 0);
    } else {
      assert_true(rc < 0);
    }
    fclose(f);
  }
  for (size_t i = 12; i < memlen; i++) {
    for (int bit = 0; bit < 8; bit++) {
      memcpy(buf, mem, memlen);
      buf[i] ^= (char)(1 << bit);
      f = fmemopen(buf, memlen, "rb");
      assert_int_equal(xq_record_read_header(f, &eb), 0);
      int a = xq_record_read(f, &q, &eb);
      int b = a == 1 ? xq_record_read(f, &q, &eb) : a;
      if (!(a < 0 || b < 0)) fail_msg("flip at byte %zu bit %d accepted", i, bit);
      fclose(f);
    }
  }
  free(buf);
  free(mem);
  xq_record_free(&r);
  xq_record_free(&q);
}

/* Payloads with a valid frame but bad content: the decoder names the problem. */
static void test_bad_payload(void **state) {
  (void)state;
  xq_game_record_t r, q;
  make_record(&r);
  xq_record_init(&q);
  unsigned char *buf;
  size_t len;
  assert_int_equal(xq_record_encode(&r, &buf, &len), 0);
  xq_errbuf_t eb = {{0}};
  assert_int_equal(xq_record_decode(&q, buf, len, &eb), 0);
  size_t fl = strlen(XQ_START_FEN);
  unsigned char *m = malloc(len);
  memcpy(m, buf, len);
  m[16 + fl] ^= 0x7f; /* first move garbled */
  assert_true(xq_record_decode(&q, m, len, &eb) < 0);
  assert_non_null(strstr(eb.msg, "ply 0"));
  memcpy(m, buf, len);
  m[8] = 9; /* result */
  assert_int_equal(xq_record_decode(&q, m, len, &eb), XQ_EFORMAT);
  memcpy(m, buf, len);
  xq_put_le32(m + 12, 0xffffffffu); /* absurd ply count */
  assert_int_equal(xq_record_decode(&q, m, len, &eb), XQ_EFORMAT);
  assert_true(xq_record_decode(&q, buf, len - 1, &eb) < 0);
  for (size_t k = 0; k < len; k++) xq_record_decode(&q, buf, k, &eb); /* no crash */
  /* bad magic and version */
  unsigned char h[12];
  memcpy(h, "XQZX\r\n\x1a\n", 8);
  xq_put_le32(h + 8, 1);
  FILE *f = fmemopen(h, 12, "rb");
  assert_int_equal(xq_record_read_header(f, &eb), XQ_EFORMAT);
  fclose(f);
  memcpy(h, XQ_RECORD_MAGIC, 8);
  xq_put_le32(h + 8, 2);
  f = fmemopen(h, 12, "rb");
  assert_int_equal(xq_record_read_header(f, &eb), XQ_EVERSION);
  fclose(f);
  free(m);
  free(buf);
  xq_record_free(&r);
  xq_record_free(&q);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_roundtrip),
      cmocka_unit_test(test_bad_payload),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
