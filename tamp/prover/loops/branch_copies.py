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

An integer literal assigned in the block (``b := 3``, the winner's index over an array of
scores ``q``) is a copy too, of the literal: the fact ``a3 - q[3] <= M`` reads
``best - q[b] <= M``. Only array indices are replaced by such a copy (``q[3]`` becomes ``q[b]``;
the 3 of ``log(3 / p)`` stays).

Only candidates: Houdini keeps what is inductive and :mod:`.check` re-verifies the labels.
"""

from __future__ import annotations

import itertools
from typing import Dict, List, Optional, Union

from lang import ast as A
from lang.walk import free_vars, replace_all
from tamp.prover.base.exprs import subst

#: what a block copies: a variable's name, or an integer literal (replaced only as an index)
Key = Union[str, int]


def _blocks(cfa) -> List[Dict[Key, A.Var]]:
    """For each maximal chain of assignments, its copies ``x := y`` (y a variable) and
    ``x := c`` (c an integer literal) that stay in the chain's end state, as maps y ↦ x, c ↦ x."""
    g = cfa.graph
    out: List[Dict[Key, A.Var]] = []
    seen = set()
    for u, v, k, d in cfa.edges():
        if (u, v, k) in seen or not _is_assign(d["stmt"]):
            continue
        # start of a chain: the previous edge into u is not a lone assignment
        ins = list(g.in_edges(u, keys=True, data=True))
        if len(ins) == 1 and g.out_degree(u) == 1 and _is_assign(ins[0][3]["stmt"]):
            continue
        chain: Dict[Key, A.Var] = {}
        cur = (u, v, k, d)
        while True:
            cu, cv, ck, cd = cur
            seen.add((cu, cv, ck))
            st = cd["stmt"]
            target = st.targets[0].name
            chain = {y: x for y, x in chain.items() if x.name != target}  # x overwritten: no copy
            src = _copied(st)
            if src is not None:
                chain.setdefault(src, A.Var(target))
            outs = list(g.out_edges(cv, keys=True, data=True))
            if len(outs) != 1 or g.in_degree(cv) != 1 or not _is_assign(outs[0][3]["stmt"]):
                break
            cur = outs[0]
        if chain:
            out.append(chain)
    return out


def _is_assign(st) -> bool:
    return isinstance(st, A.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], A.Var)


def _copied(st) -> Optional[Key]:
    """What the assignment ``st`` copies into its target: a variable's name (``x := y``), an
    integer literal (``x := 3``), or None."""
    if not _is_assign(st) or st.targets[0].name.startswith("$"):
        return None
    if isinstance(st.value, A.Var):
        return st.value.name
    if isinstance(st.value, A.Num) and st.value.is_int and st.value.value.denominator == 1:
        return int(st.value.value)
    return None


def _occurs(f: A.Expr, key: Key) -> bool:
    """Whether ``f`` reads the variable ``key``, or indexes an array by the literal ``key``."""
    if isinstance(key, str):
        return key in set(free_vars(f))
    return any(_literal_index(n) == key for n in A.walk(f))


def _literal_index(n: A.Node) -> Optional[int]:
    if isinstance(n, A.Index) and isinstance(n.index, A.Num) and n.index.is_int and n.index.value.denominator == 1:
        return int(n.index.value)
    return None


def _replace(f: A.Expr, m: Dict[Key, A.Var]) -> A.Expr:
    """``f`` with the variables of ``m`` replaced by their copies, and each array read at a
    literal of ``m`` read at that literal's copy instead."""
    g = subst(f, {y: x for y, x in m.items() if isinstance(y, str)})  # type: ignore[misc]
    for n in [n for n in A.walk(g) if _literal_index(n) in m]:
        c = _literal_index(n)
        assert c is not None and isinstance(n, A.Index)
        g = replace_all(g, n, A.Index(n.base, m[c]))
    return g


def copied_facts(cfa, facts: List[A.Expr]) -> List[A.Expr]:
    """Each fact of ``facts`` with the variables one block copies replaced by their copies."""
    out: List[A.Expr] = []
    for chain in _blocks(cfa):
        for y, x in chain.items():  # a running best stays on one side of every value it copied
            if isinstance(y, str) and cfa.types.get(y) == A.REAL and cfa.types.get(x.name) == A.REAL:
                out += [A.Binary(">=", x, A.Var(y)), A.Binary("<=", x, A.Var(y))]
        for f in facts:
            m = {y: x for y, x in chain.items() if _occurs(f, y)}
            keys = sorted(m, key=str)[:4]
            for r in range(len(keys), 0, -1):  # all copies at once first, then fewer
                for ks in itertools.combinations(keys, r):
                    g = _replace(f, {y: m[y] for y in ks})
                    if g != f and g not in out:
                        out.append(g)
    return out
