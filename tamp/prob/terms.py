"""The probability terms ``P(E | G)`` of a specification as sums of cell masses.

For one term, every final path is split into the disjoint convex cells of
``G && E`` (the *hit* mass ``A``) and ``G && !E`` (the *miss* mass ``B``); the
term is ``A / (A + B)``, which also accounts for ``assume`` (conditioning)
because paths cut by ``assume`` are in neither.  Bounds: ``A/(A+B)`` increases
with A and decreases with B, so ``[A.lo/(A.lo+B.hi), A.hi/(A.hi+B.lo)]``.
Without conditioning, ``P(E) = A`` directly as well, and both enclosures are
intersected.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Dict, List, Optional

from lang import ast as A
from lang.errors import TampError, error_at
from tamp.core.interval import Interval

from .mass import Const, Node, build
from .paths import Executor, Path
from .symbolic import And, Lit, Not, Or, f_and, f_not

ONE_NODE = Const(Interval.point(1))


class MassSum:
    """Σ weight_i × node_i over cells, cells with the same node merged; plus lost mass."""

    def __init__(self, lost: Fraction = Fraction(0)):
        self.entries: Dict[int, list] = {}
        self.lost = lost
        self.ncells = 0

    def add(self, weight: Interval, node: Node) -> None:
        self.ncells += 1
        e = self.entries.get(id(node))
        if e is None:
            self.entries[id(node)] = [weight, node]
        else:
            e[0] = e[0] + weight

    def interval(self) -> Interval:
        lo = hi = Fraction(0)
        for w, n in self.entries.values():
            lo += w.lo * n.lo
            hi += w.hi * n.hi
        return Interval(lo, hi + self.lost)


class CellMasses:
    """Turns a path's continuous constraints into a (shared, cached) mass node."""

    def __init__(self, ex: Executor, deadline: Optional[float]):
        self.ex = ex
        self.deadline = deadline
        self.cells: Dict[tuple, Node] = {}
        self.components: Dict[tuple, Node] = {}

    def node(self, p: Path) -> Node:
        reg = self.ex.reg
        used = {v for aff in p.cons for v, _ in aff.terms}
        used |= {v for v, b in p.bounds.items() if b != reg.support(v)}
        if not used:
            return ONE_NODE
        vs = sorted(used)
        trunc = tuple(p.bounds.get(v, reg.support(v)) for v in vs)
        cons = tuple(sorted((aff.terms, aff.const) for aff in p.cons))
        key = (tuple(vs), trunc, cons)
        n = self.cells.get(key)
        if n is None:
            loc = {v: i for i, v in enumerate(vs)}
            dists = [reg.dists[v] for v in vs]
            lin = [({loc[v]: c for v, c in terms}, -const) for terms, const in cons]
            n = self.cells[key] = build(dists, list(trunc), lin, deadline=self.deadline, cache=self.components)
        return n


@dataclass
class Term:
    """One ``P(event | given)`` with its hit and miss masses."""

    prob: A.Prob
    text: str
    hit: MassSum
    miss: MassSum
    direct: bool  # P(E) without conditioning: the hit mass alone is also an enclosure

    def interval(self) -> Optional[Interval]:
        a, b = self.hit.interval(), self.miss.interval()
        lo_den, hi_den = a.lo + b.hi, a.hi + b.lo
        if a.hi + b.hi == 0:
            return None
        lo = a.lo / lo_den if lo_den > 0 else Fraction(0)
        hi = a.hi / hi_den if hi_den > 0 else Fraction(1)
        iv = Interval(min(lo, Fraction(1)), min(max(hi, lo), Fraction(1)))
        if self.direct:
            iv = iv.intersect(Interval(a.lo, min(a.hi, Fraction(1))))
        return iv


def _as_bool(ex: Executor, v, node):
    if isinstance(v, (bool, Lit, And, Or, Not)):
        return v
    raise error_at(TampError, "the event of P(...) must be a condition (true/false)", node.pos, ex.file, ex.source)


def make_term(ex: Executor, masses: CellMasses, paths: List[Path], prob: A.Prob, text: str) -> Term:
    """Split every final path into the cells of the term's hit and miss events."""
    hit, miss = MassSum(ex.lost), MassSum(ex.lost)
    for p in paths:
        givens = [(p, True)] if prob.given is None else ex.ev(prob.given, p)
        for q, g in givens:
            g = _as_bool(ex, g, prob.given)
            for r, e in ex.ev(prob.event, q):
                e = _as_bool(ex, e, prob.event)
                for c in ex.assume(r, f_and(g, e)):
                    hit.add(c.weight, masses.node(c))
                for c in ex.assume(r, f_and(g, f_not(e))):
                    miss.add(c.weight, masses.node(c))
    direct = prob.given is None and not ex.has_assume
    return Term(prob, text, hit, miss, direct)
