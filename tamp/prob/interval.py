"""Certified intervals.

:class:`Interval` has exact :class:`~fractions.Fraction` endpoints (``None`` for an
unbounded end is not used: probabilities and ratios are finite or the interval is
:data:`EVERYTHING`).  Arithmetic is exact; :meth:`Interval.tidy` rounds the
endpoints *outward* to short dyadic rationals so that denominators stay small.

The ``f*`` helpers work on pairs of Python floats ``(lo, hi)`` rounded outward
one ulp after every operation (IEEE round-to-nearest errs by at most half an ulp,
so one ulp outward always contains the exact result).  They are used in the
hot loops of the Gaussian bounds, where Fractions would be too slow.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Optional

INF = math.inf
_nextafter = math.nextafter


def down(x: float) -> float:
    """The next float below ``x`` (``x`` itself if it is -inf)."""
    return math.nextafter(x, -INF)


def up(x: float) -> float:
    """The next float above ``x``."""
    return math.nextafter(x, INF)


def float_below(q: Fraction) -> float:
    """The largest float <= q."""
    f = float(q)
    if Fraction(f) > q:
        f = down(f)
    return f


def float_above(q: Fraction) -> float:
    """The smallest float >= q."""
    f = float(q)
    if Fraction(f) < q:
        f = up(f)
    return f


def fenclose(q: Fraction) -> tuple:
    """A float interval containing the rational ``q`` (a point when q is a float)."""
    f = float(q)
    if Fraction(f) == q:
        return (f, f)
    return (float_below(q), float_above(q))


def fadd(a: tuple, b: tuple) -> tuple:
    """Outward-rounded sum of two float intervals."""
    lo = a[0] + b[0]
    hi = a[1] + b[1]
    if -INF < lo < INF:
        lo = _nextafter(lo, -INF)
    if -INF < hi < INF:
        hi = _nextafter(hi, INF)
    return (lo, hi)


def fneg(a: tuple) -> tuple:
    return (-a[1], -a[0])


def _prod(x: float, y: float, direction: float) -> float:
    """x·y rounded one ulp towards ``direction``; exactly 0 when a factor is 0 (so 0·inf = 0).
    A product of non-zero factors is always moved, so an underflow to 0 still encloses it."""
    if x == 0.0 or y == 0.0:
        return 0.0
    p = x * y
    return _nextafter(p, direction) if -INF < p < INF else p


def fmul(a: tuple, b: tuple) -> tuple:
    """Outward-rounded product of two float intervals (0 * inf counts as 0)."""
    a0, a1 = a
    b0, b1 = b
    if a0 >= 0.0 and b0 >= 0.0:  # the common case: both non-negative
        return (_prod(a0, b0, -INF), _prod(a1, b1, INF))
    los = (_prod(a0, b0, -INF), _prod(a0, b1, -INF), _prod(a1, b0, -INF), _prod(a1, b1, -INF))
    his = (_prod(a0, b0, INF), _prod(a0, b1, INF), _prod(a1, b0, INF), _prod(a1, b1, INF))
    return (min(los), max(his))


def fmul_nonneg(a: tuple, b: tuple) -> tuple:
    """Product of two intervals within [0, inf)."""
    lo = a[0] * b[0] if a[0] > 0 and b[0] > 0 else 0.0
    if a[1] == 0.0 or b[1] == 0.0:
        return (0.0, 0.0)
    hi = a[1] * b[1]
    # a product of positive factors is rounded up even when it underflowed to 0
    return (down(lo) if lo > 0 else 0.0, up(hi) if hi < INF else hi)


def fsum_interval(los, his) -> tuple:
    """Outward enclosure of (Σ los, Σ his) for non-negative terms: ``math.fsum`` is
    correctly rounded, so one ulp outward contains the exact sums."""
    lo = math.fsum(los)
    hi = math.fsum(his)
    return (down(lo) if lo != 0 else 0.0, up(hi) if hi != 0 else 0.0)


def linear_range(coef, box):
    """The exact range (lo, hi) of Σ coef[k]·x_k over the box ``box[k] = (lo, hi)`` (rationals;
    None = unbounded, in the bounds and in the result). Shared by the engine's mass nodes and
    the certificate checker's cell masses."""
    lo = hi = Fraction(0)
    for k, c in coef.items():
        a, b = box[k]
        if c < 0:
            a, b = b, a
        lo = None if lo is None or a is None else lo + c * a
        hi = None if hi is None or b is None else hi + c * b
    return lo, hi


