"""Certified real intervals: exact rational intervals, ``arb`` balls and outward float ranges.

Three representations, each where it is the right tool (one module, one set of conventions):

* :class:`Interval` — closed ``[lo, hi]`` with exact :class:`~fractions.Fraction` ends
  (probabilities, ratios, certificate numbers). Arithmetic is exact; :meth:`Interval.tidy`
  rounds outward to short dyadic ends (:mod:`tamp.core.dyadic`).
* ``flint.arb`` balls — python-flint's ball arithmetic (midpoint, radius, rigorous error
  bounds), used for every transcendental value: :func:`normal_cdf`, :func:`normal_pdf`,
  :func:`exp_ball`, … are ~5x faster than hand-written integer series and their width is a
  few ulps. :func:`lower`/:func:`upper` give exact rational ends, :func:`float_lower`/
  :func:`float_upper` outward-rounded floats. A ball stores its radius with 30 bits, so a
  *wide* range given by its ends (``[0, 0.3]``) widens by ~1e-9 of its width as a ball —
  ranges whose ends matter (a box side, a ReLU's pre-activation) are therefore kept as:
* float ranges ``(lo, hi)`` (:data:`FRange`) rounded outward one ulp after every inexact
  operation (IEEE round-to-nearest errs by at most half an ulp), with ``-inf``/``inf`` for
  an unbounded end.

**0 × ∞.** An infinite end stands for an *unknown finite* value (every variable of a
program is a real), so a factor that is exactly 0 makes the product exactly 0:
``fmul((0, 0), (-inf, inf)) == (0, 0)`` (the convention of IEEE 1788). The alternative,
computing ``0·inf = nan`` and widening, is also sound but looser; ``nan`` never appears.
In a quotient, ``inf/inf`` (both ends unbounded) counts as 0, which the true quotients
approach. Comparisons are tri-state: True, False, or None when the intervals cannot tell.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass
from fractions import Fraction
from typing import Dict, Iterable, Optional, Tuple, Union

from flint import arb, ctx, fmpq

from .dyadic import ceil_bits, ceil_grid, floor_bits, floor_grid

INF = math.inf
FRange = Tuple[float, float]
Rational = Union[Fraction, int]
Real = Union[Fraction, int, float]
_nextafter = math.nextafter

#: Working precision (bits) of the transcendental functions: far below one ulp of a double,
#: so a value converted to floats outward is at most one ulp wide.
WORKPREC = 64


# --------------------------------------------------------------------------- exact rational intervals


@dataclass(frozen=True)
class Interval:
    """A closed interval ``[lo, hi]`` with exact rational endpoints.

    >>> a = Interval.of(1, 2)
    >>> (a * a - 1).lo, (a * a - 1).hi
    (Fraction(0, 1), Fraction(3, 1))
    >>> Interval.of(Fraction(1, 1000), 1).tidy(8)
    Interval(lo=Fraction(131, 131072), hi=Fraction(1, 1))
    >>> Interval.of(-1, 1).reciprocal() is None
    True
    """

    lo: Fraction
    hi: Fraction

    def __post_init__(self) -> None:
        if self.lo > self.hi:
            raise ValueError(f"empty interval [{self.lo}, {self.hi}]")

    @staticmethod
    def point(x: Rational) -> "Interval":
        q = Fraction(x)
        return Interval(q, q)

    @staticmethod
    def of(lo: Rational, hi: Rational) -> "Interval":
        return Interval(Fraction(lo), Fraction(hi))

    @property
    def is_exact(self) -> bool:
        return self.lo == self.hi

    @property
    def width(self) -> Fraction:
        return self.hi - self.lo

    def contains(self, x: Real) -> bool:
        return self.lo <= Fraction(x) <= self.hi

    def tidy(self, bits: int = 80) -> "Interval":
        """Round outward to dyadic endpoints with about ``bits`` significant bits."""
        return Interval(floor_bits(self.lo, bits), ceil_bits(self.hi, bits))

    def ball(self) -> arb:
        """An ``arb`` ball containing the interval."""
        return ball(self.lo).union(ball(self.hi))

    def __add__(self, o: "Interval | Rational") -> "Interval":
        p = _iv(o)
        return Interval(self.lo + p.lo, self.hi + p.hi)

    __radd__ = __add__

    def __neg__(self) -> "Interval":
        return Interval(-self.hi, -self.lo)

    def __sub__(self, o: "Interval | Rational") -> "Interval":
        return self + (-_iv(o))

    def __rsub__(self, o: "Interval | Rational") -> "Interval":
        return _iv(o) - self

    def __mul__(self, o: "Interval | Rational") -> "Interval":
        p = _iv(o)
        ps = (self.lo * p.lo, self.lo * p.hi, self.hi * p.lo, self.hi * p.hi)
        return Interval(min(ps), max(ps))

    __rmul__ = __mul__

    def reciprocal(self) -> Optional["Interval"]:
        """1/self, or None when self contains 0 (unbounded)."""
        if self.lo <= 0 <= self.hi:
            return None
        return Interval(1 / self.hi, 1 / self.lo)

    def __truediv__(self, o: "Interval | Rational") -> Optional["Interval"]:
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


def _iv(x: "Interval | Rational") -> Interval:
    return x if isinstance(x, Interval) else Interval.point(x)


def from_floats(lo: float, hi: float) -> Interval:
    """The interval with these float endpoints (exactly)."""
    return Interval(Fraction(lo), Fraction(hi))


# --------------------------------------------------------------------------- arb balls


def ball(x: Real) -> arb:
    """A ball containing ``x``: exact for ints, floats and short dyadic rationals.

    >>> ball(Fraction(1, 4)).is_exact(), ball(Fraction(1, 3)).is_exact()
    (True, False)
    >>> ball(Fraction(1, 3)) > ball(Fraction(33, 100))
    True
    """
    if isinstance(x, Fraction):
        if x.denominator == 1:
            return arb(x.numerator)
        return arb(fmpq(x.numerator, x.denominator))
    return arb(x)


def _exact_fraction(p: arb) -> Fraction:
    m, e = p.man_exp()
    return Fraction(int(m)) * (Fraction(2) ** int(e))


def lower(x: arb) -> Fraction:
    """The exact lower end of a finite ball, as a rational.

    >>> lower(ball(Fraction(1, 3))) <= Fraction(1, 3) <= upper(ball(Fraction(1, 3)))
    True
    """
    if not x.is_finite():
        raise ValueError(f"the ball {x} is not finite")
    return _exact_fraction(x.lower())


def upper(x: arb) -> Fraction:
    """The exact upper end of a finite ball, as a rational."""
    if not x.is_finite():
        raise ValueError(f"the ball {x} is not finite")
    return _exact_fraction(x.upper())


def to_interval(x: arb) -> Interval:
    """The rational interval of a finite ball's ends."""
    return Interval(lower(x), upper(x))


