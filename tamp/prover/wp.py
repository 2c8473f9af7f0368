"""Weakest preconditions of candidate invariants through one CFA statement, array writes included.

Houdini's backward candidates (:func:`tamp.prover.invariants.node_pools`) are the candidates of a
node's successors pushed back through the edge between them. :func:`tamp.prover.labels.push_back`
handles assumptions, assignments to variables and samplings; an element write ``a[e] := v``
there drops every candidate that reads ``a``. Here such a write replaces each element read
``a[x]`` by ``x == e ? v : a[x]`` — exactly the value ``a[x]`` has after the write — so a
candidate about the whole array (``forall j in 0..i+1: above[j] ==> …``) reaches the branches
that write ``above[i] := true`` / ``above[i] := false`` one by one (a branch on a sample that
writes an array element proves like ``above[i] := a > T`` does).

Nothing here needs to be right for soundness: candidates are only proposals, which Houdini keeps
only when the solver proves them inductive, and the checker verifies the result.

>>> from lang.parser import parse_expr
>>> from lang.printer import print_expr
>>> st = A.Assign((A.Index(A.Var("b"), A.Var("i")),), A.BoolLit(True))
>>> print_expr(push_back(st, parse_expr("forall j in 0..i + 1: b[j] ==> q[j] > 0")))
'forall j in 0..i + 1: (j == i ? true : b[j]) ==> q[j] > 0'
"""

from __future__ import annotations

from typing import Any, Optional

from lang import ast as A
from lang.walk import DESCEND, Transformer

from .labels import push_back as push_back_simple


def _bound_names(e: A.Expr) -> set:
    return {n.var for n in A.walk(e) if isinstance(n, (A.Quant, A.Sum))}


class _ElementWrite(Transformer):
    """Every read ``a[x]`` replaced by ``x == e ? v : a[x]`` (``x`` itself rewritten first)."""

    def __init__(self, name: str, index: A.Expr, value: A.Expr):
        self.name, self.index, self.value = name, index, value

    def enter(self, node: A.Node) -> Any:
        if isinstance(node, A.Expr) and self.name not in A.free_vars(node):
            return node
        return DESCEND

    def Index(self, node: A.Index, kids) -> A.Expr:
        base, idx = kids
        if base == A.Var(self.name):
            return A.Cond(A.Binary("==", idx, self.index), self.value, A.Index(base, idx))
        return A.Index(base, idx)


def push_back(st, c: A.Expr) -> Optional[A.Expr]:
    """``c`` after ``st`` pushed back before it, or None when it cannot be (a sampling of what
    ``c`` reads, an array read other than by element, a write whose index or value would be
    captured by a bound variable of ``c``)."""
    if isinstance(st, A.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], A.Index):
        t = st.targets[0]
        if not isinstance(t.base, A.Var):
            return None
        name = t.base.name
        if name not in A.free_vars(c):
            return c
        if _bound_names(c) & (A.free_vars(t.index) | A.free_vars(st.value)):
            return None
        # every occurrence of the array must be an element read
        reads = sum(1 for n in A.walk(c) if isinstance(n, A.Index) and n.base == t.base)
        uses = sum(1 for n in A.walk(c) if n == t.base)
        if uses != reads:
            return None
        return _ElementWrite(name, t.index, st.value).walk(c)
    return push_back_simple(st, c)
