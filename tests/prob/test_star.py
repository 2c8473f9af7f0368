"""The pivot integral (tamp/probability/star.py) against mpmath quadrature written here from the
definition, and against the engine's own adaptive splitting on random cells: every interval
must contain the value it claims, and the star form is recognised only where it applies."""

from __future__ import annotations

import random
from fractions import Fraction

import mpmath
import pytest

from tamp.probability import probability
from tamp.probability.dists import Laplace
from tamp.probability.mass import SplitNode
from tamp.probability.star import pivot_of, star_mass

F = Fraction


def _cdf(x, mean, scale):
    z = (x - mean) / scale
    return mpmath.e**z / 2 if z < 0 else 1 - mpmath.e ** (-z) / 2


def _pdf(x, mean, scale):
    return mpmath.e ** (-abs(x - mean) / scale) / (2 * scale)


def _quad(dists, trunc, cons, pivot):
    """∫ f_p(t) Π_j P(x_j in its range given t) dt by mpmath (50 digits), from the definition."""
    mpmath.mp.dps = 50
    others = sorted({v for coef, _ in cons for v in coef} - {pivot})

    def integrand(t):
        val = _pdf(t, dists[pivot].mean, dists[pivot].scale)
        for j in others:
            lo, hi = trunc[j]
            lo = -mpmath.inf if lo is None else mpmath.mpf(lo.numerator) / lo.denominator
            hi = mpmath.inf if hi is None else mpmath.mpf(hi.numerator) / hi.denominator
            for coef, rhs in cons:
                if j not in coef:
                    continue
                b = (mpmath.mpf(rhs.numerator) / rhs.denominator - coef.get(pivot, 0) * t) / coef[j]
                if coef[j] > 0:
                    hi = min(hi, b)
                else:
                    lo = max(lo, b)
            if hi <= lo:
                return mpmath.mpf(0)
            d = dists[j]
            m, s = (
                mpmath.mpf(d.mean.numerator) / d.mean.denominator,
                mpmath.mpf(d.scale.numerator) / d.scale.denominator,
            )
            up = 1 if hi == mpmath.inf else _cdf(hi, m, s)
            down = 0 if lo == -mpmath.inf else _cdf(lo, m, s)
            val *= up - down
        return val

    tl, th = trunc[pivot]
    lo = -mpmath.inf if tl is None else mpmath.mpf(tl.numerator) / tl.denominator
    hi = mpmath.inf if th is None else mpmath.mpf(th.numerator) / th.denominator
    # the integrand's kinks are at small rationals: split at every multiple of 1/12 near 0
    grid = [F(k, 12) for k in range(-6 * 12, 6 * 12 + 1)] + [F(-40), F(-20), F(-10), F(10), F(20), F(40)]
    inner = [mpmath.mpf(p.numerator) / p.denominator for p in sorted(grid)]
    pts = [lo] + [p for p in inner if lo < p < hi] + [hi]
    return mpmath.quad(integrand, pts, maxdegree=7)


def test_symmetric_pair_is_one_half():
    d = [Laplace(F(0), F(1)), Laplace(F(0), F(1))]
    iv = star_mass(d, [(None, None), (None, None)], [({0: F(-1), 1: F(1)}, F(0))])  # x1 <= x0
    assert iv is not None and iv.lo <= F(1, 2) <= iv.hi and iv.width < F(1, 10**30)


def test_the_svt_pattern_matches_quadrature():
    # svtLyu4 at q = [0, 0, 0, 1], T = 0, eps = 1: a_0..a_2 < t <= a_3
    d = [Laplace(F(0), F(4))] + [Laplace(F(q), F(4, 3)) for q in (0, 0, 0, 1)]
    cons = [({0: F(-1), j: F(1)}, F(0)) for j in (1, 2, 3)] + [({0: F(1), 4: F(-1)}, F(0))]
    trunc = [(None, None)] * 5
    iv = star_mass(d, trunc, cons)
    ref = _quad(d, trunc, cons, 0)
    assert iv is not None and iv.lo <= F(str(mpmath.nstr(ref, 40))) + F(1, 10**12)
    assert F(str(mpmath.nstr(ref, 40))) - F(1, 10**12) <= iv.hi and iv.width < F(1, 10**20)
    assert abs(float(ref) - 0.056369) < 1e-5  # the Monte Carlo estimate of the suite is 0.056


