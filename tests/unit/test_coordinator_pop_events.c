/*
 * test_coordinator_pop_events.c: a population's kept decisions (coordinator/population/
 * events.c): event and rating rows round trip through campaign.db (settings, Elo, an open
 * interval end), the same round and member again replaces the row, the history is the
 * newest rows oldest first, the JSON lines (1-based slots, settings by name, numbers that
 * read back exactly) parse with python3, and a campaign.db of layout 5 gains the tables.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "json_check.h"
#include "population/events.h"
#include "storage/schema.h"

static char g_dir[] = "/tmp/xqz-popev-XXXXXX";
static char g_db[64];

static int setup(void **state) {
  (void)state;
  strcpy(g_dir, "/tmp/xqz-popev-XXXXXX");
  if (!mkdtemp(g_dir)) return -1;
  snprintf(g_db, sizeof g_db, "%s/campaign.db", g_dir);
  return 0;
}

static int teardown(void **state) {
  (void)state;
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf %s", g_dir);
  return system(cmd) == 0 ? 0 : -1;
}

static xqc_db_t *open_db(void) {
  xqc_db_t *db = NULL;
  xq_errbuf_t eb = {{0}};
  if (xqc_db_open(&db, g_db, &eb) != 0) fail_msg("open: %s", eb.msg);
  return db;
}

static xqc_pop_event_t event(uint64_t round, int member, int donor) {
  xqc_pop_event_t e = {.round = round, .member = member, .donor = donor, .generation = 2,
                       .donor_net = 0xfedcba9876543210ull,
                       .before = {1.0, 1e-4, 1.0, 256}, .after = {1.2, 8e-5, 0.7, 320},
                       .member_elo = -42.125, .donor_elo = 17.0 / 3.0, .time = 1700000000};
  return e;
}

static void test_event_round_trip(void **state) {
  (void)state;
  xqc_db_t *db = open_db();
  xqc_pop_event_t a = event(1, 2, 0), b = event(1, 3, 1);
  b.donor_elo = NAN;
  assert_int_equal(xqc_pop_event_add(db, &a), 0);
  assert_int_equal(xqc_pop_event_add(db, &b), 0);
  /* The same round and member again: replaced, not added. */
  a.donor = 1;
  a.after[0] = 1.44;
  assert_int_equal(xqc_pop_event_add(db, &a), 0);
  xqc_pop_event_t *rows = NULL;
  int n = 0;
  assert_int_equal(xqc_pop_event_history(db, XQC_EVENTS_HISTORY, &rows, &n), 0);
  assert_int_equal(n, 2);
  assert_int_equal(rows[0].member, 2);
  assert_int_equal(rows[0].donor, 1);
  assert_true(rows[0].after[0] == 1.44);
  assert_true(rows[0].before[1] == 1e-4);
  assert_true(rows[0].after[3] == 320);
  assert_true(rows[0].donor_elo == 17.0 / 3.0);
  assert_true(rows[0].member_elo == -42.125);
  assert_int_equal(rows[0].generation, 2);
  assert_true(rows[0].donor_net == 0xfedcba9876543210ull);
  assert_int_equal(rows[0].time, 1700000000);
  assert_int_equal(rows[1].member, 3);
  assert_true(isnan(rows[1].donor_elo));
  free(rows);
  xqc_db_close(&db);
}

static void test_event_history_order(void **state) {
  (void)state;
  xqc_db_t *db = open_db();
  /* Rounds written out of order: the history is by round, then member. */
  int order[][2] = {{3, 1}, {1, 2}, {2, 0}, {1, 1}, {3, 0}};
  for (int i = 0; i < 5; i++) {
    xqc_pop_event_t e = event((uint64_t)order[i][0], order[i][1], 3);
    assert_int_equal(xqc_pop_event_add(db, &e), 0);
  }
  xqc_pop_event_t *rows = NULL;
  int n = 0;
  assert_int_equal(xqc_pop_event_history(db, 3, &rows, &n), 0);
  assert_int_equal(n, 3); /* the newest three, oldest first */
  assert_int_equal(rows[0].round, 2);
  assert_int_equal(rows[1].round, 3);
  assert_int_equal(rows[1].member, 0);
  assert_int_equal(rows[2].member, 1);
  free(rows);
  assert_int_equal(xqc_pop_event_history(db, 10, &rows, &n), 0);
  assert_int_equal(n, 5);
  assert_int_equal(rows[0].round, 1);
  assert_int_equal(rows[0].member, 1);
  free(rows);
  assert_int_equal(xqc_pop_event_history(db, 0, &rows, &n), 0);
  assert_int_equal(n, 0);
  xqc_db_close(&db);
}

/* The one row of population_ratings for (round, member) as text, "" when none. */
static void rating_row(xqc_db_t *db, int round, int member, char *out, size_t n) {
  sqlite3_stmt *st = NULL;
  assert_int_equal(sqlite3_prepare_v2(db, "SELECT COUNT(*) || ' ' || net || ' ' || elo || ' '"
                                          " || IFNULL(hi, 'null') || ' ' || batch || ' ' ||"
                                          " parent FROM population_ratings WHERE round=? AND"
                                          " member=?", -1, &st, NULL), SQLITE_OK);
  sqlite3_bind_int(st, 1, round);
  sqlite3_bind_int(st, 2, member);
  out[0] = '\0';
  if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
    snprintf(out, n, "%s", (const char *)sqlite3_column_text(st, 0));
  sqlite3_finalize(st);
}

