/*
 * test_trainer_member_link.c: the socket-free pieces of the trainer's population
 * conversation (trainer/member_link.h). member.slot and member.order: missing is 0, a
 * written number reads back, a file without a number is refused naming it. A refused
 * Hello: another campaign or architecture stops the trainer, a full table (or its slot
 * still held) is asked again, anything else leaves a single trainer. A donor's
 * Checkpoint: another net, another size, a CRC that differs from the data's or the
 * order's are each refused, naming what differs.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "member_link.h"
#include "support/crc32.h"
#include "wire/wire.h"

static void test_files(void **state) {
  (void)state;
  char tmpdir[64] = "/tmp/xqz-member-link-XXXXXX";
  assert_non_null(mkdtemp(tmpdir));
  uint64_t v = 99;
  xq_errbuf_t eb = {{0}};
  assert_int_equal(trainer_member_file_read(tmpdir, TRAINER_MEMBER_SLOT_FILE, &v, &eb), 0);
  assert_int_equal(v, 0); /* missing: nothing remembered */
  assert_int_equal(trainer_member_file_write(tmpdir, TRAINER_MEMBER_SLOT_FILE, 7, &eb), 0);
  assert_int_equal(trainer_member_file_read(tmpdir, TRAINER_MEMBER_SLOT_FILE, &v, &eb), 0);
  assert_int_equal(v, 7);
  assert_int_equal(trainer_member_file_write(tmpdir, TRAINER_MEMBER_ORDER_FILE,
                                             12345678901ULL, &eb), 0);
  assert_int_equal(trainer_member_file_read(tmpdir, TRAINER_MEMBER_ORDER_FILE, &v, &eb), 0);
  assert_int_equal(v, 12345678901ULL);
  char path[128];
  snprintf(path, sizeof path, "%s/%s", tmpdir, TRAINER_MEMBER_ORDER_FILE);
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs("three\n", f);
  fclose(f);
  assert_int_equal(trainer_member_file_read(tmpdir, TRAINER_MEMBER_ORDER_FILE, &v, &eb),
                   XQ_EFORMAT);
  assert_int_equal(v, 0);
  assert_non_null(strstr(eb.msg, path));
  unlink(path);
  snprintf(path, sizeof path, "%s/%s", tmpdir, TRAINER_MEMBER_SLOT_FILE);
  unlink(path);
  assert_int_equal(rmdir(tmpdir), 0);
}

static trainer_hello_verdict_t verdict(uint32_t code, const char *msg) {
  Xqz__Error e = XQZ__ERROR__INIT;
  e.code = code;
  e.message = (char *)msg;
  return trainer_member_refusal(&e);
}

static void test_refusals(void **state) {
  (void)state;
  assert_int_equal(verdict(XQ_ERROR_CAMPAIGN, "campaign mismatch: ..."), TRAINER_HELLO_FATAL);
  assert_int_equal(verdict(XQ_ERROR_BAD_FIELD, "architecture mismatch: this population trains"
                           " 6x64 nets"), TRAINER_HELLO_FATAL);
  assert_int_equal(verdict(XQ_ERROR_BAD_FIELD, "all 4 population slots are held by live"
                           " trainers: stop one"), TRAINER_HELLO_RETRY);
  assert_int_equal(verdict(XQ_ERROR_NOT_ALLOWED, "population slot 2 is held by a live trainer"
                           " from 10.0.0.1: a forged claim"), TRAINER_HELLO_RETRY);
  assert_int_equal(verdict(XQ_ERROR_NOT_ALLOWED, "a trainer may not say Hello"),
                   TRAINER_HELLO_SINGLE);
  assert_int_equal(verdict(XQ_ERROR_WORKER_ID, NULL), TRAINER_HELLO_SINGLE);
}

static void test_checkpoint_check(void **state) {
  (void)state;
  unsigned char data[100];
  for (int i = 0; i < 100; i++) data[i] = (unsigned char)(i * 7);
  uint32_t crc = xq_crc32(0, data, sizeof data);
  Xqz__Checkpoint ck = XQZ__CHECKPOINT__INIT;
  ck.net_id = 5;
  ck.crc32 = crc;
  ck.data.data = data;
  ck.data.len = sizeof data;
  xq_errbuf_t eb = {{0}};
  assert_int_equal(trainer_member_checkpoint_check(&ck, 5, 100, crc, &eb), 0);
  assert_int_equal(trainer_member_checkpoint_check(&ck, 6, 100, crc, &eb), XQ_EMISMATCH);
  assert_non_null(strstr(eb.msg, "0000000000000006"));
  assert_int_equal(trainer_member_checkpoint_check(&ck, 5, 101, crc, &eb), XQ_EMISMATCH);
  assert_non_null(strstr(eb.msg, "101"));
  assert_int_equal(trainer_member_checkpoint_check(&ck, 5, 100, crc ^ 1, &eb), XQ_ECHECKSUM);
  data[50] ^= 1; /* damaged in transit: the message's CRC no longer its data's */
  assert_int_equal(trainer_member_checkpoint_check(&ck, 5, 100, crc, &eb), XQ_ECHECKSUM);
  assert_non_null(strstr(eb.msg, "damaged"));
  ck.crc32 = xq_crc32(0, data, sizeof data); /* and the sender's CRC of the damaged data */
  assert_int_equal(trainer_member_checkpoint_check(&ck, 5, 100, crc, &eb), XQ_ECHECKSUM);
}

static void test_settings_from_wire(void **state) {
  (void)state;
  Xqz__MemberSettings w = XQZ__MEMBER_SETTINGS__INIT;
  w.lr_scale = 0.5;
  w.l2 = 3e-4;
  w.value_weight = 2;
  w.batch = 128;
  trainer_member_settings_t a, b;
  trainer_member_settings_from_wire(&a, &w);
  assert_true(a.lr_scale == 0.5 && a.l2 == 3e-4 && a.value_weight == 2 && a.batch == 128);
  b = a;
  assert_true(trainer_member_settings_equal(&a, &b));
  b.batch = 64;
  assert_false(trainer_member_settings_equal(&a, &b));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_files),
      cmocka_unit_test(test_refusals),
      cmocka_unit_test(test_checkpoint_check),
      cmocka_unit_test(test_settings_from_wire),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
