"""Discrete Laplace and discrete exponential families, including the counterexample that
rules out the continuous Laplace form for the discrete Laplace."""

import math

import numpy as np
import pytest
from axioms_testlib import assert_consistent, frequency
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from axioms import build as B
from axioms.discrete_exponential import DiscreteExponentialTail, upper_tail
from axioms.discrete_laplace import DiscreteLaplaceTail, two_sided_tail
from lang import ast as A
from lang.evaluate import evaluate

DLAP = DiscreteLaplaceTail()
DEXP = DiscreteExponentialTail()
SCALES = [0.05, 0.2, 0.5, 0.7213, 1.0, 3.0, 20.0]
FS = [1e-6, 1e-3, 0.05, 0.1356, 0.3, 0.5, 0.99, 1.0]


def explicit_two_sided(s, t, terms=4000):
    """Pr[|v - m| > t] by summing the pmf of dlap(0, s) explicitly; returns (lower, upper):
    the partial sum and the partial sum plus a geometric bound on the remaining terms."""
    a = math.exp(-1 / s)
    norm = (1 - a) / (1 + a)
    n = math.floor(t) + 1 if t >= 0 else 0
    total = 0.0
    for j in range(n, n + terms):
        total += (2 if j > 0 else 1) * a**j * norm
    if t < 0:  # j = 0 counted once above; negative t: everything is bad
        return 1.0, 1.0
    rest = 2 * a ** (n + terms) * norm / (1 - a)
    return total, total + rest


@pytest.mark.parametrize("s", SCALES)
@pytest.mark.parametrize("f", FS)
def test_dlap_bound(s, f):
    exact, cost = DLAP.exact_tail((0, s), f), DLAP.cost_value((0, s), f)
    assert exact <= cost + 1e-12
    a = math.exp(-1 / s)
    assert exact >= a * f / (1 + a) - 1e-12  # not vacuous: within the factor a/(1+a) of f


@pytest.mark.parametrize("s", SCALES)
@pytest.mark.parametrize("t", [0.0, 0.4, 0.999, 1.0, 2.5, 7.0])
def test_dlap_closed_form_matches_scipy_and_explicit_sum(s, t):
    closed = two_sided_tail(s, t)
    via_scipy = 2 * stats.dlaplace.sf(math.floor(t), 1 / s)
    assert closed == pytest.approx(via_scipy, rel=1e-9, abs=1e-15)  # scipy's sf loses ~1e-17
    lo, hi = explicit_two_sided(s, t)
    assert lo - 1e-12 <= closed <= hi + 1e-12


@settings(max_examples=150, deadline=None)
@given(m=st.integers(-1000, 1000), s=st.floats(0.05, 20), f=st.floats(1e-6, 1.0))
def test_dlap_hypothesis(m, s, f):
    assert DLAP.side_holds((m, s), f)
    assert DLAP.exact_tail((m, s), f) <= DLAP.cost_value((m, s), f) + 1e-12


def naive_bad(v, m, s, f):
    """The continuous Laplace form, wrongly applied to dlap: abs(v - m) > s * log(1/f)."""
    return B.gt(B.abs_(B.sub(v, m)), B.mul(s, B.log(B.div(1, f))))


