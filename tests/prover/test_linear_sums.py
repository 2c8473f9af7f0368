"""Budgets over input arrays by linearity of sums (issue 33, :mod:`tamp.cfa.sum_linear`): the
Horvitz-Thompson budget ``Var/t² <= (1 - p)·Σ v²/(p·t²)`` with ``Var = p·Σ(v/p)² - p²·Σ(v/p)²``
is decided once constants leave the sums; the dev claims of benchmarks/prover4/dev/budgets25
are proved by linearity of expectation, their false siblings are not; the rewrite guards the
divisors it takes out and adds only true facts."""

from __future__ import annotations

import time

import pytest
from locations import BENCHMARKS
from support.methods import attempt

from lang import ast as A
from lang.parser import parse, parse_expr
from tamp.cfa import build_cfa
from tamp.cfa.sum_linear import linear_sums
from tamp.core.encode import Encoder
from tamp.core.validity import VALID, check_fresh, verdict
from tamp.core.z3context import proof_context
from tamp.prover.linearity.prove import try_linearity
from tamp.show import show_expr

DEV = BENCHMARKS / "prover4" / "dev" / "budgets25"
HT = BENCHMARKS / "prover4" / "dev" / "blind11" / "databases" / "horvitz_thompson_sum.prob"
TRUE = sorted(p for p in DEV.glob("*.prob") if not p.stem.endswith("_false")) + [HT]
FALSE = sorted(DEV.glob("*_false.prob")) + [HT.with_name("horvitz_thompson_sum_false.prob")]
# the claims the rule is needed for (the others were proved before it, and still are)
NEEDS_IT = {"horvitz_thompson_sum", "ht_while", "importance_weights", "random_signs", "signs_scaled"}


def _linearity(path):
    src = parse(path.read_text(), str(path))
    prog = src.programs[0]
    cfa = build_cfa(prog, None, str(path), src.text)
    t0 = time.monotonic()
    with proof_context():  # a fresh context, as every proof of `tamp prove` has
        return try_linearity(prog, cfa, t0 + 30, t0)


@pytest.mark.parametrize("path", TRUE, ids=lambda p: p.stem)
def test_true_claims_are_proved_by_linearity(path):
    res, why = _linearity(path)
    assert res is not None and res.verdict == "proved", why
    if path.stem in NEEDS_IT:
        assert res.proof.sums, "proved without the sums by linearity: the test no longer covers the rule"


@pytest.mark.parametrize("path", FALSE, ids=lambda p: p.stem)
def test_false_siblings_are_not_proved_by_linearity(path):
    res, _why = attempt(_linearity, path)
    assert res is None


def _valid(text: str, types: dict, requires: str = "true") -> bool:
    enc = Encoder(types)
    env = enc.initial_env()
    f = enc.expr(parse_expr(text), env)
    return verdict(check_fresh(f, [enc.expr(parse_expr(requires), env)], timeout_ms=5000)) == VALID


TYPES = {"v": A.array_of(A.REAL), "N": A.INT, "p": A.REAL, "t": A.REAL}


def _rewritten(text: str) -> str:
    g = linear_sums(parse_expr(text))
    assert g is not None
    return show_expr(g)


def test_abs_of_a_monomial_splits_and_pairs_of_abs_are_squares():
    out = _rewritten("sum(i in 0..N: abs(p * v[i]) * abs(-(p * v[i]))) <= p * p * sum(j in 0..N: v[j] * v[j])")
    assert (
        out
        == "sum(i in 0..N: v[i] * v[i]) >= 0 ==> 1 * p * p * sum(i in 0..N: v[i] * v[i]) <= p * p * (1 * sum(j in 0..N: v[j] * v[j]))"
    )
    assert _valid(out, TYPES)
    # |v[i] / p| = |v[i]| / |p|: the divisor is guarded as |p| != 0; a sum of |.| is not split
    assert _rewritten("sum(i in 0..N: abs(v[i] / p)) <= t").startswith("abs(p) != 0 && ")
    assert "abs(v[i] + 1) * abs(v[i] + 1)" not in _rewritten("sum(i in 0..N: abs(v[i] + 1) * abs(v[i] + 1)) >= t")
    # the rewrite is only a rewrite: |p·v[i]| summed is not p times the sum of v[i] for a negative p
    assert not _valid(_rewritten("sum(i in 0..N: abs(p * v[i])) == p * sum(i in 0..N: abs(v[i]))"), TYPES)


