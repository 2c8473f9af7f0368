"""Formulas shown to people are simplified (sympy), exactly, and mean what they meant."""

import random
from fractions import Fraction

import pytest

from lang.evaluate import evaluate
from lang.parser import parse_expr
from tamp.report.pretty import simplify_text


@pytest.mark.parametrize(
    "text, shown",
    [
        ("p / n * (i - 0)", "p * i / n"),
        ("log(1 / (p / n))", "log(n / p)"),
        ("1 - (1 - 3 * r)", "3 * r"),
        ("1 / 4", "0.25"),
        ("1 / 3 + 1 / 3", "2 / 3"),  # a rational, never 0.6666666666666666
        ("0.1 + 0.2", "0.3"),  # exact decimals, not 0.30000000000000004
        ("-x * y / 3", "-x * y / 3"),
        ("a[i] + a[i] - 0", "2 * a[i]"),  # an array element is kept whole
        ("x div 2 + 0", "x div 2"),  # so is an integer division
        ("!(r == 0) || x + 0 > 1", "!(r == 0) || x > 1"),  # arithmetic inside a condition
        ("p * n", "p * n"),  # nothing shorter: as written
    ],
)
def test_simplified(text, shown):
    assert simplify_text(text) == shown


@pytest.mark.parametrize(
    "text",
    [
        "forall j in 0..n: a[j] >= 0",
        "sum(j in 0..n: q[j])",
        "P(x > 0 + 1) >= 0.5",
        "this is ( not tamp",
        "",
    ],
)
def test_what_sympy_cannot_stand_for_is_shown_as_written(text):
    assert simplify_text(text) == text


@pytest.mark.parametrize(
    "text",
    [
        "p / n * (i - 0)",
        "1 - (1 - 3 * r)",
        "n / eps * log(n / p) + 2 * (n - n)",
        "p * (1 + r) - p * r",
        "abs(x - y) * 2 / 4",
        "max(p, q) + min(p, q) - p",
        "(i + 1) * (i - 1) - i * i",
    ],
)
def test_the_shown_formula_has_the_same_value(text):
    """Evaluated exactly (or in floating point for log) at random points, before and after."""
    shown = simplify_text(text)
    assert shown != text or text in ("abs(x - y) * 2 / 4", "max(p, q) + min(p, q) - p")
    rng = random.Random(7)
    names = ["p", "n", "i", "r", "eps", "x", "y", "q"]
    for _ in range(20):
        env = {v: Fraction(rng.randint(1, 50), rng.randint(1, 9)) for v in names}
        a, b = evaluate(parse_expr(text), env), evaluate(parse_expr(shown), env)
        assert abs(float(a) - float(b)) <= 1e-9 * max(1.0, abs(float(a))), (text, shown, env)


def _random_arith(rng, depth):
    if depth == 0 or rng.random() < 0.3:
        return rng.choice(["a", "b", "c", "d", "2", "3", "0", "1", "x"])
    op = rng.choice(["+", "-", "*", "/"])
    return f"({_random_arith(rng, depth - 1)} {op} {_random_arith(rng, depth - 1)})"


def test_shortcuts_show_what_sympy_would():
    """Numbers alone are folded without sympy, and read-once arithmetic (distinct variables, at
    most one number other than 0 and 1) is shown as written: sympy is asked for both here, and
    must not find anything shorter (else the shortcut would hide a simplification)."""
    from lang.parser import parse_expr as pe
    from tamp.report import pretty

    rng = random.Random(7)
    checked = {"constant": 0, "read-once": 0}
    for _ in range(600):
        e = pe(_random_arith(rng, 3))
        if not pretty._is_arith(e):
            continue
        value = pretty._constant(e)
        if value is None and not pretty._read_once(e):
            continue
        full = pretty._Arith().simplify(e)
        by_sympy = full if pretty._size(full) < pretty._size(e) else e
        if value is not None:
            checked["constant"] += 1
            assert pretty.simplify_expr(e) == pretty.print_expr(by_sympy), pretty.print_expr(e)
        else:
            checked["read-once"] += 1
            assert by_sympy is e, (pretty.print_expr(e), pretty.print_expr(full))
    assert checked["constant"] >= 20 and checked["read-once"] >= 40, checked