def float_lower(x: arb) -> float:
    """The largest float <= every point of the ball (``-inf`` when unbounded or nan).

    >>> float_lower(ball(Fraction(1, 3))) < 1 / 3 < float_upper(ball(Fraction(1, 3)))
    True
    >>> float_lower(ball(0.25)), float_lower(arb("1e-400")), float_lower(arb("-1e-400"))
    (0.25, 0.0, -5e-324)
    """
    if x.is_nan():
        return -INF
    p = x.lower()
    f = float(p)
    if f != f:
        return -INF
    if f != -INF and arb(f) > p:
        f = _nextafter(f, -INF)
    return f


def float_upper(x: arb) -> float:
    """The smallest float >= every point of the ball (``inf`` when unbounded or nan)."""
    if x.is_nan():
        return INF
    p = x.upper()
    f = float(p)
    if f != f:
        return INF
    if f != INF and arb(f) < p:
        f = _nextafter(f, INF)
    return f


def float_pair(x: arb) -> FRange:
    """The outward float range of a ball."""
    return (float_lower(x), float_upper(x))


def lt(a: arb, b: arb) -> Optional[bool]:
    """Tri-state ``a < b`` for every pair of points: True, False, or None (undecided).

    >>> lt(ball(1), ball(2)), lt(ball(2), ball(1)), lt(arb(1, 1), ball(1))
    (True, False, None)
    """
    return True if a < b else False if a >= b else None


