"""Certified bounds of the volume of {x ∈ box : A(x) = B(x)} for two classifiers.

A side is a network (:class:`~.netbounds.NetBounds`), a forest (:class:`~.forest.Forest`) or a
constant class (:class:`Const`; robustness compares a model with the class at the point).
Forests are first cut into their boxes of constant class (exact). Networks are handled by
branch and bound: the box of largest volume still undecided is analysed; a box where the
classes are known to agree (or to differ) everywhere is decided; a box where every ReLU has a
fixed phase is decided exactly by the volumes of the class polytopes
(:func:`tamp.causal.volume.cut_volume`, exact rationals; Lawrence's formula of the WMI engine for
several half-spaces); otherwise it is split in two along the input with the largest
width × sensitivity. ``lower`` counts the volume proven to agree, ``upper`` the volume not
proven to differ: lower <= vol{A = B} <= upper, always; they meet when everything is decided.
"""

from __future__ import annotations

import heapq
import time
from dataclasses import dataclass
from fractions import Fraction
from typing import Dict, List, Optional, Sequence, Tuple, Union

import numpy as np

from tamp.causal.volume import cut_volume

from .classifier import Classifier
from .forest import Forest
from .netbounds import ALL, EXACT, NONE, BoxAnswer, NetBounds, Pre
from .share import AnyForm, DyadicForm, positive_share

Box = Dict[str, Tuple[Fraction, Fraction]]


@dataclass(frozen=True)
class Const:
    cls: int


Side = Union[Const, NetBounds, Forest]


@dataclass
class Agreement:
    lower: Fraction
    upper: Fraction
    volume: Fraction
    boxes: int = 0
    time_s: float = 0.0


def volume(box: Box) -> Fraction:
    v = Fraction(1)
    for lo, hi in box.values():
        if hi > lo:
            v *= hi - lo
    return v


def _varying(box: Box) -> Box:
    return {f: iv for f, iv in box.items() if iv[1] > iv[0]}


def _region_volume(
    constraints: Sequence[Tuple[AnyForm, bool]], box: Box, vol: Optional[Fraction] = None
) -> Optional[Fraction]:
    """vol{x ∈ box : every margin > 0 (strict) or >= 0}, exactly (None: not computed; ``vol``:
    the box's volume when known)."""
    if len(constraints) == 1:  # one hyperplane: integer arithmetic
        ((form, strict),) = constraints
        return (volume(box) if vol is None else vol) * positive_share(form, box, strict)
    var = _varying(box)
    fs = []
    for form, strict in constraints:
        co, k = form.exact() if isinstance(form, DyadicForm) else form
        const = k
        coeffs: Dict[str, Fraction] = {}
        for name, c in co.items():
            lo, hi = box[name]
            if lo == hi:
                const += c * lo
            else:
                coeffs[name] = -c
        fs.append((coeffs, -const, strict))  # m > 0  <=>  -m < 0
    return cut_volume(fs, var)


def _center(box: Box) -> Dict[str, Fraction]:
    return {f: (lo + hi) / 2 for f, (lo, hi) in box.items()}


def _describe(side: Side, box: Box, target: Optional[int], pre=None) -> Tuple[str, object]:
    """("const", c) | ("not", c) | ("regions", {c: constraints}) | ("undecided", (c, answer))
    for a network or a constant; ``target``: the class to test (default: the class at the box's
    centre). An undecided answer carries the class c its linear bounds are about: they bound
    vol{class = c} and nothing else."""
    if isinstance(side, Const):
        return "const", side.cls
    assert isinstance(side, NetBounds)
    clf: Classifier = side.clf
    c = target if target is not None else clf.classify(_center(box))
    ans: BoxAnswer = side.analyze(box, c, pre=pre if c == target else None)
    if ans.kind == ALL:
        return "const", c
    if ans.kind == EXACT:
        if target is not None:
            return "regions", {c: ans.margins}
        return "regions", {k: side.analyze(box, k, pieces=True).margins for k in range(clf.n_classes)}
    if ans.kind == NONE and target is not None:
        return "not", c
    return "undecided", (c, ans)


