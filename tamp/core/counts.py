"""Exact counts of the integers in a range that satisfy threshold tests.

A uniform draw ``x ~ unif(lo, hi)`` tested against thresholds (``x <= a``, ``x > b``, ``c <= x
&& x < d``) is weighted by the number of its values that pass, which the pre-expectation
calculus writes as ``sum(u in lo..=hi: φ(u) ? 1 : 0)``. When φ is a conjunction of comparisons
of the bound variable ``u`` with *integer* expressions that do not read ``u`` (``u <= e``, ``u <
e``, ``u >= e``, ``u > e``, ``u == e``, either way round), the integers passing form one
interval ``L..U`` with ``L`` the largest lower end and ``U`` the smallest upper end (``u < e``
is ``u <= e - 1`` and ``u > e`` is ``u >= e + 1`` over the integers), so the count is exactly
``max(0, U - L + 1)`` — also for an empty range (``U < L``).

:func:`interval_ends` reads those ends off a ``Sum`` (None when the body is not of that shape);
:func:`closed_count` is the count as an expression of the language. Both the z3 encoding
(:meth:`tamp.core.encode.Encoder.opaque_sum`) and the prover's proposals use it. Why it is
sound: it is the definition of the sum, evaluated (an identity of integer arithmetic); a body
of any other shape is left alone.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import List, Optional, Tuple

from lang import ast as A
from lang.walk import free_vars

ONE = A.num(1)


def _conjuncts(e: A.Expr) -> List[A.Expr]:
    if isinstance(e, A.Binary) and e.op == "&&":
        return _conjuncts(e.left) + _conjuncts(e.right)
    return [e]


def _is_one(e: A.Expr, v: int) -> bool:
    return isinstance(e, A.Num) and e.value == v


FLIP = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "=="}


def interval_ends(e: A.Sum, is_int: Callable[[A.Expr], bool]) -> Optional[Tuple[List[A.Expr], List[A.Expr]]]:
    """(lower ends, upper ends) of the integers ``u`` counted by ``e`` = ``sum(u in lo..hi: φ(u) ?
    1 : 0)`` — the range's own ends included (``hi - 1`` when exclusive) — when φ is a conjunction
    of comparisons of ``u`` with expressions ``is_int`` accepts that do not read ``u``; else None."""
    body = e.body
    if not (isinstance(body, A.Cond) and _is_one(body.then, 1) and _is_one(body.other, 0)):
        return None
    u = A.Var(e.var)
    los: List[A.Expr] = [e.lo]
    his: List[A.Expr] = [e.hi if e.inclusive else A.Binary("-", e.hi, ONE)]
    for atom in _conjuncts(body.cond):
        if not (isinstance(atom, A.Binary) and atom.op in FLIP):
            return None
        if atom.left == u and e.var not in free_vars(atom.right):
            op, other = atom.op, atom.right
        elif atom.right == u and e.var not in free_vars(atom.left):
            op, other = FLIP[atom.op], atom.left
        else:
            return None
        if not is_int(other):
            return None
        if op in ("<=", "=="):
            his.append(other)
        if op in (">=", "=="):
            los.append(other)
        if op == "<":
            his.append(A.Binary("-", other, ONE))
        if op == ">":
            los.append(A.Binary("+", other, ONE))
    return los, his


def _fold(func: str, es: List[A.Expr]) -> A.Expr:
    out = es[0]
    for x in es[1:]:
        out = A.Call(func, (out, x))
    return out


def closed_count(e: A.Sum, is_int: Callable[[A.Expr], bool]) -> Optional[A.Expr]:
    """``max(0, min(U…) - max(L…) + 1)``, the exact value of the count ``e`` (see the module
    docstring), or None when ``e`` is not such a count."""
    ends = interval_ends(e, is_int)
    if ends is None:
        return None
    los, his = ends
    width = A.Binary("+", A.Binary("-", _fold("min", his), _fold("max", los)), ONE)
    return A.Call("max", (A.num(0), width))
