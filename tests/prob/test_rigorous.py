"""Rigorous exp/erfc/normal enclosures contain high-precision values (mpmath at 300 bits) and are tight."""

import math
import random
from fractions import Fraction

import mpmath
import pytest

from tamp.prob import rigorous as R
from tamp.prob.dists import Expo, Gauss, Laplace, exp_interval

mpmath.mp.prec = 300


def mp(q):
    q = Fraction(q)
    return mpmath.mpf(q.numerator) / q.denominator


# erfc at points covering the series, the switch at 2, the continued fraction and the far tail;
# the reference digits are mpmath at 300 bits (A&S tables agree to their 10 digits)
@pytest.mark.parametrize("t", ["0", "1e-9", "1/3", "1", "1.999999", "2", "2.000001", "2.5", "3", "4",
                               "10", "26.9", "27", "40", "-0.5", "-2.5", "-30"])
def test_erfc_contains_reference(t):
    t = Fraction(t)
    lo, hi = R.erfc_bounds(t)
    v = mpmath.erfc(mp(t))
    assert mp(lo) <= v <= mp(hi)
    if abs(t) < 27:
        assert (mp(hi) - mp(lo)) <= v * mpmath.mpf(2) ** -55


def test_erfc_known_digits():
    lo, hi = R.erfc_bounds(Fraction(1))
    assert lo <= Fraction("0.15729920705028513066") <= hi
    lo, hi = R.erfc_bounds(Fraction(5))
    assert lo <= Fraction("1.5374597944280348502e-12") <= hi
    assert hi - lo < Fraction(1, 10 ** 28)


@pytest.mark.parametrize("y", ["0", "1/7", "-1/3", "50", "-700", "1e-30"])
def test_exp_contains_reference(y):
    y = Fraction(y)
    lo, hi = R.exp_bounds(y)
    v = mpmath.exp(mp(y))
    assert mp(lo) <= v <= mp(hi) and mp(hi) - mp(lo) <= v * mpmath.mpf(2) ** -55


@pytest.mark.parametrize("mean,var", [(0, 1), ("568.4105", "24248365.5428"), ("10.0827", "6.5096"), (3, "1e-6")])
def test_normal_cdf_and_pdf_contain_reference(mean, var):
    rng = random.Random(7)
    n = R.Normal(Fraction(mean), Fraction(var))
    sd = math.sqrt(float(n.var))
    points = [float(n.mean), float(n.mean) + 1e-20, float(n.mean) - 45 * sd]
    points += [rng.gauss(float(n.mean), sd * rng.choice([1e-3, 1, 3, 9])) for _ in range(150)]
    for x in points:
        lo, hi = n.cdf(x)
        v = mpmath.ncdf(mpmath.mpf(x), mu=mp(n.mean), sigma=mpmath.sqrt(mp(n.var)))
        assert lo <= v <= hi, x
        assert hi - lo <= 4e-16 or hi <= 1e-290
        plo, phi = n.pdf(x)
        pv = mpmath.npdf(mpmath.mpf(x), mu=mp(n.mean), sigma=mpmath.sqrt(mp(n.var)))
        assert plo <= pv <= phi, x


def test_float_conversions_round_outward():
    for num, den in [(1, 3), (2, 3), (10 ** 40 + 1, 7 * 10 ** 39), (1, 10 ** 310), (5, 5)]:
        q = Fraction(num, den)
        assert Fraction(R.ratio_down(num, den)) <= q <= Fraction(R.ratio_up(num, den))


def test_distribution_cdfs_use_the_enclosures():
    g, lap, ex = Gauss(Fraction(1), Fraction(4)), Laplace(Fraction(0), Fraction(1, 2)), Expo(Fraction(1), Fraction(2))
    for x in (-3.0, 0.0, 0.7, 1.0, 2.5, 30.0):
        lo, hi = g.cdf_f(x)
        assert lo <= mpmath.ncdf(x, mu=1, sigma=2) <= hi
        lo, hi = lap.cdf_f(x)
        z = mpmath.mpf(x) / mpmath.mpf("0.5")
        ref = mpmath.exp(z) / 2 if x < 0 else 1 - mpmath.exp(-z) / 2
        assert lo <= ref <= hi and hi - lo < 1e-15
        lo, hi = ex.cdf_f(x)
        ref = 0 if x <= 1 else 1 - mpmath.exp(-(mpmath.mpf(x) - 1) / 2)
        assert lo <= ref <= hi
    iv = exp_interval(Fraction(-2))
    assert mp(iv.lo) <= mpmath.exp(-2) <= mp(iv.hi)


def test_normal_cdf_when_the_point_is_within_rounding_of_the_mean():
    n = R.Normal(Fraction(1, 3 * 2 ** 81), Fraction(1))
    lo, hi = n.cdf(2.0 ** -82)
    v = mpmath.ncdf(mpmath.mpf(2) ** -82, mu=mp(n.mean), sigma=1)
    assert lo <= v <= hi and hi - lo < 1e-15
