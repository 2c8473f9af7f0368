"""Finite uniform family: subset choices, cost |S|/|support|, bad AST checked point by point."""

from fractions import Fraction

import numpy as np
import pytest
from axioms_testlib import assert_consistent, frequency

import axioms
from axioms.uniform_finite import (
    MAX_SUPPORT,
    UniformSubset,
    enumerate_subsets,
    subset_instance,
    subset_where,
    support_points,
)
from lang import ast as A
from lang.evaluate import evaluate
from lang.parser import parse_expr

FAM = UniformSubset()

DISTS = [
    "unif({1, 2, 3})",
    "unif(0, 10)",
    "unif({-1, 0.5, 3, 7})",
    "unif({true, false})",
    "unif({1, 2} * {3, 4, 5})",
    "unif({(0, 1), (1, 0), (1, 1)})",
    "unif(-3, 30)",
    "unif({2, 3, 5, 7, 11, 13, 17, 19})",
    "unif({0, 1, 2, 3} * {0, 1, 2, 3})",
]


def _targets(pts):
    return (A.Var("x"), A.Var("y")) if isinstance(pts[0], tuple) else (A.Var("v"),)


def _env(targets, p):
    return {"x": p[0], "y": p[1]} if len(targets) == 2 else {"v": p}


@pytest.mark.parametrize("src", DISTS)
def test_every_choice_sound_and_exact(src):
    dist = parse_expr(src)
    pts = support_points(dist)
    assert FAM.applies(dist)
    choices = FAM.choices(dist)
    assert [len(c) for c in choices] == sorted(len(c) for c in choices)
    assert frozenset() in choices and frozenset(pts) in choices
    targets = _targets(pts)
    for c in choices:
        exact = FAM.exact_tail((pts,), c)
        cost = FAM.cost_value((pts,), c)
        assert exact <= cost + 1e-12
        assert exact == pytest.approx(len(c) / len(pts))
        # bad is false exactly on the support points outside the subset
        inst = FAM.instantiate(targets, dist, c)
        for p in pts:
            assert bool(evaluate(inst.bad, _env(targets, p))) == (p in c)


def test_bad_true_outside_support():
    dist = parse_expr("unif(0, 10)")
    inst = FAM.instantiate((A.Var("v"),), dist, frozenset({3}))
    for outside in (-1, 11, 100):
        assert evaluate(inst.bad, {"v": outside})
    inst = FAM.instantiate((A.Var("x"), A.Var("y")), parse_expr("unif({1, 2} * {3, 4})"), frozenset())
    assert evaluate(inst.bad, {"x": 1, "y": 5}) and not evaluate(inst.bad, {"x": 2, "y": 4})


def test_choice_counts_are_capped():
    assert len(enumerate_subsets(tuple(range(6)))) == 2**6
    k = 11  # subsets of size <= 2, their complements, empty and full
    assert len(enumerate_subsets(tuple(range(k)))) == 2 * (1 + k + k * (k - 1) // 2)
    big = enumerate_subsets(tuple(range(150)))
    assert len(big) < 1000 and frozenset({7}) in big and frozenset(range(10)) in big
    huge = enumerate_subsets(tuple(range(5000)))
    assert len(huge) <= 2 * 128 + 2 and frozenset(range(4999)) in huge and frozenset({4999}) in huge
    assert frozenset(range(64)) in huge and frozenset() in huge


@pytest.mark.parametrize("src", ["unif(0, 10)", "unif({1, 2} * {3, 4, 5})", "unif({-1, 0.5, 3, 7})"])
def test_monte_carlo(src):
    dist = parse_expr(src)
    pts = support_points(dist)
    targets = _targets(pts)
    rng = np.random.default_rng(11)
    n = 60_000
    idx = rng.integers(0, len(pts), n)
    if len(targets) == 2:
        env = {"x": np.array([float(pts[i][0]) for i in idx]), "y": np.array([float(pts[i][1]) for i in idx])}
    else:
        env = {"v": np.array([float(pts[i]) for i in idx])}
    for c in FAM.choices(dist)[:: max(1, len(FAM.choices(dist)) // 12)]:
        bad = FAM.instantiate(targets, dist, c).bad
        freq = frequency(bad, env) if not isinstance(bad, A.BoolLit) else float(bad.value)
        assert_consistent(freq, FAM.exact_tail((pts,), c), n, f"{src} {sorted(c, key=repr)}")


def test_explicit_subset_helpers():
    dist = parse_expr("unif(1, 6)")
    s = subset_where(dist, lambda v: v % 2 == 0)
    assert s == {2, 4, 6}
    inst = subset_instance((parse_expr("d[i]"),), dist, s)
    assert inst.cost == A.num(Fraction(1, 2)) or evaluate(inst.cost) == Fraction(1, 2)
    assert evaluate(inst.bad, {"d": [4], "i": 0}) and not evaluate(inst.bad, {"d": [3], "i": 0})
    with pytest.raises(ValueError):
        subset_instance((A.Var("v"),), dist, {7})
    pair = subset_where(parse_expr("unif({0, 1} * {0, 1})"), lambda p: p[0] == p[1])
    inst = subset_instance((A.Var("t"),), parse_expr("unif({0, 1} * {0, 1})"), pair)  # one tuple target
    assert evaluate(inst.bad, {"t": (1, 1)}) and not evaluate(inst.bad, {"t": (0, 1)})


@pytest.mark.parametrize(
    "src",
    [
        "unif({1, 1, 2})",
        "unif({a, 2})",
        "unif(0, n)",
        "unif(0, 0.5)",
        f"unif(0, {MAX_SUPPORT + 1})",
        "unif(3, 1)",
        "bern(0.5)",
    ],
)
def test_not_applicable(src):
    assert not FAM.applies(parse_expr(src))
    assert "uniform_finite" not in [f.name for f in axioms.families_for(parse_expr(src))]


def test_target_checks():
    with pytest.raises(ValueError):
        FAM.instantiate((A.Var("v"),), parse_expr("unif(0, 3)"), {(1, 2)})  # not a support point
    with pytest.raises(ValueError):
        FAM.instantiate((A.Var("a"), A.Var("b")), parse_expr("unif(0, 3)"), frozenset({1}))


def test_a_joint_draw_offers_its_coordinate_comparisons():
    # a rejection test `a != b` of (a, b) ~ unif({0..3} * {0..3}): the diagonal, 4 of 16 points
    dist = parse_expr("unif({0, 1, 2, 3} * {0, 1, 2, 3})")
    pts = support_points(dist)
    choices = FAM.choices(dist)
    diagonal = frozenset(p for p in pts if p[0] == p[1])
    below = frozenset(p for p in pts if p[0] < p[1])
    assert diagonal in choices and below in choices and frozenset(pts) - diagonal in choices
    assert FAM.exact_tail((pts,), diagonal) == pytest.approx(0.25) == FAM.cost_value((pts,), diagonal)
    inst = FAM.instantiate((A.Var("a"), A.Var("b")), dist, diagonal)
    assert evaluate(inst.bad, {"a": 2, "b": 2}) and not evaluate(inst.bad, {"a": 1, "b": 2})
