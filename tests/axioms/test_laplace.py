"""Laplace tail axioms: exact tail == cost, and the AST's bad event has that frequency."""

import numpy as np
import pytest
from axioms_testlib import assert_consistent, frequency
from hypothesis import given, settings
from hypothesis import strategies as st

import axioms
from axioms.laplace import LaplaceOneSided, LaplaceTail
from lang import ast as A
from lang.evaluate import evaluate
from lang.parser import parse_expr
from lang.walk import free_vars

LAP = LaplaceTail()
UPPER, LOWER = LaplaceOneSided(True), LaplaceOneSided(False)

SCALES = [0.05, 0.3, 1.0, 2.5, 20.0]
FS = [1e-6, 1e-3, 0.05, 0.1356, 0.5, 0.9, 1.0]
MEANS = [-7.0, 0.0, 3.25]


@pytest.mark.parametrize("s", SCALES)
@pytest.mark.parametrize("f", FS)
@pytest.mark.parametrize("m", MEANS)
def test_two_sided_exact(m, s, f):
    exact = LAP.exact_tail((m, s), f)
    cost = LAP.cost_value((m, s), f)
    assert exact <= cost + 1e-12
    assert exact == pytest.approx(cost, rel=1e-9, abs=1e-15)  # the bound is tight


@pytest.mark.parametrize("fam", [UPPER, LOWER])
@pytest.mark.parametrize("s", SCALES)
@pytest.mark.parametrize("f", [1e-6, 0.01, 0.25, 0.5])
def test_one_sided_exact(fam, s, f):
    exact = fam.exact_tail((1.0, s), f)
    assert exact <= fam.cost_value((1.0, s), f) + 1e-12
    assert exact == pytest.approx(f, rel=1e-9)


@settings(max_examples=150, deadline=None)
@given(m=st.floats(-1e3, 1e3), s=st.floats(0.05, 20), f=st.floats(1e-6, 1.0))
def test_two_sided_hypothesis(m, s, f):
    assert LAP.side_holds((m, s), f)
    assert LAP.exact_tail((m, s), f) <= LAP.cost_value((m, s), f) + 1e-12


@pytest.mark.parametrize("m,s,f", [(0.0, 1.0, 0.3), (5.0, 0.2, 0.05), (-2.0, 7.0, 0.8)])
def test_monte_carlo_two_sided(m, s, f):
    rng = np.random.default_rng(1234)
    n = 200_000
    v = rng.laplace(m, s, n)
    bad = LAP.numeric_instance((m, s), f).bad
    assert_consistent(frequency(bad, {"v": v}), LAP.exact_tail((m, s), f), n, "laplace")


@pytest.mark.parametrize("fam", [UPPER, LOWER])
def test_monte_carlo_one_sided(fam):
    rng = np.random.default_rng(99)
    n = 200_000
    v = rng.laplace(2.0, 1.5, n)
    bad = fam.numeric_instance((2.0, 1.5), 0.2).bad
    assert_consistent(frequency(bad, {"v": v}), fam.exact_tail((2.0, 1.5), 0.2), n, fam.name)


def test_instance_shape_and_sides():
    dist = parse_expr("lap(q[i], 1/eps)")
    inst = LAP.instantiate((parse_expr("a[i]"),), dist, A.Var("p"))
    assert inst.family == "laplace" and inst.cost == A.Var("p")
    assert set(free_vars(inst.bad)) == {"a", "q", "i", "eps", "p"}
    env = {"a": [0.0, 3.0], "q": [0, 1], "i": 1, "eps": 1, "p": 0.5}
    # |3 - 1| > 1 * log(2) holds
    assert evaluate(inst.bad, env) is True or bool(evaluate(inst.bad, env))
    assert all(evaluate(s, env) for s in inst.side)
    assert not all(evaluate(s, dict(env, p=0)) for s in inst.side)
    assert not all(evaluate(s, dict(env, eps=-1)) for s in inst.side)


def test_self_referential_sampling_refused():
    with pytest.raises(axioms.base.SelfReferentialSample):
        LAP.instantiate((A.Var("x"),), parse_expr("lap(x, 1)"), 0.5)
    with pytest.raises(axioms.base.SelfReferentialSample):
        LAP.instantiate((parse_expr("a[i]"),), parse_expr("lap(a[0], 1)"), 0.5)
    with pytest.raises(axioms.base.SelfReferentialSample):  # the parameter is read before sampling
        LAP.instantiate((A.Var("x"),), parse_expr("lap(0, 1)"), parse_expr("x / 2"))


def test_discovered():
    names = [f.name for f in axioms.families_for(parse_expr("lap(0, 1)"))]
    assert {"laplace", "laplace_upper", "laplace_lower"} <= set(names)
    assert not any(f.name == "laplace" for f in axioms.families_for(parse_expr("lap(0)")))
