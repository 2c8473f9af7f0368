"""Boxes over the non-sensitive inputs: splitting, and their mass under the uniform prior.

A box is a tuple of ``(lo, hi)`` pairs, one per :class:`~tamp.causal.region.Dim`,
exact Fractions (None = unbounded). Integer and Boolean dimensions hold the
integers ``lo..hi`` inclusive; real ones the interval [lo, hi].
"""

from __future__ import annotations

from fractions import Fraction
from typing import Dict, List, Optional, Tuple

from tamp.core.interval import enclose_range

from .region import Dim

Box = Tuple[Tuple[Optional[Fraction], Optional[Fraction]], ...]


def root_box(dims: Tuple[Dim, ...]) -> Box:
    return tuple((d.lo, d.hi) for d in dims)


def is_empty(box: Box) -> bool:
    return any(lo is not None and hi is not None and lo > hi for lo, hi in box)


def float_box(dims: Tuple[Dim, ...], box: Box) -> Dict[str, Tuple[float, float]]:
    """The box as outward-rounded float intervals per input name (for interval propagation)."""
    return {d.name: enclose_range(lo, hi) for d, (lo, hi) in zip(dims, box)}


def width(side: Tuple[Optional[Fraction], Optional[Fraction]]) -> Fraction:
    """``hi - lo`` of a bounded side."""
    lo, hi = side
    if lo is None or hi is None:
        raise ValueError("an unbounded side has no width")
    return hi - lo


def relative_width(d: Dim, lo: Optional[Fraction], hi: Optional[Fraction]) -> Fraction:
    """The share of the dimension's full range this side covers (1 for unbounded dimensions)."""
    if d.lo is None or d.hi is None:  # not d.bounded
        return Fraction(1)
    if lo is None or hi is None:
        raise ValueError(f"a box side of the bounded input '{d.name}' is unbounded")
    if d.sort == "real":
        full = d.hi - d.lo
        return (hi - lo) / full if full > 0 else Fraction(1)
    return Fraction(int(hi - lo) + 1, int(d.hi - d.lo) + 1)


def uniform_mass(dims: Tuple[Dim, ...], box: Box) -> Fraction:
    """The exact probability of ``box`` when every bounded input is uniform over its range
    (continuous for reals, discrete for integers and Booleans)."""
    m = Fraction(1)
    for d, (lo, hi) in zip(dims, box):
        m *= relative_width(d, lo, hi)
    return m


def can_split(d: Dim, lo, hi) -> bool:
    if lo is None or hi is None:
        return False
    return hi > lo if d.sort == "real" else hi - lo >= 1


def split(d: Dim, box: Box, k: int) -> List[Box]:
    """Halve ``box`` along dimension ``k``."""
    lo, hi = box[k]
    if lo is None or hi is None:  # (can_split is false)
        raise ValueError(f"cannot halve the unbounded side of '{d.name}'")
    if d.sort == "real":
        mid = (lo + hi) / 2
        parts = [(lo, mid), (mid, hi)]
    else:
        mid = Fraction((int(lo) + int(hi)) // 2)
        parts = [(lo, mid), (mid + 1, hi)]
    return [box[:k] + (p,) + box[k + 1 :] for p in parts]


def center(dims: Tuple[Dim, ...], box: Box) -> Dict[str, object]:
    """A point of the box (its centre; integers rounded down; unbounded sides clipped)."""
    pt: Dict[str, object] = {}
    for d, (lo, hi) in zip(dims, box):
        c: Fraction
        if lo is None:
            c = Fraction(0) if hi is None else hi
        elif hi is None:
            c = lo
        else:
            c = (lo + hi) / 2
        if d.sort == "int":
            pt[d.name] = int(lo) + (int(hi) - int(lo)) // 2 if lo is not None and hi is not None else int(c)
        elif d.sort == "bool":
            pt[d.name] = bool(int(lo)) if lo is not None else False
        else:
            pt[d.name] = c
    return pt


def random_point(dims: Tuple[Dim, ...], box: Box, rng) -> Dict[str, object]:
    """A pseudo-random point of the box with short rational coordinates (centre on unbounded sides)."""
    pt = center(dims, box)
    for d, (lo, hi) in zip(dims, box):
        if lo is None or hi is None:
            continue
        if d.sort == "real":
            pt[d.name] = lo + (hi - lo) * Fraction(rng.randrange(1025), 1024)
        elif d.sort == "int":
            pt[d.name] = rng.randint(int(lo), int(hi))
        else:
            pt[d.name] = bool(rng.randint(int(lo), int(hi)))
    return pt
