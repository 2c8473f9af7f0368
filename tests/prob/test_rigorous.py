"""Rigorous exp/erfc/normal enclosures contain high-precision values (mpmath at 300 bits) and are tight."""

import math
import random
from fractions import Fraction

import mpmath
import pytest
import rigorous_oracle as R  # the former hand-written kernel, kept as an independent oracle

from tamp.probability.dists import Expo, Gauss, Laplace, exp_interval

mpmath.mp.prec = 300


def mp(q):
    q = Fraction(q)
    return mpmath.mpf(q.numerator) / q.denominator


# erfc at points covering the series, the switch at 2, the continued fraction and the far tail;
# the reference digits are mpmath at 300 bits (A&S tables agree to their 10 digits)
@pytest.mark.parametrize(
    "t",
    [
        "0",
        "1e-9",
        "1/3",
        "1",
        "1.999999",
        "2",
        "2.000001",
        "2.5",
        "3",
        "4",
        "10",
        "26.9",
        "27",
        "40",
        "-0.5",
        "-2.5",
        "-30",
    ],
)
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
    assert hi - lo < Fraction(1, 10**28)


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
    for num, den in [(1, 3), (2, 3), (10**40 + 1, 7 * 10**39), (1, 10**310), (5, 5)]:
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
    n = R.Normal(Fraction(1, 3 * 2**81), Fraction(1))
    lo, hi = n.cdf(2.0**-82)
    v = mpmath.ncdf(mpmath.mpf(2) ** -82, mu=mp(n.mean), sigma=1)
    assert lo <= v <= hi and hi - lo < 1e-15


def test_density_range_bounds_every_point():
    g = Gauss(Fraction(2), Fraction(3))
    rng = random.Random(3)
    for _ in range(200):
        a = rng.uniform(-6, 10)
        b = a + rng.choice([0.0, 1e-15, 1e-3, 0.5, 4.0])
        lo, hi = g.pdf_range(a, b)
        for x in (a, b, (a + b) / 2, 2.0 if a <= 2 <= b else a):
            v = mpmath.npdf(mpmath.mpf(x), mu=2, sigma=mpmath.sqrt(3))
            assert lo <= v <= hi
    assert g.pdf_range(-math.inf, 0.0)[1] >= mpmath.npdf(2, mu=2, sigma=mpmath.sqrt(3))


def test_float_interval_products_enclose_exact_products():
    from tamp.core.interval import fadd, fmul

    rng = random.Random(5)
    vals = [0.0, -0.0, 1.0, -2.5, 1e-300, 3.7e10, -1e-5, math.inf, -math.inf]
    for _ in range(400):
        a = sorted(rng.choice(vals + [rng.uniform(-9, 9)]) for _ in range(2))
        b = sorted(rng.choice(vals + [rng.uniform(-9, 9)]) for _ in range(2))
        p, s = fmul(tuple(a), tuple(b)), fadd(tuple(a), tuple(b))
        for x in a:
            for y in b:
                if math.isfinite(x) and math.isfinite(y):
                    assert _le(p[0], Fraction(x) * Fraction(y)) and _le(Fraction(x) * Fraction(y), p[1])
                    assert _le(s[0], Fraction(x) + Fraction(y)) and _le(Fraction(x) + Fraction(y), s[1])


def _le(a, b):
    """a <= b for floats (possibly infinite) and Fractions."""
    if isinstance(a, float) and math.isinf(a):
        return a < 0
    if isinstance(b, float) and math.isinf(b):
        return b > 0
    return Fraction(a) <= Fraction(b)


def test_float_interval_products_survive_underflow():
    from tamp.core.interval import fmul, fmul_nonneg

    assert fmul((1e-300, 1e-300), (1e-300, 1e-300))[1] > 0
    assert fmul((-1e-300, -1e-300), (1e-300, 1e-300))[0] < 0
    assert fmul_nonneg((0.0, 1e-300), (0.0, 1e-300))[1] > 0
    assert fmul_nonneg((0.0, 0.0), (0.0, math.inf)) == (0.0, 0.0)
    assert fmul((0.0, 0.0), (-math.inf, math.inf)) == (0.0, 0.0)
