"""The exact mass of a Laplace cell whose constraints all pass through one variable (a star).

A cell of the probability engine is a set {x : lo_i <= x_i <= hi_i, Σ_i a_i·x_i <= r for each
constraint} under independent densities. When every constraint links exactly two variables and
one of them, the *pivot* t, is in all of them — a sparse vector's draws compared with its one
noisy threshold, a noisy max's draws compared with the one that won — the other draws are
independent given t, and

    P = ∫ f_t(t) · Π_j P_j(t) dt,   P_j(t) = F_j(H_j(t)) - F_j(L_j(t)),

where L_j(t) (H_j(t)) is the largest lower (smallest upper) bound the constraints and the box put
on x_j, each an affine function of t. For Laplace draws everything is a sum of exponentials of
t: on each piece between the *breakpoints* (where a bound's argument crosses its draw's mean,
where two bounds of one draw cross, where t crosses its own mean or box ends) every factor is
``A + B·e^{β t}`` with fixed A, B, β, so the product is ``Σ c_α e^{α t}`` and its integral over the
piece is ``Σ c_α (e^{α b} - e^{α a})/α`` (``c_0 (b - a)`` for α = 0) — a closed form, evaluated in
python-flint ball arithmetic (``arb``: every operation's rounding error is inside the ball), so
the returned interval contains the exact mass. Why it is sound: the pieces partition the pivot's
range up to finitely many points (mass 0); on each piece the active bounds, the sign of
H_j - L_j and the side of each argument relative to its mean are constant (every place where one
of them can change is a breakpoint), so the formula used on a piece is the exact integrand there.
A piece that reaches ±∞ needs every rate to decay there; a term that does not (which a probability
cannot have unless its coefficient is exactly 0) makes the function give up (None), never guess.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Dict, List, Optional, Sequence, Tuple

from flint import arb, ctx

from tamp.core.interval import Interval, ball, to_interval
from tamp.core.linear import Bound, Constraint

from .dists import Dist, Laplace

#: bits of the ball arithmetic: the sums cancel a little (1 - e^{…} factors), far less than this
PREC = 200

Affine = Tuple[Fraction, Fraction]  # s·t + k
Terms = Dict[Fraction, arb]  # Σ c_α e^{α t}


def pivot_of(cons: Sequence[Constraint[int]]) -> Optional[int]:
    """The variable every constraint mentions, when each constraint has exactly two variables."""
    common: Optional[set] = None
    for coef, _ in cons:
        vs = {v for v, c in coef.items() if c != 0}
        if len(vs) != 2:
            return None
        common = vs if common is None else common & vs
        if not common:
            return None
    return None if not common else min(common)


def star_mass(dists: Sequence[Dist], trunc: Sequence[Bound], cons: Sequence[Constraint[int]]) -> Optional[Interval]:
    """A certified interval around the mass of the cell (module doc), or None when the cell is
    not a star of Laplace draws."""
    if not cons or not all(isinstance(d, Laplace) for d in dists):
        return None
    p = pivot_of(cons)
    if p is None:
        return None
    lowers: Dict[int, List[Affine]] = {}
    uppers: Dict[int, List[Affine]] = {}
    for j, (lo, hi) in enumerate(trunc):
        if j == p:
            continue
        if lo is not None:
            lowers.setdefault(j, []).append((Fraction(0), Fraction(lo)))
        if hi is not None:
            uppers.setdefault(j, []).append((Fraction(0), Fraction(hi)))
    others = set()
    for coef, rhs in cons:
        ((j, aj),) = [(v, c) for v, c in coef.items() if v != p and c != 0]
        ap = coef.get(p, Fraction(0))
        others.add(j)
        bound = (Fraction(-ap) / aj, Fraction(rhs) / aj)  # a_p t + a_j x <= r  ⇔  x ⋚ (r - a_p t)/a_j
        (uppers if aj > 0 else lowers).setdefault(j, []).append(bound)
    pd = dists[p]
    assert isinstance(pd, Laplace)
    t_lo, t_hi = trunc[p]
    points = {pd.mean}
    for j in others:
        d = dists[j]
        assert isinstance(d, Laplace)
        bounds = lowers.get(j, []) + uppers.get(j, [])
        for s, k in bounds:
            if s != 0:
                points.add((d.mean - k) / s)
        for i, (s1, k1) in enumerate(bounds):
            for s2, k2 in bounds[i + 1 :]:
                if s1 != s2:
                    points.add((k2 - k1) / (s1 - s2))
    cuts = sorted(x for x in points if (t_lo is None or x > t_lo) and (t_hi is None or x < t_hi))
    ends: List[Optional[Fraction]] = [None if t_lo is None else Fraction(t_lo), *cuts]
    ends.append(None if t_hi is None else Fraction(t_hi))
    total = arb(0)
    with ctx.workprec(PREC):
        for a, b in zip(ends, ends[1:]):
            terms = _piece(a, b, pd, [(dists[j], lowers.get(j, []), uppers.get(j, [])) for j in sorted(others)])
            if terms is None:
                continue
            part = _integral(terms, a, b)
            if part is None:
                return None
            total += part
        iv = to_interval(total)
    return Interval(max(iv.lo, Fraction(0)), min(iv.hi, Fraction(1)))


def _at(f: Affine, t: Fraction) -> Fraction:
    return f[0] * t + f[1]


def _cdf_terms(d: Laplace, u: Affine, m: Fraction) -> Terms:
    """F(u(t)) on a piece where u(m) lies on the same side of the mean as on the whole piece."""
    s, k = u
    if _at(u, m) < d.mean:  # ½ e^{(u - μ)/b}
        return {s / d.scale: ball((k - d.mean) / d.scale).exp() / 2}
    out: Terms = {Fraction(0): arb(1)}  # 1 - ½ e^{-(u - μ)/b}
    rate = -s / d.scale
    out[rate] = out.get(rate, arb(0)) - ball(-(k - d.mean) / d.scale).exp() / 2
    return out


def _times(x: Terms, y: Terms) -> Terms:
    out: Terms = {}
    for a, c in x.items():
        for b, e in y.items():
            out[a + b] = out.get(a + b, arb(0)) + c * e
    return out


def _piece(
    a: Optional[Fraction], b: Optional[Fraction], pd: Laplace, factors: List[Tuple[Dist, List[Affine], List[Affine]]]
) -> Optional[Terms]:
    """The integrand on the piece (a, b) as Σ c_α e^{α t}, or None when it is 0 there."""
    m: Fraction = pd.mean
    if a is None and b is not None:
        m = b - 1
    elif a is not None and b is None:
        m = a + 1
    elif a is not None and b is not None:
        m = (a + b) / 2
    inv = Fraction(1) / pd.scale  # the pivot's density ½b⁻¹ e^{∓(t - μ)/b}
    if m < pd.mean:
        out: Terms = {inv: ball(-pd.mean * inv).exp() * ball(inv / 2)}
    else:
        out = {-inv: ball(pd.mean * inv).exp() * ball(inv / 2)}
    for d, lows, ups in factors:
        assert isinstance(d, Laplace)
        lo = max(lows, key=lambda f: _at(f, m)) if lows else None
        hi = min(ups, key=lambda f: _at(f, m)) if ups else None
        if lo is not None and hi is not None and _at(hi, m) <= _at(lo, m):
            return None
        f: Terms = _cdf_terms(d, hi, m) if hi is not None else {Fraction(0): arb(1)}
        if lo is not None:
            for rate, c in _cdf_terms(d, lo, m).items():
                f[rate] = f.get(rate, arb(0)) - c
        out = _times(out, f)
    return out


def _integral(terms: Terms, a: Optional[Fraction], b: Optional[Fraction]) -> Optional[arb]:
    """∫_a^b Σ c_α e^{α t} dt (None when an infinite end has a rate that does not decay)."""
    out = arb(0)
    for rate, c in terms.items():
        if rate == 0:
            if a is None or b is None:
                return None
            out += c * ball(b - a)
            continue
        if (b is None and rate > 0) or (a is None and rate < 0):
            return None
        hi = arb(0) if b is None else ball(rate * b).exp()
        lo = arb(0) if a is None else ball(rate * a).exp()
        out += c * (hi - lo) / ball(rate)
    return out
