"""Candidate labels for the joins of loop-free selection code: axiom facts carried into the
variables a branch copies them into.

Report noisy max written out over k candidates keeps the winner in a chain of branches,
``if (a3 > best) { best := a3; r := 3; tq := q3; }``. Labelled as a trace tree it has 2^(k-1)
traces; labelled on the CFA itself (one node per program point, branches joined), it needs
what holds at each join whichever branch was taken: the running best is some draw whose axiom
fact ``a3 - q3 <= M`` now reads ``best - tq <= M``. For every straight run of assignments (a
*block*: consecutive assignments on a path without branching) and its copies ``x := y`` (x not
overwritten later in the block) this proposes each axiom fact with the copied variables replaced
by their copies, all at once (the block copies them together, so only together they still
hold) — and with only some of them replaced (``q3 - best <= M``: the best so far stays above
what every earlier draw's fact bounds), and ``x >= y``, ``x <= y``. With the branch conditions and their
negations (``!(a2 > best)``, already candidates) that is linear in k.

Only candidates: Houdini keeps what is inductive and :mod:`.check` re-verifies the labels.
"""

from __future__ import annotations

import itertools
from typing import Dict, List

from lang import ast as A

from .exprs import subst


def _blocks(cfa) -> List[Dict[str, A.Var]]:
    """For each maximal chain of copy assignments ``x := y`` (y a variable), the map y ↦ x."""
    g = cfa.graph
    out: List[Dict[str, A.Var]] = []
    seen = set()
    for u, v, k, d in cfa.edges():
        if (u, v, k) in seen or not _is_assign(d["stmt"]):
            continue
        # start of a chain: the previous edge into u is not a lone assignment
        ins = list(g.in_edges(u, keys=True, data=True))
        if len(ins) == 1 and g.out_degree(u) == 1 and _is_assign(ins[0][3]["stmt"]):
            continue
        chain: Dict[str, A.Var] = {}
        cur = (u, v, k, d)
        while True:
            cu, cv, ck, cd = cur
            seen.add((cu, cv, ck))
            st = cd["stmt"]
            target = st.targets[0].name
            chain = {y: x for y, x in chain.items() if x.name != target}  # x overwritten: no copy
            if _is_copy(st):
                chain.setdefault(st.value.name, A.Var(target))
            outs = list(g.out_edges(cv, keys=True, data=True))
            if len(outs) != 1 or g.in_degree(cv) != 1 or not _is_assign(outs[0][3]["stmt"]):
                break
            cur = outs[0]
        if chain:
            out.append(chain)
    return out


def _is_assign(st) -> bool:
    return isinstance(st, A.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], A.Var)


def _is_copy(st) -> bool:
    return (
        isinstance(st, A.Assign)
        and len(st.targets) == 1
        and isinstance(st.targets[0], A.Var)
        and isinstance(st.value, A.Var)
        and not st.targets[0].name.startswith("$")
    )


def copied_facts(cfa, facts: List[A.Expr]) -> List[A.Expr]:
    """Each fact of ``facts`` with the variables one block copies replaced by their copies."""
    out: List[A.Expr] = []
    for chain in _blocks(cfa):
        for y, x in chain.items():  # a running best stays on one side of every value it copied
            if cfa.types.get(y) == A.REAL and cfa.types.get(x.name) == A.REAL:
                out += [A.Binary(">=", x, A.Var(y)), A.Binary("<=", x, A.Var(y))]
        for f in facts:
            m = {y: x for y, x in chain.items() if y in A.free_vars(f)}
            keys = sorted(m)[:4]
            for r in range(len(keys), 0, -1):  # all copies at once first, then fewer
                for ks in itertools.combinations(keys, r):
                    g = subst(f, {y: m[y] for y in ks})  # type: ignore[misc]
                    if g != f and g not in out:
                        out.append(g)
    return out
