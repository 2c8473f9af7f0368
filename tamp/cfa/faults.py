"""Rely's hardware model on the syntax: which operations may fail, and which values a fault may reach.

A *fault event* is one execution of an unreliable operation: an unreliable operator
(``+. -. *. /. <. <=. >. >=. ==.``), a candidate one (``+?`` …, read as unreliable: a claim
proved so holds for every placement ``tamp place`` may choose), or a read of a variable in
unreliable memory (``unreliable a``). :func:`events` lists them in an expression with the rate of
each (``rate(OP)`` for the operator's kind, else the region's rate, else the program's ``rate``).

:func:`taintable` is the static half of value-level reliability (``reliability(x) >= E``): the
variables whose value *may* differ from the fully reliable run. It is a may-analysis (a fixpoint
over the statements, loops included): a variable is taintable when some assignment to it reads a
fault event or a taintable variable (data dependence), or is reached under an ``if``/``while``
whose condition does (control dependence: a faulty condition may send the run down the other
branch, or through a different number of iterations, so *everything written in the construct*
may differ). Over-approximating is sound: the CFA keeps a dynamic flag only for taintable
variables and a variable outside the set equals its reliable value on every run (the
:mod:`tamp.cfa` instrumentation is the dynamic, exact-per-run half).
"""

from __future__ import annotations

from typing import Dict, FrozenSet, List, Optional, Set, Tuple

from lang import ast as A
from lang.typecheck import CANDIDATE_OPS, RELIABLE_OP, UNRELIABLE_OPS
from lang.walk import free_vars

#: unreliable forms whose failed result is an arbitrary value (Rely): comparisons, division and
#: memory reads. ``+. -. *.`` keep the contract's reading (their value is the reliable one and
#: only ``failed`` is set); for the others a claim not already guarded by ``failed`` is read as
#: ``C && !failed`` (see :func:`tamp.cfa.build_cfa`).
ARBITRARY = frozenset(("/.", "<.", "<=.", ">.", ">=.", "==.", "read"))


def kind_of(op: str) -> Optional[str]:
    """The unreliable kind of operator ``op`` (``*?`` → ``*.``), None for a reliable one."""
    if op in UNRELIABLE_OPS:
        return op
    return CANDIDATE_OPS.get(op)


def reliable_op(op: str) -> str:
    """The reliable operator of an unreliable or candidate one (``<=.`` → ``<=``)."""
    k = kind_of(op)
    return RELIABLE_OP[k] if k is not None else op


def memory_rates(prog: A.Program) -> Dict[str, Optional[A.Expr]]:
    """Each variable in unreliable memory with its region's rate (None: the program's rate)."""
    return {n: m.rate for m in prog.memory for n in m.names}


def op_rate(prog: A.Program, kind: str) -> Optional[A.Expr]:
    """The failure probability of one operation of ``kind`` (``rate(OP)``, else ``rate``)."""
    for o in prog.op_rates:
        if o.op == kind:
            return o.rate
    return prog.rate


def events(e: A.Node, memory: Dict[str, Optional[A.Expr]]) -> List[Tuple[A.Node, str]]:
    """The fault events of ``e`` in source order (outermost first): ``(node, kind)``, kind an
    unreliable operator or ``"read"`` (a read of a variable in unreliable memory; an element read
    ``a[i]`` is one read, the array name inside it is not another)."""
    out: List[Tuple[A.Node, str]] = []
    stack: List[A.Node] = [e]
    while stack:
        n = stack.pop()
        if isinstance(n, A.Binary) and kind_of(n.op) is not None:
            out.append((n, str(kind_of(n.op))))
        elif isinstance(n, A.Index) and isinstance(n.base, A.Var) and n.base.name in memory:
            out.append((n, "read"))
            stack.append(n.index)
            continue
        elif isinstance(n, A.Var) and n.name in memory:
            out.append((n, "read"))
        stack.extend(reversed(list(A.children(n))))
    return out


def _faulty(e: A.Node, memory: Dict[str, Optional[A.Expr]], tainted: Set[str]) -> bool:
    return bool(events(e, memory)) or bool(free_vars(e) & tainted)


def has_loop(s: A.Stmt) -> bool:
    return A.contains(s, (A.While, A.For))


def taintable(prog: A.Program) -> FrozenSet[str]:
    """The variables a fault may reach (data and control dependence), see the module text."""
    memory = memory_rates(prog)
    tainted: Set[str] = set()

    def visit(s: A.Stmt, ctl: bool) -> None:
        if isinstance(s, A.Block):
            for x in s.stmts:
                visit(x, ctl)
        elif isinstance(s, A.Assign):
            bad = ctl or _faulty(s.value, memory, tainted)
            for t in s.targets:
                if isinstance(t, A.Index):
                    if bad or _faulty(t.index, memory, tainted):
                        tainted.add(t.base.name)  # type: ignore[attr-defined]
                elif bad:
                    tainted.add(t.name)  # type: ignore[attr-defined]
        elif isinstance(s, A.Sample):
            bad = ctl or any(_faulty(a, memory, tainted) for a in s.dist.args)
            for t in s.targets:
                if isinstance(t, A.Index):
                    if bad or _faulty(t.index, memory, tainted):
                        tainted.add(t.base.name)  # type: ignore[attr-defined]
                elif bad:
                    tainted.add(t.name)  # type: ignore[attr-defined]
        elif isinstance(s, A.If):
            c = ctl or _faulty(s.cond, memory, tainted)
            visit(s.then, c)
            if s.other is not None:
                visit(s.other, c)
        elif isinstance(s, A.While):
            visit(s.body, ctl or _faulty(s.cond, memory, tainted))
        elif isinstance(s, A.For):
            if ctl or _faulty(s.lo, memory, tainted):
                tainted.add(s.var)
            c = ctl or s.var in tainted or _faulty(s.hi, memory, tainted)
            if c:
                tainted.add(s.var)
            visit(s.body, c)

    while True:
        before = len(tainted)
        visit(prog.body, False)
        if len(tainted) == before:
            return frozenset(tainted)