def _agree_exact(da: Tuple[str, object], db: Tuple[str, object], box: Box, vol: Fraction) -> Optional[Fraction]:
    """The agreeing volume when both sides are decided (const / not / regions), else None."""
    ka, va = da
    kb, vb = db
    if ka == "const" and kb == "const":
        return vol if va == vb else Fraction(0)
    if ka == "not" and kb == "const" and va == vb:
        return Fraction(0)
    if kb == "not" and ka == "const" and va == vb:
        return Fraction(0)
    if ka == "regions" and kb == "const":
        return _region_volume(va[vb], box)  # type: ignore[index]
    if kb == "regions" and ka == "const":
        return _region_volume(vb[va], box)  # type: ignore[index]
    if ka == "regions" and kb == "regions":
        assert isinstance(va, dict) and isinstance(vb, dict)
        total = Fraction(0)
        for c in va:
            v = _region_volume(va[c] + vb.get(c, []), box)
            if v is None:
                return None
            total += v
        return total
    return None


def _linear_credit(ans: BoxAnswer, box: Box, vol: Fraction) -> Tuple[Fraction, Fraction]:
    """Bounds of vol{class = c} on a box from the margins' linear bounds: {below_j > 0 for all j}
    lies inside the class-c region, which lies inside {above_j >= 0 for all j}."""
    lo, hi = Fraction(0), vol
    if ans.below is not None:
        v = _region_volume([(f, True) for f in ans.below], box, vol)
        lo = v if v is not None else lo
    if ans.above is not None:
        v = _region_volume([(f, False) for f in ans.above], box, vol)
        hi = v if v is not None else hi
    return lo, max(lo, hi)


def _evaluate(
    a: Side, b: Side, bx: Box, vol: Fraction, pre=None
) -> Tuple[Fraction, Fraction, Dict[str, float], object]:
    """(lower, upper, sensitivity, pre-activation bounds of side b) of the agreeing volume on one
    box (lower == upper: decided)."""
    target = a.cls if isinstance(a, Const) else None
    db = _describe(b, bx, target, pre)
    if isinstance(a, Const):
        da: Tuple[str, object] = ("const", a.cls)
    elif db[0] == "const":
        da = _describe(a, bx, db[1])  # type: ignore[arg-type]
    else:
        da = _describe(a, bx, None)
        if da[0] == "const" and db[0] == "undecided":
            # b was analysed against its own class at the centre; the agreement is {B = A's class}
            db = _describe(b, bx, da[1])  # type: ignore[arg-type]
    agree = _agree_exact(da, db, bx, vol)
    if agree is not None:
        return agree, agree, {}, None
    sens: Dict[str, float] = {}
    lo, hi = Fraction(0), vol
    known = None
    for d, other in ((da, db), (db, da)):
        if d[0] == "undecided":
            pair = d[1]
            assert isinstance(pair, tuple)
            c: int = pair[0]
            ans: BoxAnswer = pair[1]
            for f, s in (ans.sensitivity or {}).items():
                sens[f] = sens.get(f, 0.0) + s
            if other == ("const", c):  # agreement = {this side's class = c}: what ans bounds
                lo, hi = _linear_credit(ans, bx, vol)
            if d is db and isinstance(a, Const):
                known = ans.pre
    return lo, hi, sens, known


BATCH = 32  # boxes split per step of the batched branch and bound (64 children bounded at once)
SCALE = 96  # its per-box bounds are rounded outward to multiples of 2^-SCALE (then summed as integers)


def _down(q: Fraction) -> int:
    return (q.numerator << SCALE) // q.denominator