def _dyadic_floor(q: Fraction, bits: int) -> Fraction:
    """The largest dyadic rational <= q with about ``bits`` significant bits (q if already short)."""
    if q.denominator.bit_length() <= bits:
        return q
    e = bits - (abs(q.numerator).bit_length() - q.denominator.bit_length())
    if e <= 0:
        return Fraction(math.floor(q))
    return Fraction(math.floor(q * (1 << e)), 1 << e)


def _dyadic_ceil(q: Fraction, bits: int) -> Fraction:
    return -_dyadic_floor(-q, bits)


@dataclass(frozen=True)
class Interval:
    """A closed interval [lo, hi] with exact rational endpoints."""

    lo: Fraction
    hi: Fraction

    def __post_init__(self):
        if self.lo > self.hi:
            raise ValueError(f"empty interval [{self.lo}, {self.hi}]")

    @staticmethod
    def point(x) -> "Interval":
        x = Fraction(x)
        return Interval(x, x)

    @staticmethod
    def of(lo, hi) -> "Interval":
        return Interval(Fraction(lo), Fraction(hi))

    @property
    def is_exact(self) -> bool:
        return self.lo == self.hi

    @property
    def width(self) -> Fraction:
        return self.hi - self.lo

    def contains(self, x) -> bool:
        return self.lo <= Fraction(x) <= self.hi

    def tidy(self, bits: int = 80) -> "Interval":
        """Round outward to dyadic endpoints with about ``bits`` significant bits."""
        return Interval(_dyadic_floor(self.lo, bits), _dyadic_ceil(self.hi, bits))

    def __add__(self, o) -> "Interval":
        o = _iv(o)
        return Interval(self.lo + o.lo, self.hi + o.hi)

    __radd__ = __add__

    def __neg__(self) -> "Interval":
        return Interval(-self.hi, -self.lo)

    def __sub__(self, o) -> "Interval":
        return self + (-_iv(o))

    def __rsub__(self, o) -> "Interval":
        return _iv(o) - self

    def __mul__(self, o) -> "Interval":
        o = _iv(o)
        ps = (self.lo * o.lo, self.lo * o.hi, self.hi * o.lo, self.hi * o.hi)
        return Interval(min(ps), max(ps))

    __rmul__ = __mul__

    def reciprocal(self) -> Optional["Interval"]:
        """1/self, or None when self contains 0 (unbounded)."""
        if self.lo <= 0 <= self.hi:
            return None
        return Interval(1 / self.hi, 1 / self.lo)

    def __truediv__(self, o) -> Optional["Interval"]:
        r = _iv(o).reciprocal()
        return None if r is None else self * r

    def intersect(self, o: "Interval") -> "Interval":
        lo, hi = max(self.lo, o.lo), min(self.hi, o.hi)
        if lo > hi:  # cannot happen for two sound enclosures of one value
            raise AssertionError(f"disjoint enclosures {self} and {o}")
        return Interval(lo, hi)

    def __str__(self) -> str:
        if self.is_exact:
            return str(self.lo)
        return f"[{float(self.lo):.6g}, {float(self.hi):.6g}]"


def _iv(x) -> Interval:
    return x if isinstance(x, Interval) else Interval.point(x)


def from_floats(lo: float, hi: float) -> Interval:
    """The interval with these float endpoints (exactly)."""
    return Interval(Fraction(lo), Fraction(hi))
