"""Small constructors for :mod:`lang.ast` expressions, used to write axioms readably.

Every function returns a fresh AST node without a source position. Numbers are
exact (:func:`lang.ast.num`): ``n(1)`` is the integer literal 1, ``n("0.5")``
the exact rational 1/2. Boolean connectives fold the trivial cases
(``and_()`` is ``true``, ``or_()`` is ``false``, a single operand is returned
as is) so that axioms stay small for the SMT encoder.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Iterable, Union

from lang import ast as A

ExprLike = Union[A.Expr, int, Fraction, str]

TRUE = A.BoolLit(True)
FALSE = A.BoolLit(False)


def n(value) -> A.Num:
    """An exact numeric literal from an int, Fraction or decimal string (floats are converted
    exactly, i.e. to the binary value they hold)."""
    if isinstance(value, float):
        value = Fraction(value)
    return A.num(value)


def e(x: ExprLike) -> A.Expr:
    """``x`` itself if it is an expression, else a literal."""
    if isinstance(x, A.Expr):
        return x
    if isinstance(x, bool):
        return A.BoolLit(x)
    return n(x)


def var(name: str) -> A.Var:
    return A.Var(name)


def binop(op: str, a: ExprLike, b: ExprLike) -> A.Binary:
    return A.Binary(op, e(a), e(b))


def add(a, b):
    return binop("+", a, b)


def sub(a, b):
    return binop("-", a, b)


def mul(a, b):
    return binop("*", a, b)


def div(a, b):
    return binop("/", a, b)


def lt(a, b):
    return binop("<", a, b)


def le(a, b):
    return binop("<=", a, b)


def gt(a, b):
    return binop(">", a, b)


def ge(a, b):
    return binop(">=", a, b)


def eq(a, b):
    return binop("==", a, b)


def ne(a, b):
    return binop("!=", a, b)


def neg(a) -> A.Unary:
    return A.Unary("-", e(a))


def not_(a) -> A.Expr:
    """Negation, folding literals and double negation."""
    a = e(a)
    if isinstance(a, A.BoolLit):
        return A.BoolLit(not a.value)
    if isinstance(a, A.Unary) and a.op == "!":
        return a.operand
    return A.Unary("!", a)


def and_(*xs: ExprLike) -> A.Expr:
    """Conjunction of the operands (left-nested), dropping ``true`` and collapsing on ``false``."""
    items = [e(x) for x in xs if not (isinstance(x, A.BoolLit) and x.value)]
    if any(isinstance(x, A.BoolLit) and not x.value for x in items):
        return FALSE
    return _fold("&&", items, TRUE)


def or_(*xs: ExprLike) -> A.Expr:
    """Disjunction of the operands (left-nested), dropping ``false`` and collapsing on ``true``."""
    items = [e(x) for x in xs if not (isinstance(x, A.BoolLit) and not x.value)]
    if any(isinstance(x, A.BoolLit) and x.value for x in items):
        return TRUE
    return _fold("||", items, FALSE)


def _fold(op: str, items, empty):
    if not items:
        return empty
    out = items[0]
    for x in items[1:]:
        out = A.Binary(op, out, x)
    return out


def call(func: str, *args: ExprLike) -> A.Call:
    return A.Call(func, tuple(e(a) for a in args))


def log(a):
    return call("log", a)


def exp(a):
    return call("exp", a)


def sqrt(a):
    return call("sqrt", a)


def abs_(a):
    return call("abs", a)


def min_(*xs: ExprLike) -> A.Expr:
    """``min`` of one or more operands, as nested binary ``min`` calls."""
    items = [e(x) for x in xs]
    out = items[0]
    for x in items[1:]:
        out = call("min", out, x)
    return out


def max_(*xs: ExprLike) -> A.Expr:
    """``max`` of one or more operands, as nested binary ``max`` calls."""
    items = [e(x) for x in xs]
    out = items[0]
    for x in items[1:]:
        out = call("max", out, x)
    return out


def disjunction(items: Iterable[A.Expr]) -> A.Expr:
    return or_(*items)


def conjunction(items: Iterable[A.Expr]) -> A.Expr:
    return and_(*items)
