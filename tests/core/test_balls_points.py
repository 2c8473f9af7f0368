"""tamp.core.balls and tamp.prover.base.points: a formula is refuted only at a point where it is
certainly false; valid formulas with exp/log, ties included, are never refuted; exact parts agree
with the language's own evaluator; the checkers answer "invalid" from a point without a solver call."""

from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lang import ast as A
from lang.evaluate import EvalError, evaluate
from lang.parser import parse_expr
from tamp.core.balls import NoValue, truth, value
from tamp.prover.base.points import Refuter, refute

P = parse_expr


@pytest.mark.parametrize(
    "text, env, expected",
    [
        ("exp(x) * exp(-x) == 1", {"x": 2}, None),  # equal, but not exactly computed: undecided
        ("exp(x) * exp(-x) <= 1", {"x": 2}, None),
        ("exp(1) > 2 && exp(1) < 3", {}, True),
        ("log(8) == 3 * log(2)", {}, None),
        ("log(1) == 0 && exp(0) == 1", {}, True),  # exact where the value is rational
        ("(1 - q) * exp(q) <= 1", {"q": Fraction(1, 2)}, True),
        ("sqrt(x) * sqrt(x) <= x", {"x": 2}, None),
        ("abs(x - 3) + min(x, 1) - max(x, 1) == 0", {"x": 2}, True),
        ("x div 2 == -2 && x mod 2 == 1", {"x": -3}, True),  # Euclidean, as the language
        ("b ==> x / 0 > 1", {"b": False, "x": 1}, True),
        ("!b || x / 0 > 1", {"b": False, "x": 1}, True),
        ("(c ? 1 : log(0)) < 3", {"c": True}, True),
    ],
)
def test_truth(text, env, expected):
    assert truth(P(text), env) is expected


@pytest.mark.parametrize("text", ["x / 0 > 1", "log(x - 2) > 0", "sqrt(0 - 1) >= 0", "x div 0 == 1", "y > 0"])
def test_no_value(text):
    with pytest.raises(NoValue):
        truth(P(text), {"x": 2})


_ATOMS = ["x", "y", "1", "2", "0", "x * y", "x - y", "x + 3"]


@st.composite
def _formulas(draw):
    a, b = draw(st.sampled_from(_ATOMS)), draw(st.sampled_from(_ATOMS))
    op = draw(st.sampled_from(["<", "<=", ">", ">=", "==", "!="]))
    arith = draw(st.sampled_from(["+", "-", "*", "/", "div", "mod"]))
    c = draw(st.sampled_from(_ATOMS))
    return P(f"({a}) {arith} ({b}) {op} {c} || x {op} y && !(y == {c})")


@settings(max_examples=300, deadline=None)
@given(_formulas(), st.integers(-5, 5), st.fractions(min_value=-3, max_value=3, max_denominator=7))
def test_exact_parts_agree_with_the_language(f, x, y):
    env = {"x": x, "y": y}
    try:
        exact = evaluate(f, env)
    except (EvalError, ArithmeticError, ValueError):
        return
    try:
        got = truth(f, env)
    except NoValue:
        return  # e.g. div of a rational: the solver's reading is not the evaluator's
    assert got is None or got == bool(exact)


VALID = [
    ("1 - q <= exp(-q)", "0 <= q && q <= 1"),
    ("(1 - q) * (1 - q) <= exp(-2 * q)", "0 <= q && q <= 1"),
    ("exp(x) >= 1 + x", ""),
    ("exp(x) * exp(y) <= exp(x + y)", ""),  # a tie at every point
    ("log(x * y) >= log(x) + log(y)", "x > 0 && y > 0"),  # a tie at every point
    ("k >= 1 ==> exp(-k * q) <= 1", "q >= 0"),
    ("n >= 1 ==> (c / n) * (c / n) <= 1", "0 <= c && c <= n"),
]


@pytest.mark.parametrize("formula, req", VALID)
def test_valid_formulas_are_never_refuted(formula, req):
    types = {"q": A.REAL, "x": A.REAL, "y": A.REAL, "k": A.INT, "n": A.INT, "c": A.INT}
    assert refute(P(formula), [P(req)] if req else [], types) is None


def test_a_false_formula_is_refuted_at_a_point_where_requires_hold():
    types = {"q": A.REAL, "k": A.INT}
    f, req = P("(1 - q) * exp(1 - k) <= exp(-k)"), P("0 <= q && q <= 1 && k >= 1")
    point = refute(f, [req], types)
    assert point is not None
    assert truth(req, point) is True and truth(f, point) is False


def test_arrays_are_not_drawn():
    assert refute(P("a[0] > 0"), [], {"a": A.Type("array", (A.INT,))}) is None


def test_a_refuting_point_is_tried_first_on_the_next_formula():
    r = Refuter({"x": A.INT}, [P("x >= 0")])
    first = r.refute(P("x <= 2"))
    assert first is not None and first["x"] > 2
    assert r.refute(P("x <= 1")) is first


def test_a_checker_answers_invalid_from_a_point_without_the_solver():
    from lang.loader import load
    from tamp.prover.base.smt import INVALID, VALID
    from tamp.prover.expectation.prove import Checker, ExpClaim  # noqa: F401

    prog = load(
        "program p(q: real, k: int) requires 0 <= q && q <= 1 && k >= 1 ensures true fails 1 { b ~ bern(q); }"
    ).programs[0]
    claim = ExpClaim(prog.body, list(prog.requires), A.BoolLit(False), {"q": A.REAL, "k": A.INT}, ["q", "k"])
    chk = Checker(claim)
    calls = chk.stats.solver_calls
    assert chk.valid(P("(1 - q) * exp(1 - k) <= exp(-k)")) == INVALID
    assert chk.stats.solver_calls == calls
    assert chk.valid(P("1 - q <= exp(-q)")) == VALID


def test_value_keeps_exact_numbers_exact():
    assert value(P("x / 3 + 1"), {"x": 2}) == Fraction(5, 3)
