"""Decision trees and forests over a box: the exact partition into boxes of constant class.

Every leaf of a tree is a box, so the class of a forest is constant on every intersection of
one leaf per tree. :func:`regions` enumerates those intersections that meet the given box,
tree after tree, and stops refining a piece as soon as the class is decided whatever the
remaining trees add: each score's still-possible range is its partial sum plus the smallest and
largest contributions of the trees not yet visited. Comparisons with a feature that is fixed in
the box (lo == hi) are evaluated exactly; for a varying feature the boundary of a split has
measure zero, so ``<=`` and ``<`` cut the same pieces (and ``==`` has no volume).
"""

from __future__ import annotations

import heapq
import math
import time
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Dict, Iterator, List, Optional, Sequence, Tuple, Union

from tamp.models.errors import ModelError
from tamp.models.ir import THRESHOLD, Leaf, Split, TreeExpr

from .classifier import Classifier, compare

Box = Dict[str, Tuple[Fraction, Fraction]]


def _leaves(t, box: Box) -> Iterator[Tuple[Box, object]]:
    """The leaves of ``t`` meeting ``box`` with positive volume, each with its part of the box."""
    if not isinstance(t, Split):
        yield box, t
        return
    lo, hi = box[t.feature]
    thr = t.threshold
    if lo == hi:  # a fixed feature: the comparison is decided exactly
        yield from _leaves(t.yes if compare(lo, t.op, thr) else t.no, box)
        return
    if t.op in ("==", "!="):  # {x == thr} has no volume
        yield from _leaves(t.no if t.op == "==" else t.yes, box)
        return
    below, above = t.op in ("<=", "<"), t.op in (">=", ">")
    low_side = (lo, min(hi, thr)) if thr > lo else None
    high_side = (max(lo, thr), hi) if thr < hi else None
    for side, iv in ((True, low_side), (False, high_side)):
        if iv is None:
            continue
        sub = dict(box)
        sub[t.feature] = iv
        branch = t.yes if (side and below) or (not side and above) else t.no
        yield from _leaves(branch, sub)


def _less(a: Fraction, fa: float, b: Fraction, fb: float) -> bool:
    """a < b for exact a, b given with their nearest floats fa, fb: rounding to nearest is
    monotone, so different floats decide it; equal floats fall back to the exact comparison."""
    if fa != fb:
        return fa < fb
    return a < b


def _reachable(t, box: Box, fbox: Dict[str, Tuple[float, float]], out: List) -> None:
    """Append to ``out`` the leaves of ``t`` meeting ``box`` with positive volume (as
    :func:`_leaves`, without building the sub-boxes: ``box`` and ``fbox``, its ends as nearest
    floats, are narrowed in place along the path and restored)."""
    if not isinstance(t, Split):
        out.append(t)
        return
    f = t.feature
    lo, hi = box[f]
    flo, fhi = fbox[f]
    if flo == fhi and lo == hi:
        _reachable(t.yes if compare(lo, t.op, t.threshold) else t.no, box, fbox, out)
        return
    if t.op in ("==", "!="):
        _reachable(t.no if t.op == "==" else t.yes, box, fbox, out)
        return
    thr = t.threshold
    ft = t.fthr if isinstance(t, VSplit) else float(thr)
    below = t.op in ("<=", "<")
    if _less(lo, flo, thr, ft):  # a low side (lo, min(hi, thr))
        narrow = _less(thr, ft, hi, fhi)
        if narrow:
            box[f], fbox[f] = (lo, thr), (flo, ft)
        _reachable(t.yes if below else t.no, box, fbox, out)
        box[f], fbox[f] = (lo, hi), (flo, fhi)
    if _less(thr, ft, hi, fhi):  # a high side (max(lo, thr), hi)
        if _less(lo, flo, thr, ft):
            box[f], fbox[f] = (thr, hi), (ft, fhi)
        _reachable(t.no if below else t.yes, box, fbox, out)
        box[f], fbox[f] = (lo, hi), (flo, fhi)


@dataclass(frozen=True)
class VSplit(Split):
    """A split of a merged tree, with its threshold's nearest float (for :func:`_less`)."""

    fthr: float = 0.0


def _vsplit(feature: str, op: str, threshold: Fraction, yes: "VTree", no: "VTree") -> VSplit:
    return VSplit(feature, op, threshold, yes, no, float(threshold))  # type: ignore[arg-type]


@dataclass(frozen=True)
class VLeaf:
    """A leaf of a merged tree: its contribution to every score, times the forest's common
    denominator (integers)."""

    vec: Tuple[int, ...]


VTree = Union[Split, VLeaf]
BIG = Fraction(10) ** 30  # "unbounded" while merging the trees of one group


