"""The one-dimensional continuous distributions of the probability engine.

Every sampled real becomes (an affine function of) an independent *base
variable* with one of these distributions.  Each gives a certified CDF:
``cdf_f(x)`` is a float interval that provably contains F(x) for a float x.

* :class:`PolyDensity` (``uniform``, the bins of ``step``, ``density``) — exact:
  ``cdf_exact`` returns a Fraction, and the density is a polynomial for
  :func:`tamp.wmi.integrate_polytope`.
* :class:`Gauss`, :class:`Laplace`, :class:`Expo` — the closed forms in ``erfc`` and
  ``exp``, enclosed by python-flint's ball arithmetic (``arb``, rigorous error bounds) at
  :data:`tamp.core.interval.WORKPREC` bits and rounded outward to floats
  (:class:`tamp.core.interval.Normal`): at most about one ulp wide, in the far tails too.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Dict, Optional, Tuple

from flint import arb, ctx

from tamp.core.interval import INF, WORKPREC, Interval, Normal, ball, down, enclose, float_pair, float_upper, up
from tamp.core.interval import exp_interval as _exp_interval


class Dist:
    """Base class: a continuous distribution on the reals with a certified CDF."""

    is_poly = False
    is_gauss = False

    def support(self) -> Tuple[Optional[Fraction], Optional[Fraction]]:
        return (None, None)

    def cdf_f(self, x: float) -> Tuple[float, float]:  # pragma: no cover - abstract
        raise NotImplementedError

    def quantile(self, p: float) -> float:  # pragma: no cover - abstract
        raise NotImplementedError

    def spread(self) -> float:
        """A typical length scale (for choosing where to split; not used in any bound)."""
        return 1.0

    def cdf_range(self, lo: float, hi: float) -> Tuple[float, float]:
        """(a lower bound of F(lo), an upper bound of F(hi))."""
        return (self.cdf_f(lo)[0], self.cdf_f(hi)[1])

    def mass_f(self, lo: float, hi: float) -> Tuple[float, float]:
        """Certified float interval for P(lo <= X <= hi)."""
        if lo >= hi:
            return (0.0, 0.0)
        a = self.cdf_f(lo)
        b = self.cdf_f(hi)
        m_lo = b[0] - a[1]
        m_hi = b[1] - a[0]
        m_lo = max(down(m_lo), 0.0) if m_lo > 0 else 0.0
        m_hi = min(up(m_hi), 1.0) if m_hi > 0 else 0.0
        return (m_lo, m_hi)

    def mass_box(self, L: Tuple[float, float], H: Tuple[float, float]) -> Tuple[float, float]:
        """Certified P(l <= X <= h) when the ends are only known as float enclosures
        l ∈ L, h ∈ H: the lower bound takes the narrowest box, the upper the widest."""
        a = self.cdf_f(L[1])
        a2 = self.cdf_f(L[0]) if L[0] != L[1] else a
        b = self.cdf_f(H[0])
        b2 = self.cdf_f(H[1]) if H[0] != H[1] else b
        lo = b[0] - a[1]
        hi = b2[1] - a2[0]
        return (max(down(lo), 0.0) if lo > 0 else 0.0, min(up(hi), 1.0) if hi > 0 else 0.0)

    def mass(self, lo: Optional[Fraction], hi: Optional[Fraction]) -> Interval:
        """P(lo <= X <= hi) as an Interval (exact for polynomial densities); None = unbounded."""
        L = (-INF, -INF) if lo is None else enclose(lo)
        H = (INF, INF) if hi is None else enclose(hi)
        m = self.mass_box(L, H)
        return Interval(Fraction(m[0]), Fraction(m[1]))


@dataclass(frozen=True)
class Gauss(Dist):
    """Normal with mean ``mean`` and variance ``var`` (> 0)."""

    mean: Fraction
    var: Fraction
    _cache: Dict = field(default_factory=dict, compare=False, repr=False, hash=False)
    is_gauss = True

    def spread(self) -> float:
        return math.sqrt(float(self.var))

    def cdf_f(self, x: float) -> Tuple[float, float]:
        if x == -INF:
            return (0.0, 0.0)
        if x == INF:
            return (1.0, 1.0)
        c = self._cache.get(x)
        if c is None:
            c = self._cache[x] = self._normal().cdf_pair(x)
        return c

    def cdf_b(self, x: float) -> arb:
        """The CDF at the finite float x as a ball."""
        c = self._cache.get(("cdfb", x))
        if c is None:
            c = self._cache[("cdfb", x)] = self._normal().cdf(x)
        return c

    def pdf_b(self, x: float) -> arb:
        """The density at the finite float x as a ball."""
        c = self._cache.get(("pdfb", x))
        if c is None:
            c = self._cache[("pdfb", x)] = self._normal().pdf(x)
        return c

    def pdf_f(self, x: float) -> Tuple[float, float]:
        """Certified float interval of the density at the float x."""
        c = self._cache.get(("pdf", x))
        if c is None:
            c = self._cache[("pdf", x)] = float_pair(self.pdf_b(x))
        return c

    def cdf_range(self, lo: float, hi: float) -> Tuple[float, float]:
        """(a lower bound of F(lo), an upper bound of F(hi)) — one evaluation when lo, hi are close."""
        if (
            lo == hi
            or not (math.isfinite(lo) and math.isfinite(hi))
            or max(abs(lo - float(self.mean)), abs(hi - float(self.mean))) > 40 * self.spread()
        ):
            return (self.cdf_f(lo)[0], self.cdf_f(hi)[1])
        return self._normal().cdf_range(lo, hi)

    def _bconsts(self):
        """Balls of the mean and the variance (exact when they are short dyadics)."""
        k = self._cache.get("bconsts")
        if k is None:
            k = self._cache["bconsts"] = (ball(self.mean), ball(self.var))
        return k

    def second_moment(self, a: float, b: float, c: float) -> Tuple[float, float]:
        """Certified ∫_a^b (s - c)² f(s) ds = (v + (μ - c)²)(F(b) - F(a)) + v[(a + μ - 2c) f(a) -
        (b + μ - 2c) f(b)] (integration by parts with f' = -(s - μ) f / v); a, b finite."""
        m, v = self._bconsts()
        with ctx.workprec(WORKPREC):
            dF = self.cdf_b(b) - self.cdf_b(a)
            mc = m - c
            t1 = (v + mc * mc) * dF
            c2 = 2 * arb(c)
            t2 = v * ((a + m - c2) * self.pdf_b(a) - (b + m - c2) * self.pdf_b(b))
            lo, hi = float_pair(t1 + t2)
        half = up(max(b - c, c - a))
        return (max(lo, 0.0), min(hi, up(up(half * half) * max(float_upper(dF), 0.0))))

    def third_derivative_max(self) -> float:
        """An upper bound of |F'''(u)| = |(u - mu)^2/v - 1| f(u) / v over all u: phi(0)/sigma^3, since
        |z^2 - 1| phi(z) is phi(0) at z = 0 and 2 phi(sqrt 3) < phi(0) at its other maxima."""
        k = self._cache.get("k3")
        if k is None:
            v = float(self.var)
            k = self._cache["k3"] = up(0.398943 / (v * math.sqrt(v)) * (1 + 1e-9))
        return k

    def curvature_max(self, lo: float, hi: float) -> float:
        """An upper bound of |F''(u)| = |u - μ| f(u) / v over [lo, hi]: |u - μ| f(u) increases up
        to |u - μ| = σ and decreases after, so the maximum is φ(1)/σ² <= 0.2420/v when [lo, hi]
        meets μ ± σ, else it is at an end."""
        top = up(0.2420 / float(self.var) * (1 + 1e-9))
        if not (math.isfinite(lo) and math.isfinite(hi)):
            return top
        m, sd = float(self.mean), self.spread()
        w = (sd + abs(m)) * 1e-9 + 1e-300  # covers the float errors of m and sd
        for c in (m - sd, m + sd):
            if lo <= c + w and c - w <= hi:
                return top
        m, v = self._bconsts()
        best = 0.0
        for u in (lo, hi):
            with ctx.workprec(WORKPREC):
                g = abs(arb(u) - m) / v * self.pdf_b(u)
            best = max(best, float_upper(g))
        return min(best, top)

    def _normal(self) -> Normal:
        n = self._cache.get("normal")
        if n is None:
            n = self._cache["normal"] = Normal(self.mean, self.var)
        return n

    def pdf_range(self, lo: float, hi: float) -> Tuple[float, float]:
        """Certified bounds of the density over [lo, hi] (unimodal at the mean)."""
        if lo == hi:
            return self.pdf_f(lo)
        if not (math.isfinite(lo) and math.isfinite(hi)):
            return (0.0, self._normal().peak())
        return self._normal().pdf_range(lo, hi)

    def first_moment(self, a: float, b: float, c: float) -> Tuple[float, float]:
        """Certified ∫_a^b (s - c) f(s) ds = var (f(a) - f(b)) + (mean - c)(F(b) - F(a)); a, b finite."""
        m, v = self._bconsts()
        with ctx.workprec(WORKPREC):
            t = v * (self.pdf_b(a) - self.pdf_b(b)) + (m - c) * (self.cdf_b(b) - self.cdf_b(a))
        return float_pair(t)

    def quantile(self, p: float) -> float:
        p = min(max(p, 1e-300), 1 - 1e-16)
        return statistics.NormalDist(float(self.mean), self.spread()).inv_cdf(p)

    def __hash__(self):
        return hash(("gauss", self.mean, self.var))


@dataclass(frozen=True)
class Laplace(Dist):
    """Continuous Laplace: density ∝ exp(-|x - mean| / scale)."""

    mean: Fraction
    scale: Fraction
    _cache: Dict = field(default_factory=dict, compare=False, repr=False, hash=False)

    def spread(self) -> float:
        return float(self.scale)

    def cdf_f(self, x: float) -> Tuple[float, float]:
        if x in (-INF, INF):
            return (0.0, 0.0) if x < 0 else (1.0, 1.0)
        c = self._cache.get(x)
        if c is None:
            z = (Fraction(x) - self.mean) / self.scale
            with ctx.workprec(WORKPREC):
                e = ball(-abs(z)).exp() / 2
                c = self._cache[x] = _unit_pair(e if z < 0 else 1 - e)  # e^z/2, or 1 - e^-z/2
        return c

    def quantile(self, p: float) -> float:
        m, s = float(self.mean), float(self.scale)
        p = min(max(p, 1e-300), 1 - 1e-16)
        return m + s * math.log(2 * p) if p < 0.5 else m - s * math.log(2 - 2 * p)

    def __hash__(self):
        return hash(("lap", self.mean, self.scale))


@dataclass(frozen=True)
class Expo(Dist):
    """Exponential shifted to start at ``start``: density ∝ exp(-(x - start)/scale) on x >= start."""

    start: Fraction
    scale: Fraction
    _cache: Dict = field(default_factory=dict, compare=False, repr=False, hash=False)

    def support(self):
        return (self.start, None)

    def spread(self) -> float:
        return float(self.scale)

    def cdf_f(self, x: float) -> Tuple[float, float]:
        if x == INF:
            return (1.0, 1.0)
        if x == -INF or Fraction(x) <= self.start:
            return (0.0, 0.0)
        c = self._cache.get(x)
        if c is None:  # 1 - e^-z
            with ctx.workprec(WORKPREC):
                c = self._cache[x] = _unit_pair(1 - ball(-(Fraction(x) - self.start) / self.scale).exp())
        return c

    def quantile(self, p: float) -> float:
        p = min(max(p, 0.0), 1 - 1e-16)
        return float(self.start) - float(self.scale) * math.log1p(-p)

    def __hash__(self):
        return hash(("exp", self.start, self.scale))


@dataclass(frozen=True)
class PolyDensity(Dist):
    """Density ``Σ coeffs[k] x^k`` on [lo, hi] (normalised, non-negative there), 0 outside."""

    lo: Fraction
    hi: Fraction
    coeffs: Tuple[Fraction, ...]
    is_poly = True

    @staticmethod
    def uniform(lo: Fraction, hi: Fraction) -> "PolyDensity":
        return PolyDensity(Fraction(lo), Fraction(hi), (1 / (Fraction(hi) - Fraction(lo)),))

    def support(self):
        return (self.lo, self.hi)

    def spread(self) -> float:
        return float(self.hi - self.lo)

    def _anti(self, x: Fraction) -> Fraction:
        return sum((c * x ** (k + 1) / (k + 1) for k, c in enumerate(self.coeffs)), Fraction(0))

    def cdf_exact(self, x: Fraction) -> Fraction:
        if x <= self.lo:
            return Fraction(0)
        if x >= self.hi:
            return Fraction(1)
        return self._anti(x) - self._anti(self.lo)

    def mass(self, lo, hi) -> Interval:
        a = self.lo if lo is None else max(Fraction(lo), self.lo)
        b = self.hi if hi is None else min(Fraction(hi), self.hi)
        if a >= b:
            return Interval.point(0)
        return Interval.point(self.cdf_exact(b) - self.cdf_exact(a))

    def cdf_f(self, x: float) -> Tuple[float, float]:
        if x == -INF:
            return (0.0, 0.0)
        if x == INF:
            return (1.0, 1.0)
        return enclose(self.cdf_exact(Fraction(x)))

    def quantile(self, p: float) -> float:
        a, b = float(self.lo), float(self.hi)
        if len(self.coeffs) == 1:
            return a + p * (b - a)
        for _ in range(60):
            m = (a + b) / 2
            if float(self.cdf_exact(Fraction(m))) < p:
                a = m
            else:
                b = m
        return (a + b) / 2


def exp_interval(x: Fraction) -> Interval:
    """A certified rational interval around exp(x) (ends with about 90 significant bits)."""
    return _exp_interval(Fraction(x), 90)


def _unit_pair(c: arb) -> Tuple[float, float]:
    lo, hi = float_pair(c)
    return (max(lo, 0.0), min(hi, 1.0))
