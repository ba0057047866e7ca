#!/usr/bin/env python3
"""ratings_ref.py: reference values for test_ratings.c, computed independently of
common/search/ratings.c: the same Davidson-Bradley-Terry likelihood written out directly,
maximized by Newton's method on finite-difference derivatives of the likelihood alone (no
analytic gradient or Hessian), the interval from the finite-difference Hessian. Pure
python3; run it to print the C table the test holds."""
import math

ELO = 400 / math.log(10)


def loglik(x, n, anchor, res, draws, prior_var):
    r, k = [], 0
    for i in range(n):
        if i == anchor:
            r.append(0.0)
        else:
            r.append(x[k]); k += 1
    theta = x[k] if draws else None
    ll = 0.0
    for a, b, w, d, l in res:
        pw = math.exp(r[a]); pl = math.exp(r[b])
        pd = math.exp(theta + (r[a] + r[b]) / 2) if draws else 0.0
        z = pw + pd + pl
        ll += w * math.log(pw / z) + l * math.log(pl / z) + (d * math.log(pd / z) if draws else 0)
    if prior_var:
        ll -= sum(v * v for v in x[:n - 1]) / (2 * prior_var)
        if draws:
            ll -= x[-1] ** 2 / (2 * 25.0)
    return ll


def hess_grad(f, x, e=1e-4):
    m = len(x)
    g = [(f(x[:i] + [x[i] + e] + x[i + 1:]) - f(x[:i] + [x[i] - e] + x[i + 1:])) / (2 * e)
         for i in range(m)]
    h = [[0.0] * m for _ in range(m)]
    for i in range(m):
        for j in range(m):
            def at(di, dj):
                y = list(x); y[i] += di; y[j] += dj
                return f(y)
            h[i][j] = (at(e, e) - at(e, -e) - at(-e, e) + at(-e, -e)) / (4 * e * e)
    return g, h


def inverse(a):
    m = len(a)
    aug = [list(a[i]) + [1.0 if i == j else 0.0 for j in range(m)] for i in range(m)]
    for c in range(m):
        p = max(range(c, m), key=lambda i: abs(aug[i][c]))
        aug[c], aug[p] = aug[p], aug[c]
        for i in range(m):
            if i != c:
                t = aug[i][c] / aug[c][c]
                aug[i] = [u - t * v for u, v in zip(aug[i], aug[c])]
    return [[aug[i][m + j] / aug[i][i] for j in range(m)] for i in range(m)]


def fit(n, anchor, res, prior_elo):
    draws = any(d for _, _, _, d, _ in res)
    prior_var = (prior_elo / ELO) ** 2 if prior_elo else 0
    f = lambda x: loglik(x, n, anchor, res, draws, prior_var)
    x = [0.0] * (n - 1 + (1 if draws else 0))
    for _ in range(100):
        g, h = hess_grad(f, x)
        inv = inverse([[-v for v in row] for row in h])
        step = [sum(inv[i][j] * g[j] for j in range(len(x))) for i in range(len(x))]
        x = [u + v for u, v in zip(x, step)]
        if max(abs(v) for v in step) < 1e-10:
            break
    g, h = hess_grad(f, x)
    cov = inverse([[-v for v in row] for row in h])
    elo, half, k = [], [], 0
    for i in range(n):
        if i == anchor:
            elo.append(0.0); half.append(0.0)
        else:
            elo.append(x[k] * ELO); half.append(1.959963984540054 * math.sqrt(cov[k][k]) * ELO); k += 1
    return elo, half, (math.exp(x[-1]) if draws else 0.0)


CASES = [
    ("two players", 2, 0, [(1, 0, 30, 20, 10)], 0),
    ("round robin of four", 4, 0,
     [(0, 1, 10, 6, 4), (0, 2, 7, 8, 5), (0, 3, 12, 5, 3), (1, 2, 6, 7, 7), (1, 3, 9, 6, 5),
      (2, 3, 8, 8, 4)], 0),
    ("no draws, anchor 2", 3, 2, [(0, 1, 14, 0, 6), (0, 2, 9, 0, 11), (1, 2, 5, 0, 15)], 0),
    ("undefeated, with a prior", 3, 0, [(1, 0, 10, 2, 0), (1, 2, 8, 4, 0), (0, 2, 6, 3, 5)], 200),
]

if __name__ == "__main__":
    for name, n, anchor, res, prior in CASES:
        elo, half, nu = fit(n, anchor, res, prior)
        print(f"/* {name} */")
        print("  {%d, %d, %g, %d, {%s}," % (n, anchor, prior, len(res),
              ", ".join("{%d, %d, %d, %d, %d}" % r for r in res)))
        print("   {%s}," % ", ".join("%.9f" % v for v in elo))
        print("   {%s}, %.9f}," % (", ".join("%.9f" % v for v in half), nu))