@dataclass
class Forest:
    """A forest (or one tree) whose class-score contributions are merged per tree: the
    per-class copies of one tree that the ONNX readers emit (same splits, other leaf values)
    become one tree with a vector at each leaf, so the bounds on score *differences* stay
    tight (the copies are strongly correlated)."""

    clf: Classifier
    trees: List[VTree] = field(init=False)
    const: List[int] = field(init=False)  # each score's constant, times den
    den: int = field(init=False)

    def __post_init__(self) -> None:
        net = self.clf.network
        feats = set(net.features)
        assigns: List[Tuple[str, TreeExpr]] = []
        for a in net.body:
            e = a.expr
            if not isinstance(e, (Split, Leaf)):
                raise ModelError(f"'{a.name}' is not a decision tree over the model's features", self.clf.path)
            self._check_features(e, feats, a.name)
            assigns.append((a.name, e))
        index = {n: i for i, (n, _) in enumerate(assigns)}
        k = len(net.scores)
        coef = [[Fraction(0)] * len(assigns) for _ in range(k)]
        for s, sc in enumerate(net.scores):
            for name, c in sc.terms:
                if name not in index:
                    raise ModelError(f"a class score reads '{name}', which is not a tree", self.clf.path)
                coef[s][index[name]] += c
        den = 1
        for i, (_, t) in enumerate(assigns):
            for v in set(_values(t)):
                for s in range(k):
                    q = coef[s][i] * v
                    den = den * q.denominator // math.gcd(den, q.denominator)
        for sc in net.scores:
            den = den * sc.const.denominator // math.gcd(den, sc.const.denominator)
        self.den = den
        self.const = [int(sc.const * den) for sc in net.scores]
        # group consecutive assignments with the same root split (one tree's per-class copies)
        groups: List[List[int]] = []
        for i, (_, t) in enumerate(assigns):
            if groups and _root(assigns[groups[-1][0]][1]) == _root(t) and _root(t) is not None:
                groups[-1].append(i)
            else:
                groups.append([i])
        domain = {f: (-BIG, BIG) for f in net.features}
        self.trees = []
        for g in groups:
            vt = self._merge([assigns[i][1] for i in g], [[coef[s][i] for s in range(k)] for i in g], domain)
            self.trees.append(vt)

    def _merge(self, ts: List[TreeExpr], cs: List[List[Fraction]], box: Box) -> VTree:
        """One vector tree equal to Σ_i cs[i]·ts[i] (per score) over ``box``."""
        first = ts[0]
        if isinstance(first, Split):
            lo, hi = box[first.feature]
            sides: List[Optional[VTree]] = []
            for yes in (True, False):
                sub = dict(box)
                t = first.threshold
                below = first.op in ("<=", "<")
                if first.op in ("==", "!="):
                    return self._merge([first.no if first.op == "==" else first.yes] + ts[1:], cs, box)
                take_low = yes == below
                iv = (lo, min(hi, t)) if take_low else (max(lo, t), hi)
                if iv[0] >= iv[1]:
                    sides.append(None)
                    continue
                sub[first.feature] = iv
                sides.append(self._merge([first.yes if yes else first.no] + ts[1:], cs, sub))
            if sides[0] is None or sides[1] is None:
                only = sides[0] if sides[1] is None else sides[1]
                assert only is not None
                return only
            return _vsplit(first.feature, first.op, first.threshold, sides[0], sides[1])
        # the first is a leaf: fold it in, merge the rest within the box
        assert isinstance(first, Leaf)
        if len(ts) == 1:
            return VLeaf(tuple(int(c * first.value * self.den) for c in cs[0]))
        rest = self._merge(ts[1:], cs[1:], box)
        add = tuple(int(c * first.value * self.den) for c in cs[0])
        return _shift(rest, add)

    def _check_features(self, t: TreeExpr, feats: set, name: str) -> None:
        if isinstance(t, Split):
            if t.feature not in feats:
                raise ModelError(
                    f"tree '{name}' splits on '{t.feature}', which is not an input feature (not supported)",
                    self.clf.path,
                )
            self._check_features(t.yes, feats, name)
            self._check_features(t.no, feats, name)

    def regions(
        self, box: Box, deadline: Optional[float] = None, slack: Fraction = Fraction(0)
    ) -> Iterator[Tuple[Box, int]]:
        """Disjoint sub-boxes covering ``box`` (up to measure zero), each with its class; after
        ``deadline``, or once the volume not yet decided is at most ``slack``, the boxes not yet
        decided are given with class -1.

        Best first: the largest undecided box is analysed — each tree's leaves meeting it give
        the least and greatest amount the tree adds to every score difference; when the sums
        decide the class, the box is done; else it is cut at the first split (from the root)
        of the most uncertain tree whose threshold lies inside the box. A box where every tree
        has one leaf is decided exactly."""
        rule = self.clf.network.rule
        k = len(self.const)
        pairs = [(c, j) for c in range(k) for j in range(k) if j != c]

        def spread(vec: Sequence[int]) -> List[int]:
            if rule == THRESHOLD:
                return [vec[0]]
            return [vec[c] - vec[j] for c, j in pairs]

        def analyse(b: Box, roots: List[VTree]) -> Tuple[int, int]:
            """(class or -1, the index of the tree to cut); ``roots`` (updated): per tree, the
            deepest node whose region holds the box."""
            lo = spread(self.const)
            hi = list(lo)
            worst, widest = -1, -1
            walk = dict(b)
            fwalk = {f: (float(a), float(c)) for f, (a, c) in b.items()}
            for t in range(len(roots)):
                node = roots[t]
                while isinstance(node, Split) and not _straddles(node, b):
                    node = next(_leaves_step(node, b))
                roots[t] = node
                found: List[VLeaf] = []
                _reachable(node, walk, fwalk, found)
                ds = [spread(leaf.vec) for leaf in found]
                w = 0
                for s in range(len(lo)):
                    a_, b_ = min(d[s] for d in ds), max(d[s] for d in ds)
                    lo[s] += a_
                    hi[s] += b_
                    w += b_ - a_
                if w > widest:
                    worst, widest = t, w
            if rule == THRESHOLD:
                return (1 if lo[0] > 0 else 0 if hi[0] <= 0 else -1), worst
            for c in range(k):
                if all(lo[p] > 0 or (j > c and lo[p] >= 0) for p, (c2, j) in enumerate(pairs) if c2 == c):
                    return c, worst
            if widest == 0:  # every tree has one leaf: the scores are exact (ties decided above)
                raise AssertionError("undecided class with exact scores")
            return -1, worst

        heap: List[Tuple[Fraction, int, Box, int, List[VTree]]] = []
        count = 0
        open_vol = Fraction(0)

        def push(b: Box, roots: List[VTree]) -> Optional[Tuple[Box, int]]:
            nonlocal count, open_vol
            roots = list(roots)
            c, worst = analyse(b, roots)
            if c >= 0:
                return b, c
            v = _volume(b)
            open_vol += v
            heapq.heappush(heap, (-v, count, b, worst, roots))
            count += 1
            return None

        first = push(box, list(self.trees))
        if first is not None:
            yield first
        while heap:
            if open_vol <= slack or (deadline is not None and time.monotonic() > deadline):
                for item in heap:
                    yield item[2], -1
                return
            negv, _, b, worst, roots = heapq.heappop(heap)
            open_vol += negv
            node = roots[worst]  # straddled by the box (analyse stopped there)
            assert isinstance(node, Split)
            f, thr = node.feature, node.threshold
            lo, hi = b[f]
            for iv in ((lo, thr), (thr, hi)):
                sub = dict(b)
                sub[f] = iv
                done = push(sub, roots)
                if done is not None:
                    yield done


