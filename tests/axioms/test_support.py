"""Cost-0 support axioms: the bad event never happens on samples, and is not vacuous."""

import math
from fractions import Fraction

import numpy as np
import pytest
from axioms_testlib import frequency

import axioms
from axioms.base import union_bound
from lang import ast as A
from lang.evaluate import evaluate
from lang.parser import parse_expr


def support_family(src):
    fams = [f for f in axioms.families_for(parse_expr(src)) if f.name == "support"]
    assert len(fams) == 1, src
    return fams[0]


ALL = [
    "bern(p)",
    "unif(0, n)",
    "unif({1, 2, 3})",
    "unif({a, b})",
    "unif({1, 2} * {3, 4})",
    "lap(m, s)",
    "gauss(m, v)",
    "dlap(m, s)",
    "exp(k, s)",
    "dexp(k, s)",
    "uniform(a, b)",
    "step([(0, 1, 2), (1, 3, 1)])",
    "density(0, 1, 2 * _)",
]


@pytest.mark.parametrize("src", ALL)
def test_every_distribution_has_a_support_axiom(src):
    fam = support_family(src)
    dist = parse_expr(src)
    assert fam.param_kind == "choice" and list(fam.choices(dist)) == ["support"]
    targets = (A.Var("x"), A.Var("y")) if src.startswith("unif({1, 2} *") else (A.Var("z"),)
    inst = fam.instantiate(targets, dist, "support")
    assert inst.cost == A.num(0)


CASES = [  # (dist, numeric args, sampler, a value outside the support or None)
    ("unif", (2, 9), lambda r, n: r.integers(2, 10, n), 10),
    ("exp", (1.5, 2.0), lambda r, n: 1.5 + r.exponential(2.0, n), 1.49),
    ("dexp", (-3, 0.7), lambda r, n: -3 + r.geometric(1 - math.exp(-1 / 0.7), n) - 1, -4),
    ("uniform", (-1.0, 2.5), lambda r, n: r.uniform(-1.0, 2.5, n), 2.51),
    ("lap", (0.0, 1.0), lambda r, n: r.laplace(0.0, 1.0, n), None),
    ("gauss", (0.0, 2.0), lambda r, n: r.normal(0.0, 2.0**0.5, n), None),
    ("dlap", (0, 1.0), lambda r, n: r.geometric(0.6, n) - r.geometric(0.6, n), None),
]


@pytest.mark.parametrize("name,args,sample,outside", CASES, ids=[c[0] for c in CASES])
def test_numeric(name, args, sample, outside):
    fam = support_family(f"{name}(a, b)")
    assert fam.exact_tail(args, "support") == 0.0 == fam.cost_value(args, "support")
    inst = fam.numeric_instance(args)
    assert all(evaluate(s, {}) for s in inst.side)
    rng = np.random.default_rng(17)
    v = sample(rng, 50_000).astype(float)
    bad = inst.bad
    assert (frequency(bad, {"v": v}) if not isinstance(bad, A.BoolLit) else float(bad.value)) == 0.0
    if outside is not None:
        assert evaluate(bad, {"v": outside})


def test_finite_sets():
    fam = support_family("unif({1, 2})")
    assert fam.exact_tail(((1, 5, Fraction(1, 2)),), "support") == 0.0
    assert fam.exact_tail((((1, 3), (1, 4), (2, 3)),), "support") == 0.0
    inst = fam.instantiate((A.Var("v"),), parse_expr("unif({a, b + 1})"))
    assert not evaluate(inst.bad, {"v": 4, "a": 1, "b": 3}) and evaluate(inst.bad, {"v": 3, "a": 1, "b": 3})
    prod = fam.instantiate((A.Var("x"), A.Var("y")), parse_expr("unif({0, 1} * {5, 6, 7})"))
    assert not evaluate(prod.bad, {"x": 1, "y": 6}) and evaluate(prod.bad, {"x": 2, "y": 6})
    assert evaluate(prod.bad, {"x": 0, "y": 8})
    tup = fam.instantiate((A.Var("t"),), parse_expr("unif({(0, 1), (2, 3)})"))
    assert not evaluate(tup.bad, {"t": (2, 3)}) and evaluate(tup.bad, {"t": (0, 3)})


def test_step_and_density():
    step = support_family("step([(0, 1, 1)])")
    bins = ((0.0, 1.0, 2.0), (2.0, 3.0, 1.0))
    assert step.exact_tail((bins,), "support") == 0.0
    inst = step.numeric_instance((bins,))
    assert evaluate(inst.bad, {"v": 3.01}) and evaluate(inst.bad, {"v": -0.01})
    assert not evaluate(inst.bad, {"v": 1.5})  # a gap between bins is not excluded (still sound)
    dens = support_family("density(0, 1, _)")
    args = (0.0, 2.0, parse_expr("1 + _ * _"))
    assert dens.exact_tail(args, "support") == 0.0
    assert evaluate(dens.numeric_instance(args).bad, {"v": 2.001})


def test_union_with_a_tail_axiom():
    dist = parse_expr("exp(k, s)")
    tail = [f for f in axioms.families_for(dist) if f.name == "exponential"][0]
    sup = support_family("exp(k, s)")
    t = tail.instantiate((A.Var("v"),), dist, A.Var("f"))
    both = union_bound([t, sup.instantiate((A.Var("v"),), dist)])
    assert both.cost == t.cost  # cost-0 facts are free
    assert set(both.side) == set(t.side) | set(sup.instantiate((A.Var("v"),), dist).side)
    env = {"k": 0, "s": 1, "f": 0.5}
    assert evaluate(both.bad, dict(env, v=-1)) and not evaluate(both.bad, dict(env, v=0.1))


def test_self_reference_refused():
    with pytest.raises(axioms.base.SelfReferentialSample):
        support_family("exp(k, s)").instantiate((A.Var("x"),), parse_expr("exp(x, 1)"))