def le(a: arb, b: arb) -> Optional[bool]:
    """Tri-state ``a <= b``."""
    return True if a <= b else False if a > b else None


def normal_cdf(x: Real, mean: Real, var: Real) -> arb:
    """A ball containing Φ((x - mean)/√var), the normal CDF (see :class:`Normal`).

    >>> c = normal_cdf(0, 0, 1)
    >>> c.contains(ball(Fraction(1, 2))), c.rad() < 1e-18
    (True, True)
    >>> 0 < normal_cdf(-60, 0, 1) < ball(Fraction(1, 10**700))
    True
    """
    return Normal(Fraction(mean), Fraction(var)).cdf(x)


def normal_pdf(x: Real, mean: Real, var: Real) -> arb:
    """A ball containing the normal density exp(-(x - mean)²/(2 var))/√(2π var).

    >>> normal_pdf(0, 0, 1).overlaps(arb.pi().rsqrt() * arb(2).rsqrt())
    True
    """
    return Normal(Fraction(mean), Fraction(var)).pdf(x)


class Normal:
    """Certified CDF and density of N(mean, var) (var > 0) at real points, as ``arb`` balls
    computed with :data:`WORKPREC` bits, and as outward float ranges (``*_pair``, ``*_range``),
    recomputed with 4x the bits in the rare case that the first range is more than one ulp
    wide (a value within 2^-64 of a float).

    Φ(x) = erfc((mean - x)/√(2 var))/2 keeps relative accuracy in the lower tail (there is no
    cut-off: Φ(-60) ≈ 1e-784 is enclosed as such).

    >>> n = Normal(Fraction(1), Fraction(4))
    >>> lo, hi = n.cdf_pair(1.0)
    >>> lo <= 0.5 <= hi, hi - lo <= 1.2e-16
    (True, True)
    >>> lo, hi = n.pdf_range(0.0, 3.0)     # the interval holds the mean: the peak bounds it
    >>> hi >= 1 / (2 * math.sqrt(2 * math.pi)) > lo
    True
    """

    __slots__ = ("_consts", "mean", "var")

    def __init__(self, mean: Fraction, var: Fraction):
        if var <= 0:
            raise ValueError("a normal distribution needs a positive variance")
        self.mean = mean
        self.var = var
        self._consts: Dict[int, Tuple[arb, arb, arb, arb]] = {}

    def _at(self, prec: int) -> Tuple[arb, arb, arb, arb]:
        """(mean, 1/√(2v), 1/(2v), 1/√(2πv)) as balls of ``prec`` bits (call under that precision)."""
        k = self._consts.get(prec)
        if k is None:
            v = ball(self.var)
            k = self._consts[prec] = (ball(self.mean), (2 * v).rsqrt(), 1 / (2 * v), (2 * arb.pi() * v).rsqrt())
        return k

    def cdf(self, x: Real, prec: int = WORKPREC) -> arb:
        """Φ at ``x`` (a ball)."""
        with ctx.workprec(prec):
            m, inv_s, _, _ = self._at(prec)
            return ((m - ball(x)) * inv_s).erfc() / 2

    def cdf_pair(self, x: float) -> FRange:
        """Outward float range of Φ(x); (0, 0) at -inf and (1, 1) at inf."""
        if x == -INF:
            return (0.0, 0.0)
        if x == INF:
            return (1.0, 1.0)
        r = _unit_pair(self.cdf(x))
        return r if _tight(r) else _unit_pair(self.cdf(x, 4 * WORKPREC))

    def cdf_range(self, lo: float, hi: float) -> FRange:
        """(a lower bound of Φ(lo), an upper bound of Φ(hi)) for finite lo <= hi, with one
        evaluation over the ball around [lo, hi] (Φ increases)."""
        with ctx.workprec(WORKPREC):
            m, inv_s, _, _ = self._at(WORKPREC)
            c = ((m - arb(lo).union(arb(hi))) * inv_s).erfc() / 2
        return _unit_pair(c)

    def pdf(self, x: Real, prec: int = WORKPREC) -> arb:
        """The density at ``x`` (a ball)."""
        with ctx.workprec(prec):
            m, _, inv_2v, norm = self._at(prec)
            d = ball(x) - m
            return (-(d * d) * inv_2v).exp() * norm

    def pdf_pair(self, x: float) -> FRange:
        """Outward float range of the density at the float ``x``."""
        if not math.isfinite(x):
            return (0.0, 0.0)
        r = float_pair(self.pdf(x))
        return r if _tight(r) else float_pair(self.pdf(x, 4 * WORKPREC))

    def pdf_range(self, lo: float, hi: float) -> FRange:
        """Bounds of the density over [lo, hi] (ends may be infinite): it decreases with
        ``|x - mean|``, so the ends bound it, and the peak does when the mean may lie inside."""
        a = self.pdf(lo) if math.isfinite(lo) else arb(0)
        b = self.pdf(hi) if math.isfinite(hi) else arb(0)
        low = min(float_lower(a), float_lower(b))
        with ctx.workprec(WORKPREC):
            m = self._at(WORKPREC)[0]
            outside = (lo != -INF and ball(lo) > m) or (hi != INF and m > ball(hi))
        if outside:  # the mean certainly lies outside: the nearer end bounds it
            return (max(low, 0.0), max(float_upper(a), float_upper(b)))
        return (max(low, 0.0), self.peak())

    def peak(self) -> float:
        """An upper bound of the density's maximum 1/√(2π var)."""
        with ctx.workprec(WORKPREC):
            return float_upper(self._at(WORKPREC)[3])


