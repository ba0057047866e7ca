/*
 * test_coordinator_pop_status.c: Status.population (coordinator/status.c) from a
 * coordinator state built by hand: a members table (settings, ratings, lineage, a held
 * slot) and events in campaign.db come out 1-based, with the settings by name, in the
 * Status and in its JSON (common/wire/status_json.c); population 0: no population.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coord.h"
#include "population/events.h"
#include "status.h"
#include "wire/status_json.h"

static char g_dir[] = "/tmp/xqz-popst-XXXXXX";

static int setup(void **state) {
  strcpy(g_dir, "/tmp/xqz-popst-XXXXXX");
  if (!mkdtemp(g_dir)) return -1;
  xqc_t *c = calloc(1, sizeof *c);
  if (!c) return -1;
  snprintf(c->dir, sizeof c->dir, "%s", g_dir);
  xqc_config_defaults(&c->cfg);
  char path[128];
  snprintf(path, sizeof path, "%s/campaign.db", g_dir);
  xq_errbuf_t eb = {{0}};
  if (xqc_db_open(&c->db, path, &eb) != 0 || xqc_workers_init(&c->stats.workers) != 0) {
    free(c);
    return -1;
  }
  c->stats.start_ms = xqc_now_ms();
  *state = c;
  return 0;
}

static int teardown(void **state) {
  xqc_t *c = *state;
  xqc_db_close(&c->db);
  xqc_workers_close(&c->stats.workers);
  free(c);
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf %s", g_dir);
  return system(cmd) == 0 ? 0 : -1;
}

/* Three members: slot 0 the control, slot 2 a copy of slot 1 held by a live trainer. */
static void fill(xqc_t *c) {
  c->cfg.population = 3;
  c->cfg.pbt_share = 0.1;
  c->cfg.pbt_interval_steps = 2000;
  xqc_members_init(&c->members, 3, true, 7, "small", 256);
  c->members.round = 2;
  xqc_member_t *m = &c->members.slot[2];
  m->held = true;
  snprintf(m->host, sizeof m->host, "tcp://10.0.0.3");
  m->last_seen_ms = xqc_now_ms();
  m->settings[XQC_MS_LR_SCALE] = 1.25;
  m->settings[XQC_MS_L2] = 2e-4;
  m->generation = 1;
  m->parent = 1;
  m->last_step = 4100;
  m->last_net = 0xabcdef;
  m->rated = true;
  m->elo = 35.004;
  m->elo_lo = -10;
  m->elo_hi = INFINITY;
  c->members.slot[1].held = true; /* held, but silent past the timeout: not alive */
  c->members.slot[1].last_seen_ms = 1;
  xqc_pop_event_t e = {.round = 2, .member = 2, .donor = 1, .generation = 1, .donor_net = 0x99,
                       .before = {1, 1e-4, 1, 256}, .after = {1.25, 2e-4, 1, 256},
                       .member_elo = -60, .donor_elo = 30, .time = 1700000000};
  assert_int_equal(xqc_pop_event_add(c->db, &e), 0);
}

static void test_population(void **state) {
  xqc_t *c = *state;
  fill(c);
  Xqz__Status *s = NULL;
  assert_int_equal(xqc_status_build(c, &s), 0);
  const Xqz__Population *p = s->population;
  assert_non_null(p);
  assert_int_equal(p->size, 3);
  assert_true(p->share == 0.1);
  assert_int_equal(p->rounds, 2);
  assert_int_equal(p->interval_steps, 2000);
  assert_int_equal(p->n_members, 3);
  assert_true(p->members[0]->control);
  assert_int_equal(p->members[0]->parent, 0);
  assert_false(p->members[0]->rated);
  assert_int_equal(p->members[0]->settings->batch, 256);
  assert_false(p->members[1]->alive);
  const Xqz__MemberStatus *m = p->members[2];
  assert_int_equal(m->slot, 3);
  assert_string_equal(m->host, "tcp://10.0.0.3");
  assert_true(m->alive);
  assert_false(m->control);
  assert_int_equal(m->step, 4100);
  assert_true(m->settings->lr_scale == 1.25);
  assert_true(m->settings->l2 == 2e-4);
  assert_true(m->rated);
  assert_true(m->elo == 35.0);
  assert_true(m->elo_lo == -10);
  assert_true(isinf(m->elo_hi));
  assert_int_equal(m->generation, 1);
  assert_int_equal(m->parent, 2);
  assert_int_equal(m->net_id, 0xabcdef);
  assert_int_equal(p->n_events, 1);
  assert_int_equal(p->events[0]->member, 3);
  assert_int_equal(p->events[0]->donor, 2);
  assert_true(p->events[0]->after->lr_scale == 1.25);
  assert_int_equal(p->events[0]->donor_net, 0x99);

  char *j = xq_status_json(s);
  assert_non_null(j);
  assert_non_null(strstr(j, "\"population\":{\"size\":3,\"share\":0.1,\"rounds\":2,"));
  assert_non_null(strstr(j, "{\"slot\":3,\"host\":\"tcp://10.0.0.3\",\"alive\":true,"
                            "\"control\":false,\"step\":4100,\"settings\":{\"lr_scale\":1.25,"
                            "\"l2\":0.0002,\"value_weight\":1,\"batch\":256},\"rated\":true,"
                            "\"elo\":35,\"elo_lo\":-10,\"elo_hi\":null,\"generation\":1,"
                            "\"parent\":2,\"net_id\":\"0000000000abcdef\"}"));
  assert_non_null(strstr(j, "\"events\":[{\"round\":2,\"member\":3,\"donor\":2,"));
  free(j);
  j = xq_population_json(s->population);
  assert_non_null(j);
  assert_int_equal(strncmp(j, "{\"size\":3,", 10), 0);
  free(j);
  xqc_status_free(&s);
}

static void test_no_population(void **state) {
  xqc_t *c = *state;
  Xqz__Status *s = NULL;
  assert_int_equal(xqc_status_build(c, &s), 0);
  assert_null(s->population);
  char *j = xq_status_json(s);
  assert_non_null(strstr(j, "\"population\":null"));
  free(j);
  j = xq_population_json(NULL);
  assert_string_equal(j, "null");
  free(j);
  xqc_status_free(&s);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_population, setup, teardown),
      cmocka_unit_test_setup_teardown(test_no_population, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
