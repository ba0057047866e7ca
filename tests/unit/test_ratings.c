/*
 * test_ratings.c: the population's rating fit (search/ratings.h) against values computed
 * independently by tests/unit/ratings_ref.py (the same likelihood maximized on
 * finite-difference derivatives, no analytic gradient), the two-player closed form, and
 * every refusal.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "search/ratings.h"

#define NEAR(got, want, tol)                                                              \
  do {                                                                                    \
    double g_ = (got), w_ = (want);                                                       \
    if (!(fabs(g_ - w_) <= (tol)))                                                        \
      fail_msg("%s: got %.9g want %.9g (tol %g)", #got, g_, w_, (double)(tol));           \
  } while (0)

typedef struct {
  int n, anchor;
  double prior;
  int nres;
  xq_ratings_result_t res[8];
  double elo[4], half[4], nu;
} ref_case_t;

/* python3 tests/unit/ratings_ref.py */
static const ref_case_t REF[] = {
    /* two players */
    {2, 0, 0, 1, {{1, 0, 30, 20, 10}},
     {0.000000000, 190.848501919},
     {0.000000000, 124.325940512}, 1.154700538},
    /* round robin of four */
    {4, 0, 0, 6, {{0, 1, 10, 6, 4}, {0, 2, 7, 8, 5}, {0, 3, 12, 5, 3}, {1, 2, 6, 7, 7}, {1, 3, 9, 6, 5}, {2, 3, 8, 8, 4}},
     {0.000000000, -139.470260343, -98.199721248, -237.669981591},
     {0.000000000, 139.936112131, 138.613507884, 146.256868244}, 1.078942306},
    /* no draws, anchor 2 */
    {3, 2, 0, 3, {{0, 1, 14, 0, 6}, {0, 2, 9, 0, 11}, {1, 2, 5, 0, 15}},
     {-37.377625933, -187.543487083, 0.000000000},
     {129.365244874, 138.451736782, 0.000000000}, 0.000000000},
    /* undefeated, with a prior */
    {3, 0, 200, 3, {{1, 0, 10, 2, 0}, {1, 2, 8, 4, 0}, {0, 2, 6, 3, 5}},
     {0.000000000, 349.953217801, -34.446660137},
     {0.000000000, 209.800440546, 171.686102818}, 0.830368093},
};

static void test_reference(void **state) {
  (void)state;
  for (size_t c = 0; c < sizeof REF / sizeof REF[0]; c++) {
    const ref_case_t *r = &REF[c];
    xq_ratings_t out;
    xq_errbuf_t eb = {0};
    int rc = xq_ratings_fit(r->n, r->anchor, r->res, r->nres, r->prior, &out, &eb);
    if (rc) fail_msg("case %zu: %s", c, eb.msg);
    for (int i = 0; i < r->n; i++) {
      /* The reference's derivatives are finite differences (step 1e-4): a few 1e-4 Elo. */
      NEAR(out.elo[i], r->elo[i], 1e-3);
      NEAR(out.hi[i] - out.elo[i], r->half[i], 5e-3);
      NEAR(out.elo[i] - out.lo[i], r->half[i], 5e-3);
    }
    NEAR(out.draw_nu, r->nu, 1e-6);
  }
}

/* Two players: r = ln(W / L), nu = D / sqrt(W L), whichever side the results are told from
 * and whichever player is the anchor. */
static void test_two_players_closed_form(void **state) {
  (void)state;
  const xq_ratings_result_t a[] = {{0, 1, 25, 10, 5}}, b[] = {{1, 0, 5, 10, 25}};
  double want = 400 * log10(25.0 / 5.0), nu = 10 / sqrt(25.0 * 5.0);
  xq_ratings_t out;
  assert_int_equal(xq_ratings_fit(2, 1, a, 1, 0, &out, NULL), 0);
  NEAR(out.elo[0], want, 1e-6);
  NEAR(out.draw_nu, nu, 1e-9);
  assert_true(out.lo[0] < want && want < out.hi[0]);
  assert_int_equal(xq_ratings_fit(2, 0, b, 1, 0, &out, NULL), 0);
  NEAR(out.elo[1], -want, 1e-6);
  NEAR(out.elo[0], 0, 0);
}

