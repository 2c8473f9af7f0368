"""The truth of a formula at one point, certified: exact rationals where they suffice, balls of
python-flint's ``arb`` where ``exp``, ``log`` or ``sqrt`` make values irrational.

:func:`truth` evaluates a closed-by-``env`` expression of numbers and truth values to True,
False, or None (undecided). A comparison of two balls that overlap is undecided; a condition
``c ? a : b`` whose ``c`` is undecided is undecided; connectives follow strong Kleene logic
(:mod:`tamp.core.logic3`). A partial operation outside its domain (``/`` by 0, ``log`` of a
non-positive number, ``div`` of a non-integer) has *no* value: :class:`NoValue`, because the
solver's encoding gives such a term an unspecified value, and no single value stands for it.

Why it is sound: every number is either exact or a ball that contains the true value (arb's
guarantee), so a comparison decided on balls is decided for the true values; undecided parts
stay undecided up to the result. ``truth(f, env) is False`` therefore means that ``f`` is false
at ``env`` for the real ``exp``/``log``/``sqrt`` — and a formula false at one point is valid for
no interpretation the solver's lemmas describe, since they are true of the real functions.

>>> from fractions import Fraction
>>> from lang.parser import parse_expr
>>> truth(parse_expr("exp(x) * exp(-x) <= 1"), {"x": Fraction(3)}) is None  # a tie: undecided
True
>>> truth(parse_expr("(1 - q) * exp(1) <= 1"), {"q": Fraction(0)})
False
>>> truth(parse_expr("b ==> x / 0 > 1"), {"b": False, "x": Fraction(1)})
True
"""

from __future__ import annotations

from fractions import Fraction
from typing import TYPE_CHECKING, Any, List, Mapping, Optional, Union

if TYPE_CHECKING:  # flint is imported when a value first becomes irrational (not at start-up)
    from flint import arb

from lang import ast as A
from lang.ops import euclid_divmod

from .logic3 import connective, not3

__all__ = ["NoValue", "truth", "value"]

Number = Union[Fraction, "arb", None]  # None: a number whose value is undecided


class NoValue(Exception):
    """The expression has no value at this point (a partial operation outside its domain, or a
    construct this evaluator does not know)."""


def truth(e: A.Expr, env: Mapping[str, Any]) -> Optional[bool]:
    """True, False or None (undecided) for the formula ``e`` at ``env`` (names to ``bool``,
    ``int`` or ``Fraction``); :class:`NoValue` when a part of it has no value."""
    v = value(e, env)
    if v is None or isinstance(v, bool):
        return v
    raise NoValue("not a formula")


def _ball(x: Union[Fraction, "arb"]) -> "arb":
    if not isinstance(x, Fraction):
        return x
    from flint import arb

    return arb(x.numerator) / arb(x.denominator)


def _compare(op: str, a: Number, b: Number) -> Optional[bool]:
    if a is None or b is None:
        return None
    if isinstance(a, Fraction) and isinstance(b, Fraction):
        return {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b, "==": a == b, "!=": a != b}[op]
    x, y = _ball(a), _ball(b)
    if op in (">", ">="):
        x, y, op = y, x, "<" if op == ">" else "<="
    if op == "<":
        return True if x < y else (False if x >= y else None)
    if op == "<=":
        return True if x <= y else (False if x > y else None)
    same = True if x == y else (False if x != y else None)
    return same if op == "==" else not3(same)


def _arith(op: str, a: Number, b: Number) -> Number:
    if op in ("div", "mod"):
        if not (isinstance(a, Fraction) and isinstance(b, Fraction) and a.denominator == b.denominator == 1):
            raise NoValue("div/mod of a non-integer")
        if b == 0:
            raise NoValue("division by zero")
        q, r = euclid_divmod(a.numerator, b.numerator)
        return Fraction(q if op == "div" else r)
    if op == "/" and isinstance(b, Fraction) and b == 0:
        raise NoValue("division by zero")
    if a is None or b is None:
        return None
    if isinstance(a, Fraction) and isinstance(b, Fraction):
        return a + b if op == "+" else a - b if op == "-" else a * b if op == "*" else a / b
    x, y = _ball(a), _ball(b)
    if op == "/":
        if 0 in y:  # a ball around 0: the quotient is undecided (or has no value)
            return None
        return x / y
    return x + y if op == "+" else x - y if op == "-" else x * y


def _number(v: Union[bool, Number]) -> Number:
    if isinstance(v, bool):
        raise NoValue("a truth value where a number is needed")
    return v


def _function(name: str, args: List[Number]) -> Number:
    if name in ("min", "max"):
        a, b = args
        first = _compare("<=" if name == "min" else ">=", a, b)
        return None if first is None else (a if first else b)
    (a,) = args
    if name == "abs":
        neg = _compare("<", a, Fraction(0))
        return None if neg is None else (_arith("-", Fraction(0), a) if neg else a)
    if a is None:
        return None
    if name == "exp":
        return Fraction(1) if a == 0 else _ball(a).exp()
    if name in ("log", "sqrt"):
        positive = _compare(">" if name == "log" else ">=", a, Fraction(0))
        if positive is False:
            raise NoValue(f"{name} outside its domain")
        if positive is None:
            return None
        if name == "log":
            return Fraction(0) if a == 1 else _ball(a).log()
        return _ball(a).sqrt()
    raise NoValue(f"unknown function {name}")


def value(e: A.Expr, env: Mapping[str, Any]) -> Union[bool, Number]:
    """The value of ``e`` at ``env``: ``bool``, a number (``Fraction`` exact, ``arb`` a ball
    around it), or None when it is undecided. :class:`NoValue` when it has none."""
    if isinstance(e, A.Num):
        return e.value
    if isinstance(e, A.BoolLit):
        return e.value
    if isinstance(e, A.Var):
        if e.name not in env:
            raise NoValue(f"no value for {e.name}")
        v = env[e.name]
        return v if isinstance(v, bool) else Fraction(v)
    if isinstance(e, A.Unary):
        v = value(e.operand, env)
        if e.op == "!":
            return not3(v)  # type: ignore[arg-type]
        return _arith("-", Fraction(0), v)  # type: ignore[arg-type]
    if isinstance(e, A.Binary):
        if e.op in ("&&", "||", "==>", "<==>"):
            a = value(e.left, env)
            decided = {"&&": False, "||": True, "==>": False}.get(e.op)
            if decided is not None and a is decided:  # short circuit, as the language's evaluation
                return e.op != "&&"
            return connective(e.op, a, value(e.right, env))  # type: ignore[arg-type]
        a, b = value(e.left, env), value(e.right, env)
        if isinstance(a, bool) or isinstance(b, bool):
            if e.op in ("==", "!="):
                if a is None or b is None:
                    return None
                return (a == b) == (e.op == "==")
            raise NoValue("arithmetic on truth values")
        if e.op in ("<", "<=", ">", ">=", "==", "!="):
            return _compare(e.op, a, b)
        return _arith(e.op, a, b)
    if isinstance(e, A.Cond):
        c = value(e.cond, env)
        if c is None:
            return None
        return value(e.then if c else e.other, env)
    if isinstance(e, A.Call):
        return _function(e.func, [_number(value(a, env)) for a in e.args])
    raise NoValue(f"{type(e).__name__} is not evaluated at a point")
