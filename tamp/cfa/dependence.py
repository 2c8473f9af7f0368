"""Which values depend on a sample: a taint analysis over the CFA.

A value *depends on a sample* when a run's random choices can change it: it is sampled, or
computed from such a value (data flow), or assigned under a branch (``if``/``while`` guard)
whose condition depends on a sample (control flow — ``if (x) { y := 1; }`` makes ``y`` depend
on ``x``). Everything else is a function of the inputs alone.

This is what tells the two meanings of a user ``assume(c)`` apart (docs/language.md):

* ``c`` reads only values that do not depend on a sample, and the ``assume`` is not reached under
  a branch on a sampled value: a **precondition** (for a given input every run passes it or
  every run is stopped there — the claim is about the inputs that pass);
* otherwise **conditioning**: claims are about the runs that pass, renormalised.

The analysis is a may-analysis (a forward data-flow fixpoint over all CFA edges, loops
included): a variable is tainted at a node when it is tainted on *some* path into it, so
"untainted" is a sound answer — the value is the same on every run with the same inputs.
Arrays are tainted as a whole (an element write with a tainted value or index taints the
array). Control dependence is computed from post-dominators (Ferrante–Ottenstein–Warren): a
node is control dependent on a branch node ``u`` when it post-dominates one successor of ``u``
but does not strictly post-dominate ``u``; nodes from which the exit is unreachable count as
control dependent on every branch (conservative).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, FrozenSet, List, Optional, Set, Tuple

import networkx as nx

from lang import ast as A
from lang.errors import TampError
from lang.walk import free_vars
from tamp.cfa import build_cfa
from tamp.show import show_expr

Edge = Tuple[int, int, int]


@dataclass(frozen=True)
class Conditioning:
    """A user ``assume`` that conditions on sampled values."""

    edge: Edge
    stmt: A.Assume
    reads: Tuple[str, ...]  # sample-dependent variables its condition reads
    under_branch: bool  # reached only under a branch on a sample-dependent condition

    def reason(self) -> str:
        parts = []
        if self.reads:
            parts.append(
                "its condition reads "
                + ", ".join(f"'{x}'" for x in self.reads)
                + (", which depends" if len(self.reads) == 1 else ", which depend")
                + " on a sampled value"
            )
        if self.under_branch:
            parts.append("it is reached only under a branch on a sampled value")
        return " and ".join(parts)


@dataclass
class Dependence:
    """The result of the analysis over one CFA. Taint sets are bit masks over ``names`` (one
    bit per variable), so the fixpoint costs a few machine-word operations per edge even for
    programs with thousands of variables."""

    masks: Dict[int, int]  # variables that may depend on a sample, at each node
    names: List[str]  # bit i of a mask is names[i]
    controlled: Set[int]  # nodes control dependent on a sample-dependent branch

    def tainted_at(self, node: int) -> FrozenSet[str]:
        m = self.masks.get(node, 0)
        return frozenset(n for i, n in enumerate(self.names) if m >> i & 1)

    def reads_tainted(self, node: int, e: A.Expr) -> Tuple[str, ...]:
        """The variables of ``e`` that may depend on a sample at ``node``, sorted."""
        m = self.masks.get(node, 0)
        index = {n: i for i, n in enumerate(self.names)}
        return tuple(sorted(x for x in set(free_vars(e)) if x in index and m >> index[x] & 1))

    def depends(self, node: int, e: A.Expr) -> bool:
        """Whether ``e`` evaluated at ``node`` may depend on a sample (by data or control flow)."""
        return node in self.controlled or bool(self.reads_tainted(node, e))


def _base(t) -> Optional[str]:
    while isinstance(t, A.Index):
        t = t.base
    return t.name if isinstance(t, A.Var) else None


def control_dependence(cfa) -> Dict[int, Set[int]]:
    """For each branch node u (two or more out-edges), the nodes control dependent on it."""
    g = cfa.graph
    rev = nx.DiGraph()
    rev.add_nodes_from(g.nodes)
    rev.add_edges_from((v, u) for u, v in g.edges())
    ipdom = nx.immediate_dominators(rev, cfa.exit)  # post-dominators: dominators of the reverse
    unreachable = set(g.nodes) - set(ipdom)
    out: Dict[int, Set[int]] = {}
    for u in g.nodes:
        succs = {v for _u, v in g.out_edges(u)}
        if len(list(g.out_edges(u))) < 2:
            continue
        deps = set(unreachable)
        stop = ipdom.get(u)
        for v in succs:
            n = v
            while n is not None and n != stop and n in ipdom:
                deps.add(n)
                nxt = ipdom[n]
                n = None if nxt == n else nxt
        out[u] = deps
    return out


def analyse(cfa) -> Dependence:
    """Least fixpoint of the taint equations (data and control dependence) over ``cfa``."""
    cd = control_dependence(cfa)
    names: List[str] = []
    index: Dict[str, int] = {}

    def bit(name: Optional[str]) -> int:
        if name is None:
            return 0
        if name not in index:
            index[name] = len(names)
            names.append(name)
        return 1 << index[name]

    def mask(vs) -> int:
        m = 0
        for v in vs:
            m |= bit(v)
        return m

    # each edge as (src, dst, kind, written bits, read mask): "sample" taints its targets;
    # "assign" taints its target when it reads a tainted value or runs under control, and a
    # whole-variable assignment ("strong") that does neither clears it; "none" changes nothing
    edges = []
    for u, v, _k, d in cfa.edges():
        st = d["stmt"]
        if isinstance(st, A.Sample):
            edges.append((u, v, "sample", mask(_base(t) for t in st.targets), 0))
        elif isinstance(st, A.Assign):
            t = st.targets[0]
            name = _base(t)
            read_vars = set(free_vars(st.value)) | (set(free_vars(t)) - {name} if isinstance(t, A.Index) else set())
            edges.append((u, v, "strong" if isinstance(t, A.Var) else "assign", bit(name), mask(read_vars)))
        else:
            edges.append((u, v, "none", 0, 0))
    guard_reads: Dict[int, int] = {}
    guard_other: Set[int] = set()
    for u in cd:
        for _u, _v, _k, d in cfa.out_edges(u):
            st = d["stmt"]
            if isinstance(st, A.Assume):
                guard_reads[u] = guard_reads.get(u, 0) | mask(set(free_vars(st.cond)))
            else:
                guard_other.add(u)  # not a plain test: count it as depending on a sample

    masks: Dict[int, int] = {n: 0 for n in cfa.graph.nodes}
    controlled: Set[int] = set()
    changed = True
    while changed:
        changed = False
        # branches whose guards read tainted values make their dependents controlled
        for u, deps in cd.items():
            if deps <= controlled:
                continue
            if u in controlled or u in guard_other or guard_reads.get(u, 0) & masks[u]:
                controlled |= deps
                changed = True
        for u, v, kind, w, reads in edges:
            m = masks[u]
            if kind == "sample":
                m |= w
            elif kind != "none":
                if u in controlled or reads & m:
                    m |= w
                elif kind == "strong":
                    m &= ~w  # the whole variable is overwritten by a sample-free value
            if m & ~masks[v]:
                masks[v] |= m
                changed = True
    return Dependence(masks, names, controlled)


def user_assumes(cfa) -> List[Tuple[Edge, A.Assume]]:
    """The CFA edges of the program's own ``assume`` statements (not ``if``/``while`` guards)."""
    return [((u, v, k), d["stmt"]) for u, v, k, d in cfa.edges() if d.get("user_assume")]