/* Results split over several rows add up: the fit sees counts, not rows. */
static void test_rows_add_up(void **state) {
  (void)state;
  const xq_ratings_result_t one[] = {{0, 1, 12, 6, 2}, {1, 2, 7, 6, 7}, {0, 2, 9, 9, 2}};
  const xq_ratings_result_t split[] = {{0, 1, 5, 2, 1}, {1, 2, 7, 6, 7}, {1, 0, 1, 4, 7},
                               {0, 2, 9, 9, 2}};
  xq_ratings_t a, b;
  assert_int_equal(xq_ratings_fit(3, 0, one, 3, 0, &a, NULL), 0);
  assert_int_equal(xq_ratings_fit(3, 0, split, 4, 0, &b, NULL), 0);
  for (int i = 0; i < 3; i++) NEAR(a.elo[i], b.elo[i], 1e-6);
}

static void test_refusals(void **state) {
  (void)state;
  xq_ratings_t out;
  xq_errbuf_t eb = {0};
  /* Player 1 never won (it drew twice: draws do not make its rating finite). */
  const xq_ratings_result_t undefeated[] = {{0, 1, 10, 2, 0}, {0, 2, 6, 3, 5}};
  assert_int_equal(xq_ratings_fit(3, 1, undefeated, 2, 0, &out, &eb), XQ_ERANGE);
  assert_non_null(strstr(eb.msg, "player 1 won no game") ? eb.msg : NULL);
  /* Every player won and lost, but {0, 1} won every decisive game against {2, 3}. */
  const xq_ratings_result_t groups[] = {{0, 1, 3, 1, 2}, {2, 3, 2, 2, 3}, {0, 2, 4, 3, 0},
                                {1, 3, 2, 5, 0}};
  assert_int_equal(xq_ratings_fit(4, 0, groups, 4, 0, &out, &eb), XQ_ERANGE);
  assert_non_null(strstr(eb.msg, "split into two groups") ? eb.msg : NULL);
  assert_int_equal(xq_ratings_fit(4, 0, groups, 4, 400, &out, &eb), 0);
  assert_true(fmin(out.elo[0], out.elo[1]) > fmax(out.elo[2], out.elo[3]));
  /* The same with a prior: finite, the undefeated player on top. */
  assert_int_equal(xq_ratings_fit(3, 1, undefeated, 2, 300, &out, &eb), 0);
  assert_true(isfinite(out.elo[0]) && out.elo[0] > out.elo[2] && out.elo[2] > 0); /* 1 is the anchor */
  const xq_ratings_result_t all_drawn[] = {{0, 1, 0, 8, 0}};
  assert_int_equal(xq_ratings_fit(2, 0, all_drawn, 1, 0, &out, &eb), XQ_ERANGE);
  const xq_ratings_result_t lonely[] = {{0, 1, 3, 2, 3}};
  assert_int_equal(xq_ratings_fit(3, 0, lonely, 1, 0, &out, &eb), XQ_EINVAL);
  assert_non_null(strstr(eb.msg, "player 2 has no games") ? eb.msg : NULL);
  const xq_ratings_result_t apart[] = {{0, 1, 3, 2, 3}, {2, 3, 4, 1, 3}};
  assert_int_equal(xq_ratings_fit(4, 0, apart, 2, 0, &out, &eb), XQ_EINVAL);
  assert_non_null(strstr(eb.msg, "no chain of games") ? eb.msg : NULL);
  const xq_ratings_result_t self[] = {{1, 1, 3, 2, 3}};
  assert_int_equal(xq_ratings_fit(2, 0, self, 1, 0, &out, &eb), XQ_EINVAL);
  assert_int_equal(xq_ratings_fit(1, 0, self, 0, 0, &out, &eb), XQ_EINVAL);
  assert_int_equal(xq_ratings_fit(2, 2, lonely, 1, 0, &out, &eb), XQ_EINVAL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_reference),
      cmocka_unit_test(test_two_players_closed_form),
      cmocka_unit_test(test_rows_add_up),
      cmocka_unit_test(test_refusals),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