def test_constants_leave_the_sum_and_divisors_are_guarded():
    out = _rewritten("sum(i in 0..N: v[i] / p * (v[i] / p)) <= sum(j in 0..N: v[j] * v[j]) / (p * p)")
    assert out.startswith("p != 0 && (sum(i in 0..N: v[i] * v[i]) >= 0 ==> ")
    assert "1 / p / p * sum(i in 0..N: v[i] * v[i])" in out


def test_terms_are_collected_and_ordered():
    out = _rewritten("sum(i in 0..N: 2 * v[i] * p - p * v[i]) == p * sum(j in 0..N: v[j])")
    assert "(2 * p + -1 * p) * sum(i in 0..N: v[i])" in out or "(2 * p + -(1 * p)) * sum(i in 0..N: v[i])" in out


def test_no_sum_no_rewrite():
    assert linear_sums(parse_expr("p * t <= 1")) is None


def test_the_rewrite_decides_the_horvitz_thompson_budget():
    budget = (
        "(p * sum(i in 0..N: v[i] / p * (v[i] / p)) - p * p * sum(i in 0..N: v[i] / p * (v[i] / p))) / (t * t)"
        " <= (1 - p) * sum(j in 0..N: v[j] * v[j]) / (p * t * t)"
    )
    req = "p > 0 && p <= 1 && t > 0"
    assert not _valid(budget, TYPES, req)  # the sums as unrelated functions: not shown
    g = linear_sums(parse_expr(budget))
    assert g is not None
    assert _valid(show_expr(g), TYPES, req)


def test_a_false_budget_stays_invalid_after_the_rewrite():
    # the factor 1/p missing: false at p = 1/2, v = [1]
    budget = (
        "(p * sum(i in 0..N: v[i] / p * (v[i] / p)) - p * p * sum(i in 0..N: v[i] / p * (v[i] / p))) / (t * t)"
        " <= (1 - p) * sum(j in 0..N: v[j] * v[j]) / (t * t)"
    )
    g = linear_sums(parse_expr(budget))
    assert g is not None
    assert not _valid(show_expr(g), TYPES, "p > 0 && p <= 1 && t > 0")


def test_a_divisor_that_may_be_zero_is_not_taken_out():
    # without p != 0 from requires, the guard fails: the rewrite proves nothing
    g = linear_sums(parse_expr("sum(i in 0..N: v[i] / p) == sum(i in 0..N: v[i]) / p"))
    assert g is not None
    assert not _valid(show_expr(g), TYPES, "t > 0")
    assert _valid(show_expr(g), TYPES, "p > 0")


def test_squares_are_the_only_facts():
    out = _rewritten("sum(i in 0..N: v[i] * p) >= 0")
    assert "==>" not in out  # Σ v[i] is not a sum of squares: no sign fact
    assert not _valid(out, TYPES, "p > 0")
    assert _valid(_rewritten("sum(i in 0..N: v[i] * v[i] * p) >= 0"), TYPES, "p > 0")


def test_sums_are_taken_apart_before_the_plain_query_runs_to_its_limit(monkeypatch):
    """The Poisson-sampling budget compares array sums: asked plainly, z3 grinds on it until its
    5 s limit (nonlinear arithmetic, where it sometimes does not stop at all); with the sums taken
    apart it is valid at once. So the rewrite is asked first and no query comes back unknown."""
    import tamp.prover.linearity.prove as prove

    answers = []
    real = prove.decide

    def recording(f, claim, ms):
        answers.append(real(f, claim, ms))
        return answers[-1]

    monkeypatch.setattr(prove, "decide", recording)
    res, why = _linearity(DEV / "poisson_ht.prob")
    assert res is not None and res.verdict == "proved" and res.proof.sums, why
    assert "unknown" not in answers, answers
