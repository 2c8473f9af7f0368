"""The sign of a normal draw about its mean (:mod:`axioms.symmetric_sign`): exact tails equal the
cost 1/2 on either side, a Monte-Carlo frequency agrees, and the bad event is the closed half-line
on the side the choice pays for."""

import numpy as np
import pytest
from axioms_testlib import assert_consistent, frequency
from hypothesis import given, settings
from hypothesis import strategies as st

from axioms.symmetric_sign import GaussianSign
from lang import ast as A
from lang.evaluate import evaluate

FAM = GaussianSign()


@pytest.mark.parametrize("choice", ["above", "below"])
@pytest.mark.parametrize("m, var", [(0.0, 1.0), (-3.5, 0.01), (1e3, 24248365.5)])
def test_exact_tail_is_the_cost(choice, m, var):
    exact, cost = FAM.exact_tail((m, var), choice), FAM.cost_value((m, var), choice)
    assert cost == 0.5
    assert abs(exact - cost) < 1e-12  # tight: the axiom holds with equality


@settings(max_examples=100, deadline=None)
@given(m=st.floats(-1e3, 1e3), var=st.floats(1e-3, 400), choice=st.sampled_from(["above", "below"]))
def test_hypothesis(m, var, choice):
    assert FAM.side_holds((m, var), choice)
    assert FAM.exact_tail((m, var), choice) <= FAM.cost_value((m, var), choice) + 1e-12


@pytest.mark.parametrize("choice", ["above", "below"])
def test_monte_carlo(choice):
    rng = np.random.default_rng(5)
    n = 200_000
    m, var = 2.0, 9.0
    v = rng.normal(m, var**0.5, n)
    bad = FAM._numeric((m, var), choice).bad
    assert_consistent(frequency(bad, {"v": v}), FAM.exact_tail((m, var), choice), n, FAM.name)


def test_the_bad_event_is_the_side_paid_for():
    above = FAM._numeric((0.0, 1.0), "above").bad
    below = FAM._numeric((0.0, 1.0), "below").bad
    assert evaluate(above, {"v": -0.1}) and evaluate(above, {"v": 0.0}) and not evaluate(above, {"v": 0.1})
    assert evaluate(below, {"v": 0.1}) and evaluate(below, {"v": 0.0}) and not evaluate(below, {"v": -0.1})


def test_no_axiom_without_a_positive_variance_or_for_another_distribution():
    assert not FAM.side_holds((0.0, 0.0), "above")
    assert not FAM.applies(A.Call("lap", (A.num(0), A.num(1))))
    with pytest.raises(ValueError):
        FAM.instantiate((A.Var("v"),), A.Call("gauss", (A.num(0), A.num(1))), "left")
