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
* otherwise the exact polytope integrator :func:`tamp.wmi.integrate_polytope` (Lawrence's
  vertex formula), only up to ``max_dims`` dimensions (its cost grows with the vertex count);
  beyond that the answer is None (not computed).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Dict, Optional, Sequence, Tuple

from tamp.core.linear import Affine as _Affine
from tamp.core.linear import affine_range as _range
from tamp.core.linear import box_volume, halfspace_volume  # noqa: F401  (this module's API)
from tamp.wmi import Poly, integrate_polytope

Affine = _Affine[str]
RealBox = Dict[str, Tuple[Fraction, Fraction]]


def _direction(f: Affine):
    """(normalised coefficient tuple, scale) so that f = scale·(direction·x) + const, scale > 0."""
    items = sorted((k, v) for k, v in f[0].items() if v)
    lead = abs(items[0][1])
    return tuple((k, v / lead) for k, v in items), lead


def _slab(fs: Sequence[Affine], box: RealBox) -> Optional[Fraction]:
    """Volume when all half-spaces share one hyperplane direction (either orientation), else None."""
    base = None
    upper, lower = None, None  # d·x <= upper, d·x >= lower
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


def affine_range(f: Affine, box: RealBox) -> Tuple[Fraction, Fraction]:
    """Exact min and max of the affine form ``f = (coeffs, const)`` over the bounded ``box``."""
    lo, hi = _range(f[0], box, f[1])
    assert lo is not None and hi is not None  # a bounded box
    return lo, hi


def cut_volume(fs: Sequence, box: RealBox, max_dims: int = 8, deadline: Optional[float] = None) -> Optional[Fraction]:
    """vol{x ∈ box : f(x) <= 0 for all f in fs} exactly (``f = (coeffs, const)`` or
    ``(coeffs, const, strict)`` for f(x) < 0), or None when it is not computed (more than two
    directions in more than ``max_dims`` dimensions, or out of time)."""
    live = []
    for f in fs:
        strict = len(f) > 2 and f[2]
        f = (f[0], f[1])
        lo, hi = affine_range(f, box)
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
    idx = {n: i for i, n in enumerate(names)}
    cons = []
    for n in names:
        lo, hi = box[n]
        e = [Fraction(0)] * len(names)
        e[idx[n]] = Fraction(1)
        cons.append((list(e), hi, False))
        e[idx[n]] = Fraction(-1)
        cons.append((list(e), -lo, False))
    for f in live:
        e = [Fraction(0)] * len(names)
        for k, v in f[0].items():
            e[idx[k]] = v
        cons.append((e, -f[1], False))
    try:
        v = integrate_polytope(Poly.one(len(names)), cons, len(names), deadline=deadline)
    except TimeoutError:
        return None
    rest = Fraction(1)
    for n, (lo, hi) in box.items():
        if n not in idx:
            rest *= hi - lo
    return v * rest
