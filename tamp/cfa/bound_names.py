"""Bound variables of the specification renamed apart from the program's variables.

A user may name a quantifier's variable like a program variable — ``forall b in 0..m: keep[b]
==> …`` over a loop ``for b in 0..m`` — which is legal (the quantifier's ``b`` shadows the
program's) but makes every later rewriting of the specification over program variables (the
prover's prefix forms ``0..m`` → ``0..b``, substitutions through ``b := b + 1``, array writes
``keep[b] := true``) capture the wrong ``b``. The CFA carries the specification with such
variables renamed to a fresh ``b$`` — alpha-equivalent, so the claim is unchanged — and the
proof checker rebuilds the CFA the same way.

>>> from lang.parser import parse_expr
>>> from tamp.show import show_expr
>>> show_expr(rename_apart(parse_expr("forall b in 0..m: keep[b] && b < m"), {"b", "m", "keep"}))
'forall b$ in 0..m: keep[b$] && b$ < m'
>>> e = parse_expr("forall j in 0..m: keep[j]")
>>> rename_apart(e, {"b", "m", "keep"}) is e
True
"""

from __future__ import annotations

import dataclasses
from typing import AbstractSet

from lang import ast as A
from lang.walk import DESCEND, Transformer, free_vars, substitute


class _Apart(Transformer):
    def __init__(self, taken: AbstractSet[str]):
        self.taken = set(taken)

    def enter(self, node):
        if isinstance(node, (A.Quant, A.Sum)) and node.var in self.taken:
            lo, hi = self.walk(node.lo), self.walk(node.hi)
            fresh = node.var + "$"
            while fresh in self.taken or fresh in set(free_vars(node.body)):
                fresh += "$"
            body = self.walk(substitute(node.body, {node.var: A.Var(fresh)}))
            return dataclasses.replace(node, var=fresh, lo=lo, hi=hi, body=body)
        return DESCEND


def rename_apart(e: A.Expr, taken: AbstractSet[str]) -> A.Expr:
    """``e`` with every quantifier or sum variable that is in ``taken`` renamed to a fresh name
    (the same expression object when none is)."""
    return _Apart(taken).walk(e)
