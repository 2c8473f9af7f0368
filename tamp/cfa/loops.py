"""The loops of a CFA: the natural loop of a loop head and the edges inside it.

A loop head's *latches* are the sources of its back edges. Its *body* is the head and every node
that reaches a latch without passing the head. Walking back over every edge gives the whole
natural loop, inner loops included (what a termination argument ranges over); walking back over
forward edges only (the CFA minus its back edges) gives the loop's own level: an inner loop's
head and the path out of it, but not the nodes that reach the outer latch only through the
inner loop's back edge (what the prover's loop rules summarise one level at a time). On
``while (i < n) { j := 0; while (j < m) { ... } i := i + 1; }`` the first holds both loops'
statements, the second the outer loop's and the inner loop's head.

:func:`entry_value` reads the value a variable holds on entry to a loop off the straight-line code
before it (the counter's start, an accumulator's initial value, a sentinel's "nothing yet").
"""

from __future__ import annotations

from typing import AbstractSet, Any, List, Optional, Set, Tuple

from lang import ast as A
from lang.walk import substitute

Edge = Tuple[int, int, int]


def latches(cfa: Any, head: int) -> List[int]:
    """The sources of the back edges into ``head``, in edge order."""
    return [u for u, v, _k, d in cfa.edges() if v == head and d.get("back")]


def loop_body(cfa: Any, head: int, *, forward_only: bool = False) -> Set[int]:
    """The natural loop of ``head``: the head and every node that reaches one of its latches
    without passing the head, walking back over all edges (inner loops included) or, with
    ``forward_only``, over the edges that are not back edges (inner loops' bodies left out,
    their heads kept)."""
    memo = getattr(cfa, "memo", None)
    if memo is not None:
        return set(memo(("loop_body", head, forward_only), lambda: frozenset(_natural_loop(cfa, head, forward_only))))
    return _natural_loop(cfa, head, forward_only)


def _natural_loop(cfa: Any, head: int, forward_only: bool) -> Set[int]:
    g = cfa.graph
    body = {head}
    stack = latches(cfa, head)
    while stack:
        n = stack.pop()
        if n in body:
            continue
        body.add(n)
        stack.extend(w for w, _v, d in g.in_edges(n, data=True) if not (forward_only and d.get("back")))
    return body


def body_edges(cfa: Any, body: Set[int]) -> List[Tuple[Edge, A.Stmt]]:
    """The edges with both ends in ``body``, each with its statement, in edge order."""
    return [((u, v, k), d["stmt"]) for u, v, k, d in cfa.edges() if u in body and v in body]


def _written_names(st: A.Stmt) -> Set[str]:
    """The variables ``st`` writes, arrays by their name."""
    out: Set[str] = set()
    for t in getattr(st, "targets", ()):
        while isinstance(t, A.Index):
            t = t.base
        if isinstance(t, A.Var):
            out.add(t.name)
    return out


def entry_value(
    cfa: Any,
    head: int,
    body: AbstractSet[int],
    name: str,
    *,
    stop_at_loop_heads: bool = False,
    unchanged: Optional[AbstractSet[str]] = None,
    compose: bool = False,
) -> Optional[A.Expr]:
    """The value assigned to ``name`` on the straight-line path into loop ``head``: walking back
    from the head over its one entry edge (edges from ``body`` and back edges left out), then over
    each node's one in-edge, the right-hand side of the first assignment ``name := e`` met. None
    when the path branches or joins before it, when the write is a sampling, assigns several
    targets or reads ``name`` itself.

    ``stop_at_loop_heads``: another loop's head on the way also gives None (the value would be the
    one on entry to that loop, not the same on every arrival at ``head``). ``unchanged``: when
    given, the names written in the loop (arrays by name); ``e`` must not read them nor anything
    written between the assignment and the head, so that ``e`` evaluated at the head still has
    its value from the assignment. ``compose``: a write that reads ``name`` (``r := r - 1`` after
    ``r := n - 1``) is composed with the value before it, found the same way (``n - 1 - 1``)."""
    later: Optional[Set[str]] = None if unchanged is None else set(unchanged)
    cur, seen = head, set()
    pending: list[A.Expr] = []  # self-reading writes met so far (compose), in the order they run
    while cur not in seen:
        seen.add(cur)
        if stop_at_loop_heads and cur != head and cur in cfa.loop_heads:
            return None
        ins = [
            (w, d)
            for w, _v, _k, d in cfa.graph.in_edges(cur, keys=True, data=True)
            if not d.get("back") and (cur != head or w not in body)
        ]
        if len(ins) != 1:
            return None
        w, d = ins[0]
        st = d["stmt"]
        if isinstance(st, (A.Assign, A.Sample)) and any(isinstance(t, A.Var) and t.name == name for t in st.targets):
            if isinstance(st, A.Sample) or len(st.targets) != 1:
                return None
            reads = A.free_vars(st.value)
            if later is not None and reads - {name} & later:
                return None
            if name not in reads:
                value = st.value
                for f in pending:  # the earliest self-reading write applies first
                    value = substitute(f, {name: value})
                return value
            if not compose:
                return None
            pending.insert(0, st.value)
        if later is not None:
            later |= _written_names(st)
        cur = w
    return None
