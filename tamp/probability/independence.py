"""A sound, syntactic test that two events of a program are independent.

Every variable's final value is a function of the inputs and of the draws of some sampling
statements: its *sources*. :func:`sources` computes, for a loop-free program without
``assume``, a superset of each variable's sources by one forward pass — an assignment's target
gets the sources of everything it reads, a sampling's target gets the statement itself plus the
sources of its arguments, and both also get the sources of every branch condition they sit
under (control dependence); after an ``if`` a variable has the union of both branches' sources.

Why disjoint sources mean independence: the joint density of all draws is the product, over
sampling statements s, of a kernel k_s(x_s | parents) whose parents lie in the source set of
s's target. A variable's source set is closed under parents, so for two closed, disjoint sets
S1 and S2 the draws of S1 and those of S2 factor apart after the other draws are integrated
out (in reverse program order, each kernel integrates to 1). An event over variables whose
sources lie in S1 is then independent of one whose sources lie in S2, and so
``P(E | G) = P(E | !G) = P(E)``: FairSquare's ratio is exactly 1 whenever the decision never
(directly or through the population model) sees the sensitive attribute.

Loops and ``assume`` (conditioning couples everything) make the test answer "unknown" (False).
"""

from __future__ import annotations

from typing import Dict, FrozenSet, Optional

from lang import ast as A
from lang.walk import free_vars

Sources = Dict[str, FrozenSet[int]]


def _reads(e: Optional[A.Expr], src: Sources) -> FrozenSet[int]:
    if e is None:
        return frozenset()
    out: FrozenSet[int] = frozenset()
    for name in set(free_vars(e)):
        out |= src.get(name, frozenset())
    return out


def _block(stmts, src: Sources, pc: FrozenSet[int]) -> Optional[Sources]:
    for s in stmts:
        after = _stmt(s, src, pc)
        if after is None:
            return None
        src = after
    return src


def _target_sources(t: A.Expr, src: Sources) -> FrozenSet[int]:
    """An array element write keeps the array's other elements: a weak update."""
    if isinstance(t, A.Index):
        return _reads(t.index, src) | src.get(A.target_name(t), frozenset())
    return frozenset()


def _stmt(s: A.Stmt, src: Sources, pc: FrozenSet[int]) -> Optional[Sources]:
    src = dict(src)
    if isinstance(s, (A.Skip, A.VarDecl)):
        return src
    if isinstance(s, A.Assign):
        deps = _reads(s.value, src) | pc
        for t in s.targets:
            name = A.target_name(t)
            src[name] = deps | _target_sources(t, src)
        return src
    if isinstance(s, A.Sample):
        deps = frozenset([id(s)]) | pc
        for a in s.dist.args:
            deps |= _reads(a, src)
        for t in s.targets:
            name = A.target_name(t)
            src[name] = deps | _target_sources(t, src)
        return src
    if isinstance(s, A.Block):
        return _block(s.stmts, src, pc)
    if isinstance(s, A.If):
        inner = pc | _reads(s.cond, src)
        then = _block(s.then.stmts, src, inner)
        other = _block(s.other.stmts, src, inner) if s.other is not None else dict(src)
        if then is None or other is None:
            return None
        return {k: then.get(k, frozenset()) | other.get(k, frozenset()) for k in set(then) | set(other)}
    return None  # loops, assume, anything else: no claim


def sources(program: A.Program) -> Optional[Sources]:
    """Each variable's sampling-statement sources at exit, or None when the test does not apply."""
    return _block(program.body.stmts, {}, frozenset())


def independent(program: A.Program, e1: A.Expr, e2: A.Expr) -> bool:
    """True only if the events ``e1`` and ``e2`` (over the final state) are independent."""
    src = sources(program)
    if src is None:
        return False
    return not (_reads(e1, src) & _reads(e2, src))
