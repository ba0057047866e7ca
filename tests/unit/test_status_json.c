/*
 * test_status_json.c: the JSON of Status and of a match list (common/wire/status_json.c):
 * exact text of a small message, string escaping (quotes, backslashes, control bytes,
 * invalid UTF-8), net ids as 16-digit hex, non-finite doubles as null, and a check by
 * python3's json module when it is installed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_check.h"
#include "wire/status_json.h"

static void test_match_list(void **state) {
  (void)state;
  Xqz__MatchStatus m = XQZ__MATCH_STATUS__INIT;
  m.match_id = 7;
  m.net_a = 0xfedcba9876543210ull;
  m.net_b = 1;
  m.step = 500;
  m.wins = 3;
  m.draws = 1;
  m.losses = 0;
  m.score = 0.875;
  m.elo = 338.0;
  m.elo_lo = 12.5;
  m.elo_hi = INFINITY;
  m.decision = "promoted";
  m.time = 1700000000;
  m.best_elo = NAN;
  Xqz__MatchStatus *v[1] = {&m};
  char *j = xq_matches_json(v, 1);
  assert_non_null(j);
  assert_string_equal(j, "[{\"match_id\":7,\"net_a\":\"fedcba9876543210\",\"net_b\":"
                         "\"0000000000000001\",\"step\":500,\"wins\":3,\"draws\":1,\"losses\":0,"
                         "\"score\":0.875,\"elo\":338,\"elo_lo\":12.5,\"elo_hi\":null,"
                         "\"decision\":\"promoted\",\"time\":1700000000,\"best_elo\":null}]");
  free(j);
  j = xq_matches_json(NULL, 0);
  assert_string_equal(j, "[]");
  free(j);
}

static void test_status_escaping(void **state) {
  (void)state;
  Xqz__Status s = XQZ__STATUS__INIT;
  Xqz__WorkerStatus w = XQZ__WORKER_STATUS__INIT;
  Xqz__Setting lim = XQZ__SETTING__INIT;
  Xqz__LossPoint lp = XQZ__LOSS_POINT__INIT;
  uint64_t reasons[3] = {0, 2, 1};
  s.campaign = "camp";
  s.campaign_id = 0xc0ffe;
  s.software_version = "xqzero 0.2.0";
  s.protocol_version = 1;
  s.best_net_id = 0xabcull;
  s.last_gating = "none yet";
  s.gating_mode = "sprt";
  s.arena_precision = "worker";
  s.positions_per_s = 1234.5;
  lp.step = 40;
  lp.loss = 3.2f;
  s.last_loss = &lp;
  w.worker_id = "w\"1\\";
  w.host = "tab\there\nnew\x01" "bad\xff" "ok\xc3\xa9";
  w.software_version = "";
  w.key = "";
  w.role = XQZ__ROLE__ROLE_WORKER;
  w.games = 3;
  w.by_reason = reasons;
  w.n_by_reason = 3;
  w.avg_plies = 41.0;
  w.alive = true;
  Xqz__WorkerStatus *wl[1] = {&w};
  s.worker_list = wl;
  s.n_worker_list = 1;
  lim.name = "max_peer_errors";
  lim.value = 20;
  Xqz__Setting *ll[1] = {&lim};
  s.limits = ll;
  s.n_limits = 1;
  char *j = xq_status_json(&s);
  assert_non_null(j);
  assert_non_null(strstr(j, "\"campaign\":\"camp\",\"campaign_id\":\"00000000000c0ffe\""));
  assert_non_null(strstr(j, "\"best_net_id\":\"0000000000000abc\""));
  assert_non_null(strstr(j, "\"worker_id\":\"w\\\"1\\\\\""));
  assert_non_null(strstr(j, "\"host\":\"tab\\there\\nnew\\u0001bad\\ufffdok\xc3\xa9\""));
  assert_non_null(strstr(j, "\"role\":\"worker\""));
  assert_non_null(strstr(j, "\"by_reason\":{\"none\":0,\"checkmate\":2,\"stalemate\":1}"));
  assert_non_null(strstr(j, "\"open_match\":null"));
  assert_non_null(strstr(j, "\"last_loss\":{\"step\":40,\"time\":0,\"loss\":3.2,\"policy\":0,"));
  assert_non_null(strstr(j, "\"limits\":{\"max_peer_errors\":20}"));
  assert_non_null(strstr(j, "\"positions_per_s\":1234.5"));
  assert_non_null(strstr(j, "\"gating_mode\":\"sprt\",\"arena_precision\":\"worker\""));
  assert_true(th_python_json(j, "assert d[\"worker_list\"][0][\"host\"].startswith(\"tab\\there\")"
                               " and d[\"worker_list\"][0][\"games\"] == 3"));
  free(j);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_match_list),
                                     cmocka_unit_test(test_status_escaping)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
