/*
 * test_coordinator_pop_metrics.c: a population in /metrics (coordinator/web/metrics.c):
 * the rounds, a gauge per member (Elo only once rated, step, generation, alive) labelled
 * with its 1-based slot, and each setting by name; no population, no member families.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "web/metrics.h"

static void test_members(void **state) {
  (void)state;
  Xqz__Status s = XQZ__STATUS__INIT;
  s.campaign = s.software_version = s.gating_mode = s.arena_precision = "";
  Xqz__Population p = XQZ__POPULATION__INIT;
  Xqz__MemberStatus m[2] = {XQZ__MEMBER_STATUS__INIT, XQZ__MEMBER_STATUS__INIT};
  Xqz__MemberSettings set[2] = {XQZ__MEMBER_SETTINGS__INIT, XQZ__MEMBER_SETTINGS__INIT};
  Xqz__MemberStatus *mv[2] = {&m[0], &m[1]};
  for (int i = 0; i < 2; i++) {
    m[i].slot = (uint32_t)i + 1;
    m[i].settings = &set[i];
    set[i].lr_scale = 1;
    set[i].l2 = 1e-4;
    set[i].value_weight = 1;
    set[i].batch = 256;
  }
  m[1].rated = true;
  m[1].elo = -35.5;
  m[1].step = 4000;
  m[1].generation = 2;
  m[1].alive = true;
  set[1].lr_scale = 1.25;
  p.rounds = 3;
  p.size = 2;
  p.members = mv;
  p.n_members = 2;
  s.population = &p;
  char *t = xqc_metrics_text(&s);
  assert_non_null(t);
  const char *want[] = {
      "# TYPE xqz_population_rounds gauge\nxqz_population_rounds 3\n",
      "# TYPE xqz_member_elo gauge\nxqz_member_elo{slot=\"2\"} -35.5\n",
      "xqz_member_step{slot=\"1\"} 0\nxqz_member_step{slot=\"2\"} 4000\n",
      "xqz_member_generation{slot=\"2\"} 2\n",
      "xqz_member_alive{slot=\"1\"} 0\nxqz_member_alive{slot=\"2\"} 1\n",
      "xqz_member_setting{slot=\"2\",setting=\"lr_scale\"} 1.25\n",
      "xqz_member_setting{slot=\"1\",setting=\"l2\"} 0.0001",
      "xqz_member_setting{slot=\"1\",setting=\"batch\"} 256\n",
      "xqz_member_setting{slot=\"2\",setting=\"value_weight\"} 1\n",
  };
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
    if (!strstr(t, want[i])) fail_msg("/metrics lacks: %s\n%s", want[i], t);
  assert_null(strstr(t, "xqz_member_elo{slot=\"1\"}")); /* not rated yet */
  free(t);
  s.population = NULL;
  t = xqc_metrics_text(&s);
  assert_null(strstr(t, "xqz_member_"));
  assert_null(strstr(t, "xqz_population_"));
  free(t);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_members)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