def conditioning_assumes(cfa, dep: Optional[Dependence] = None) -> List[Conditioning]:
    """The user ``assume`` statements of ``cfa`` that condition on sampled values, in CFA order."""
    found = user_assumes(cfa)
    if not found:
        return []
    dep = dep or analyse(cfa)
    out = []
    for (u, v, k), st in found:
        reads = dep.reads_tainted(u, st.cond)
        under = u in dep.controlled
        if reads or under:
            out.append(Conditioning((u, v, k), st, reads, under))
    return out


def describe(c: Conditioning, path: str) -> str:
    """``file:line:col: assume(…) …`` — where the conditioning assume is and why it conditions."""
    pos = c.stmt.pos
    where = f"{path}:{pos.line}:{pos.col}" if pos is not None else path
    return f"{where}: `assume({show_expr(c.stmt.cond)})` conditions on a sampled value ({c.reason()})"


def precondition_assumes(cfa, dep: Optional[Dependence] = None) -> List[A.Assume]:
    """The user ``assume`` statements of ``cfa`` that are preconditions (not conditioning)."""
    cond = {c.edge for c in conditioning_assumes(cfa, dep)}
    return [st for e, st in user_assumes(cfa) if e not in cond]


def precondition_positions(prog: A.Program) -> FrozenSet[Tuple[int, int]]:
    """(line, col) of every precondition ``assume`` of ``prog`` — for the engines that run the
    program's statements directly (simulator, probability engine): at fixed inputs such an
    ``assume`` either holds on every run or on none, and "none" means the inputs are outside
    the claim (like a false ``requires``), not that every run is discarded. A program the CFA
    cannot be built for has none (its assumes keep the conditioning meaning)."""
    if not any(isinstance(n, A.Assume) for n in A.walk(prog.body)):
        return frozenset()
    try:
        cfa = build_cfa(prog)
    except TampError:
        return frozenset()
    return frozenset((st.pos.line, st.pos.col) for st in precondition_assumes(cfa) if st.pos is not None)
