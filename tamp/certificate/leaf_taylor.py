"""Second-order enclosures of a witness leaf's mass along an inner Gaussian variable (checker side).

A partial leaf of a witness (:mod:`.cellmass`) is bounded by integrating one *inner* variable u
exactly: for every point x of the other variables' box B, the constraints that mention u leave
it an interval (α(x), β(x)) whose ends are the largest lower / smallest upper *piece* — a
constant (u's side of the leaf box) or a linear function ℓ(x) = ℓ0 + Σ g_v x_v (a constraint
solved for u). The leaf's mass is then ∫_B f(x) [G(β(x)) − G(α(x))]⁺ dx, G the CDF of u. The
first-order bound of :mod:`.cellmass` uses only the ranges of α and β over B; this module
encloses the integral to second order when u and the outer variables are Gaussian:

* for one piece ℓ, ∫_B f G(ℓ) with D(x) = ℓ(x) − t0 (t0 a float near ℓ at the box's centre)
  is G(t0)·M + G′(t0)·∫f D + G″(ξ)/2 · ∫f D² by Taylor's theorem, |G″| <= K2 = φ(1)/σ²
  (``Gauss.curvature_max``), and also G(t0)·M + G′(t0)∫f D + G″(t0)/2·∫f D² ± K3/6 · max|D| ·
  ∫f D² (|G‴| <= K3 = φ(0)/σ³, ``Gauss.third_derivative_max``); both are used;
* the moments factor over the independent outer variables: with centres c_v,
  D = δ + Σ g_v (x_v − c_v), so ∫f D and ∫f D² are sums of products of the one-dimensional
  ∫(s − c)^k f(s) ds, k = 0, 1, 2 (``Dist.mass_f``, ``Gauss.first_moment``/``second_moment``:
  closed forms over the certified CDF and density of :class:`tamp.core.interval.Normal`);
* with one piece active on each side over the whole box (exact rational ranges of the pieces'
  differences) the mass is T(β) − T(α), T the enclosure above; otherwise (a kink) it is at
  least T(p − e_p) − T(q + e_q) for any upper piece p and lower piece q, e their exact slack
  over the box (β >= p − e_p, α <= q + e_q, [h]⁺ >= h), and at most T(p), M − T(q), and
  T(p) − T(q) where p >= q on the whole box; 0 where some p <= q on the whole box;
* with one outer variable, the box is first cut at every point where two pieces cross (exact
  rationals), so each part has one active piece on each side; with several, box ends that are
  not floats are moved inward to floats; the slivers left over are bounded by [0, their mass].

All arithmetic is on float pairs rounded outward (:mod:`tamp.probability.interval`) or exact; a case
outside these conditions (an unbounded outer side, a non-Gaussian variable) returns None and
the caller keeps the first-order bound.
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import lru_cache
from typing import Dict, List, Optional, Sequence, Tuple

from tamp.core.interval import down, enclose, fadd, float_above, float_below, fmul, fneg, up

FPair = Tuple[float, float]
# a piece: (coefficients over the outer variables, constant); constant None = infinite end
Piece = Tuple[Dict[str, Fraction], Optional[Fraction]]
FinitePiece = Tuple[Dict[str, Fraction], Fraction]  # a piece with a finite constant
ZERO: FPair = (0.0, 0.0)


def _is_float(q: Optional[Fraction]) -> bool:
    return q is not None and Fraction(float(q)) == q


def piece_range(p: FinitePiece, box) -> Tuple[Fraction, Fraction]:
    """The exact range of a finite piece over a bounded box."""
    g, c = p
    lo = hi = c
    for v, k in g.items():
        a, b = box[v]
        if k < 0:
            a, b = b, a
        lo += k * a
        hi += k * b
    return lo, hi


def _diff(p: Piece, q: Piece) -> FinitePiece:
    pc, qc = p[1], q[1]
    if pc is None or qc is None:  # the callers compare finite pieces only
        raise ValueError("an infinite piece has no difference")
    g = dict(p[0])
    for v, k in q[0].items():
        g[v] = g.get(v, Fraction(0)) - k
    return {v: k for v, k in g.items() if k != 0}, pc - qc


def moments(d, a: float, b: float, c: float) -> Tuple[FPair, FPair, FPair]:
    """Float enclosures of ∫_a^b (s − c)^k f(s) ds for k = 0, 1, 2 (``d`` Gaussian, a < b finite)."""
    m0 = d.mass_f(a, b)
    return m0, d.first_moment(a, b, c), d.second_moment(a, b, c)


def _cdf_at(du, t: Optional[Fraction], upper: bool) -> FPair:
    """G(t) for a rational t (None: the infinite end on the piece's side)."""
    if t is None:
        return (1.0, 1.0) if upper else ZERO
    return (du.cdf_f(float_below(t))[0], du.cdf_f(float_above(t))[1])


def _prod(pairs: List[FPair]) -> FPair:
    out = (1.0, 1.0)
    for p in pairs:
        out = fmul(out, p)
    return out


@lru_cache(maxsize=1 << 16)
def _enc(q: Fraction) -> FPair:
    return enclose(q)


def _mag(x: FPair) -> float:
    return max(abs(x[0]), abs(x[1]))


class BoxMoments:
    """The one-dimensional moments of the outer variables over a box with float ends, about the
    box's centre c_v, and the products of zeroth moments the Taylor terms need."""

    def __init__(self, box, names: List[str], dists):
        self.names = names
        self.centre: Dict[str, float] = {}
        self.half: Dict[str, float] = {}  # >= max(b − c, c − a)
        self.m: Dict[str, Tuple[FPair, FPair, FPair]] = {}
        for v in names:
            a, b = float(box[v][0]), float(box[v][1])
            c = (a + b) / 2
            self.centre[v] = c
            self.half[v] = up(max(b - c, c - a))
            self.m[v] = moments(dists[v], a, b, c)
        self.m0 = _prod([self.m[v][0] for v in names])
        self.without = {v: _prod([self.m[w][0] for w in names if w != v]) for v in names}
        self.without2 = {
            (v, w): _prod([self.m[z][0] for z in names if z not in (v, w)]) for v in names for w in names if v != w
        }


def _k2(du) -> float:
    """max |G″| over all reals, φ(1)/σ² (``Gauss.curvature_max`` over an unbounded range): the
    local maximum would cost two more density evaluations per piece, and where it matters the
    third-order form is the tighter one."""
    return du.curvature_max(-math.inf, math.inf)


def piece_integral(p: Piece, upper: bool, bm: BoxMoments, du) -> Optional[FPair]:
    """An enclosure of ∫_box f(x) G(p(x)) dx (module docstring) from the box's moments; None
    when the Taylor enclosure is not available."""
    g, c = p
    m0 = bm.m0
    if c is None or not g:
        return fmul(_cdf_at(du, c, upper), m0)
    t0 = float(c) + sum(float(k) * bm.centre[v] for v, k in g.items())
    if not (-1e300 < t0 < 1e300):
        return None
    # D(x) = p(x) − t0 = δ + Σ g_v (x_v − c_v), δ = c + Σ g_v c_v − t0 (enclosed)
    delta = fadd(_enc(c), (-t0, -t0))
    gs = {}
    for v, k in g.items():
        gv = gs[v] = _enc(k)
        delta = fadd(delta, fmul(gv, (bm.centre[v], bm.centre[v])))
    lin = fmul(delta, m0)
    sq = fmul(fmul(delta, delta), m0)
    r = _mag(delta)
    for v, gv in gs.items():
        m = bm.m[v]
        e1 = fmul(fmul(gv, m[1]), bm.without[v])
        lin = fadd(lin, e1)
        sq = fadd(sq, fmul((2.0, 2.0), fmul(delta, e1)))
        sq = fadd(sq, fmul(fmul(fmul(gv, gv), m[2]), bm.without[v]))
        for w, gw in gs.items():
            if w != v:
                sq = fadd(sq, fmul(fmul(fmul(gv, m[1]), fmul(gw, bm.m[w][1])), bm.without2[(v, w)]))
        r = up(r + up(_mag(gv) * bm.half[v]))
    q_hi = max(sq[1], 0.0)
    g0 = du.cdf_f(t0)
    g1 = du.pdf_f(t0)
    g2 = fmul(fmul(fneg(fadd((t0, t0), fneg(_enc(du.mean)))), _enc(1 / du.var)), g1)
    base = fadd(fmul(g0, m0), fmul(g1, lin))
    e2 = up(0.5 * _k2(du) * q_hi)  # 0.5·k is exact
    second = (down(base[0] - e2), up(base[1] + e2))
    e3 = up(up(up(du.third_derivative_max() * r) * q_hi) / 6)
    third0 = fadd(base, fmul((0.5, 0.5), fmul(g2, sq)))
    third = (down(third0[0] - e3), up(third0[1] + e3))
    lo, hi = max(second[0], third[0]), min(second[1], third[1])
    if lo > hi:  # cannot happen for two sound enclosures
        return None
    return lo, hi


def _box_moments(box, names, dists) -> Optional[BoxMoments]:
    for v in names:
        a, b = box[v]
        if not (_is_float(a) and _is_float(b)) or not dists[v].is_gauss or not float(a) < float(b):
            return None
    return BoxMoments(box, sorted(names), dists)


def _shift(p: Piece, e: Fraction) -> Piece:
    if p[1] is None:  # an infinite end stays infinite (_shifted does not shift it)
        return p
    return p[0], p[1] + e


def _shifted(p: Piece, t, e: Fraction, upper: bool, integral):
    """T(p + e), reusing T(p) when e is 0."""
    if p[1] is None or e == 0:
        return t
    return integral(_shift(p, e), upper)


def _slack(p: Piece, pieces: Sequence[Piece], box, upper: bool) -> Fraction:
    """How far ``p`` can exceed the minimum (``upper``) / fall below the maximum of ``pieces``
    over the box: max over the box and the other pieces q of p − q (resp. q − p), at least 0."""
    e = Fraction(0)
    for q in pieces:
        if q is not p:
            lo, hi = piece_range(_diff(p, q), box)
            e = max(e, hi if upper else -lo)
    return e


def single_column(box, names, ups: Sequence[Piece], lows: Sequence[Piece], du, dists) -> Optional[FPair]:
    """∫_box f [G(β) − G(α)]⁺ with β = min ``ups``, α = max ``lows`` over a box with float ends.

    Lower bound: for any upper piece p and lower piece q, β >= p − e_p and α <= q + e_q on the
    box (e: :func:`_slack`), and [h]⁺ >= h, so the integral is >= T(p − e_p) − T(q + e_q)
    (T(r) = ∫ f G(r), :func:`piece_integral`). Upper bound: G(β) <= G(p), G(α) >= G(q), and
    when p >= q on the whole box [G(β) − G(α)]⁺ <= G(p) − G(q); also <= G(p) and <= 1 − G(q);
    and 0 when p <= q on the whole box.
    With one active piece on each side (e = 0) both are the Taylor enclosure itself."""
    fu = [p for p in ups if p[1] is not None] or [({}, None)]
    fl = [p for p in lows if p[1] is not None] or [({}, None)]
    for p in fu:
        for q in fl:
            if p[1] is not None and q[1] is not None and piece_range(_diff(p, q), box)[1] <= 0:
                return ZERO  # β <= p <= q <= α on the whole box
    mom = _box_moments(box, names, dists)
    if mom is None:
        return None
    m0 = mom.m0

    def integral(p, upper):
        return piece_integral(p, upper, mom, du)

    tu = [integral(p, True) for p in fu]
    tl = [integral(p, False) for p in fl]
    if any(t is None for t in tu + tl):
        return None
    lo_best = 0.0
    low_u = [_shifted(p, t, -_slack(p, fu, box, True), True, integral) for p, t in zip(fu, tu)]
    low_l = [_shifted(p, t, _slack(p, fl, box, False), False, integral) for p, t in zip(fl, tl)]
    if any(t is None for t in low_u + low_l):
        return None
    lo_best = max(0.0, fadd(max(low_u, key=lambda t: t[0]), fneg(min(low_l, key=lambda t: t[1])))[0])
    hi_best = m0[1]
    for _p, t in zip(fu, tu):
        hi_best = min(hi_best, t[1])
    for _q, t in zip(fl, tl):
        hi_best = min(hi_best, fadd(m0, fneg(t))[1])
    for p, t in zip(fu, tu):
        for q, r in zip(fl, tl):
            if p[1] is None or q[1] is None or piece_range(_diff(p, q), box)[0] >= 0:
                hi_best = min(hi_best, fadd(t, fneg(r))[1])
    if lo_best > hi_best:  # cannot happen for sound enclosures
        return None
    return lo_best, hi_best


def _float_column(box, names, ups, lows, du, dists) -> Optional[FPair]:
    """:func:`single_column` over the largest box with float ends inside ``box``; the rest of
    the box (slivers one float wide) adds at most its mass to the upper bound."""
    inner = dict(box)
    extra = ZERO
    whole = {v: dists[v].mass(*box[v]).hi for v in names}
    for v in names:
        a, b = box[v]
        fa, fb = Fraction(float_above(a)), Fraction(float_below(b))
        if not fa < fb:
            return None
        inner[v] = (fa, fb)
        sliver = Fraction(0)
        for lo, hi in ((a, fa), (fb, b)):
            if lo < hi:
                sliver += dists[v].mass(lo, hi).hi
        if sliver:
            for w in names:
                if w != v:
                    sliver *= whole[w]
            extra = fadd(extra, (0.0, float_above(sliver)))
    part = single_column(inner, names, ups, lows, du, dists)
    if part is None:
        return None
    return part[0], fadd(part, extra)[1]


def column_integral(box, names: List[str], ups: Sequence[Piece], lows: Sequence[Piece], du, dists) -> Optional[FPair]:
    """∫_box f [G(β) − G(α)]⁺ over the outer box (``names``); None when not available."""
    if not du.is_gauss or not all(dists[v].is_gauss for v in names):
        return None
    if any(box[v][0] is None or box[v][1] is None for v in names):
        return None
    if len(names) != 1:
        return _float_column(box, names, ups, lows, du, dists)
    (x,) = names
    a, b = box[x]
    pts = {a, b}
    finite: List[FinitePiece] = [(g, c) for g, c in list(ups) + list(lows) if c is not None]
    for i, p in enumerate(finite):
        for q in finite[i + 1 :]:
            gp, gq = p[0].get(x, Fraction(0)), q[0].get(x, Fraction(0))
            if gp != gq:
                s = (q[1] - p[1]) / (gp - gq)
                if a < s < b:
                    pts.add(s)
    cuts = sorted(pts)
    total = ZERO
    dx = dists[x]
    for s, t in zip(cuts, cuts[1:]):
        fs, ft = float_above(s), float_below(t)
        if not fs < ft:
            total = fadd(total, (0.0, float_above(dx.mass(s, t).hi)))
            continue
        part = single_column({x: (Fraction(fs), Fraction(ft))}, names, ups, lows, du, dists)
        if part is None:
            return None
        total = fadd(total, part)
        for sl in ((s, Fraction(fs)), (Fraction(ft), t)):
            if sl[0] < sl[1]:
                total = fadd(total, (0.0, float_above(dx.mass(*sl).hi)))
    return total