def _tight(r: FRange) -> bool:
    """At most one ulp wide (the best a float range can do for a value that is not a float)."""
    return r[0] == r[1] or up(r[0]) >= r[1]


def _unit_pair(c: arb) -> FRange:
    """The outward float range of a probability, clipped to [0, 1]."""
    lo, hi = float_pair(c)
    return (max(lo, 0.0), min(hi, 1.0))


def exp_ball(x: Real) -> arb:
    """A ball containing exp(x) (at the current precision).

    >>> exp_ball(0) == 1
    True
    """
    return ball(x).exp()


def exp_interval(x: Rational, bits: int = 90) -> Interval:
    """A rational interval containing exp(x) whose ends are short dyadics: rounded outward to
    about ``bits`` significant bits, or to multiples of 2^-``bits`` where that is finer (large
    values), so the width is at most about 2^-bits relative and absolute.

    >>> iv = exp_interval(1)
    >>> float(iv.lo) == math.e == float(iv.hi), iv.width < Fraction(1, 2**85)
    (True, True)
    >>> exp_interval(50).width < Fraction(1, 2**85)
    True
    """
    q = Fraction(x)
    size = max(0, math.ceil(q * Fraction(3, 2)))  # > log2(exp(q)): the integer bits of the value
    with ctx.workprec(bits + size + 16):
        iv = to_interval(exp_ball(q))
    return Interval(
        max(floor_bits(iv.lo, bits), floor_grid(iv.lo, -bits)), min(ceil_bits(iv.hi, bits), ceil_grid(iv.hi, -bits))
    )


# --------------------------------------------------------------------------- outward float ranges


def down(x: float) -> float:
    """The next float below ``x``."""
    return _nextafter(x, -INF)


