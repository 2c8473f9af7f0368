"""The meaning of the language's operators, defined once, on exact values.

Every evaluator and translator takes its operator semantics from here: the exact evaluator
(:mod:`lang.evaluate`), the certificate checker's replay, the probability engine's executor,
the causal engine's terms; the z3 translation (:mod:`tamp.core.z3expr`) has one entry per
operator of these tables and is tested against them.

Values are Python ``int``, :class:`~fractions.Fraction` and ``bool`` (``float`` is accepted
where noted). The semantics (``docs/LANGUAGE.md``):

* ``+ - *`` and unary ``-``: exact arithmetic; ``/`` is real division (``7 / 2 = 7/2``);
* ``div``, ``mod``: Euclidean integer division as in SMT-LIB, ``a = b·q + r`` with
  ``0 <= r < |b|`` (so ``-7 div 2 = -4``, ``-7 mod 2 = 1``, ``7 div -2 = -3``);
* division by zero, ``div``/``mod`` of non-integers, ``log`` of a non-positive number and
  ``sqrt`` of a negative one have no value (:class:`DomainError`);
* ``< <= > >= == !=`` compare numbers (``== !=`` also Booleans);
* ``&& || ! ==> <==>`` are the Boolean connectives (``a ==> b`` is ``!a || b``, ``<==>`` is
  equality of truth values); evaluators short-circuit (:data:`SHORT_CIRCUIT`);
* ``c ? a : b`` is ``a`` when ``c`` holds, else ``b``;
* ``abs``, ``min``, ``max`` as usual; ``log`` (natural), ``exp``, ``sqrt`` are real
  functions, exact only at the few rational points (:func:`exact_fn`).

>>> BINARY["div"].exact(-7, 2), BINARY["mod"].exact(-7, 2), BINARY["div"].exact(7, -2)
(-4, 1, -3)
>>> BINARY["/"].exact(7, 2)
Fraction(7, 2)
>>> BINARY["==>"].exact(False, False), NEGATE["<"], MIRROR["<"]
(True, '>=', '>')
>>> exact_fn("sqrt", Fraction(9, 4)), exact_fn("log", Fraction(2))
(Fraction(3, 2), None)
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

__all__ = [
    "DomainError",
    "DivisionByZero",
    "Op",
    "BINARY",
    "UNARY",
    "FUNCTIONS",
    "SHORT_CIRCUIT",
    "CONNECTIVES",
    "COMPARISONS",
    "ARITHMETIC",
    "NEGATE",
    "MIRROR",
    "PARTIAL",
    "CONDITION",
    "euclid_divmod",
    "euclid_divmod_elementwise",
    "as_integer",
    "truediv",
    "euclid_div",
    "euclid_mod",
    "ite",
    "exact_fn",
    "approx_fn",
    "in_domain",
]

Number = int | Fraction


class DomainError(ArithmeticError):
    """The operation has no value at these operands (division by zero, ``log`` of 0 …)."""


class DivisionByZero(DomainError, ZeroDivisionError):
    """``/``, ``div`` or ``mod`` by zero."""


@dataclass(frozen=True)
class Op:
    """One operator: its source spelling, its kind and its meaning on exact values."""

    spelling: str
    kind: str  # "arith" | "intdiv" | "compare" | "logic"
    exact: Callable[..., Any]
    doc: str


def as_integer(x: Any) -> int:
    """``x`` as an ``int`` when it is an integer (``int``, or a ``Fraction`` or ``float`` with an
    integral value); else :class:`DomainError`.

    >>> as_integer(Fraction(6, 3))
    2
    """
    if isinstance(x, bool):
        raise DomainError("an integer is needed, not a Boolean")
    if isinstance(x, int):
        return x
    if isinstance(x, Fraction) and x.denominator == 1:
        return x.numerator
    if isinstance(x, float) and x.is_integer():
        return int(x)
    raise DomainError(f"an integer is needed, not {x}")


def euclid_divmod(a: int, b: int) -> tuple[int, int]:
    """SMT-LIB integer division: ``a = b*q + r`` with ``0 <= r < |b|``.

    >>> euclid_divmod(-7, 2), euclid_divmod(7, -2), euclid_divmod(-7, -2)
    ((-4, 1), (-3, 1), (4, 1))
    """
    if b == 0:
        raise DivisionByZero("division by zero")
    q, r = divmod(a, b)
    if r < 0:  # only when b < 0 (Python's r takes b's sign)
        q, r = q + 1, r - b
    return q, r


def euclid_divmod_elementwise(a: Any, b: Any) -> tuple[Any, Any]:
    """Euclidean ``(a div b, a mod b)`` with only ``// - * + <`` on the operands, so that it
    applies element-wise to numpy arrays (no zero check: arrays follow numpy's rules there).

    >>> import numpy as np
    >>> q, r = euclid_divmod_elementwise(np.array([-7, 7, -7]), np.array([2, -2, -2]))
    >>> q.tolist(), r.tolist()
    ([-4, -3, 4], [1, 1, 1])
    """
    q = a // b
    r = a - b * q
    negative = r < 0  # only where b < 0 (floor division leaves r with b's sign)
    return q + negative, r - b * negative


def euclid_div(a: Any, b: Any) -> int:
    """``a div b`` (Euclidean); the operands must be integers."""
    return euclid_divmod(as_integer(a), as_integer(b))[0]


def euclid_mod(a: Any, b: Any) -> int:
    """``a mod b`` (Euclidean, ``0 <= a mod b < |b|``); the operands must be integers."""
    return euclid_divmod(as_integer(a), as_integer(b))[1]


def truediv(a: Any, b: Any) -> Any:
    """``a / b``: real division, exact on ``int``/``Fraction`` (floats divide as floats)."""
    if b == 0:
        raise DivisionByZero("division by zero")
    if type(a) is int and type(b) is int:
        return Fraction(a, b)
    return a / b  # exact when either is a Fraction (and the other an int or Fraction)


def ite(c: Any, a: Any, b: Any) -> Any:
    """``c ? a : b``."""
    return a if c else b


def _implies(a: Any, b: Any) -> bool:
    return (not a) or bool(b)


def _iff(a: Any, b: Any) -> bool:
    return bool(a) == bool(b)


BINARY: dict[str, Op] = {
    o.spelling: o
    for o in (
        Op("+", "arith", operator.add, "sum"),
        Op("-", "arith", operator.sub, "difference"),
        Op("*", "arith", operator.mul, "product"),
        Op("/", "arith", truediv, "real division (no value when the divisor is 0)"),
        Op("div", "intdiv", euclid_div, "Euclidean integer quotient"),
        Op("mod", "intdiv", euclid_mod, "Euclidean remainder, 0 <= r < |b|"),
        Op("<", "compare", operator.lt, "less than"),
        Op("<=", "compare", operator.le, "at most"),
        Op(">", "compare", operator.gt, "greater than"),
        Op(">=", "compare", operator.ge, "at least"),
        Op("==", "compare", operator.eq, "equal (numbers or truth values)"),
        Op("!=", "compare", operator.ne, "different"),
        Op("&&", "logic", lambda a, b: bool(a) and bool(b), "conjunction"),
        Op("||", "logic", lambda a, b: bool(a) or bool(b), "disjunction"),
        Op("==>", "logic", _implies, "implication: !a || b"),
        Op("<==>", "logic", _iff, "equivalence: equal truth values"),
    )
}

UNARY: dict[str, Op] = {
    "-": Op("-", "arith", operator.neg, "negation"),
    "!": Op("!", "logic", operator.not_, "Boolean negation"),
}

ARITHMETIC = frozenset(s for s, o in BINARY.items() if o.kind in ("arith", "intdiv"))
COMPARISONS = frozenset(s for s, o in BINARY.items() if o.kind == "compare")
CONNECTIVES = frozenset(s for s, o in BINARY.items() if o.kind == "logic")

#: for each connective: the value of the left operand that decides it alone, and the result then
SHORT_CIRCUIT: dict[str, tuple[bool, bool]] = {"&&": (False, False), "||": (True, True), "==>": (False, True)}

#: the comparison that holds exactly when ``op`` does not (``!(a < b)`` is ``a >= b``)
NEGATE: dict[str, str] = {"<": ">=", "<=": ">", ">": "<=", ">=": "<", "==": "!=", "!=": "=="}

#: the comparison with the operands swapped (``a < b`` is ``b > a``)
MIRROR: dict[str, str] = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "==", "!=": "!="}


# ---------------------------------------------------------------------------- built-in functions


def _minimum(a: Any, b: Any) -> Any:
    return a if a <= b else b


def _maximum(a: Any, b: Any) -> Any:
    return a if a >= b else b


def _abs(a: Any) -> Any:
    return a if a >= 0 else -a


#: the partial operators and functions: which operand (by position) must meet which condition
#: for a value to exist (``a / b``: ``b`` nonzero; ``log(x)``: ``x`` positive …)
PARTIAL: dict[str, tuple[int, str]] = {
    "/": (1, "nonzero"),
    "div": (1, "nonzero"),
    "mod": (1, "nonzero"),
    "log": (0, "positive"),
    "sqrt": (0, "nonnegative"),
}

#: each condition of :data:`PARTIAL` as a comparison with 0 (``nonzero``: ``x != 0`` …)
CONDITION: dict[str, str] = {"nonzero": "!=", "positive": ">", "nonnegative": ">="}


def in_domain(name: str, v: Any) -> bool:
    """Whether ``log``/``exp``/``sqrt`` has a value at ``v`` (:data:`PARTIAL`: ``log`` needs
    ``v > 0``, ``sqrt`` ``v >= 0``; ``exp`` is total).

    >>> in_domain("log", 0), in_domain("sqrt", 0), in_domain("exp", -5)
    (False, True, True)
    """
    partial = PARTIAL.get(name)
    return partial is None or bool(BINARY[CONDITION[partial[1]]].exact(v, 0))


def exact_fn(name: str, v: Fraction) -> Fraction | None:
    """The exact value of ``log``/``exp``/``sqrt`` at ``v`` when it is rational (``exp(0)``,
    ``log(1)``, square roots of squares), else None (also outside the domain)."""
    if name == "exp":
        return Fraction(1) if v == 0 else None
    if name == "log":
        return Fraction(0) if v == 1 else None
    if name == "sqrt":
        if v < 0:
            return None
        n, d = math.isqrt(v.numerator), math.isqrt(v.denominator)
        return Fraction(n, d) if n * n == v.numerator and d * d == v.denominator else None
    raise ValueError(f"not a transcendental function: {name}")


def approx_fn(name: str, v: Any) -> float:
    """``log``/``exp``/``sqrt`` of a number, in binary64 (``exp`` overflows to infinity; a
    ``log`` of a fraction beyond the float range is taken on its numerator and denominator);
    :class:`DomainError` outside the domain."""
    if not in_domain(name, v):
        raise DomainError(f"{name} of {'non-positive' if name == 'log' else 'negative'} {v}")
    if name == "log":
        fv = float(v)
        if isinstance(v, Fraction) and (fv == 0.0 or math.isinf(fv)):
            return math.log(v.numerator) - math.log(v.denominator)
        return math.log(fv)
    if name == "sqrt":
        return math.sqrt(v)
    if name == "exp":
        try:
            return math.exp(v)
        except OverflowError:
            return math.inf
    raise ValueError(f"not a transcendental function: {name}")


#: the built-in functions of expressions, by name: (arity, exact meaning); log/exp/sqrt map to
#: their binary64 approximation (:func:`exact_fn` gives the rational points)
FUNCTIONS: dict[str, tuple[int, Callable[..., Any]]] = {
    "abs": (1, _abs),
    "min": (2, _minimum),
    "max": (2, _maximum),
    "log": (1, lambda v: approx_fn("log", v)),
    "exp": (1, lambda v: approx_fn("exp", v)),
    "sqrt": (1, lambda v: approx_fn("sqrt", v)),
}
