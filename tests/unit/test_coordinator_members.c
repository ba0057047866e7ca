/*
 * test_coordinator_members.c: the population's table of member slots
 * (coordinator/population/members.h) and the population settings (config.h): slots given
 * out and given back to the same key or connection, silent holders freed after the
 * timeout, refusals (role, campaign, architecture, a full table, a forged claim), a pbt.h
 * copy order carried out, which checkpoints are still needed, and the table's file
 * surviving a round trip and refused damaged.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "peers/roles.h"
#include "population/members.h"
#include "support/crc32.h"

#define CAMPAIGN 0x0123456789abcdefull
#define TIMEOUT 30000
static const char KEY_A[] = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
static const char KEY_B[] = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";

static xqc_member_ask_t ask(const char *key, const char *conn, const char *host, int want) {
  return (xqc_member_ask_t){XQC_ROLE_TRAINER, key, conn, host, CAMPAIGN, "2x16a", want};
}

/* Claims and expects rc; returns the slot. */
static int claim(xqc_members_t *t, xqc_member_ask_t a, uint64_t now, int rc) {
  char why[256] = "";
  int slot = -2;
  int got = xqc_members_claim(t, &a, now, TIMEOUT, &slot, why, sizeof why);
  if (got != rc) print_message("claim: %d (%s)\n", got, why);
  assert_int_equal(got, rc);
  if (rc == 0) assert_in_range(slot, 0, t->k - 1);
  return slot;
}

/* Claims expecting refusal rc, and checks that the reason holds each of the words. */
static void refused(xqc_members_t *t, xqc_member_ask_t a, int rc, const char *w1,
                    const char *w2) {
  char why[256] = "";
  int slot = -2;
  assert_int_equal(xqc_members_claim(t, &a, 1000, TIMEOUT, &slot, why, sizeof why), rc);
  print_message("refused: %s\n", why);
  assert_int_equal(slot, -1);
  assert_non_null(strstr(why, w1));
  if (w2) assert_non_null(strstr(why, w2));
}