def up(x: float) -> float:
    """The next float above ``x``."""
    return _nextafter(x, INF)


def float_below(q: Fraction) -> float:
    """The largest float <= q.

    >>> float_below(Fraction(1, 3)) == 1 / 3 < float_above(Fraction(1, 3))
    True
    """
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


def enclose(q: Real) -> FRange:
    """The tightest float range containing the exact number ``q`` (a point when q is a float).

    >>> enclose(Fraction(1, 2)), enclose(Fraction(1, 3)) == (float_below(Fraction(1, 3)), float_above(Fraction(1, 3)))
    ((0.5, 0.5), True)
    """
    try:
        f = float(q)
    except OverflowError:  # beyond the largest float (the literal 1e400): that float and infinity
        big = sys.float_info.max
        return (big, INF) if q > 0 else (-INF, -big)
    if Fraction(f) == q:
        return (f, f)
    return (float_below(Fraction(q)), float_above(Fraction(q)))


def enclose_range(lo: Optional[Real], hi: Optional[Real]) -> FRange:
    """A float range containing the exact range [lo, hi] (None = unbounded).

    >>> enclose_range(None, Fraction(1, 2))
    (-inf, 0.5)
    """
    a = -INF if lo is None else enclose(lo)[0]
    b = INF if hi is None else enclose(hi)[1]
    return (a, b)


def fadd(a: FRange, b: FRange) -> FRange:
    """Outward-rounded sum of two float ranges.

    >>> lo, hi = fadd((0.1, 0.1), (0.2, 0.2))
    >>> lo < Fraction(3, 10) < hi
    True
    """
    lo = a[0] + b[0]
    hi = a[1] + b[1]
    if -INF < lo < INF:
        lo = _nextafter(lo, -INF)
    if -INF < hi < INF:
        hi = _nextafter(hi, INF)
    return (lo, hi)


def fneg(a: FRange) -> FRange:
    """The negated range (exact)."""
    return (-a[1], -a[0])


def fsub(a: FRange, b: FRange) -> FRange:
    """Outward-rounded difference ``a - b``."""
    return fadd(a, (-b[1], -b[0]))


def _prod(x: float, y: float, direction: float) -> float:
    """x·y rounded one ulp towards ``direction``; exactly 0 when a factor is 0 (so 0·inf = 0).
    A product of non-zero factors is always moved, so an underflow to 0 still encloses it."""
    if x == 0.0 or y == 0.0:
        return 0.0
    p = x * y
    return _nextafter(p, direction) if -INF < p < INF else p


def fmul(a: FRange, b: FRange) -> FRange:
    """Outward-rounded product of two float ranges (0 · inf counts as 0, see the module).

    >>> fmul((0.0, 0.0), (-INF, INF))
    (0.0, 0.0)
    >>> fmul((-1.0, 2.0), (3.0, INF))
    (-inf, inf)
    >>> fmul((-1.0, 2.0), (0.0, 3.0))
    (-3.0000000000000004, 6.000000000000001)
    """
    a0, a1 = a
    b0, b1 = b
    if a0 >= 0.0 and b0 >= 0.0:  # the common case: both non-negative
        return (_prod(a0, b0, -INF), _prod(a1, b1, INF))
    # the end products of non-zero factors, each moved one ulp outward (nextafter is monotone,
    # so moving only the extreme ones is the same); a zero factor contributes an exact 0
    if a0 != 0.0 and a1 != 0.0 and b0 != 0.0 and b1 != 0.0:
        p0, p1, p2, p3 = a0 * b0, a0 * b1, a1 * b0, a1 * b1
        lo, hi = min(p0, p1, p2, p3), max(p0, p1, p2, p3)
        zero = False
    else:
        ps = [x * y for x in (a0, a1) if x != 0.0 for y in (b0, b1) if y != 0.0]
        if not ps:
            return (0.0, 0.0)
        lo, hi = min(ps), max(ps)
        zero = True
    if -INF < lo < INF:
        lo = _nextafter(lo, -INF)
    if -INF < hi < INF:
        hi = _nextafter(hi, INF)
    if zero:
        lo, hi = min(lo, 0.0), max(hi, 0.0)
    return (lo, hi)


