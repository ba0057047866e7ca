/*
 * test_elo.c: the arena's statistics against reference values computed independently by a
 * short python3 script run once, tests/unit/elo_ref.py (python3 elo_ref.py prints them):
 *  - Elo and the 95% interval straight from the formulas (score, per-observation variance,
 *    s +- 1.959963984540054 * sqrt(var / n), logistic Elo of both ends, half the width);
 *  - the trinomial GSPRT LLR by maximizing the constrained log-likelihood over its single
 *    free parameter (q_W = s - q_D/2, q_L = 1 - s - q_D/2, ternary search on q_D), i.e. the
 *    primal problem, not the dual root-finding that elo.c uses;
 *  - the pentanomial GSPRT LLR by the Lagrange dual solved with mpmath at 50 digits.
 * Empty cells are floored at 1e-3 in both, as Fishtest does.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>

#include "search/elo.h"

#define NEAR(got, want, tol)                                                              \
  do {                                                                                    \
    double g_ = (got), w_ = (want);                                                       \
    if (!(fabs(g_ - w_) <= (tol)))                                                        \
      fail_msg("%s: got %.12g want %.12g (tol %g)", #got, g_, w_, (double)(tol));         \
  } while (0)

static void test_trinomial(void **state) {
  (void)state;
  static const struct {
    int64_t w, d, l;
    double score, elo, ci;
  } cases[] = {
      {60, 20, 20, 0.7, 147.190714117838, 66.0133812203853},
      {20, 20, 60, 0.3, -147.190714117838, 66.0133812203853}, /* mirror: elo negated */
      {513, 1000, 487, 0.5065, 4.51691707625742, 10.770392812487},
      {3, 4, 3, 0.5, 0, 181.744508634101},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    xq_elo_est_t e;
    xq_elo_trinomial(cases[i].w, cases[i].d, cases[i].l, &e);
    assert_int_equal(e.n, cases[i].w + cases[i].d + cases[i].l);
    NEAR(e.score, cases[i].score, 1e-12);
    NEAR(e.elo, cases[i].elo, 1e-9);
    NEAR(e.ci95, cases[i].ci, 1e-9);
  }
}

static void test_trinomial_edges(void **state) {
  (void)state;
  xq_elo_est_t e;
  xq_elo_trinomial(10, 0, 0, &e); /* all wins: infinite Elo, no finite interval */
  NEAR(e.score, 1.0, 0);
  assert_true(isinf(e.elo) && e.elo > 0);
  assert_true(isinf(e.ci95));
  xq_elo_trinomial(0, 0, 10, &e); /* all losses */
  assert_true(isinf(e.elo) && e.elo < 0);
  xq_elo_trinomial(0, 10, 0, &e); /* all draws: no variance, a zero-width interval */
  NEAR(e.score, 0.5, 0);
  NEAR(e.elo, 0, 1e-12);
  NEAR(e.ci95, 0, 0);
  xq_elo_trinomial(0, 0, 0, &e); /* nothing played */
  assert_int_equal(e.n, 0);
  NEAR(e.score, 0.5, 0);
  NEAR(e.elo, 0, 0);
  assert_true(isinf(e.ci95));
  NEAR(xq_elo_from_score(0.75), 190.848501887865, 1e-9);
  NEAR(xq_elo_to_score(190.848501887865), 0.75, 1e-12);
}

static void test_pentanomial(void **state) {
  (void)state;
  static const struct {
    int64_t p[5];
    double score, elo, ci;
  } cases[] = {
      {{5, 10, 20, 15, 10}, 0.5625, 43.6577877700272, 52.3745007017443},
      {{10, 15, 20, 10, 5}, 0.4375, -43.6577877700272, 52.3745007017443}, /* mirror */
      {{0, 3, 10, 5, 2}, 0.575, 52.5115658557275, 66.4825008043489},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    xq_elo_est_t e;
    xq_elo_pentanomial(cases[i].p, &e);
    NEAR(e.score, cases[i].score, 1e-12);
    NEAR(e.elo, cases[i].elo, 1e-9);
    NEAR(e.ci95, cases[i].ci, 1e-9);
  }
  const int64_t none[5] = {0};
  xq_elo_est_t e;
  xq_elo_pentanomial(none, &e);
  assert_true(isinf(e.ci95));
}

static void test_llr(void **state) {
  (void)state;
  NEAR(xq_sprt_llr_trinomial(600, 1000, 500, 0, 5), 2.33345060531, 1e-8);
  NEAR(xq_sprt_llr_trinomial(500, 1000, 600, 0, 5), -3.16039160283, 1e-8);
  NEAR(xq_sprt_llr_trinomial(30, 40, 10, 0, 10), 1.09258910585, 1e-8);
  NEAR(xq_sprt_llr_trinomial(10, 0, 0, -5, 5), 0.287823130868, 1e-8); /* all wins */
  NEAR(xq_sprt_llr_trinomial(0, 0, 0, 0, 5), 0, 0);                  /* no games */
  const int64_t p1[5] = {50, 200, 400, 250, 100}, p2[5] = {100, 250, 400, 200, 50};
  const int64_t p3[5] = {0, 2, 10, 6, 2};
  NEAR(xq_sprt_llr_pentanomial(p1, 0, 5), 3.74955227713, 1e-8);
  NEAR(xq_sprt_llr_pentanomial(p2, 0, 5), -4.52007204844, 1e-8);
  NEAR(xq_sprt_llr_pentanomial(p3, 0, 10), 0.566578312431, 1e-8);
}

static void test_sprt_decision(void **state) {
  (void)state;
  double lo, hi;
  xq_sprt_bounds(0.05, 0.05, &lo, &hi);
  NEAR(lo, -2.94443897916644, 1e-12);
  NEAR(hi, 2.94443897916644, 1e-12);
  assert_int_equal(xq_sprt_decide(3.0, 0.05, 0.05), XQ_SPRT_ACCEPT);
  assert_int_equal(xq_sprt_decide(-3.0, 0.05, 0.05), XQ_SPRT_REJECT);
  assert_int_equal(xq_sprt_decide(2.9, 0.05, 0.05), XQ_SPRT_NONE);
  const int64_t p1[5] = {50, 200, 400, 250, 100};
  assert_int_equal(xq_sprt_decide(xq_sprt_llr_pentanomial(p1, 0, 5), 0.05, 0.05),
                   XQ_SPRT_ACCEPT);
  assert_string_equal(xq_sprt_name(XQ_SPRT_REJECT), "reject");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_trinomial),   cmocka_unit_test(test_trinomial_edges),
      cmocka_unit_test(test_pentanomial), cmocka_unit_test(test_llr),
      cmocka_unit_test(test_sprt_decision),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