def _up(q: Fraction) -> int:
    return -((-q.numerator << SCALE) // q.denominator)


@dataclass
class _Open:
    """A box of the batched branch and bound not decided yet."""

    box: Box
    volume: Fraction
    weight: Fraction
    lower: int  # its weighted class-c volume's bounds, in units of 2^-SCALE
    upper: int
    split: str  # the feature to split it along
    pre: Pre  # its ReLUs' pre-activation bounds (they hold on its sub-boxes)


def _class_volume(
    c: int, net: NetBounds, boxes: List[Tuple[Box, Fraction]], limit: Fraction, deadline: Optional[float]
) -> Tuple[Fraction, Fraction, int]:
    """Bounds (lower, upper, boxes analysed) of Σ_k w_k·vol{x ∈ box_k : class(x) = c}: branch and
    bound, the BATCH widest weighted gaps split at each step and their halves bounded in one
    batch. Each box's exact bounds are rounded outward to multiples of 2^-SCALE and summed as
    integers (exact sums of thousands of unrelated fractions would cost more than the bounds);
    the boxes decided exactly (all of class c, or affine pieces) count exactly.
    Stops when the gap is at most ``limit`` or at ``deadline``."""
    done_lo = done_hi = open_lo = open_hi = 0
    whole = Fraction(0)  # the boxes decided exactly (entirely of class c, or affine pieces)
    heap: List[Tuple[int, int, _Open]] = []
    count = 0

    def evaluate(items: List[Tuple[Box, Fraction, Fraction]], pre: Optional[Pre]) -> None:
        nonlocal done_lo, done_hi, open_lo, open_hi, count, whole
        answers = net.analyze_batch([bx for bx, _, _ in items], c, pre=pre)
        for (bx, vol, w), ans in zip(items, answers):
            if ans.kind == ALL:  # box volumes share denominators: summed exactly
                whole += w * vol
                continue
            if ans.kind == NONE:
                continue
            if ans.kind == EXACT:  # exact polytope volumes: few, summed exactly too
                assert ans.margins is not None
                v = _region_volume(ans.margins, bx, vol)
                if v is not None:
                    whole += w * v
                    continue
                lo, hi = Fraction(0), vol
            else:
                lo, hi = _linear_credit(ans, bx, vol)
            ilo, ihi = _down(w * lo), _up(w * hi)
            if lo == hi or ans.pre is None or ans.split is None:
                done_lo += ilo
                done_hi += ihi
                continue
            open_lo += ilo
            open_hi += ihi
            o = _Open(bx, vol, w, ilo, ihi, ans.split, ans.pre)
            heapq.heappush(heap, (ilo - ihi, count, o))
            count += 1

    initial = [(bx, volume(bx), w) for bx, w in boxes if w]
    for k in range(0, len(initial), 2 * BATCH):
        evaluate(initial[k : k + 2 * BATCH], None)
    n = len(initial)
    ilimit = _down(limit)
    while heap:
        if (done_hi + open_hi) - (done_lo + open_lo) <= ilimit:
            break
        if deadline is not None and time.monotonic() > deadline:
            break
        popped = [heapq.heappop(heap)[2] for _ in range(min(BATCH, len(heap)))]
        children: List[Tuple[Box, Fraction, Fraction]] = []
        for o in popped:
            open_lo -= o.lower
            open_hi -= o.upper
            a_, b_ = o.box[o.split]
            mid = (a_ + b_) / 2
            for iv in ((a_, mid), (mid, b_)):
                sub = dict(o.box)
                sub[o.split] = iv
                children.append((sub, o.volume / 2, o.weight))
        pre_lo = np.repeat(np.stack([o.pre[0] for o in popped]), 2, axis=0)
        pre_hi = np.repeat(np.stack([o.pre[1] for o in popped]), 2, axis=0)
        evaluate(children, (pre_lo, pre_hi))
        n += len(children)
    unit = Fraction(1, 1 << SCALE)
    return whole + (done_lo + open_lo) * unit, whole + (done_hi + open_hi) * unit, n


def agreement(
    a: Side, b: Side, boxes: List[Tuple[Box, Fraction]], width: float = 0.0, budget_s: Optional[float] = None
) -> Agreement:
    """Certified bounds of Σ_k w_k·vol{x ∈ box_k : A(x) = B(x)} over weighted boxes (disjoint
    cells of a piecewise-constant density; module docstring): one branch and bound over all of
    them, the largest weighted gap first. Stops when the weighted undecided volume is at most
    ``width`` × Σ w_k·vol(box_k), or after ``budget_s`` seconds."""
    t0 = time.monotonic()
    deadline = None if budget_s is None else t0 + budget_s
    total = sum((w * volume(bx) for bx, w in boxes), Fraction(0))
    res = Agreement(Fraction(0), Fraction(0), total)
    if isinstance(b, Forest) and not isinstance(a, Forest):
        a, b = b, a
    if isinstance(a, Forest):  # cut into the forest's boxes of constant class (exact), then compare
        pieces: List[Tuple[Box, Fraction]] = []
        classes: List[int] = []
        undecided = Fraction(0)  # pieces left unsplit when the time ran out
        for bx, w in boxes:
            # this box's share of the allowed gap (the forest's own undecided volume)
            slack = Fraction(width) * volume(bx) if not isinstance(b, Forest) else Fraction(0)
            for sub, c in a.regions(bx, deadline, slack):
                if c < 0:
                    undecided += w * volume(sub)
                elif isinstance(b, Forest):
                    for sub2, c2 in b.regions(sub, deadline):
                        if c2 < 0:
                            undecided += w * volume(sub2)
                        elif c2 == c:
                            res.lower += w * volume(sub2)
                        res.boxes += 1
                else:
                    pieces.append((sub, w))
                    classes.append(c)
        res.upper = res.lower + undecided
        left = None if deadline is None else max(deadline - time.monotonic(), 0.0)
        groups: Dict[int, List[Tuple[Box, Fraction]]] = {}
        for (sub, w), c in zip(pieces, classes):
            groups.setdefault(c, []).append((sub, w))
        for c, group in sorted(groups.items()):
            share = None if left is None else max(left * len(group) / len(pieces), 0.05)
            r = agreement(Const(c), b, group, width, share)
            res.lower += r.lower
            res.upper += r.upper
            res.boxes += r.boxes
        res.time_s = time.monotonic() - t0
        return res
    if isinstance(b, Const) and not isinstance(a, Const):
        a, b = b, a
    limit = Fraction(width) * total
    if isinstance(a, Const) and isinstance(b, NetBounds):
        res.lower, res.upper, res.boxes = _class_volume(a.cls, b, boxes, limit, deadline)
        res.time_s = time.monotonic() - t0
        return res
    done_lo = done_hi = Fraction(0)
    open_lo = open_hi = Fraction(0)
    heap: List[Tuple[Fraction, int, Box, Fraction, Fraction, Fraction, Dict[str, float], object]] = []
    count = 0

    def add(bx: Box, vol: Fraction, w: Fraction, pre=None) -> None:
        nonlocal done_lo, done_hi, open_lo, open_hi, count
        res.boxes += 1
        lo, hi, sens, known = _evaluate(a, b, bx, vol, pre)
        lo, hi = w * lo, w * hi
        if lo == hi or not _varying(bx):
            done_lo += lo
            done_hi += hi
            return
        open_lo += lo
        open_hi += hi
        heapq.heappush(heap, (lo - hi, count, bx, w, lo, hi, sens, known))
        count += 1

    for bx, w in boxes:
        if w:
            add(bx, volume(bx), w)
    while heap:
        if (done_hi + open_hi) - (done_lo + open_lo) <= limit:
            break
        if deadline is not None and time.monotonic() > deadline:
            break
        _, _, bx, w, lo, hi, sens, known = heapq.heappop(heap)
        open_lo -= lo
        open_hi -= hi
        var = _varying(bx)
        f = max(var, key=lambda g: (float(var[g][1] - var[g][0]) * (sens.get(g, 0.0) + 1e-12), g))
        a_, b_ = var[f]
        mid = (a_ + b_) / 2
        vol = volume(bx) / 2
        for iv in ((a_, mid), (mid, b_)):
            sub = dict(bx)
            sub[f] = iv
            add(sub, vol, w, known)
    res.lower = done_lo + open_lo
    res.upper = done_hi + open_hi
    res.time_s = time.monotonic() - t0
    return res