static void test_population_settings(void **state) {
  (void)state;
  xqc_config_t c;
  xq_errbuf_t eb;
  xqc_config_defaults(&c);
  assert_int_equal(c.population, 0); /* off unless asked for */
  assert_int_equal(c.population_control, 1);
  assert_int_equal(c.pbt_interval_steps, 2000);
  assert_true(c.pbt_quantile == 0.25 && c.pbt_resample_p == 0.25 && c.pbt_share == 0.1);
  assert_int_equal(xqc_config_check(&c, &eb), 0);
  assert_int_equal(xqc_config_set(&c, "population", "4", &eb), 0);
  assert_int_equal(xqc_config_check(&c, &eb), 0);
  assert_int_equal(xqc_config_set(&c, "population", "1", &eb), 0);
  assert_int_equal(xqc_config_check(&c, &eb), XQ_ERANGE);
  assert_non_null(strstr(eb.msg, "population: 1 is not a population"));
  static const char *const bad[][2] = {
      {"population", "17"},       {"population", "-1"},        {"population_control", "2"},
      {"pbt_interval_steps", "0"}, {"pbt_quantile", "0"},      {"pbt_quantile", "0.6"},
      {"pbt_resample_p", "-0.1"}, {"pbt_resample_p", "1.5"},   {"pbt_share", "0.51"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    assert_int_equal(xqc_config_set(&c, bad[i][0], bad[i][1], &eb), XQ_ERANGE);
    assert_non_null(strstr(eb.msg, bad[i][0]));
  }
  assert_int_equal(xqc_config_set(&c, "pbt_quantile", "0.5", &eb), 0);
  assert_int_equal(xqc_config_set(&c, "pbt_share", "0", &eb), 0);
}

static void test_slots_given_and_given_back(void **state) {
  (void)state;
  xqc_members_t t;
  xqc_members_init(&t, 3, true, CAMPAIGN, "2x16a", 256);
  assert_int_equal(t.control, 0);
  /* CURVE: each key gets a slot of its own, and the same one again from a new connection. */
  int a = claim(&t, ask(KEY_A, "conn-1", "10.0.0.1", -1), 1000, 0);
  int b = claim(&t, ask(KEY_B, "conn-2", "10.0.0.2", -1), 1000, 0);
  assert_int_not_equal(a, b);
  assert_int_equal(claim(&t, ask(KEY_A, "conn-3", "10.0.0.9", -1), 2000, 0), a);
  assert_string_equal(t.slot[a].conn, "conn-3");
  assert_int_equal(claim(&t, ask(KEY_A, "conn-3", "10.0.0.9", a), 2000, 0), a);
  assert_int_equal(xqc_members_find_conn(&t, "conn-3"), a);
  assert_int_equal(xqc_members_find_conn(&t, "conn-1"), -1);
  /* The key keeps its slot across a silence: freed, then given back to the same key. */
  assert_int_equal(xqc_members_expire(&t, 2000 + TIMEOUT + 1, TIMEOUT), 2);
  assert_false(t.slot[a].held);
  assert_int_equal(claim(&t, ask(KEY_A, "conn-4", "10.0.0.1", -1), 2000 + TIMEOUT + 2, 0), a);
  /* Heard from: step and net kept; a step of 0 (not said) leaves it, a lower one is the
   * trainer's own (resumed from an older checkpoint, or a copy of a member behind it). */
  xqc_members_seen(&t, a, 50000, 1200, 0xabcull);
  xqc_members_seen(&t, a, 50001, 0, 0);
  assert_int_equal(t.slot[a].last_step, 1200);
  xqc_members_seen(&t, a, 50002, 1100, 0);
  assert_int_equal(t.slot[a].last_step, 1100);
  assert_int_equal(t.slot[a].last_net, 0xabc);
}

static void test_connection_bound_slots(void **state) {
  (void)state;
  xqc_members_t t;
  xqc_members_init(&t, 2, false, CAMPAIGN, "2x16a", 256);
  /* Without CURVE, two trainers on one host get a slot each. */
  int a = claim(&t, ask("", "c1", "10.0.0.1", -1), 1000, 0);
  int b = claim(&t, ask("", "c2", "10.0.0.1", -1), 1000, 0);
  assert_int_not_equal(a, b);
  assert_int_equal(claim(&t, ask("", "c1", "10.0.0.1", -1), 1500, 0), a); /* its own */
  /* Full: a third one is refused while both are alive... */
  refused(&t, ask("", "c3", "10.0.0.3", -1), XQ_EBUSY, "all 2 population slots", NULL);
  /* ...and gets the slot of the one that fell silent. */
  xqc_members_seen(&t, b, 20000, 10, 0);
  int c = claim(&t, ask("", "c3", "10.0.0.3", -1), 1500 + TIMEOUT + 1, 0);
  assert_int_equal(c, a);
  assert_string_equal(t.slot[a].conn, "c3");
  assert_string_equal(t.slot[a].host, "10.0.0.3");
  /* The same host, by number, takes a live slot over: the trainer reconnecting. */
  assert_int_equal(claim(&t, ask("", "c2b", "10.0.0.1", b), 32000, 0), b);
  assert_string_equal(t.slot[b].conn, "c2b");
}

static void test_refusals(void **state) {
  (void)state;
  xqc_members_t t;
  xqc_members_init(&t, 2, true, CAMPAIGN, "2x16a", 256);
  xqc_member_ask_t a = ask(KEY_A, "c1", "h1", -1);
  a.roles = XQC_ROLE_WORKER;
  refused(&t, a, XQ_EINVAL, "population slots are for trainers", "worker");
  a = ask(KEY_A, "c1", "h1", -1);
  a.campaign_id = 0xfeedull;
  refused(&t, a, XQ_EMISMATCH, "0123456789abcdef", "000000000000feed");
  a = ask(KEY_A, "c1", "h1", -1);
  a.arch = "6x64";
  refused(&t, a, XQ_EMISMATCH, "trains 2x16a nets", "net is 6x64");
  refused(&t, ask(KEY_A, "c1", "h1", 2), XQ_EINVAL, "slot 2 does not exist", "0 to 1");
  a = ask(KEY_A, "c1", "h1", -1);
  a.campaign_id = 0; /* a trainer that does not know its campaign yet is let in */
  assert_int_equal(claim(&t, a, 1000, 0), 0); /* the first slot never held */
}

static void test_forged_claims(void **state) {
  (void)state;
  xqc_members_t t;
  xqc_members_init(&t, 3, true, CAMPAIGN, "2x16a", 256);
  int a = claim(&t, ask(KEY_A, "c1", "h1", -1), 1000, 0);
  /* Another key asks for A's slot by number: refused, held or not. */
  refused(&t, ask(KEY_B, "c2", "h2", a), XQ_EMISMATCH, "belongs to another key (aaaaaaaa...)",
          "forged");
  xqc_members_expire(&t, 1000 + TIMEOUT + 1, TIMEOUT);
  refused(&t, ask(KEY_B, "c2", "h2", a), XQ_EMISMATCH, "forged", NULL);
  /* A key that owns a slot cannot ask for another one. */
  int b = claim(&t, ask(KEY_B, "c2", "h2", -1), 40000, 0);
  assert_int_not_equal(a, b);
  refused(&t, ask(KEY_B, "c2", "h2", 3 - a - b), XQ_EMISMATCH, "this trainer owns slot", NULL);
  /* Without CURVE, a live slot of another connection from another host is not taken. */
  xqc_members_t u;
  xqc_members_init(&u, 2, false, CAMPAIGN, "2x16a", 256);
  int s = claim(&u, ask("", "c1", "10.0.0.1", -1), 1000, 0);
  refused(&u, ask("", "c9", "10.0.0.9", s), XQ_EMISMATCH, "held by a live trainer from 10.0.0.1",
          "forged");
}

static void test_apply_order(void **state) {
  (void)state;
  xqc_members_t t;
  xqc_members_init(&t, 4, true, CAMPAIGN, "2x16a", 256);
  const xqc_pbt_range_t *r = xqc_members_ranges();
  assert_string_equal(r[XQC_MS_LR_SCALE].name, "lr_scale");
  assert_string_equal(r[XQC_MS_L2].name, "l2");
  assert_string_equal(r[XQC_MS_VALUE_WEIGHT].name, "value_weight");
  assert_string_equal(r[XQC_MS_BATCH].name, "batch");
  assert_true(t.slot[1].settings[XQC_MS_BATCH] == 256 && t.slot[1].settings[XQC_MS_L2] == 1e-4);
  /* A round from pbt.h over the table's settings and ratings, carried out on the table. */
  double elo[4] = {0, 100, 50, -80}, settings[4][XQC_PBT_MAX_SETTINGS];
  for (int i = 0; i < 4; i++) memcpy(settings[i], t.slot[i].settings, sizeof settings[i]);
  settings[1][XQC_MS_LR_SCALE] = 2;
  xqc_pbt_rule_t rule;
  xqc_pbt_rule_default(&rule);
  rule.quantile = 0.34; /* one of the three rated members */
  xq_rng_t rng;
  xq_rng_seed(&rng, 7);
  xqc_pbt_order_t orders[4];
  int n = xqc_pbt_round(4, elo, (const double (*)[XQC_PBT_MAX_SETTINGS])settings, XQC_MS_COUNT,
                        r, t.control, &rule, &rng, orders);
  assert_int_equal(n, 1);
  assert_int_equal(orders[0].member, 3);
  assert_int_equal(orders[0].donor, 1);
  char why[128];
  /* A donor with no net yet cannot be copied. */
  assert_int_equal(xqc_members_apply(&t, &orders[0], why, sizeof why), XQ_EINVAL);
  assert_non_null(strstr(why, "no net"));
  assert_int_equal(t.slot[3].generation, 0);
  xqc_members_seen(&t, 1, 10, 500, 0x1234);
  assert_int_equal(xqc_members_apply(&t, &orders[0], why, sizeof why), 0);
  assert_int_equal(t.slot[3].generation, 1);
  assert_int_equal(t.slot[3].parent, 1);
  assert_int_equal(t.slot[3].order, 1); /* orders count from 1 */
  assert_true(t.slot[3].copy_net == 0x1234);
  assert_int_equal(t.last_order, 1);
  assert_memory_equal(t.slot[3].settings, orders[0].settings, sizeof t.slot[3].settings);
  assert_int_equal(t.slot[1].generation, 0);
  /* The control member neither copies nor is copied; no slot copies itself. */
  xqc_pbt_order_t bad = orders[0];
  bad.member = 0;
  assert_int_equal(xqc_members_apply(&t, &bad, why, sizeof why), XQ_EINVAL);
  assert_non_null(strstr(why, "control"));
  bad = orders[0];
  bad.donor = 3;
  assert_int_equal(xqc_members_apply(&t, &bad, why, sizeof why), XQ_EINVAL);
  bad.member = 4;
  assert_int_equal(xqc_members_apply(&t, &bad, why, sizeof why), XQ_EINVAL);
  assert_int_equal(t.slot[3].generation, 1);
}

/* A copy order is pending until its trainer reports it done; a checkpoint is needed while
 * it is a member's last net or a pending copy's net. */
static void test_checkpoints_needed(void **state) {
  (void)state;
  xqc_members_t t;
  xqc_members_init(&t, 3, true, CAMPAIGN, "2x16a", 256);
  assert_false(xqc_members_checkpoint_needed(&t, 0));
  xqc_members_seen(&t, 1, 10, 500, 0xa1);
  assert_true(xqc_members_checkpoint_needed(&t, 0xa1));
  assert_false(xqc_members_checkpoint_needed(&t, 0xb2));
  xqc_pbt_order_t o = {.member = 2, .donor = 1};
  memcpy(o.settings, t.slot[1].settings, sizeof o.settings);
  char why[128];
  assert_int_equal(xqc_members_apply(&t, &o, why, sizeof why), 0);
  assert_true(xqc_members_copy_pending(&t, 2));
  assert_false(xqc_members_copy_pending(&t, 1));
  /* The donor moves on: its old checkpoint is kept for the pending copy, then let go. */
  xqc_members_seen(&t, 1, 20, 900, 0xb2);
  assert_true(xqc_members_checkpoint_needed(&t, 0xa1));
  t.slot[2].done_order = t.slot[2].order;
  assert_false(xqc_members_copy_pending(&t, 2));
  assert_false(xqc_members_checkpoint_needed(&t, 0xa1));
  assert_true(xqc_members_checkpoint_needed(&t, 0xb2));
}

static char g_path[64];

static void write_file(const char *text) {
  FILE *f = fopen(g_path, "w");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
}

/* Writes body and a right checksum line after it: a file damaged past the checksum's
 * notice, as an editor would leave it. */
static void write_with_crc(const char *body) {
  char text[1024];
  snprintf(text, sizeof text, "%scrc32 %08x\n", body, (unsigned)xq_crc32(0, body, strlen(body)));
  write_file(text);
}

static char *read_text(void) {
  FILE *f = fopen(g_path, "r");
  assert_non_null(f);
  static char buf[16384];
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = '\0';
  return buf;
}

static void test_save_and_load(void **state) {
  (void)state;
  char dir[] = "/tmp/xqz-members-XXXXXX";
  assert_non_null(mkdtemp(dir));
  snprintf(g_path, sizeof g_path, "%s/population.txt", dir);
  xqc_members_t t, back;
  xq_errbuf_t eb;
  xqc_members_init(&t, 3, true, CAMPAIGN, "2x16a", 256);
  int a = claim(&t, ask(KEY_A, "c1", "10.0.0.1", -1), 1000, 0);
  xqc_members_seen(&t, a, 2000, 4321, 0xfedcba9876543210ull);
  xqc_pbt_order_t o = {.member = 2, .donor = 1};
  memcpy(o.settings, t.slot[1].settings, sizeof o.settings);
  o.settings[XQC_MS_LR_SCALE] = 1.0 / 3; /* not a short decimal: read back bit for bit */
  o.settings[XQC_MS_L2] = 1.2e-4;
  char why[128];
  xqc_members_seen(&t, 1, 2000, 4000, 0x77);
  assert_int_equal(xqc_members_apply(&t, &o, why, sizeof why), 0);
  t.round = 3;
  t.slot[1].rated = true;
  t.slot[1].elo = 1.0 / 7;
  t.slot[1].elo_lo = -40.5;
  t.slot[1].elo_hi = 60.25;
  assert_int_equal(xqc_members_save(&t, g_path, &eb), 0);
  assert_int_equal(xqc_members_load(&back, g_path, &eb), 0);
  assert_int_equal(back.k, 3);
  assert_int_equal(back.control, 0);
  assert_true(back.campaign_id == CAMPAIGN);
  assert_string_equal(back.arch, "2x16a");
  assert_int_equal(back.round, 3);
  assert_int_equal(back.last_order, 1);
  assert_true(back.slot[2].copy_net == 0x77);
  for (int i = 0; i < 3; i++) {
    assert_false(back.slot[i].held); /* holders are not saved */
    assert_string_equal(back.slot[i].key, t.slot[i].key);
    assert_string_equal(back.slot[i].host, t.slot[i].host);
    assert_int_equal(back.slot[i].used, t.slot[i].used);
    assert_int_equal(back.slot[i].generation, t.slot[i].generation);
    assert_int_equal(back.slot[i].parent, t.slot[i].parent);
    assert_int_equal(back.slot[i].last_step, t.slot[i].last_step);
    assert_true(back.slot[i].last_net == t.slot[i].last_net);
    assert_true(back.slot[i].order == t.slot[i].order);
    assert_true(back.slot[i].copy_net == t.slot[i].copy_net);
    assert_int_equal(back.slot[i].rated, t.slot[i].rated);
    assert_true(back.slot[i].elo == t.slot[i].elo && back.slot[i].elo_lo == t.slot[i].elo_lo &&
                back.slot[i].elo_hi == t.slot[i].elo_hi);
    assert_memory_equal(back.slot[i].settings, t.slot[i].settings,
                        XQC_MS_COUNT * sizeof(double));
  }
  /* The key gets its slot back after the restart. */
  assert_int_equal(claim(&back, ask(KEY_A, "c7", "10.0.0.1", -1), 5000, 0), a);

  /* Damage: a changed byte, a cut file, another magic; the table is left untouched. */
  char saved[16384];
  snprintf(saved, sizeof saved, "%s", read_text());
  char *p = strstr(saved, "gen=1");
  assert_non_null(p);
  p[4] = '2';
  write_file(saved);
  xqc_members_t untouched = back;
  assert_int_equal(xqc_members_load(&back, g_path, &eb), XQ_ECHECKSUM);
  print_message("damaged: %s\n", eb.msg);
  assert_non_null(strstr(eb.msg, "population.txt: damaged population table: checksum"));
  assert_memory_equal(&back, &untouched, sizeof back);
  p[4] = '1';
  saved[strlen(saved) / 2] = '\0';
  write_file(saved);
  assert_int_equal(xqc_members_load(&back, g_path, &eb), XQ_EFORMAT);
  print_message("cut: %s\n", eb.msg);
  assert_non_null(strstr(eb.msg, "no checksum line"));
  write_file("not a table\ncrc32 00000000\n");
  assert_int_equal(xqc_members_load(&back, g_path, &eb), XQ_ECHECKSUM);
  assert_memory_equal(&back, &untouched, sizeof back);
  /* Checksums that match, contents that do not parse: each refused naming the line. */
  write_with_crc("xqz-members 1\n"); /* the unwired table's format */
  assert_int_equal(xqc_members_load(&back, g_path, &eb), XQ_EVERSION);
  write_with_crc("xqz-members 2\ntable k=1 control=0 campaign=0000000000000001 arch=2x16a"
                 " round=0 orders=0\n");
  assert_int_equal(xqc_members_load(&back, g_path, &eb), XQ_EFORMAT);
  assert_non_null(strstr(eb.msg, "line 2"));
  write_with_crc("xqz-members 2\ntable k=2 control=0 campaign=0000000000000001 arch=2x16a"
                 " round=0 orders=0\n"
                 "slot 0 used=0 gen=0 parent=-1 step=0 net=0000000000000000 order=0"
                 " copy=0000000000000000 rated=0 elo=0 lo=0 hi=0 key=- host=- 1 0.0001 1 256\n"
                 "slot 1 used=0 gen=0 parent=-1 step=0 net=0000000000000000 order=0"
                 " copy=0000000000000000 rated=0 elo=0 lo=0 hi=0 key=- host=- 99 0.0001 1 256\n");
  assert_int_equal(xqc_members_load(&back, g_path, &eb), XQ_EFORMAT);
  print_message("out of range: %s\n", eb.msg);
  assert_non_null(strstr(eb.msg, "line 4: slot 1"));
  assert_memory_equal(&back, &untouched, sizeof back);
  unlink(g_path);
  assert_true(xqc_members_load(&back, g_path, &eb) < 0);
  rmdir(dir);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_population_settings),
      cmocka_unit_test(test_slots_given_and_given_back),
      cmocka_unit_test(test_connection_bound_slots),
      cmocka_unit_test(test_refusals),
      cmocka_unit_test(test_forged_claims),
      cmocka_unit_test(test_apply_order),
      cmocka_unit_test(test_checkpoints_needed),
      cmocka_unit_test(test_save_and_load),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
