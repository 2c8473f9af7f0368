"""Exact volumes of a box cut by a few affine half-spaces (rational arithmetic).

:func:`cut_volume` computes vol{x ∈ box : f_k(x) <= 0 (or < 0) for every k} for exact affine forms
``f_k`` (dicts name -> Fraction coefficient, plus a constant, plus a strictness flag):

* strictness matters only for a form that is constant on the box (a ReLU network is flat on
  whole regions: ``relu(x) > 0`` fails on all of {x <= 0}); for a non-constant form the
  boundary {f = 0} has measure zero;

* half-spaces that hold on the whole box are dropped; one that fails on the whole box (or
  touches it only on its boundary) empties the set;
* no half-space left: the box volume; one half-space (or two opposite parallel ones, a slab):
  the closed formula for a box cut by a hyperplane,
  vol{t ∈ [0,1]^n : c·t <= β} = Σ_S (-1)^|S| max(0, β - Σ_S c)^n / (n! Π c)   (all c > 0),
  evaluated with pruning of the subsets whose sum exceeds β;
* otherwise, in at most ``LASSERRE_DIMS`` dimensions, Lasserre's recursive formula
  (:func:`lasserre_volume`, no solver call); in more, the exact polytope integrator
  :func:`tamp.wmi.integrate_polytope` (Lawrence's vertex formula), only up to ``max_dims``
  dimensions (its cost grows with the vertex count); beyond that the answer is None.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Dict, List, Optional, Sequence, Tuple

from tamp.core.linear import Affine as _Affine
from tamp.core.linear import Pair as _Pair
from tamp.core.linear import affine_range as _range
from tamp.core.linear import box_volume, halfspace_volume  # noqa: F401  (this module's API)
from tamp.wmi import Poly, integrate_polytope

Affine = _Affine[str]
Form = _Pair[str]  # (coeffs, const): an Affine or a plain pair
RealBox = Dict[str, Tuple[Fraction, Fraction]]


def _direction(f: Form):
    """(normalised coefficient tuple, scale) so that f = scale·(direction·x) + const, scale > 0."""
    items = sorted((k, v) for k, v in f[0].items() if v)
    lead = abs(items[0][1])
    return tuple((k, v / lead) for k, v in items), lead


def _slab(fs: Sequence[Form], box: RealBox) -> Optional[Fraction]:
    """Volume when all half-spaces share one hyperplane direction (either orientation), else None."""
    base: Optional[tuple] = None
    upper: Optional[Fraction] = None  # d·x <= upper
    lower: Optional[Fraction] = None  # d·x >= lower
    for f in fs:
        d, s = _direction(f)
        neg = tuple((k, -v) for k, v in d)
        if base is None:
            base = d
        if d == base:
            t = -f[1] / s  # d·x <= t
            upper = t if upper is None else min(upper, t)
        elif neg == base:
            t = f[1] / s  # -d·x + c/s <= 0  ⇔  d·x >= c/s
            lower = t if lower is None else max(lower, t)
        else:
            return None
    if base is None:  # no half-space (the caller has at least one)
        return None
    dcoef = dict(base)

    def below(t):
        return halfspace_volume((dcoef, -t), box)

    if lower is None:
        return below(upper)
    if upper is None:
        return box_volume(box) - below(lower)
    if upper <= lower:
        return Fraction(0)
    return below(upper) - below(lower)


def affine_range(f: Form, box: RealBox) -> Tuple[Fraction, Fraction]:
    """Exact min and max of the affine form ``f = (coeffs, const)`` over the bounded ``box``."""
    lo, hi = _range(f[0], box, f[1])
    assert lo is not None and hi is not None  # a bounded box
    return lo, hi


LASSERRE_DIMS = 4
Row = Tuple[Tuple[Fraction, ...], Fraction]


def _dedupe(rows: Sequence[Row]) -> Optional[List[Row]]:
    """Rows normalised (first non-zero |coefficient| 1), duplicates merged to the tightest;
    None when a constant row is violated (empty set)."""
    best: Dict[Tuple[Fraction, ...], Fraction] = {}
    for a, b in rows:
        lead = next((abs(x) for x in a if x), None)
        if lead is None:
            if b < 0:
                return None
            continue
        key = tuple(x / lead for x in a)
        rb = b / lead
        if key not in best or rb < best[key]:
            best[key] = rb
    return list(best.items())


def _polygon_area(rows: Sequence[Row]):
    """The area of {x ∈ R^2 : a·x <= b}, when the rows include a bounding rectangle: the rectangle
    clipped by every other half-plane (exact Sutherland-Hodgman), then the shoelace formula. None
    when there is no bounding rectangle among the rows."""
    lo: List[Optional[Fraction]] = [None, None]
    hi: List[Optional[Fraction]] = [None, None]
    others = []
    for a, b in rows:
        if a[0] and a[1]:
            others.append((a, b))
        elif a[0] or a[1]:
            t = 0 if a[0] else 1
            v = b / a[t]
            h, l = hi[t], lo[t]
            if a[t] > 0:
                hi[t] = v if h is None else min(h, v)
            else:
                lo[t] = v if l is None else max(l, v)
        elif b < 0:
            return Fraction(0)
    if lo[0] is None or lo[1] is None or hi[0] is None or hi[1] is None:
        return None
    if lo[0] >= hi[0] or lo[1] >= hi[1]:
        return Fraction(0)
    poly = [(lo[0], lo[1]), (hi[0], lo[1]), (hi[0], hi[1]), (lo[0], hi[1])]
    for (a0, a1), b in others:
        out = []
        k = len(poly)
        for i in range(k):
            p, q = poly[i], poly[(i + 1) % k]
            fp = a0 * p[0] + a1 * p[1] - b
            fq = a0 * q[0] + a1 * q[1] - b
            if fp <= 0:
                out.append(p)
            if (fp < 0 < fq) or (fq < 0 < fp):
                s = fp / (fp - fq)
                out.append((p[0] + s * (q[0] - p[0]), p[1] + s * (q[1] - p[1])))
        poly = out
        if len(poly) < 3:
            return Fraction(0)
    acc = poly[-1][0] * poly[0][1] - poly[0][0] * poly[-1][1]
    for i in range(len(poly) - 1):
        acc += poly[i][0] * poly[i + 1][1] - poly[i + 1][0] * poly[i][1]
    return abs(acc) / 2


def lasserre_volume(rows: Sequence[Row], n: int) -> Fraction:
    """vol{x ∈ R^n : a·x <= b for every row (a, b)} of a bounded polytope, exactly, by Lasserre's
    formula V_n(P) = (1/n) Σ_i b_i / |a_ik| · V_{n-1}(projection of facet i along x_k): the facet's
    equation eliminates x_k from the other rows, recursively down to polygons (clipped exactly)
    and intervals. Rows with b_i = 0
    contribute nothing (put the origin at a vertex of the box to drop half of them); redundant
    rows meet P in a lower-dimensional set, whose volume the same formula gives as 0."""
    if n == 2:
        area = _polygon_area(rows)
        if area is not None:
            return area
    live = _dedupe(rows)
    if live is None:
        return Fraction(0)
    if n == 1:
        lo: Optional[Fraction] = None
        hi: Optional[Fraction] = None
        for (a1,), b1 in live:
            t = b1 / a1
            if a1 > 0:
                hi = t if hi is None else min(hi, t)
            else:
                lo = t if lo is None else max(lo, t)
        if lo is None or hi is None:
            raise ValueError("unbounded polytope")
        return max(Fraction(0), hi - lo)
    total = Fraction(0)
    for i, (a, b) in enumerate(live):
        if b == 0:
            continue
        k = max(range(n), key=lambda t: abs(a[t]))
        sub: List[Row] = []
        for j, (c, e) in enumerate(live):
            if j == i:
                continue
            f = c[k] / a[k]
            sub.append((tuple(c[t] - f * a[t] for t in range(n) if t != k), e - f * b))
        v = lasserre_volume(sub, n - 1)
        if v:
            total += b / abs(a[k]) * v
    return total / n


def cut_volume(fs: Sequence, box: RealBox, max_dims: int = 8, deadline: Optional[float] = None) -> Optional[Fraction]:
    """vol{x ∈ box : f(x) <= 0 for all f in fs} exactly (``f = (coeffs, const)`` or
    ``(coeffs, const, strict)`` for f(x) < 0), or None when it is not computed (more than two
    directions in more than ``max_dims`` dimensions, or out of time)."""
    live: List[Form] = []
    for f in fs:
        strict = len(f) > 2 and f[2]
        lo, hi = affine_range((f[0], f[1]), box)
        if lo == hi:  # constant on the box (all its coefficients on the box's dimensions are 0)
            if hi < 0 or (hi == 0 and not strict):
                continue
            return Fraction(0)
        if hi <= 0:  # non-constant: {f = 0} has measure zero
            continue
        if lo >= 0:
            return Fraction(0)
        live.append(({k: v for k, v in f[0].items() if v}, f[1]))
    if not live:
        return box_volume(box)
    slab = _slab(live, box)
    if slab is not None:
        return slab
    names = sorted({k for f in live for k in f[0]})
    if len(names) > max_dims:
        return None
    rest = Fraction(1)
    for n, (lo, hi) in box.items():
        if n not in names:
            rest *= hi - lo
    if len(names) <= LASSERRE_DIMS:  # origin at the box's low corner: x = lo + y
        d = len(names)
        rows: List[Row] = []
        for t, n in enumerate(names):
            lo, hi = box[n]
            e = tuple(Fraction(int(t == u)) for u in range(d))
            rows.append((e, hi - lo))
            rows.append((tuple(-x for x in e), Fraction(0)))
        for f in live:
            shift = f[1] + sum(v * box[k][0] for k, v in f[0].items())
            rows.append((tuple(f[0].get(n, Fraction(0)) for n in names), -shift))
        return lasserre_volume(rows, d) * rest
    idx = {n: i for i, n in enumerate(names)}
    cons = []
    for n in names:
        lo, hi = box[n]
        unit = [Fraction(0)] * len(names)
        unit[idx[n]] = Fraction(1)
        cons.append((list(unit), hi, False))
        unit[idx[n]] = Fraction(-1)
        cons.append((list(unit), -lo, False))
    for f in live:
        row = [Fraction(0)] * len(names)
        for k, v in f[0].items():
            row[idx[k]] = v
        cons.append((row, -f[1], False))
    try:
        v = integrate_polytope(Poly.one(len(names)), cons, len(names), deadline=deadline)
    except TimeoutError:
        return None
    return v * rest
