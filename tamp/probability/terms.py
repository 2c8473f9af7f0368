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

import time
from dataclasses import dataclass
from fractions import Fraction
from typing import Dict, Iterable, List, Optional, Tuple

from lang import ast as A
from lang.errors import TampError, error_at
from tamp.core.interval import Interval
from tamp.executor import Executor as JobExecutor
from tamp.executor import run_all

from .mass import Const, Node, build, exact_components, exact_mass, exact_node
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


Cell = Tuple[Interval, Optional[tuple]]  # a cell's weight and its key in CellMasses (None: mass 1)


class CellMasses:
    """Turns a path's continuous constraints into a (shared, cached) mass node."""

    def __init__(self, ex: Executor, deadline: Optional[float]):
        self.ex = ex
        self.deadline = deadline
        self.cells: Dict[tuple, Node] = {}
        self.components: Dict[tuple, Node] = {}

    def key(self, p: Path) -> Optional[tuple]:
        """The cell of a path's continuous constraints (None when it has none: mass 1)."""
        reg = self.ex.reg
        used = {v for aff in p.cons for v, _ in aff.terms}
        used |= {v for v, b in p.bounds.items() if b != reg.support(v)}
        if not used:
            return None
        vs = sorted(used)
        trunc = tuple(p.bounds.get(v, reg.support(v)) for v in vs)
        cons = tuple(sorted((aff.terms, aff.const) for aff in p.cons))
        return (tuple(vs), trunc, cons)

    def _problem(self, key: tuple):
        vs, trunc, cons = key
        loc = {v: i for i, v in enumerate(vs)}
        dists = [self.ex.reg.dists[v] for v in vs]
        lin = [({loc[v]: c for v, c in terms}, -const) for terms, const in cons]
        return dists, list(trunc), lin

    def node(self, p: Path) -> Node:
        return self.node_at(self.key(p))

    def node_at(self, key: Optional[tuple]) -> Node:
        if key is None:
            return ONE_NODE
        n = self.cells.get(key)
        if n is None:
            dists, trunc, lin = self._problem(key)
            n = self.cells[key] = build(dists, trunc, lin, deadline=self.deadline, cache=self.components)
        return n

    def prefetch(self, keys: Iterable[Optional[tuple]], jobs: JobExecutor) -> None:
        """Integrate the polynomial components of these cells exactly, as independent jobs of
        ``jobs`` (:mod:`tamp.executor`); :meth:`node_at` then finds them in the cache. The
        values are exact, so the nodes are the same whoever computes them."""
        todo: Dict[tuple, tuple] = {}
        for key in keys:
            if key is None or key in self.cells:
                continue
            for ckey, d, t, c in exact_components(*self._problem(key)):
                if ckey not in self.components and ckey not in todo:
                    todo[ckey] = (d, t, c)
        if not todo:
            return
        seconds = None if self.deadline is None else max(0.0, self.deadline - time.monotonic())
        order = list(todo)
        got = run_all(jobs, exact_mass, [(i, (*todo[k], seconds)) for i, k in enumerate(order)], self.deadline)
        for i, k in enumerate(order):
            if i in got:  # the others (out of time) are built as usual
                d, t, c = todo[k]
                self.components[k] = exact_node(d, t, c, got[i])


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


TermCells = Tuple[Fraction, List[Cell], List[Cell]]  # mass lost so far, the hit cells, the miss cells


def term_cells(ex: Executor, masses: CellMasses, paths: List[Path], prob: A.Prob) -> TermCells:
    """Split every final path into the cells of the term's hit and miss events."""
    lost = ex.lost
    hit: List[Cell] = []
    miss: List[Cell] = []
    for p in paths:
        givens = [(p, True)] if prob.given is None else ex.ev(prob.given, p)
        for q, g in givens:
            g = _as_bool(ex, g, prob.given)
            for r, e in ex.ev(prob.event, q):
                e = _as_bool(ex, e, prob.event)
                for c in ex.assume(r, f_and(g, e)):
                    hit.append((c.weight, masses.key(c)))
                for c in ex.assume(r, f_and(g, f_not(e))):
                    miss.append((c.weight, masses.key(c)))
    return lost, hit, miss


def make_term(
    ex: Executor,
    masses: CellMasses,
    paths: List[Path],
    prob: A.Prob,
    text: str,
    cells: Optional[TermCells] = None,
) -> Term:
    """The term's hit and miss masses over its cells (``cells``: from :func:`term_cells`)."""
    lost, hit_cells, miss_cells = cells if cells is not None else term_cells(ex, masses, paths, prob)
    hit, miss = MassSum(lost), MassSum(lost)
    for w, k in hit_cells:
        hit.add(w, masses.node_at(k))
    for w, k in miss_cells:
        miss.add(w, masses.node_at(k))
    direct = prob.given is None and not ex.has_assume
    return Term(prob, text, hit, miss, direct)
