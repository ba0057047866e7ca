/*
 * test_hmap.c: the one hash table (support/hmap.h). A set and a map keep what was put and
 * forget what was deleted through growth; keys added several times are all found; and a
 * long random run of puts, adds and deletes (keys drawn from a small range, so chains
 * collide and wrap) agrees at every step with a plain array searched by brute force.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "support/error.h"
#include "support/hmap.h"
#include "support/rng.h"

static void test_set(void **state) {
  (void)state;
  xq_hmap_t m;
  xq_hmap_init(&m, false);
  assert_false(xq_hmap_has(&m, 7));
  assert_false(xq_hmap_del(&m, 7));
  for (uint64_t k = 1; k <= 5000; k++) assert_int_equal(xq_hmap_put(&m, k * 977, 0), 1);
  assert_int_equal(m.n, 5000);
  assert_true(m.cap >= 10000);
  assert_null(m.vals);
  for (uint64_t k = 1; k <= 5000; k++) {
    assert_true(xq_hmap_has(&m, k * 977));
    assert_int_equal(xq_hmap_put(&m, k * 977, 0), 0); /* already there */
    assert_false(xq_hmap_has(&m, k * 977 + 1));
  }
  for (uint64_t k = 1; k <= 5000; k += 2) assert_true(xq_hmap_del(&m, k * 977));
  assert_int_equal(m.n, 2500);
  for (uint64_t k = 1; k <= 5000; k++) assert_int_equal(xq_hmap_has(&m, k * 977), k % 2 == 0);
  xq_hmap_clear(&m);
  assert_int_equal(m.n, 0);
  assert_false(xq_hmap_has(&m, 2 * 977));
  xq_hmap_free(&m);
  xq_hmap_free(NULL);
  assert_int_equal(m.cap, 0);
  assert_int_equal(xq_hmap_put(&m, 3, 0), 1); /* usable again after free */
  xq_hmap_free(&m);
}

static void test_map_values_and_duplicates(void **state) {
  (void)state;
  xq_hmap_t m;
  xq_hmap_init(&m, true);
  assert_int_equal(xq_hmap_put(&m, 42, 100), 1);
  assert_int_equal(xq_hmap_put(&m, 42, 200), 0);
  size_t s = xq_hmap_find(&m, 42, XQ_HMAP_NONE);
  assert_true(s != XQ_HMAP_NONE);
  assert_int_equal(xq_hmap_value(&m, s), 100); /* put keeps the first value */
  /* Three entries under one key (three strings whose hashes collide). */
  assert_int_equal(xq_hmap_add(&m, 42, 201), 0);
  assert_int_equal(xq_hmap_add(&m, 42, 202), 0);
  for (uint64_t k = 1; k <= 100; k++) assert_int_equal(xq_hmap_put(&m, 1000 + k, k), 1);
  int seen = 0;
  for (s = xq_hmap_find(&m, 42, XQ_HMAP_NONE); s != XQ_HMAP_NONE; s = xq_hmap_find(&m, 42, s)) {
    uint64_t v = xq_hmap_value(&m, s);
    assert_true(v == 100 || v == 201 || v == 202);
    seen |= 1 << (v % 100 + (v == 100 ? 3 : 0));
  }
  assert_int_equal(seen, (1 << 3) | (1 << 1) | (1 << 2));
  /* Delete the entry holding 201 by its slot; the other two stay. */
  for (s = xq_hmap_find(&m, 42, XQ_HMAP_NONE); xq_hmap_value(&m, s) != 201;
       s = xq_hmap_find(&m, 42, s)) {
  }
  xq_hmap_del_at(&m, s);
  int left = 0;
  for (s = xq_hmap_find(&m, 42, XQ_HMAP_NONE); s != XQ_HMAP_NONE; s = xq_hmap_find(&m, 42, s)) {
    assert_int_not_equal(xq_hmap_value(&m, s), 201);
    left++;
  }
  assert_int_equal(left, 2);
  for (uint64_t k = 1; k <= 100; k++)
    assert_int_equal(xq_hmap_value(&m, xq_hmap_find(&m, 1000 + k, XQ_HMAP_NONE)), k);
  xq_hmap_free(&m);
}

static void test_str_key(void **state) {
  (void)state;
  assert_int_equal(xq_hmap_str_key(""), 1469598103934665603ull);
  assert_int_not_equal(xq_hmap_str_key("w1"), xq_hmap_str_key("w2"));
  assert_int_equal(xq_hmap_str_key("w1"), xq_hmap_str_key("w1"));
}

/* Random operations against a brute-force reference of (key, value) entries. */
static void test_random_against_reference(void **state) {
  (void)state;
  enum { MAXN = 3000, STEPS = 60000 };
  uint64_t rk[MAXN], rv[MAXN];
  int rn = 0;
  xq_hmap_t m;
  xq_hmap_init(&m, true);
  uint64_t st = 12345;
  for (int step = 0; step < STEPS; step++) {
    uint64_t r = xq_splitmix64(&st);
    uint64_t key = 1 + (r >> 8) % 700; /* a small range: chains collide and wrap */
    int op = (int)(r & 7);
    if (op <= 2 && rn < MAXN) { /* put */
      int there = 0;
      for (int i = 0; i < rn; i++) there |= rk[i] == key;
      assert_int_equal(xq_hmap_put(&m, key, (uint64_t)step), there ? 0 : 1);
      if (!there) rk[rn] = key, rv[rn++] = (uint64_t)step;
    } else if (op == 3 && rn < MAXN) { /* add a duplicate */
      assert_int_equal(xq_hmap_add(&m, key, (uint64_t)step), 0);
      rk[rn] = key, rv[rn++] = (uint64_t)step;
    } else { /* delete every entry of key, by slot */
      size_t s;
      while ((s = xq_hmap_find(&m, key, XQ_HMAP_NONE)) != XQ_HMAP_NONE) {
        uint64_t v = xq_hmap_value(&m, s);
        int at = -1;
        for (int i = 0; i < rn; i++)
          if (rk[i] == key && rv[i] == v) at = i;
        assert_int_not_equal(at, -1);
        rk[at] = rk[rn - 1], rv[at] = rv[rn - 1], rn--;
        xq_hmap_del_at(&m, s);
      }
      for (int i = 0; i < rn; i++) assert_int_not_equal(rk[i], key);
    }
    assert_int_equal(m.n, rn);
    if (step % 997 == 0) { /* every entry of the reference is found, with its value */
      for (int i = 0; i < rn; i++) {
        int found = 0;
        for (size_t s = xq_hmap_find(&m, rk[i], XQ_HMAP_NONE); s != XQ_HMAP_NONE;
             s = xq_hmap_find(&m, rk[i], s))
          found += xq_hmap_value(&m, s) == rv[i];
        assert_int_equal(found, 1);
      }
    }
  }
  xq_hmap_free(&m);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_set),
      cmocka_unit_test(test_map_values_and_duplicates),
      cmocka_unit_test(test_str_key),
      cmocka_unit_test(test_random_against_reference),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