static void test_rating_rows(void **state) {
  (void)state;
  xqc_db_t *db = open_db();
  xqc_pop_rating_t r = {.round = 4, .member = 1, .net = 77, .step = 5000, .elo = 12.5,
                        .lo = -30, .hi = 55, .settings = {1, 1e-4, 1, 256}, .generation = 1,
                        .parent = 0, .time = 1700000100};
  assert_int_equal(xqc_pop_rating_add(db, &r), 0);
  r.member = -1; /* the best net */
  r.net = 5;
  r.elo = 0;
  r.hi = INFINITY;
  assert_int_equal(xqc_pop_rating_add(db, &r), 0);
  char row[128];
  rating_row(db, 4, -1, row, sizeof row);
  assert_string_equal(row, "1 5 0.0 Inf 256.0 0");
  r.member = 1;
  r.net = 78; /* the same round and member: replaced */
  r.elo = 20;
  r.hi = 60;
  r.settings[XQC_MS_BATCH] = 512;
  assert_int_equal(xqc_pop_rating_add(db, &r), 0);
  rating_row(db, 4, 1, row, sizeof row);
  assert_string_equal(row, "1 78 20.0 60.0 512.0 0");
  xqc_db_close(&db);
}

static void test_json_lines(void **state) {
  (void)state;
  xqc_pop_event_t e = event(3, 0, 2);
  e.donor_elo = INFINITY;
  char buf[1024];
  int len = xqc_pop_event_json(&e, buf, sizeof buf);
  assert_int_equal(len, (int)strlen(buf));
  assert_string_equal(buf, "{\"type\":\"exploit\",\"round\":3,\"member\":1,\"donor\":3,"
                           "\"generation\":2,\"donor_net\":\"fedcba9876543210\","
                           "\"before\":{\"lr_scale\":1,\"l2\":0.0001,\"value_weight\":1,"
                           "\"batch\":256},\"after\":{\"lr_scale\":1.2,\"l2\":8e-05,"
                           "\"value_weight\":0.7,\"batch\":320},\"member_elo\":-42.125,"
                           "\"donor_elo\":null,\"time\":1700000000}");
  assert_true(th_python_json(buf, "assert d[\"after\"][\"l2\"] == 8e-05 and d[\"member\"] == 1"
                                 " and d[\"donor_elo\"] is None"));
  /* Not enough room: -1, never a cut line. */
  assert_int_equal(xqc_pop_event_json(&e, buf, 40), -1);
  assert_int_equal(xqc_pop_event_json(&e, buf, (size_t)len), -1);
  assert_int_equal(xqc_pop_event_json(&e, buf, (size_t)len + 1), len);

  xqc_pop_rating_t r = {.round = 2, .member = -1, .net = 0xab, .step = 900, .elo = 0,
                        .lo = -1.0 / 3.0, .hi = 35.5, .settings = {0.5, 2e-4, 1.5, 128},
                        .generation = 0, .parent = -1, .time = 5};
  len = xqc_pop_rating_json(&r, buf, sizeof buf);
  assert_true(len > 0);
  assert_non_null(strstr(buf, "{\"type\":\"rating\",\"round\":2,\"member\":0,"
                              "\"net\":\"00000000000000ab\",\"step\":900,\"elo\":0,"
                              "\"lo\":-0.33333333333333331,\"hi\":35.5,"));
  assert_non_null(strstr(buf, "\"generation\":0,\"parent\":0,\"time\":5}"));
  assert_true(th_python_json(buf, "assert d[\"lo\"] == -1.0/3.0 and d[\"settings\"][\"batch\"]"
                                 " == 128 and d[\"member\"] == 0"));
}

/* A campaign.db of layout 5 (made before populations): opening it adds both tables. */
static void test_schema_upgrade(void **state) {
  (void)state;
  xqc_db_t *db = open_db();
  assert_int_equal(sqlite3_exec(db, "DROP TABLE population_events; DROP TABLE"
                                    " population_ratings; PRAGMA user_version=5;",
                                NULL, NULL, NULL), SQLITE_OK);
  xqc_pop_event_t e = event(1, 1, 0);
  assert_int_equal(xqc_pop_event_add(db, &e), XQ_EIO); /* no table: refused, not a crash */
  xqc_db_close(&db);
  db = open_db();
  sqlite3_stmt *st = NULL;
  assert_int_equal(sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &st, NULL), SQLITE_OK);
  assert_int_equal(sqlite3_step(st), SQLITE_ROW);
  assert_int_equal(sqlite3_column_int(st, 0), XQC_SCHEMA_VERSION);
  sqlite3_finalize(st);
  assert_int_equal(xqc_pop_event_add(db, &e), 0);
  xqc_pop_rating_t r = {.round = 1, .member = 0, .net = 9, .parent = -1};
  assert_int_equal(xqc_pop_rating_add(db, &r), 0);
  xqc_pop_event_t *rows = NULL;
  int n = 0;
  assert_int_equal(xqc_pop_event_history(db, 5, &rows, &n), 0);
  assert_int_equal(n, 1);
  free(rows);
  xqc_db_close(&db);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_event_round_trip, setup, teardown),
      cmocka_unit_test_setup_teardown(test_event_history_order, setup, teardown),
      cmocka_unit_test_setup_teardown(test_rating_rows, setup, teardown),
      cmocka_unit_test_setup_teardown(test_json_lines, setup, teardown),
      cmocka_unit_test_setup_teardown(test_schema_upgrade, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
