/*
 * test_population_view.c: a population as text (tools/population_view.c, `xqz status` and
 * `xqz population`): the status line names the best rated member with its interval, or
 * says none is rated, and the round under way; the table has a row per member with its
 * settings, rating, lineage and net, the control marked; the events show the settings
 * that changed, the newest last, at most the number asked for.
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

#include "population_view.h"

/* What fn printed for p, in a malloc'd string. */
static char *printed(void (*fn)(FILE *, const Xqz__Population *), const Xqz__Population *p) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  assert_non_null(f);
  fn(f, p);
  fclose(f);
  /* A copy: returning open_memstream's own buffer made GCC 12 at -O3 take the callers'
   * pointers into it for pointers to this function's local (-Wdangling-pointer). */
  char *copy = strdup(buf);
  free(buf);
  assert_non_null(copy);
  return copy;
}

static void events_10(FILE *f, const Xqz__Population *p) { xqz_population_events(f, p, 10); }
static void events_1(FILE *f, const Xqz__Population *p) { xqz_population_events(f, p, 1); }

typedef struct {
  Xqz__Population p;
  Xqz__MemberStatus m[3];
  Xqz__MemberSettings s[3], before, after;
  Xqz__MemberStatus *mv[3];
  Xqz__PbtEvent e[2];
  Xqz__PbtEvent *ev[2];
} pop_t;

static void make(pop_t *x) {
  memset(x, 0, sizeof *x);
  xqz__population__init(&x->p);
  x->p.size = 3;
  x->p.share = 0.1;
  x->p.rounds = 3;
  for (int i = 0; i < 3; i++) {
    xqz__member_status__init(&x->m[i]);
    xqz__member_settings__init(&x->s[i]);
    x->s[i] = (Xqz__MemberSettings){x->s[i].base, 1.0, 1e-4, 1.0, 256};
    x->m[i].slot = (uint32_t)i + 1;
    x->m[i].host = "";
    x->m[i].settings = &x->s[i];
    x->mv[i] = &x->m[i];
  }
  x->m[0].control = true;
  x->m[1].host = "tcp://10.0.0.2";
  x->m[1].alive = true;
  x->m[1].step = 4000;
  x->m[1].rated = true;
  x->m[1].elo = 35;
  x->m[1].elo_lo = -10;
  x->m[1].elo_hi = 80;
  x->m[1].generation = 2;
  x->m[1].parent = 3;
  x->m[1].net_id = 0xabc;
  x->s[1].lr_scale = 1.25;
  x->m[2].rated = true;
  x->m[2].elo = -20;
  x->m[2].elo_lo = -90;
  x->m[2].elo_hi = INFINITY;
  x->p.members = x->mv;
  x->p.n_members = 3;
  x->before = x->s[0];
  x->after = x->s[0];
  x->after.lr_scale = 1.2;
  x->after.batch = 320;
  for (int i = 0; i < 2; i++) {
    xqz__pbt_event__init(&x->e[i]);
    x->e[i].round = (uint64_t)i + 2;
    x->e[i].member = 2;
    x->e[i].donor = 3;
    x->e[i].generation = (uint32_t)i + 1;
    x->e[i].before = &x->before;
    x->e[i].after = i ? &x->after : &x->before;
    x->e[i].member_elo = -60;
    x->e[i].donor_elo = 30;
    x->ev[i] = &x->e[i];
  }
  x->p.events = x->ev;
  x->p.n_events = 2;
}

static void test_line(void **state) {
  (void)state;
  pop_t x;
  make(&x);
  char *t = printed(xqz_population_line, &x.p);
  assert_string_equal(t, "3 members (1 alive), round 3, share 10%: best member 2 (+35 [-10,"
                         " +80])");
  free(t);
  x.m[1].rated = x.m[2].rated = false;
  x.p.round_games = 12;
  x.p.round_games_max = 48;
  t = printed(xqz_population_line, &x.p);
  assert_string_equal(t, "3 members (1 alive), round 3, share 10%: no member rated yet; round"
                         " games 12 of 48");
  free(t);
}

static void test_table(void **state) {
  (void)state;
  pop_t x;
  make(&x);
  char *t = printed(xqz_population_table, &x.p);
  assert_non_null(strstr(t, "member"));
  assert_non_null(strstr(t, "lr_scale"));
  assert_non_null(strstr(t, "\n  1 (ctl)  -"));
  const char *row2 = strstr(t, "\n  2 ");
  assert_non_null(row2);
  const char *end = strchr(row2 + 1, '\n');
  char line[256];
  snprintf(line, sizeof line, "%.*s", (int)(end - row2 - 1), row2 + 1);
  assert_non_null(strstr(line, "tcp://10.0.0.2"));
  assert_non_null(strstr(line, " yes "));
  assert_non_null(strstr(line, " 4000 "));
  assert_non_null(strstr(line, " 1.25 "));
  assert_non_null(strstr(line, " 0.0001 "));
  assert_non_null(strstr(line, " 256 "));
  assert_non_null(strstr(line, "+35 [-10, +80]"));
  assert_non_null(strstr(line, "0000000000000abc"));
  assert_non_null(strstr(t, "-20 [-90, +inf]"));
  assert_non_null(strstr(t, "unrated"));
  free(t);
}

static void test_events(void **state) {
  (void)state;
  pop_t x;
  make(&x);
  char *t = printed(events_10, &x.p);
  assert_non_null(strstr(t, "(2 of 2)"));
  assert_non_null(strstr(t, "round 2: member 2 <- 3 (generation 1; Elo -60, donor +30):"
                            " settings unchanged\n"));
  assert_non_null(strstr(t, "round 3: member 2 <- 3 (generation 2; Elo -60, donor +30):"
                            " lr_scale 1 -> 1.2, batch 256 -> 320\n"));
  assert_true(strstr(t, "round 2:") < strstr(t, "round 3:"));
  free(t);
  t = printed(events_1, &x.p);
  assert_non_null(strstr(t, "(1 of 2)"));
  assert_null(strstr(t, "round 2:"));
  assert_non_null(strstr(t, "round 3:"));
  free(t);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_line), cmocka_unit_test(test_table),
                                     cmocka_unit_test(test_events)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
