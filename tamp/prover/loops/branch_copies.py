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

An array element read at a literal (``tv := q[3]``, the winner's true score kept beside its
index) is a copy too, of that element: the fact ``a3 - q[3] <= M`` reads ``best - tv <= M``.
A draw added to a score before the selection (``n3 ~ lap(0, s); a3 := q[3] + n3``) has its fact
``n3 - 0 <= M`` restated over the sum first (``a3 - q[3] - 0 <= M``, the draw solved from its
one definition ``x := r + n``, ``x := n + r``, ``x := r - n`` or ``x := n - r``), and that is
copied as above. The trace tree gets these facts by interpolation on every trace; without them
the CFA, tried first from 32 traces on, failed where the tree of a smaller k proved (issue 33).

Only candidates: Houdini keeps what is inductive and :mod:`.check` re-verifies the labels.
"""

from __future__ import annotations

import itertools
from typing import Dict, List, Optional, Union

from lang import ast as A
from lang.walk import free_vars, replace_all
from tamp.prover.base.exprs import subst

#: what a block copies: a variable's name, an integer literal (replaced only as an index), or an
#: array element read at an integer literal (``q[3]``)
Key = Union[str, int, A.Index]


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
    integer literal (``x := 3``), an array element at a literal (``x := q[3]``), or None."""
    if not _is_assign(st) or st.targets[0].name.startswith("$"):
        return None
    if isinstance(st.value, A.Var):
        return st.value.name
    if isinstance(st.value, A.Num) and st.value.is_int and st.value.value.denominator == 1:
        return int(st.value.value)
    if _literal_index(st.value) is not None and isinstance(st.value, A.Index) and isinstance(st.value.base, A.Var):
        return st.value
    return None


def _occurs(f: A.Expr, key: Key) -> bool:
    """Whether ``f`` reads the variable ``key``, or indexes an array by the literal ``key``."""
    if isinstance(key, str):
        return key in set(free_vars(f))
    if isinstance(key, A.Index):
        return any(n == key for n in A.walk(f))
    return any(_literal_index(n) == key for n in A.walk(f))


def _literal_index(n: A.Node) -> Optional[int]:
    if isinstance(n, A.Index) and isinstance(n.index, A.Num) and n.index.is_int and n.index.value.denominator == 1:
        return int(n.index.value)
    return None


def _replace(f: A.Expr, m: Dict[Key, A.Var]) -> A.Expr:
    """``f`` with the array elements of ``m`` and then its variables replaced by their copies,
    and each array read at a literal of ``m`` read at that literal's copy instead."""
    g = f
    for y, x in m.items():
        if isinstance(y, A.Index):
            g = replace_all(g, y, x)
    g = subst(g, {y: x for y, x in m.items() if isinstance(y, str)})  # type: ignore[misc]
    for n in [n for n in A.walk(g) if _literal_index(n) in m]:
        c = _literal_index(n)
        assert c is not None and isinstance(n, A.Index)
        g = replace_all(g, n, A.Index(n.base, m[c]))
    return g


def _solved(cfa) -> List[tuple[str, A.Expr]]:
    """For each assignment ``x := r + n`` (or ``n + r``, ``r - n``, ``n - r``) of the loop-free
    ``cfa`` with ``n`` a variable not read by ``r`` and ``x`` read by neither: ``(n, e)`` with
    ``e`` the value of ``n`` in terms of ``x`` after it (``x - r``, ``r - x``, ``x + r``)."""
    out: List[tuple[str, A.Expr]] = []
    for _u, _v, _k, d in cfa.edges():
        st = d["stmt"]
        if not _is_assign(st) or st.targets[0].name.startswith("$") or not isinstance(st.value, A.Binary):
            continue
        x, e = A.Var(st.targets[0].name), st.value
        if e.op not in ("+", "-"):
            continue
        sides = [(e.right, e.left, "right"), (e.left, e.right, "left")]
        for n, r, side in sides:
            if not isinstance(n, A.Var) or n.name in set(free_vars(r)) or x.name in set(free_vars(e)):
                continue
            if e.op == "+":
                sol = A.Binary("-", x, r)
            elif side == "right":  # x = r - n
                sol = A.Binary("-", r, x)
            else:  # x = n - r
                sol = A.Binary("+", x, r)
            out.append((n.name, sol))
    return out


def copied_facts(cfa, facts: List[A.Expr]) -> List[A.Expr]:
    """Each fact of ``facts`` (and of their restatements over a sum the draw was added into)
    with the variables one block copies replaced by their copies."""
    out: List[A.Expr] = []
    solved = _solved(cfa)
    restated = [subst(f, {n: e}) for f in facts for n, e in solved if n in set(free_vars(f))]
    out += [f for f in restated if f not in facts]
    facts = facts + out
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
