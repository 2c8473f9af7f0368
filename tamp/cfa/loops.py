"""The loops of a CFA: the natural loop of a loop head and the edges inside it.

A loop head's *latches* are the sources of its back edges. Its *body* is the head and every node
that reaches a latch without passing the head. Walking back over every edge gives the whole
natural loop, inner loops included (what a termination argument ranges over); walking back over
forward edges only (the CFA minus its back edges) gives the loop's own level: an inner loop's
head and the path out of it, but not the nodes that reach the outer latch only through the
inner loop's back edge (what the prover's loop rules summarise one level at a time). On
``while (i < n) { j := 0; while (j < m) { ... } i := i + 1; }`` the first holds both loops'
statements, the second the outer loop's and the inner loop's head.
"""

from __future__ import annotations

from typing import Any, List, Set, Tuple

from lang import ast as A

Edge = Tuple[int, int, int]


def latches(cfa: Any, head: int) -> List[int]:
    """The sources of the back edges into ``head``, in edge order."""
    return [u for u, v, _k, d in cfa.edges() if v == head and d.get("back")]


def loop_body(cfa: Any, head: int, *, forward_only: bool = False) -> Set[int]:
    """The natural loop of ``head``: the head and every node that reaches one of its latches
    without passing the head, walking back over all edges (inner loops included) or, with
    ``forward_only``, over the edges that are not back edges (inner loops' bodies left out,
    their heads kept)."""
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
