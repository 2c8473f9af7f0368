"""Gaussian families (sub-Gaussian / Chernoff tails)."""

import numpy as np
import pytest
from axioms_testlib import assert_consistent, frequency
from hypothesis import given, settings
from hypothesis import strategies as st

from axioms.gaussian import GaussianOneSided, GaussianTail
from lang import ast as A
from lang.parser import parse_expr

TWO = GaussianTail()
UP, LOW = GaussianOneSided(True), GaussianOneSided(False)
VARS = [1e-4, 0.25, 1.0, 9.0, 24248365.5]
FS = [1e-6, 1e-3, 0.05, 0.5, 1.0]


@pytest.mark.parametrize("fam", [TWO, UP, LOW], ids=lambda f: f.name)
@pytest.mark.parametrize("var", VARS)
@pytest.mark.parametrize("f", FS)
def test_bound(fam, var, f):
    exact, cost = fam.exact_tail((3.0, var), f), fam.cost_value((3.0, var), f)
    assert exact <= cost + 1e-12
    assert exact >= 0.05 * f  # not vacuous: Chernoff loses only a factor of order sqrt(log 1/f)


@settings(max_examples=150, deadline=None)
@given(m=st.floats(-1e3, 1e3), var=st.floats(1e-3, 400), f=st.floats(1e-6, 1.0), which=st.sampled_from([TWO, UP, LOW]))
def test_hypothesis(m, var, f, which):
    assert which.side_holds((m, var), f)
    assert which.exact_tail((m, var), f) <= which.cost_value((m, var), f) + 1e-12


@pytest.mark.parametrize("fam", [TWO, UP, LOW], ids=lambda f: f.name)
def test_monte_carlo(fam):
    rng = np.random.default_rng(3)
    n = 200_000
    m, var, f = -2.0, 4.0, 0.3
    v = rng.normal(m, var**0.5, n)
    bad = fam.numeric_instance((m, var), f).bad
    assert_consistent(frequency(bad, {"v": v}), fam.exact_tail((m, var), f), n, fam.name)


def test_variance_not_sd():
    """gauss(m, v) takes the variance: at var = 100 the 2-sided threshold for f = 2e^-2 is
    sqrt(2*100*2) = 20 (it would be 2 if the argument were read as a standard deviation)."""
    import math

    f = 2 * math.exp(-2)
    assert TWO.exact_tail((0, 100.0), f) == pytest.approx(2 * 0.022750131948179, rel=1e-6)


def test_sides():
    inst = TWO.instantiate((A.Var("g"),), parse_expr("gauss(0.3 * age + 2, 1)"), A.Var("p"))
    assert len(inst.side) == 3
    assert not TWO.side_holds((0, 0.0), 0.5) and not TWO.side_holds((0, 1.0), 0.0)