def _straddles(t: Split, b: Box) -> bool:
    """Whether the box has volume on both sides of the split."""
    lo, hi = b[t.feature]
    return lo < t.threshold < hi and t.op not in ("==", "!=")


def _leaves_step(t: Split, b: Box) -> Iterator[VTree]:
    """The child of ``t`` on whose side the whole box lies (the box does not straddle t)."""
    lo, hi = b[t.feature]
    if lo == hi:
        yield t.yes if compare(lo, t.op, t.threshold) else t.no  # type: ignore[misc]
        return
    if t.op in ("==", "!="):
        yield t.no if t.op == "==" else t.yes  # type: ignore[misc]
        return
    below = t.op in ("<=", "<")
    low_side = hi <= t.threshold  # the box is below the threshold (up to its boundary)
    yield (t.yes if low_side == below else t.no)  # type: ignore[misc]


def _volume(b: Box) -> Fraction:
    v = Fraction(1)
    for lo, hi in b.values():
        if hi > lo:
            v *= hi - lo
    return v


def _diff(suf: Tuple[List[List[int]], List[List[int]]], i: int) -> Tuple[List[int], List[int]]:
    """One tree's own (least, greatest) contribution from suffix sums."""
    lo = [a - b for a, b in zip(suf[0][i], suf[0][i + 1])]
    hi = [a - b for a, b in zip(suf[1][i], suf[1][i + 1])]
    return lo, hi


def _root(t: TreeExpr):
    return (t.feature, t.op, t.threshold) if isinstance(t, Split) else None


def _shift(t: VTree, add: Tuple[int, ...]) -> VTree:
    if isinstance(t, VLeaf):
        return VLeaf(tuple(a + b for a, b in zip(t.vec, add)))
    return _vsplit(t.feature, t.op, t.threshold, _shift(t.yes, add), _shift(t.no, add))  # type: ignore[arg-type]


def _values(t: TreeExpr) -> Iterator[Fraction]:
    if isinstance(t, Leaf):
        yield t.value
    else:
        yield from _values(t.yes)
        yield from _values(t.no)
