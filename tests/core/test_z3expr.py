"""The z3 meaning of each operator (tamp/core/z3expr.py) agrees with lang/ops.py, and the one
translation of expressions agrees with the exact evaluator (lang/evaluate.py)."""

from fractions import Fraction

import pytest
import z3
from hypothesis import given, settings
from hypothesis import strategies as st

from lang import ops
from lang.errors import UnsupportedError
from lang.evaluate import evaluate
from lang.parser import parse_expr
from tamp.core import z3expr as Z

ints = st.integers(min_value=-50, max_value=50)
rats = st.fractions(min_value=-20, max_value=20, max_denominator=7)


def _truth(t) -> bool:
    """The truth value of a closed formula (with quantifiers over finite ranges)."""
    for value in (True, False):
        s = z3.Solver()
        s.add(t != value)
        if s.check() == z3.unsat:
            return value
    raise AssertionError(f"undecided: {t}")


def _value(t):
    if z3.is_quantifier(t):
        return _truth(t)
    v = z3.simplify(t)
    if z3.is_true(v) or z3.is_false(v):
        return z3.is_true(v)
    if z3.is_int_value(v):
        return v.as_long()
    return Fraction(v.numerator_as_long(), v.denominator_as_long())


def _exact_or_none(f, *args):
    try:
        return f(*args)
    except ops.DomainError:
        return None


def test_every_operator_has_one_z3_meaning():
    assert set(Z.BINARY) == set(ops.BINARY) and set(Z.UNARY) == set(ops.UNARY)
    assert set(Z.FUNCTIONS) == {"abs", "min", "max"}


@given(ints, ints)
def test_integer_operators_agree_with_lang_ops(a, b):
    for op, meaning in ops.BINARY.items():
        if meaning.kind == "logic":
            continue
        want = _exact_or_none(meaning.exact, a, b)
        if want is None:
            continue  # no value in the language (division by zero): z3's is unconstrained
        assert _value(Z.BINARY[op](z3.IntVal(a), z3.IntVal(b))) == want, op


@given(rats, rats, ints)
def test_real_operators_and_functions_agree_with_lang_ops(a, b, n):
    for op, meaning in ops.BINARY.items():
        if meaning.kind in ("logic", "intdiv"):
            continue
        want = _exact_or_none(meaning.exact, a, b)
        if want is not None:
            assert _value(Z.BINARY[op](Z.rational(a), Z.rational(b))) == want, op
        mixed = _exact_or_none(meaning.exact, a, n)
        if mixed is not None:  # an integer operand is promoted to real
            assert _value(Z.BINARY[op](Z.rational(a), z3.IntVal(n))) == mixed, op
    for name, f in Z.FUNCTIONS.items():
        arity, exact = ops.FUNCTIONS[name]
        args = (a, b)[:arity]
        assert _value(f(*[Z.rational(x) for x in args])) == exact(*args), name
    assert _value(Z.UNARY["-"](Z.rational(a))) == -a


def test_connectives_agree_with_lang_ops():
    for a in (False, True):
        for b in (False, True):
            for op, meaning in ops.BINARY.items():
                if meaning.kind == "logic" or op in ("==", "!="):
                    assert _value(Z.BINARY[op](z3.BoolVal(a), z3.BoolVal(b))) == meaning.exact(a, b), op
        assert _value(Z.UNARY["!"](z3.BoolVal(a))) == (not a)


EXPRS = [
    "x div 3 + y mod 4 - abs(x - y) * 2",
    "min(x, r) <= max(y / 2, r) ==> (x != y || r > 0)",
    "(x > y ? x - y : y - x) == abs(x - y) <==> true",
    "-x mod 5 + (x / 4) * r",
    "forall j in 0..3: j * x >= min(0, x) * 3",
    "exists j in y..=x: j == 2",
    "sum(j in 0..4: j * r) == 6 * r",
]


@settings(max_examples=40, deadline=None)
@given(ints, ints.filter(lambda v: v != 0), rats)
def test_translation_agrees_with_the_exact_evaluator(x, y, r):
    env = {"x": z3.Int("x"), "y": z3.Int("y"), "r": z3.Real("r")}
    values = [(env["x"], z3.IntVal(x)), (env["y"], z3.IntVal(y)), (env["r"], Z.rational(r))]
    for text in EXPRS:
        e = parse_expr(text)
        want = evaluate(e, {"x": x, "y": y, "r": r})
        got = Z.Z3Translation().translate(e, env)
        assert _value(z3.substitute(got, *values)) == want, text


def test_hooks_and_errors():
    seen = []

    class Named(Z.Z3Translation):
        def transcendental(self, name, arg):
            seen.append(name)
            return arg

        def opaque_sum(self, e, lo, hi):
            return hi - lo

    n = z3.Int("n")
    t = Named().translate(parse_expr("log(n) + sum(j in 0..n: 1)"), {"n": n})
    assert seen == ["log"] and _value(z3.substitute(t, (n, z3.IntVal(5)))) == 10
    with pytest.raises(UnsupportedError, match="does not know the variable 'q'"):
        Z.Z3Translation().translate(parse_expr("q + 1"), {})
    with pytest.raises(UnsupportedError, match="sum whose bounds"):
        Z.Z3Translation().translate(parse_expr("sum(j in 0..n: j)"), {"n": n})
    with pytest.raises(UnsupportedError, match="must be an integer"):
        Z.Z3Translation().translate(parse_expr("r div 2"), {"r": z3.Real("r")})


@given(st.fractions(), st.integers())
def test_fraction_inverts_rational_and_integer_numerals(q, n):
    assert Z.fraction(Z.rational(q)) == q
    assert Z.fraction(z3.IntVal(n)) == n
    assert Z.fraction(z3.simplify(Z.rational(q) * 3)) == q * 3


def test_fraction_of_a_huge_model_value_needs_no_global_digit_limit():
    import sys

    digits = "9" * 10_000
    s = z3.Solver()
    x = z3.Real("x")
    s.add(x * 3 == z3.RealVal(digits))
    assert s.check() == z3.sat
    limit = sys.get_int_max_str_digits()
    v = Z.fraction(s.model()[x])
    assert sys.get_int_max_str_digits() == limit
    assert v * 3 == 10**10_000 - 1 and v.denominator == 1
