"""Bernoulli choice family: each choice is exact, and its bad AST has the stated frequency."""

import numpy as np
import pytest
from axioms_testlib import assert_consistent, frequency
from hypothesis import given, settings
from hypothesis import strategies as st

import axioms
from axioms.bernoulli import CHOICES, BernoulliChoice
from lang import ast as A
from lang.evaluate import evaluate
from lang.parser import parse_expr

FAM = BernoulliChoice()


@pytest.mark.parametrize("p", [0.0, 1e-9, 0.1, 0.3307, 0.5, 0.75, 1.0])
@pytest.mark.parametrize("choice", CHOICES)
def test_exact_equals_cost(p, choice):
    exact = FAM.exact_tail((p,), choice)
    cost = FAM.cost_value((p,), choice)
    assert exact <= cost + 1e-12
    assert exact == pytest.approx(cost, abs=1e-15)


@settings(max_examples=100, deadline=None)
@given(p=st.floats(0, 1), choice=st.sampled_from(CHOICES))
def test_hypothesis(p, choice):
    assert FAM.exact_tail((p,), choice) <= FAM.cost_value((p,), choice) + 1e-12


@pytest.mark.parametrize("choice", CHOICES)
def test_monte_carlo(choice):
    rng = np.random.default_rng(7)
    n, p = 100_000, 0.3
    v = rng.random(n) < p
    bad = FAM.instantiate((A.Var("v"),), parse_expr("bern(0.3)"), choice).bad
    freq = frequency(bad, {"v": v}) if not isinstance(bad, A.BoolLit) else float(bad.value)
    assert_consistent(freq, FAM.exact_tail((p,), choice), n, choice)


def test_instances_read_as_documented():
    dist = parse_expr("bern(p)")
    t = FAM.instantiate((A.Var("y"),), dist, "true")
    f = FAM.instantiate((A.Var("y"),), dist, "false")
    none = FAM.instantiate((A.Var("y"),), dist, "none")
    env = {"p": 0.25}
    assert evaluate(t.bad, dict(env, y=False)) and not evaluate(t.bad, dict(env, y=True))
    assert evaluate(t.cost, env) == 0.75 and evaluate(f.cost, env) == 0.25
    assert evaluate(f.bad, dict(env, y=True)) and not evaluate(f.bad, dict(env, y=False))
    assert none.bad == A.BoolLit(False) and evaluate(none.cost, env) == 0
    for inst in (t, f):
        assert all(evaluate(s, env) for s in inst.side)
        assert not all(evaluate(s, {"p": 1.5}) for s in inst.side)
    assert none.side == ()  # assuming nothing needs nothing


def test_unknown_choice_and_discovery():
    with pytest.raises(ValueError):
        FAM.instantiate((A.Var("y"),), parse_expr("bern(0.5)"), "maybe")
    fams = axioms.families_for(parse_expr("bern(0.5)"))
    assert [f.name for f in fams] == ["bernoulli", "support"]
    assert fams[0].param_kind == "choice" and list(fams[0].choices(parse_expr("bern(0.5)"))) == list(CHOICES)
