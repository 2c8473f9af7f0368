"""Continuous exponential family: exact, and the AST's bad event has that frequency."""

import numpy as np
import pytest
from axioms_testlib import assert_consistent, frequency
from hypothesis import given, settings
from hypothesis import strategies as st

from axioms.exponential import ExponentialTail
from lang import ast as A
from lang.parser import parse_expr

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