@pytest.mark.parametrize("seed", range(8))
def test_random_star_cells_against_quadrature_and_splitting(seed):
    rng = random.Random(seed)
    k = rng.randint(1, 4)
    d = [Laplace(F(rng.randint(-2, 2)), F(rng.randint(1, 4), rng.randint(1, 2))) for _ in range(k + 1)]
    trunc = [(None, None)] * (k + 1)
    if rng.random() < 0.5:
        trunc[0] = (F(rng.randint(-3, 0)), None)
    if k >= 2 and rng.random() < 0.5:
        trunc[2] = (None, F(rng.randint(0, 3)))
    cons = []
    for j in range(1, k + 1):
        for _ in range(rng.randint(1, 2)):
            a = F(rng.choice([-2, -1, 1, 2]))
            cons.append(({0: F(rng.choice([-1, 1, 2])), j: a}, F(rng.randint(-2, 2))))
    iv = star_mass(d, trunc, cons)
    assert iv is not None
    ref = F(str(mpmath.nstr(_quad(d, trunc, cons, 0), 30)))
    assert iv.lo - F(1, 10**12) <= ref <= iv.hi + F(1, 10**12), (iv, ref)  # the quadrature: ~1e-15
    split = SplitNode(d, trunc, cons)
    for _ in range(30):
        split.refine(64)
    assert split.lo <= iv.hi and iv.lo <= split.hi  # two methods, one value


def test_only_stars_are_recognised():
    assert pivot_of([({0: F(1), 1: F(-1)}, F(0)), ({1: F(1), 2: F(-1)}, F(0))]) == 1
    assert pivot_of([({0: F(1), 1: F(-1)}, F(0)), ({2: F(1), 3: F(-1)}, F(0))]) is None  # no shared variable
    assert pivot_of([({0: F(1), 1: F(1), 2: F(1)}, F(0))]) is None  # three variables in one constraint
    d = [Laplace(F(0), F(1))] * 4
    assert star_mass(d, [(None, None)] * 4, [({0: F(1), 1: F(-1)}, F(0)), ({2: F(1), 3: F(-1)}, F(0))]) is None


def test_the_engine_uses_it_for_a_long_sparse_vector():
    prog = """program p() {
  t ~ lap(0, 2);
  a0 ~ lap(0, 2); a1 ~ lap(1, 2); a2 ~ lap(0, 2); a3 ~ lap(1, 2); a4 ~ lap(0, 2); a5 ~ lap(1, 2);
}"""
    ev = "a0 < t && a1 >= t && a2 < t && a3 >= t && a4 < t && a5 >= t"
    iv = probability(prog, ev, tolerance=1e-9, timeout=20.0)
    assert not isinstance(iv, Fraction) and iv.width < F(
        1, 10**9
    )  # certified and narrow (splitting alone stays far wider)
    d = [Laplace(F(0), F(2))] + [Laplace(F(m), F(2)) for m in (0, 1, 0, 1, 0, 1)]
    # a_j < t is a_j - t <= 0; a_j >= t is t - a_j <= 0
    cons = [({0: F(-1), j + 1: F(1)}, F(0)) if j % 2 == 0 else ({0: F(1), j + 1: F(-1)}, F(0)) for j in range(6)]
    ref = F(str(mpmath.nstr(_quad(d, [(None, None)] * 7, cons, 0), 30)))
    assert iv.lo - F(1, 10**12) <= ref <= iv.hi + F(1, 10**12)
