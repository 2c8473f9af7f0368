"""The numeric evaluator of lang.ast expressions."""

from fractions import Fraction

import numpy as np
import pytest

from lang.evaluate import EvalError, constant_value, evaluate
from lang.parser import parse_expr


def ev(text, **env):
    return evaluate(parse_expr(text), env)


def test_exact_arithmetic():
    assert ev("0.1 + 0.2") == Fraction(3, 10)
    assert ev("1 / 3 * 3") == 1
    assert ev("7 div 2") == 3 and ev("7 mod 2") == 1
    assert ev("-x * 2", x=Fraction(1, 4)) == Fraction(-1, 2)
    assert ev("abs(-3) + min(2, 5) + max(2, 5)") == 10


def test_transcendental_and_errors():
    assert ev("log(exp(2))") == pytest.approx(2)
    assert ev("sqrt(16)") == 4
    assert ev("log(1e-400)") == pytest.approx(-400 * np.log(10))  # beyond float range
    for bad in ("log(0)", "sqrt(-1)", "1 / 0", "3 mod 0", "y + 1"):
        with pytest.raises(EvalError):
            ev(bad)
    assert constant_value(parse_expr("log(0)")) is None and constant_value(parse_expr("x")) is None
    assert constant_value(parse_expr("-1")) == -1


def test_logic_and_conditionals():
    assert ev("x > 1 && (y || !y)", x=2, y=False) is True
    assert ev("false ==> 1 / 0 > 0") is True  # short-circuit
    assert ev("(a <==> b)", a=True, b=False) is False
    assert ev("c ? 1 : 2", c=False) == 2


def test_arrays_tuples_quantifiers():
    env = {"q": [1, 5, 9], "i": 1, "t": (3, 4)}
    assert ev("q[i] + q[i + 1]", **env) == 14
    assert ev("fst(t) * snd(t)", **env) == 12
    assert ev("sum(j in 0..3: q[j])", **env) == 15
    assert ev("forall j in 0..3: q[j] >= 1", **env) is True
    assert ev("exists j in 0..=2: q[j] == 9", **env) is True
    with pytest.raises(EvalError):
        ev("q[5]", **env)


def test_numpy_broadcast():
    v = np.array([-2.0, 0.0, 3.0])
    out = ev("abs(v - 1) > 2 * log(1 / 0.5) || v > 2.5", v=v)
    assert out.tolist() == [True, False, True]
    assert ev("!(v < 0) && v <= 1", v=v).tolist() == [False, True, False]
    assert ev("v < 0 ? 0 : v", v=v).tolist() == [0.0, 0.0, 3.0]
    assert ev("min(v, 1)", v=v).tolist() == [-2.0, 0.0, 1.0]
