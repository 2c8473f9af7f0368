"""Continuous exponential family: exact, and the AST's bad event has that frequency."""

import math

import numpy as np
import pytest
from axioms_testlib import assert_consistent, frequency
from hypothesis import given, settings
from hypothesis import strategies as st

from axioms.exponential import ExponentialBelow, ExponentialLower, ExponentialTail
from lang import ast as A
from lang.parser import parse_expr
from lang.printer import print_expr

FAM = ExponentialTail()


@pytest.mark.parametrize("s", [0.05, 0.5, 1.0, 4.0, 20.0])
@pytest.mark.parametrize("f", [1e-6, 1e-3, 0.1, 0.5, 1.0])
@pytest.mark.parametrize("k", [-3.0, 0.0, 12.5])
def test_exact(k, s, f):
    exact, cost = FAM.exact_tail((k, s), f), FAM.cost_value((k, s), f)
    assert exact <= cost + 1e-12
    assert exact == pytest.approx(cost, rel=1e-9)


@settings(max_examples=150, deadline=None)
@given(k=st.floats(-1e3, 1e3), s=st.floats(0.05, 20), f=st.floats(1e-6, 1.0))
def test_hypothesis(k, s, f):
    assert FAM.side_holds((k, s), f)
    assert FAM.exact_tail((k, s), f) <= FAM.cost_value((k, s), f) + 1e-12


@pytest.mark.parametrize("k,s,f", [(0.0, 1.0, 0.2), (5.0, 0.3, 0.01), (-1.0, 8.0, 0.7)])
def test_monte_carlo(k, s, f):
    rng = np.random.default_rng(5)
    n = 200_000
    v = k + rng.exponential(s, n)
    bad = FAM.numeric_instance((k, s), f).bad
    assert_consistent(frequency(bad, {"v": v}), FAM.exact_tail((k, s), f), n, "exp")
    # the lower part of the bad event really is "below k"
    assert frequency(bad, {"v": np.array([k - 1e-3])}) == 1.0


def test_sides():
    inst = FAM.instantiate((A.Var("v"),), parse_expr("exp(k, 1/eps)"), A.Var("f"))
    assert len(inst.side) == 3
    assert FAM.side_holds((0, 1), 1.0) and not FAM.side_holds((0, 1), 1.5)
    assert not FAM.side_holds((0, -1), 0.5)


LOWER = ExponentialLower()


@pytest.mark.parametrize("s", [0.05, 0.5, 1.0, 4.0, 20.0])
@pytest.mark.parametrize("f", [0.0, 1e-6, 1e-3, 0.1, 0.5, 1.0, 3.0])
@pytest.mark.parametrize("k", [-3.0, 0.0, 12.5])
def test_lower_tail_is_below_its_cost(k, s, f):
    exact, cost = LOWER.exact_tail((k, s), f), LOWER.cost_value((k, s), f)
    assert exact <= cost + 1e-12
    assert exact == pytest.approx(1 - math.exp(-f), abs=1e-12)


@settings(max_examples=150, deadline=None)
@given(k=st.floats(-1e3, 1e3), s=st.floats(0.05, 20), f=st.floats(0.0, 50.0))
def test_lower_tail_hypothesis(k, s, f):
    assert LOWER.side_holds((k, s), f)
    assert LOWER.exact_tail((k, s), f) <= LOWER.cost_value((k, s), f) + 1e-12


@pytest.mark.parametrize("k,s,f", [(0.0, 1.0, 0.2), (5.0, 0.3, 0.01), (-1.0, 8.0, 0.7)])
def test_lower_tail_monte_carlo(k, s, f):
    rng = np.random.default_rng(6)
    n = 200_000
    v = k + rng.exponential(s, n)
    bad = LOWER.numeric_instance((k, s), f).bad
    assert_consistent(frequency(bad, {"v": v}), LOWER.exact_tail((k, s), f), n, "exp lower")


def test_lower_tail_sides():
    assert not LOWER.side_holds((0, 1), -0.1)
    assert not LOWER.side_holds((0, -1), 0.5)
    assert LOWER.side_holds((0, 1), 2.0)


def test_upper_tail_excuses_its_boundary():
    # the bad event is non-strict: v - k == s log(1/f) is excused (probability 0 either way)
    bad = FAM.numeric_instance((0, 1), 0.5).bad
    assert frequency(bad, {"v": np.array([math.log(2.0)])}) == 1.0


BELOW = ExponentialBelow()


@pytest.mark.parametrize("s", [0.05, 1.0, 20.0])
@pytest.mark.parametrize("c", [0.0, 1e-6, 0.3, 0.9, 0.999])
@pytest.mark.parametrize("k", [-3.0, 0.0, 12.5])
def test_below_is_exact(k, s, c):
    exact, cost = BELOW.exact_tail((k, s), c), BELOW.cost_value((k, s), c)
    assert exact <= cost + 1e-12
    assert exact == pytest.approx(c, abs=1e-9)


def test_below_sides_refuse_a_certain_failure():
    assert BELOW.side_holds((0, 1), 0.0) and not BELOW.side_holds((0, 1), 1.0)
    assert not BELOW.side_holds((0, 1), -0.1)


def test_below_reads_one_minus_as_its_complement():
    inst = BELOW.instantiate((A.Var("h"),), parse_expr("exp(0, 1 / q)"), parse_expr("1 - exp(-q * g)"))
    assert "log(1 / exp(-q * g))" in print_expr(inst.bad)


@pytest.mark.parametrize("k,s,c", [(0.0, 1.0, 0.2), (2.0, 3.0, 0.7)])
def test_below_monte_carlo(k, s, c):
    rng = np.random.default_rng(8)
    n = 200_000
    v = k + rng.exponential(s, n)
    bad = BELOW.numeric_instance((k, s), c).bad
    assert_consistent(frequency(bad, {"v": v}), BELOW.exact_tail((k, s), c), n, "exp below")
