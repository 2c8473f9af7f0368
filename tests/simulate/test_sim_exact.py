"""The simulator's arithmetic is exact: comparisons are decided by certified balls, re-run
exactly when the balls do not decide them, and never guessed (issue 16, item 4)."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from tamp.simulation import REFUTED, run_samples, runner, simulate
from tamp.simulation import arith_ball as B
from tamp.simulation.arith import ExactDomain


def verdict(src, inputs=None, runs=2000, **kw):
    return simulate(src, inputs or {}, runs=runs, seed=3, **kw)


# ---------------------------------------------------------------- true claims that floats refuted


@pytest.mark.parametrize(
    "src",
    [
        "program a() ensures x * x == 2 fails 0 { x := sqrt(2); }",
        "program b() ensures y == 0.1 fails 0 { x := exp(0.1); y := log(x); }",
        "program c() ensures y > 0 fails 0 { x ~ lap(0, 1); y := exp(-1000 + x); }",
        "program d() ensures x * 3 == 1 fails 0 { x := 1 / 3; }",
        "program e() ensures y * 3 == x fails 0 { x ~ unif(0, 5); y := x / 3; }",
        "program f() ensures 0.1 + 0.2 == 0.3 && s == 0.3 fails 0 { s := 0.1 + 0.2; }",
        "program g() ensures sqrt(2) * sqrt(3) == sqrt(6) fails 0 { x := 1; }",
        "program h() ensures x - x == 0 fails 0 { x ~ gauss(0.1, 2); }",
        "program i() ensures exp(x - x) == 1 && log(exp(1)) == 1 fails 0 { x ~ lap(0, 1); }",  # fuzz finding
    ],
)
def test_true_claims_are_consistent(src):
    r = verdict(src)
    assert r.verdict == "consistent" and r.failures == 0 and r.undecided == 0, r.render_text()


def test_inputs_bound_and_requires_are_exact():
    src = (
        "program p(x: real) requires sqrt(x) * sqrt(x) == x && exp(-1000) > 0 "
        "ensures y == 1 fails exp(-1000) { y := 1; }"
    )
    r = verdict(src, {"x": 2})
    assert r.verdict == "consistent", r.render_text()


# ---------------------------------------------------------------- false claims are still refuted


@pytest.mark.parametrize(
    "src",
    [
        "program a() ensures x * x != 2 fails 0.5 { x := sqrt(2); }",
        "program b() ensures x * x == 2 + 1e-30 fails 0.5 { x := sqrt(2); }",
        "program c() ensures y < 0.1 fails 0.5 { x := exp(0.1); y := log(x); }",
        "program d() ensures exp(-1000 + x) <= 0 fails 0.5 { x ~ lap(0, 1); }",
    ],
)
def test_false_claims_near_the_boundary_are_refuted(src):
    r = verdict(src)
    assert r.verdict == REFUTED and r.failures == r.runs and r.undecided == 0, r.render_text()


def test_an_irrational_bound_is_compared_exactly():
    # the failure rate is 1/2 and the bound sqrt(2)/2 - 3/10 (about 0.41) is below it: refuted
    r = verdict("program a() ensures !b fails sqrt(2) / 2 - 0.3 { b ~ bern(0.5); }", runs=20000)
    assert r.verdict == REFUTED, r.render_text()


# ---------------------------------------------------------------- undecided runs


def test_undecided_runs_never_count_as_failures(monkeypatch):
    monkeypatch.setattr(runner, "REFINEMENTS", ())  # no exact re-run: every unsure run stays undecided
    r = verdict("program a() ensures x * x != 2 fails 0 { x := sqrt(2); }")
    assert r.verdict == "consistent" and r.undecided == 2000 and r.failures == 0, r.render_text()
    assert "undecided" in r.render_text() and r.to_json()["undecided"] == 2000


def test_refuted_only_if_the_decided_failures_exceed_the_bound(monkeypatch):
    monkeypatch.setattr(runner, "REFINEMENTS", ())
    src = (
        "program a() ensures (b ==> x * x == 2) && !c fails 0.1 { b ~ bern(0.5); c ~ bern(0.9); x := b ? sqrt(2) : 1; }"
    )
    r = verdict(src, runs=4000)
    assert r.verdict == REFUTED and 1500 < r.undecided < 2500, r.render_text()
    # the same claim with a bound the decided failures (about 45%) do not exceed
    r = verdict(src, runs=4000, bound="0.5")
    assert r.verdict == "consistent", r.render_text()


def test_a_rerun_sees_the_same_draws():
    """Runs are re-run from their own keyed draws: whether a run was re-run cannot change it."""
    src = "program a() ensures y * 3 == x && x < 4 fails 0.5 { x ~ unif(0, 5); y := x / 3; }"
    r = verdict(src, runs=6000)
    plain = verdict("program a() ensures x < 4 fails 0.5 { x ~ unif(0, 5); }", runs=6000)
    assert r.failures == plain.failures and "re-run exactly" in r.message, (r.render_text(), plain.render_text())


def test_draws_do_not_depend_on_the_number_of_runs():
    a = run_samples("program a() { x ~ lap(0, 1); k ~ dlap(0, 2); }", {}, runs=50, seed=9)
    b = run_samples("program a() { x ~ lap(0, 1); k ~ dlap(0, 2); }", {}, runs=500, seed=9)
    assert np.array_equal(a["x"], b["x"][:50]) and np.array_equal(a["k"], b["k"][:50])


def test_symbolic_domain_decides_algebraic_equalities():
    import sympy

    sym = ExactDomain("sym")
    assert sym._sym_sign(sympy.sqrt(2) * sympy.sqrt(3) - sympy.sqrt(6)) == 0
    assert sym._sym_sign(sympy.sqrt(2) + sympy.sqrt(3) - sympy.sqrt(5 + 2 * sympy.sqrt(6))) == 0
    assert sym._sym_sign(sympy.sqrt(2) - sympy.Rational(141421356237, 10**11)) == 1


# ---------------------------------------------------------------- the balls are sound

FLOATS = st.floats(min_value=-1e12, max_value=1e12, allow_nan=False).filter(lambda x: x == 0 or abs(x) > 1e-200)
RADII = st.sampled_from([0.0, 0.0, 1e-17, 1e-9, 0.5])


def _contains(ball_value, exact: Fraction) -> bool:
    m, r = float(ball_value.real), float(ball_value.imag)
    return abs(Fraction(m) - exact) <= Fraction(r)


@settings(max_examples=300, deadline=None)
@given(FLOATS, RADII, FLOATS, RADII, st.sampled_from([-1, 0, 1]), st.sampled_from([-1, 0, 1]))
def test_ball_arithmetic_contains_the_exact_result(ma, ra, mb, rb, sa, sb):
    # the exact operands: anywhere in their balls (an end or the middle)
    xa, xb = Fraction(ma) + sa * Fraction(ra), Fraction(mb) + sb * Fraction(rb)
    a, b = B.ball(ma, ra), B.ball(mb, rb)
    assert _contains(B.add(a, b), xa + xb)
    assert _contains(B.sub(a, b), xa - xb)
    assert _contains(B.mul(a, b), xa * xb)
    assert _contains(B.minimum(a, b), min(xa, xb)) and _contains(B.absolute(a), abs(xa))
    if not B.contains_zero(b):
        assert _contains(B.div(a, b), xa / xb)
    for op in ("<", "<=", ">", ">=", "==", "!="):
        guess, unsure = B.compare(op, a, b)
        if not unsure:
            exact = {"<": xa < xb, "<=": xa <= xb, ">": xa > xb, ">=": xa >= xb, "==": xa == xb, "!=": xa != xb}[op]
            assert bool(guess) == exact, (op, ma, ra, mb, rb)


@settings(max_examples=200, deadline=None)
@given(st.floats(min_value=0, max_value=1e12), RADII)
def test_ball_sqrt_log_exp_contain_the_exact_result(m, r):
    from flint import arb, ctx

    assume(m - r >= 0)
    s = B.sqrt(B.ball(m, r))
    old = ctx.prec
    ctx.prec = 200
    try:
        for x in (Fraction(m), Fraction(m) - Fraction(r), Fraction(m) + Fraction(r)):
            from flint import fmpq

            exact = arb(fmpq(x.numerator, x.denominator))
            lo = Fraction(float(s.real)) - Fraction(float(s.imag))
            hi = Fraction(float(s.real)) + Fraction(float(s.imag))
            assert (lo <= 0 or lo * lo <= x) and x <= hi * hi  # sqrt(x) in [lo, hi], exactly
            if m - r > 0:  # (a ball reaching 0 is refused before log: evaluate.py)
                ln = B.transcendental("log", B.ball(m, r))
                assert (
                    arb(float(ln.real)) - arb(float(ln.imag))
                    <= exact.log()
                    <= arb(float(ln.real)) + arb(float(ln.imag))
                )
            if m < 700:
                ex = B.transcendental("exp", B.ball(m, r))
                assert not math.isfinite(float(ex.imag)) or arb(float(ex.real)) - arb(
                    float(ex.imag)
                ) <= exact.exp() <= arb(float(ex.real)) + arb(float(ex.imag))
    finally:
        ctx.prec = old


def test_floor_is_unsure_only_near_an_integer():
    f, unsure = B.floor(B.ball(np.array([2.5, 3.0, -0.5, 3.0]), np.array([0.1, 0.0, 0.0, 1e-12])))
    assert list(f[:3]) == [2, 3, -1] and list(unsure) == [False, False, False, True]
