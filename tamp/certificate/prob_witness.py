"""Building mass witnesses (writer side): bisection trees for regions whose linked variables
are not all polynomial (see :mod:`.cellmass`). This is search; the checker only walks the
finished tree. Partial leaves with the largest gap (upper − lower bound of
:func:`.cellmass.leaf_enclosure`) are split first, along the variable whose interval most
affects the undecided constraints, at its conditional median. The builder keeps the sums of
its leaves' bounds, which are exactly what the checker recomputes from the finished tree.
"""

from __future__ import annotations

import heapq
import itertools
import math
from fractions import Fraction
from typing import Dict, List, Optional

from tamp.probability.dists import Dist

from .cellmass import Region, classify_box, components, effective_box, leaf_bounds, witness_vars


class WitnessBuilder:
    """A refinable bisection tree for one region."""

    def __init__(self, region: Region, dists: Dict[str, Dist]):
        self.dists = dists
        self.names = witness_vars(region, dists)
        wset = set(self.names)
        self.cons = [c for c in region.cons if set(c[0]) <= wset]
        box = effective_box(region, dists, self.names)
        self.tree: Dict = {"node": None}  # a holder: leaves are dict holders replaced in place
        self._heap: List = []
        self._tick = itertools.count()
        self.partial = Fraction(0)  # Σ gaps of the partial leaves
        self.lo = Fraction(0)  # Σ lower bounds of all leaves
        self.hi = Fraction(0)  # Σ upper bounds of all leaves
        self.leaves = 0
        self._add(self.tree, "node", box)

    @property
    def active(self) -> bool:
        return bool(self.names)

    def _add(self, parent: Dict, key: str, box) -> None:
        self.leaves += 1
        lo, hi, inner = leaf_bounds(box, self.cons, self.dists, self.names)
        self.lo += lo
        self.hi += hi
        m = hi - lo
        if m == 0:
            return
        self.partial += m
        heapq.heappush(self._heap, (-float(m), next(self._tick), m, lo, hi, parent, key, box, inner))

    def largest(self) -> Fraction:
        return self._heap[0][2] if self._heap else Fraction(0)

    def refine(self, steps: int) -> bool:
        """Split up to ``steps`` partial leaves; False when nothing can be split."""
        done = False
        for _ in range(steps):
            if not self._heap:
                break
            _, _, m, lo, hi, parent, key, box, inner = heapq.heappop(self._heap)
            v, at = self._choose(box, inner)
            if v is None:
                continue
            self.partial -= m
            self.lo -= lo
            self.hi -= hi
            node = {"split": v, "at": _text(at), "below": None, "above": None}
            parent[key] = node
            lo, hi = box[v]
            below, above = dict(box), dict(box)
            below[v] = (lo, at)
            above[v] = (at, hi)
            self._add(node, "below", below)
            self._add(node, "above", above)
            done = True
        return done

    def _choose(self, box, inner=None):
        """The variable to split (not the leaf's inner variable, which is integrated exactly,
        unless nothing else can be split) and where."""
        scores = {v: 0.0 for v in self.names}
        for coef, rhs in self.cons:
            if classify_box(box, [(coef, rhs)]) != "partial":
                continue
            for v, c in coef.items():
                scores[v] += abs(float(c)) * self._width(v, box[v])
        for v in sorted(self.names, key=lambda v: (v == inner, -scores[v])):
            at = self._split_point(v, box[v])
            if at is not None:
                return v, at
        return None, None

    def _width(self, v, b) -> float:
        lo, hi = b
        if lo is None or hi is None:  # an unbounded side keeps every constraint undecided
            return 1e6 * self.dists[v].spread()
        return float(hi - lo)

    def _split_point(self, v, b) -> Optional[Fraction]:
        d = self.dists[v]
        lo, hi = b
        flo = 0.0 if lo is None else d.cdf_f(float(lo))[0]
        fhi = 1.0 if hi is None else d.cdf_f(float(hi))[1]
        x = None
        if fhi > flo:
            try:
                x = d.quantile((flo + fhi) / 2)
            except (ValueError, OverflowError):
                x = None
        cand = None
        if x is not None and math.isfinite(x):
            cand = _short(Fraction(x))
        if cand is None or (lo is not None and cand <= lo) or (hi is not None and cand >= hi):
            if lo is not None and hi is not None:
                cand = _short((lo + hi) / 2)
                if not lo < cand < hi:
                    cand = (lo + hi) / 2
            else:
                return None
        if (lo is not None and cand <= lo) or (hi is not None and cand >= hi):
            return None
        return cand

    def to_json(self):
        return self.tree["node"]


def _short(x: Fraction) -> Fraction:
    """A nearby float with a 24-bit mantissa (split points need not be exact quantiles; float
    ends let the checker use its second-order leaf bounds, :mod:`.leaf_taylor`)."""
    f = float(x)
    if f == 0.0 or not math.isfinite(f):
        return Fraction(f) if math.isfinite(f) else x
    m, e = math.frexp(f)
    return Fraction(round(m * (1 << 24))) * Fraction(2) ** (e - 24)


def _text(x: Fraction) -> str:
    return str(x.numerator) if x.denominator == 1 else f"{x.numerator}/{x.denominator}"


__all__ = ["WitnessBuilder", "components"]