def test_naive_form_is_false_for_dlap():
    s, f = 0.5, 0.1356
    naive = naive_bad(A.Var("v"), B.n(0), B.n("0.5"), B.n("0.1356"))
    # t = 0.5*log(1/0.1356) = 0.999 < 1: the naive bad event is v != 0
    assert not evaluate(naive, {"v": 0}) and evaluate(naive, {"v": 1}) and evaluate(naive, {"v": -1})
    naive_tail = two_sided_tail(s, s * math.log(1 / f))
    assert naive_tail == pytest.approx(0.2384, abs=1e-3)
    assert naive_tail > f + 0.1  # the naive axiom Pr <= f is false
    assert DLAP.exact_tail((0, s), f) <= f  # the log(2/f) form holds
    # … and sampling confirms it, through the AST of both forms
    rng = np.random.default_rng(2024)
    n = 200_000
    a = math.exp(-1 / s)
    v = (rng.geometric(1 - a, n) - rng.geometric(1 - a, n)).astype(float)
    freq_naive = frequency(naive, {"v": v})
    assert_consistent(freq_naive, naive_tail, n, "naive dlap")
    assert freq_naive > f + 0.05
    good = DLAP.numeric_instance((0, "0.5"), "0.1356").bad
    freq_good = frequency(good, {"v": v})
    assert_consistent(freq_good, DLAP.exact_tail((0, s), f), n, "dlap")
    assert freq_good < f


def test_naive_form_fails_over_a_range():
    """For every small scale there is an f where the naive tail exceeds f."""
    for s in (0.3, 0.5, 0.8, 1.5):
        worst = max(two_sided_tail(s, s * math.log(1 / f)) / f for f in np.linspace(0.01, 0.99, 500))
        assert worst > 1.05


@pytest.mark.parametrize("m,s,f", [(0, 1.0, 0.2), (4, 0.3, 0.05), (-3, 5.0, 0.5)])
def test_dlap_monte_carlo(m, s, f):
    rng = np.random.default_rng(31)
    n = 200_000
    a = math.exp(-1 / s)
    v = m + (rng.geometric(1 - a, n) - rng.geometric(1 - a, n)).astype(float)
    bad = DLAP.numeric_instance((m, s), f).bad
    assert_consistent(frequency(bad, {"v": v}), DLAP.exact_tail((m, s), f), n, "dlap")


@pytest.mark.parametrize("s", SCALES)
@pytest.mark.parametrize("f", FS)
def test_dexp_bound(s, f):
    exact, cost = DEXP.exact_tail((2, s), f), DEXP.cost_value((2, s), f)
    assert exact <= cost + 1e-12
    assert exact >= math.exp(-1 / s) * f - 1e-12  # within the factor a of f


@pytest.mark.parametrize("s", SCALES)
@pytest.mark.parametrize("t", [0.0, 0.5, 1.0, 3.7])
def test_dexp_closed_form_matches_scipy(s, t):
    assert upper_tail(s, t) == pytest.approx(stats.planck.sf(math.floor(t), 1 / s), rel=1e-9, abs=1e-15)
    a = math.exp(-1 / s)
    explicit = sum(a**j * (1 - a) for j in range(math.floor(t) + 1, math.floor(t) + 3000))
    assert explicit - 1e-12 <= upper_tail(s, t) <= explicit + a ** (math.floor(t) + 3000) + 1e-12


def test_dexp_bound_attained_just_below_an_integer():
    s = 1.0
    f = math.exp(-(3 - 1e-9))  # t = s*log(1/f) just below 3: tail a^3 ~= f
    assert DEXP.exact_tail((0, s), f) == pytest.approx(f, rel=1e-6)


@settings(max_examples=150, deadline=None)
@given(k=st.integers(-1000, 1000), s=st.floats(0.05, 20), f=st.floats(1e-6, 1.0))
def test_dexp_hypothesis(k, s, f):
    assert DEXP.exact_tail((k, s), f) <= DEXP.cost_value((k, s), f) + 1e-12


@pytest.mark.parametrize("k,s,f", [(0, 1.0, 0.2), (7, 0.4, 0.03), (-2, 6.0, 0.6)])
def test_dexp_monte_carlo(k, s, f):
    rng = np.random.default_rng(77)
    n = 200_000
    a = math.exp(-1 / s)
    v = k + (rng.geometric(1 - a, n) - 1).astype(float)
    bad = DEXP.numeric_instance((k, s), f).bad
    assert_consistent(frequency(bad, {"v": v}), DEXP.exact_tail((k, s), f), n, "dexp")
