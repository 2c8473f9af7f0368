"""The checker's own count of the values of a uniform draw that pass threshold tests.

``x ~ unif(lo, hi)`` read by the failure in tests of x is weighted by ``#{v in lo..hi: φ(v)}/N``
(:mod:`.exp_rules`). When φ is a conjunction of *thresholds* — ``v <= e``, ``v < e``, ``v >= e``,
``v > e``, ``v == e``, written either way round (``e >= v``) or negated (``!(v > e)`` is ``v <= e``)
— against expressions e that do not read v and are surely integers, and lo and hi are integers,
the count is written in closed form::

    max(0, min(hi, U₁, …) - max(lo, L₁, …) + 1)

with Uᵢ the upper ends (``e`` for ``v <= e``, ``e - 1`` for ``v < e``) and Lᵢ the lower ones
(``e`` for ``v >= e``, ``e + 1`` for ``v > e``; ``v == e`` gives both). Why this is exact: over
the integers ``v < e`` is ``v <= e - 1`` and ``v > e`` is ``v >= e + 1``, and ``!(a <= b)`` is
``a > b`` (the order is total), so the passing values are exactly the integers of the one interval
``L..U`` with L the largest lower end and U the smallest; there are ``U - L + 1`` of them when
``L <= U`` and none otherwise — an empty range (``hi < lo``) included, whence the ``max(0, …)``.
A threshold against a value that may be real (``v <= N/2`` passes up to ``floor(N/2)``) is not
closed: :func:`threshold_count` answers None and the count stays the sum it is by definition.

This module is written for the checker alone (it shares nothing with the prover's code): a
mistake in the prover's count then does not repeat here, and the solver decides the budget with
this count.
"""

from __future__ import annotations

from typing import Callable, List, Optional

from lang import ast as A
from lang.walk import free_vars

_MIRROR = {"<=": ">=", ">=": "<=", "<": ">", ">": "<", "==": "=="}
_OPPOSITE = {"<=": ">", ">": "<=", "<": ">=", ">=": "<"}


def _literals(test: A.Expr) -> List[A.Expr]:
    if isinstance(test, A.Binary) and test.op == "&&":
        return _literals(test.left) + _literals(test.right)
    return [test]


def _threshold(lit: A.Expr, v: str) -> Optional[tuple]:
    """(op, e) with the literal meaning ``v op e`` (op among <= < >= > ==), or None."""
    negated = False
    while isinstance(lit, A.Unary) and lit.op == "!":
        negated, lit = not negated, lit.operand
    if not (isinstance(lit, A.Binary) and lit.op in _MIRROR):
        return None
    op = lit.op
    if negated:
        if op not in _OPPOSITE:
            return None  # !(v == e) is no interval
        op = _OPPOSITE[op]
    if lit.left == A.Var(v) and v not in free_vars(lit.right):
        return op, lit.right
    if lit.right == A.Var(v) and v not in free_vars(lit.left):
        return _MIRROR[op], lit.left
    return None


def threshold_count(v: str, lo: A.Expr, hi: A.Expr, test: A.Expr, is_int: Callable[[A.Expr], bool]) -> Optional[A.Expr]:
    """The closed count of the integers ``v`` in ``lo..=hi`` passing ``test`` (module docstring),
    or None when ``test`` is not a conjunction of integer thresholds of ``v`` or an end of the
    range may not be an integer."""
    if not (is_int(lo) and is_int(hi)):
        return None
    one = A.num(1)
    lows: List[A.Expr] = [lo]
    highs: List[A.Expr] = [hi]
    for lit in _literals(test):
        t = _threshold(lit, v)
        if t is None or not is_int(t[1]):
            return None
        op, e = t
        if op in ("<=", "=="):
            highs.append(e)
        if op in (">=", "=="):
            lows.append(e)
        if op == "<":
            highs.append(A.Binary("-", e, one))
        if op == ">":
            lows.append(A.Binary("+", e, one))
    top, bottom = highs[0], lows[0]
    for e in highs[1:]:
        top = A.Call("min", (top, e))
    for e in lows[1:]:
        bottom = A.Call("max", (bottom, e))
    return A.Call("max", (A.num(0), A.Binary("+", A.Binary("-", top, bottom), one)))
