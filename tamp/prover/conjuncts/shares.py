"""Shares of a claim's bound for conjuncts proved apart, each by its own method.

Idea. A postcondition ``C_1 && … && C_m`` none of whose conjuncts holds on every run may still
be proved conjunct by conjunct: each ``C_i`` fails rarely for its own reason (``reds > 0`` fails
only when every one of ``n`` independent colours missed red, a product the per-iteration
composition proves), and the claim's bound β is their union: Pr[fail] <= Σ Pr[fail C_i]. This
module only *proposes* the shares ``s_i`` read off β's syntax:

* β a sum of ``m`` terms ``t_1 + … + t_m``: ``s_i = t_i`` in order, then (for ``m <=``
  :data:`MAX_PERMUTED`) in the other orders of the terms;
* β ``= c · f`` (or ``f · c``) with a number ``c``: ``s_i = (c/m) · f`` (just ``f`` when ``c = m``);
* otherwise ``s_i = β / m``.

Soundness does not rest on a proposal: the split proves the claim only when ``Σ s_i <= β`` is
valid under ``requires`` (:func:`tamp.cfa.conjuncts.shares_fit`, asked of the solver by the
prover and again by ``check-proof``) and each part is proved with its share by a method whose
own argument counts a failed ``assert`` or a run without end as failing (the parts are the same
program, so such a run fails every part).
"""

from __future__ import annotations

from fractions import Fraction
from itertools import permutations
from typing import List

from lang import ast as A

__all__ = ["share_proposals", "MAX_PERMUTED"]

#: the most parts whose shares are tried in every order of the bound's terms
MAX_PERMUTED = 3


def _terms(e: A.Expr) -> List[A.Expr]:
    if isinstance(e, A.Binary) and e.op == "+":
        return _terms(e.left) + _terms(e.right)
    return [e]


def _scaled(e: A.Expr, m: int) -> A.Expr:
    """``e / m`` written without the division when ``e`` is a number times a factor."""
    if isinstance(e, A.Binary) and e.op == "*":
        for num, other in ((e.left, e.right), (e.right, e.left)):
            if isinstance(num, A.Num) and not isinstance(num.value, bool):
                c = Fraction(num.value) / m
                return other if c == 1 else A.Binary("*", _number(c), other)
    if isinstance(e, A.Num) and not isinstance(e.value, bool):
        return _number(Fraction(e.value) / m)
    return A.Binary("/", e, A.num(m))


def _number(c: Fraction) -> A.Num:
    return A.num(c.numerator if c.denominator == 1 else c)


def share_proposals(bound: A.Expr, m: int) -> List[List[A.Expr]]:
    """Proposed shares ``[s_1, …, s_m]`` of ``bound`` for ``m`` parts, the most specific first
    (proposals only: the split checks ``Σ s_i <= bound``)."""
    if m < 1:
        return []
    out: List[List[A.Expr]] = []
    terms = _terms(bound)
    if len(terms) == m:
        orders = permutations(terms) if m <= MAX_PERMUTED else iter([tuple(terms)])
        for order in orders:
            if list(order) not in out:
                out.append(list(order))
    even = [_scaled(bound, m)] * m
    if even not in out:
        out.append(even)
    return out
