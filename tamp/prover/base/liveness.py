"""Live variables of the CFA, for pruning Houdini's candidate pools.

A variable is *live* at a CFA node when some path from the node reads it before writing it. A
candidate invariant that mentions a variable dead at its node says something about a value no
later statement, obligation or postcondition looks at, so it cannot help the proof: it is left
out of that node's pool (``a - q[i] <= M`` at the loop head of above-threshold, where ``a`` is
re-sampled before it is read again). Leaving candidates out is always sound — Houdini only
proposes, and :mod:`tamp.prover.trace.check` verifies — it can only lose proofs, so everything the
proof obligations read counts as a read: the postcondition at exits, ``requires`` and the bound
everywhere, κ at its node, an axiom's side conditions and cost at its sampling.
"""

from __future__ import annotations

from typing import Dict, Iterable, Optional, Set

from lang import ast as A
from lang.walk import free_vars


def _fv(exprs: Iterable[Optional[A.Expr]]) -> Set[str]:
    out: Set[str] = set()
    for e in exprs:
        if e is not None:
            out |= set(free_vars(e))
    return out


def reads_and_kills(stmt, axiom=None):
    """(variables ``stmt`` reads, variables it overwrites entirely); None for a statement kind
    this analysis does not know (then everything counts as live there)."""
    if isinstance(stmt, A.Assume):
        return set(free_vars(stmt.cond)), set()
    if isinstance(stmt, (A.Assign, A.Sample)):
        rhs = stmt.value if isinstance(stmt, A.Assign) else stmt.dist
        reads, kills = set(set(free_vars(rhs))), set()
        for t in stmt.targets:
            if isinstance(t, A.Var):
                kills.add(t.name)
            else:  # an element write reads the rest of the array and the index
                reads |= set(free_vars(t))
        if axiom is not None:
            reads |= _fv(list(axiom.side) + [axiom.cost])
        return reads, kills
    if isinstance(stmt, A.Skip):
        return set(), set()
    return None


def live_variables(cfa, kappa: Dict[int, A.Expr], axioms: Dict[tuple, object]) -> Dict[int, Set[str]]:
    """Live variables at every CFA node (least fixpoint of the backward equations).

    ``kappa`` maps CFA nodes to their failure bound κ; ``axioms`` maps sampling edges
    ``(u, v, k)`` to the chosen axiom instance."""
    everything = set(cfa.types)
    always = _fv(list(cfa.requires) + [cfa.bound])
    gen: Dict[int, Set[str]] = {}
    for n in cfa.graph.nodes:
        g = always | _fv([kappa.get(n)])
        if n == cfa.exit:
            g |= _fv(cfa.ensures)
        gen[n] = g
    edges = []
    for u, v, k, d in cfa.edges():
        rk = reads_and_kills(d["stmt"], axioms.get((u, v, k)))
        if rk is None:
            gen[u] = gen[u] | everything
            rk = (everything, set())
        edges.append((u, v, rk[0], rk[1]))
    live = {n: set(gen[n]) for n in cfa.graph.nodes}
    changed = True
    while changed:
        changed = False
        for u, v, reads, kills in edges:
            new = reads | (live[v] - kills)
            if not new <= live[u]:
                live[u] |= new
                changed = True
    return live


def mentions_only_live(c: A.Expr, live: Set[str], known: Set[str]) -> bool:
    """True when every program variable of ``c`` is live (names the CFA does not know, such
    as quantifier variables, do not count)."""
    return all(x in live for x in set(free_vars(c)) if x in known)
