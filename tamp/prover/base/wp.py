"""Weakest preconditions of candidate invariants through one CFA statement, array writes included.

Houdini's backward candidates (:func:`tamp.prover.loops.invariants.node_pools`) are the candidates of a
node's successors pushed back through the edge between them. :func:`push_back_simple`
handles assumptions, assignments to variables and samplings; an element write ``a[e] := v``
there drops every candidate that reads ``a``. Here such a write replaces each element read
``a[x]`` by ``x == e ? v : a[x]`` — exactly the value ``a[x]`` has after the write — so a
candidate about the whole array (``forall j in 0..i+1: above[j] ==> …``) reaches the branches
that write ``above[i] := true`` / ``above[i] := false`` one by one (a branch on a sample that
writes an array element proves like ``above[i] := a > T`` does). A sampling ``a[e] ~ D`` keeps
a quantified candidate for the other elements, ``forall j in lo..hi: j == e || B`` (what the loop
body needs before the sampling when its counter moved first: ``i := i + 1; a[i] ~ …``).

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
from lang.walk import DESCEND, Transformer, free_vars
from tamp.prover.base.exprs import assigned_names, subst


def _bound_names(e: A.Expr) -> set:
    return {n.var for n in A.walk(e) if isinstance(n, (A.Quant, A.Sum))}


class _ElementWrite(Transformer):
    """Every read ``a[x]`` replaced by ``x == e ? v : a[x]`` (``x`` itself rewritten first)."""

    def __init__(self, name: str, index: A.Expr, value: A.Expr):
        self.name, self.index, self.value = name, index, value

    def enter(self, node: A.Node) -> Any:
        if isinstance(node, A.Expr) and self.name not in set(free_vars(node)):
            return node
        return DESCEND

    def Index(self, node: A.Index, kids) -> A.Expr:
        base, idx = kids
        if base == A.Var(self.name):
            return A.Cond(A.Binary("==", idx, self.index), self.value, A.Index(base, idx))
        return A.Index(base, idx)


def element_write(c: A.Expr, name: str, index: A.Expr, value: A.Expr) -> A.Expr:
    """``c`` with every read ``name[x]`` replaced by ``x == index ? value : name[x]`` (the
    caller checks that ``c`` uses the array only by element reads and captures nothing)."""
    out: A.Expr = _ElementWrite(name, index, value).walk(c)
    return out


def push_back(st, c: A.Expr) -> Optional[A.Expr]:
    """``c`` after ``st`` pushed back before it, or None when it cannot be (a sampling of what
    ``c`` reads, an array read other than by element, a write whose index or value would be
    captured by a bound variable of ``c``)."""
    if isinstance(st, A.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], A.Index):
        t = st.targets[0]
        if not isinstance(t.base, A.Var):
            return None
        name = t.base.name
        if name not in set(free_vars(c)):
            return c
        if _bound_names(c) & (set(free_vars(t.index)) | set(free_vars(st.value))):
            return None
        # every occurrence of the array must be an element read
        reads = sum(1 for n in A.walk(c) if isinstance(n, A.Index) and n.base == t.base)
        uses = sum(1 for n in A.walk(c) if n == t.base)
        if uses != reads:
            return None
        return _ElementWrite(name, t.index, st.value).walk(c)
    if isinstance(st, A.Sample) and len(st.targets) == 1 and isinstance(st.targets[0], A.Index):
        return _past_element_sample(st.targets[0], c)
    return push_back_simple(st, c)


def push_back_simple(st, c: A.Expr) -> Optional[A.Expr]:
    """The condition ``c`` after ``st`` pushed back before it (weakest precondition of a
    deterministic step), or None when the step havocs what ``c`` reads."""
    if isinstance(st, A.Assume):
        return c
    if isinstance(st, A.Assign):
        t = st.targets[0]
        if isinstance(t, A.Var):
            return subst(c, {t.name: st.value})
        return None if A.target_name(t) in set(free_vars(c)) else c
    if isinstance(st, A.Sample):
        return None if assigned_names(st) & set(free_vars(c)) else c
    return None


def _past_element_sample(t: A.Index, c: A.Expr) -> Optional[A.Expr]:
    """A quantified candidate ``forall j in lo..hi: B`` over an array ``a`` pushed back before the
    sampling ``a[e] ~ D``: ``forall j in lo..hi: x1 == e || … || B`` (x1 … the indices B reads
    ``a`` at), which says B for the elements the sampling leaves alone (the sampled one is the
    axiom's business). None for other shapes."""
    if not isinstance(t.base, A.Var):
        return None
    name = t.base.name
    if name not in set(free_vars(c)):
        return c
    if not (isinstance(c, A.Quant) and c.kind == "forall"):
        return None
    if name in set(free_vars(c.lo)) | set(free_vars(c.hi)) or c.var in set(free_vars(t.index)):
        return None
    idx = []
    for n in A.walk(c.body):
        if isinstance(n, A.Index) and n.base == t.base and n.index not in idx:
            idx.append(n.index)
    if sum(1 for n in A.walk(c.body) if n == t.base) != sum(
        1 for n in A.walk(c.body) if isinstance(n, A.Index) and n.base == t.base
    ):
        return None
    if _bound_names(c.body) & set(free_vars(t.index)):
        return None
    guard: A.Expr = c.body
    for x in reversed(idx):
        guard = A.Binary("||", A.Binary("==", x, t.index), guard)
    return A.Quant("forall", c.var, c.lo, c.hi, c.inclusive, guard)