def fmul_nonneg(a: FRange, b: FRange) -> FRange:
    """Product of two ranges within [0, inf)."""
    lo = a[0] * b[0] if a[0] > 0 and b[0] > 0 else 0.0
    if a[1] == 0.0 or b[1] == 0.0:
        return (0.0, 0.0)
    hi = a[1] * b[1]
    # a product of positive factors is rounded up even when it underflowed to 0
    return (down(lo) if lo > 0 else 0.0, up(hi) if hi < INF else hi)


def fdiv(a: FRange, b: FRange) -> FRange:
    """Outward-rounded quotient; the whole line when ``b`` contains 0 (inf/inf counts as 0).

    >>> fdiv((1.0, 1.0), (-1.0, 1.0))
    (-inf, inf)
    >>> fdiv((2.0, INF), (1.0, INF))[0] <= 0.0
    True
    """
    if b[0] <= 0 <= b[1]:
        return (-INF, INF)
    qs = [x / y for x in a for y in b]
    qs = [0.0 if q != q else q for q in qs]
    lo, hi = min(qs), max(qs)
    return (down(lo) if lo > -INF else lo, up(hi) if hi < INF else hi)


def fsum_interval(los: Iterable[float], his: Iterable[float]) -> FRange:
    """Outward enclosure of (Σ los, Σ his) for non-negative terms: ``math.fsum`` is
    correctly rounded, so one ulp outward contains the exact sums.

    >>> fsum_interval([0.1, 0.2], [0.1, 0.2])[0] < 0.30000000000000004
    True
    """
    lo = math.fsum(los)
    hi = math.fsum(his)
    return (down(lo) if lo != 0 else 0.0, up(hi) if hi != 0 else 0.0)


def fcompare(op: str, a: Tuple[Real, Real], b: Tuple[Real, Real]) -> Optional[bool]:
    """Tri-state ``x op y`` for every x in ``a`` and y in ``b`` (op in < <= > >= == !=): True
    if it holds for every pair, False if for none, else None. The ends may be floats or
    Fractions (:func:`tamp.core.logic3.compare_intervals` compares rational intervals with it).

    >>> fcompare("<", (0.0, 1.0), (2.0, 3.0)), fcompare("==", (1.0, 1.0), (1.0, 1.0)), fcompare("<", (0.0, 2.0), (1.0, 3.0))
    (True, True, None)
    """
    if op == "<":
        return True if a[1] < b[0] else False if a[0] >= b[1] else None
    if op == "<=":
        return True if a[1] <= b[0] else False if a[0] > b[1] else None
    if op == ">":
        return fcompare("<", b, a)
    if op == ">=":
        return fcompare("<=", b, a)
    if op == "==":
        if a[0] == a[1] == b[0] == b[1]:
            return True
        return False if a[1] < b[0] or b[1] < a[0] else None
    if op == "!=":
        r = fcompare("==", a, b)
        return None if r is None else not r
    raise ValueError(op)


def fsign_compare(op: str, d: FRange) -> Optional[bool]:
    """Tri-state ``x op y`` from a sound range ``d`` of ``x - y``.

    >>> fsign_compare("<", (-2.0, -1.0)), fsign_compare(">=", (-1.0, 1.0))
    (True, None)
    """
    return fcompare(op, d, (0.0, 0.0))


def ball_range(x: FRange) -> arb:
    """A ball containing the float range ``x`` (the whole line when an end is infinite)."""
    if x[0] == x[1]:
        return arb(x[0])
    if not (math.isfinite(x[0]) and math.isfinite(x[1])):
        return arb(0, INF)
    return arb(x[0]).union(arb(x[1]))
