"""tamp.core.interval: arb-based transcendental enclosures contain 300-bit reference values,
are at least as tight as the former hand-written kernel (tests/prob/rigorous_oracle.py), and
the float-range kernel encloses exact results."""

import math
import random
import sys
from fractions import Fraction
from pathlib import Path

import mpmath
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tamp.core.interval import (
    Interval,
    Normal,
    ball,
    exp_interval,
    fadd,
    fdiv,
    float_lower,
    float_upper,
    fmul,
    fsub,
    lower,
    upper,
)

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "prob"))
import rigorous_oracle as R  # noqa: E402  (the former kernel, as an oracle)


@pytest.fixture(autouse=True)
def _precise_mpmath():
    """300-bit references (other test modules change mpmath's global precision)."""
    with mpmath.workprec(300):
        yield


def mp(q):
    q = Fraction(q)
    return mpmath.mpf(q.numerator) / q.denominator


POINTS = [-60.0, -40.0, -8.5, -3.0, -1.0, -1e-9, 0.0, 2.0**-82, 0.3, 1.0, 2.5, 7.0, 12.0, 39.0, 60.0]


@pytest.mark.parametrize("mean,var", [(0, 1), (Fraction(1, 3), Fraction(4)), (-2, Fraction(1, 7)), (5, 100)])
def test_normal_contains_reference_and_is_no_wider_than_the_old_kernel(mean, var):
    n, old = Normal(Fraction(mean), Fraction(var)), R.Normal(Fraction(mean), Fraction(var))
    for x in POINTS:
        lo, hi = n.cdf_pair(x)
        ref = mpmath.ncdf(mpmath.mpf(x), mu=mp(mean), sigma=mpmath.sqrt(mp(var)))
        assert lo <= ref <= hi, x
        olo, ohi = old.cdf(x)
        assert hi - lo <= ohi - olo, (x, (lo, hi), (olo, ohi))
        plo, phi = n.pdf_pair(x)
        pref = mpmath.npdf(mpmath.mpf(x), mu=mp(mean), sigma=mpmath.sqrt(mp(var)))
        assert plo <= pref <= phi, x
        oplo, ophi = old.pdf(x)
        assert phi - plo <= ophi - oplo, x


def test_far_tails_keep_relative_accuracy():
    lo, hi = Normal(Fraction(0), Fraction(1)).cdf_pair(-30.0)
    ref = mpmath.ncdf(-30)
    assert 0 < lo <= ref <= hi and hi - lo <= 1e-15 * ref  # the old kernel: [0, 1e-300]


def test_cdf_range_and_pdf_range_bound_every_point():
    n = Normal(Fraction(2), Fraction(3))
    rng = random.Random(3)
    for _ in range(200):
        a = rng.uniform(-6, 10)
        b = a + rng.choice([0.0, 1e-15, 1e-3, 0.5, 4.0])
        clo, chi = n.cdf_range(a, b)
        plo, phi = n.pdf_range(a, b)
        for x in (a, b, (a + b) / 2):
            assert clo <= mpmath.ncdf(x, mu=2, sigma=mpmath.sqrt(3)) <= chi
            assert plo <= mpmath.npdf(x, mu=2, sigma=mpmath.sqrt(3)) <= phi


@pytest.mark.parametrize("y", ["0", "1/3", "-2", "10", "-50", "123/7"])
def test_exp_interval_contains_reference_and_is_no_wider(y):
    y = Fraction(y)
    iv = exp_interval(y)
    assert mp(iv.lo) <= mpmath.exp(mp(y)) <= mp(iv.hi)
    olo, ohi = R.exp_bounds(y)
    assert iv.width <= ohi - olo


def test_exact_conversions():
    third = ball(Fraction(1, 3))
    assert lower(third) < Fraction(1, 3) < upper(third)
    assert float_lower(third) <= 1 / 3 <= float_upper(third)
    assert lower(ball(Fraction(3, 8))) == upper(ball(Fraction(3, 8))) == Fraction(3, 8)
    assert Interval.of(1, 2).ball().contains(ball(Fraction(3, 2)))


finite = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False) | st.sampled_from([0.0, 1e-300, -1e-300])
ends = finite | st.sampled_from([math.inf, -math.inf])


def _rng(a, b):
    return (min(a, b), max(a, b))


def _inside(v, r):
    lo = -math.inf if r[0] == -math.inf else Fraction(r[0])
    hi = math.inf if r[1] == math.inf else Fraction(r[1])
    return lo <= v <= hi


@given(ends, ends, ends, ends, finite, finite)
def test_float_ranges_enclose_exact_results(a0, a1, b0, b1, u, v):
    a, b = _rng(a0, a1), _rng(b0, b1)
    # points of the ranges (finite ones: an infinite end stands for large finite values)
    x = Fraction(min(max(u, a[0]), a[1])) if math.isfinite(min(max(u, a[0]), a[1])) else None
    y = Fraction(min(max(v, b[0]), b[1])) if math.isfinite(min(max(v, b[0]), b[1])) else None
    if x is None or y is None:
        return
    assert _inside(x + y, fadd(a, b))
    assert _inside(x - y, fsub(a, b))
    assert _inside(x * y, fmul(a, b))
    if y != 0:
        assert _inside(x / y, fdiv(a, b))
