"""Certified probability mass of a convex cell under a product of independent densities.

A cell is a box (``trunc``: bounds per variable) and linear constraints
``Σ coef·x <= rhs``.  :func:`build` returns a refinable :class:`Node` whose
``[lo, hi]`` always contains the exact mass:

1. one-variable constraints become bounds; constraints implied by the box are
   dropped; variables that occur in no constraint contribute ``P(x ∈ bounds)``;
2. the rest splits into independent components (no shared variable): product;
3. a component of polynomial densities (uniform, step bins, density) is
   integrated exactly by :func:`tamp.wmi.integrate_polytope`;
4. a component of Gaussians is rewritten exactly (rational LDLᵀ of the
   covariance of the constraint values): ``y = C x`` is Gaussian with covariance
   ``C V Cᵀ``, so the constraints become ones over r = rank independent Gaussians
   ``d_j`` in triangular form — one constraint is then a 1-D CDF difference, two
   are a 2-D problem, whatever the number of original variables;
5. anything left is bounded by :class:`SplitNode`: adaptive splitting of the box of
   all variables but one (the *inner* one), whose mass is exact per sub-box by
   monotonicity in the constraints' right-hand sides.  For Gaussians a Taylor
   enclosure of the integral of f(s) F(limit(s)) per box is intersected with it
   (first moments; the second order bounded by max |F''| over the limit's range times
   exact second moments, or exact with a third-order remainder, |F'''| <= phi(0)/sigma^3);
   at a kink (the active constraint changes in the box) any one active pair still
   bounds the mass from above.  Boxes are refined largest gap first and split along
   the variable that most narrows them (:meth:`SplitNode._split_scores`).
"""

from __future__ import annotations

import heapq
import itertools
import math
import time
from fractions import Fraction
from typing import Dict, List, Optional, Sequence, Tuple

from flint import arb, ctx

from tamp.core.interval import (
    INF,
    WORKPREC,
    Interval,
    ball_range,
    down,
    enclose,
    fadd,
    float_lower,
    float_pair,
    float_upper,
    fmul,
    fmul_nonneg,
    fneg,
    fsum_interval,
    up,
)
from tamp.core.ldl import ldl
from tamp.core.linear import Bound, Constraint, affine_range, linked_groups
from tamp.wmi import integrate_polytope

from .dists import Dist, Gauss
from .polydensity import polytope_problem
from .star import star_mass

Con = Constraint[int]  # Σ coef[i]·x_i <= rhs

ZERO = Fraction(0)


class Node:
    """A refinable enclosure [lo, hi] of a probability mass."""

    lo: Fraction = ZERO
    hi: Fraction = Fraction(1)
    stuck: bool = False  # set once refine() could not improve it: no more work is spent on it

    @property
    def gap(self) -> Fraction:
        return self.hi - self.lo

    def refine(self, budget: int) -> bool:
        """Work on the bound (about ``budget`` elementary steps); False when it cannot improve."""
        return False

    def stats(self) -> Dict[str, int]:
        return {}


class Const(Node):
    """A mass known as a fixed interval (exact when lo == hi)."""

    def __init__(self, iv: Interval):
        self.lo, self.hi = iv.lo, iv.hi


class Product(Node):
    """The product of independent masses."""

    def __init__(self, factors: List[Node]):
        self.factors = factors
        self._update()

    def _update(self):
        lo, hi = Fraction(1), Fraction(1)
        for f in self.factors:
            lo *= f.lo
            hi *= f.hi
        self.lo, self.hi = lo, hi

    def refine(self, budget: int) -> bool:
        # refine the factor whose gap matters most: gap × product of the others' hi
        best, score = None, ZERO
        for i, f in enumerate(self.factors):
            if f.gap == 0 or f.stuck:
                continue
            others = Fraction(1)
            for j, g in enumerate(self.factors):
                if j != i:
                    others *= g.hi
            s = f.gap * others
            if s > score:
                best, score = f, s
        if best is None:
            return False
        ok = best.refine(budget)
        if not ok:
            best.stuck = True
        self._update()
        return True

    def stats(self):
        out: Dict[str, int] = {}
        for f in self.factors:
            for k, v in f.stats().items():
                out[k] = out.get(k, 0) + v
        return out


# --------------------------------------------------------------------------- building


def _range(coef: Dict[int, Fraction], trunc: Sequence[Bound]):
    return affine_range(coef, trunc)  # type: ignore[arg-type]  # a list is indexed like a map


def _clip(trunc: Bound, support: Bound) -> Bound:
    lo = support[0] if trunc[0] is None else trunc[0] if support[0] is None else max(trunc[0], support[0])
    hi = support[1] if trunc[1] is None else trunc[1] if support[1] is None else min(trunc[1], support[1])
    return (lo, hi)


def build(
    dists: Sequence[Dist],
    trunc: Sequence[Bound],
    cons: Sequence[Con],
    transformed: bool = False,
    deadline: Optional[float] = None,
    cache: Optional[dict] = None,
) -> Node:
    """The mass of {x : trunc bounds and cons} under Π dists (see the module docstring).

    ``cache`` (a dict) shares the nodes of identical components between calls, so
    cells that differ only in discrete choices refine one bound together."""
    parts = _decompose(dists, trunc, cons, transformed)
    if parts is None:
        return Const(Interval.point(0))
    exact, comps = parts
    factors: List[Node] = []
    for key, sub_d, sub_t, sub_c in comps:
        node = cache.get(key) if cache is not None else None
        if node is None:
            node = _component(sub_d, sub_t, sub_c, transformed, deadline)
            if cache is not None:
                cache[key] = node
        factors.append(node)
    if exact != Interval.point(1) or not factors:
        factors.insert(0, Const(exact))
    if len(factors) == 1:
        return factors[0]
    return Product(factors)


Component = Tuple[tuple, List[Dist], List[Bound], List[Con]]  # cache key, densities, box, constraints


def _decompose(
    dists: Sequence[Dist], trunc: Sequence[Bound], cons: Sequence[Con], transformed: bool
) -> Optional[Tuple[Interval, List[Component]]]:
    """Steps 1 and 2 of the module docstring: the exactly known factor and the independent
    components of the cell, or None when the cell is empty."""
    trunc = [_clip(t, d.support()) for t, d in zip(trunc, dists)]
    multi: List[Con] = []
    for coef, rhs in cons:
        coef = {i: c for i, c in coef.items() if c != 0}
        if not coef:
            if rhs < 0:
                return None
            continue
        if len(coef) == 1:
            ((i, c),) = coef.items()
            b = rhs / c
            lo, hi = trunc[i]
            trunc[i] = (lo, b if hi is None else min(hi, b)) if c > 0 else (b if lo is None else max(lo, b), hi)
            continue
        multi.append((coef, rhs))
    for lo, hi in trunc:
        if lo is not None and hi is not None and lo >= hi:
            return None
    kept = []
    for coef, rhs in multi:
        lo, hi = _range(coef, trunc)
        if hi is not None and hi <= rhs:
            continue
        if lo is not None and lo >= rhs:
            return None
        kept.append((coef, rhs))
    # components by shared variables
    group_of = {v: gi for gi, g in enumerate(linked_groups(coef for coef, _ in kept)) for v in g}
    in_con = {v for coef, _ in kept for v in coef}
    exact = Interval.point(1)
    for i, d in enumerate(dists):
        if i not in in_con and trunc[i] != d.support():
            m = d.mass(*trunc[i])
            exact = exact * m
    groups: Dict[int, List[Con]] = {}
    for con in kept:
        groups.setdefault(group_of[next(iter(con[0]))], []).append(con)
    comps: List[Component] = []
    for g in groups.values():
        vs = sorted({v for coef, _ in g for v in coef})
        loc = {v: k for k, v in enumerate(vs)}
        sub_d = [dists[v] for v in vs]
        sub_t = [trunc[v] for v in vs]
        sub_c = [({loc[v]: c for v, c in coef.items()}, rhs) for coef, rhs in g]
        key = (tuple(sub_d), tuple(sub_t), tuple(sorted((tuple(sorted(c.items())), r) for c, r in sub_c)), transformed)
        comps.append((key, sub_d, sub_t, sub_c))
    return exact, comps


def exact_components(dists: Sequence[Dist], trunc: Sequence[Bound], cons: Sequence[Con]) -> List[Component]:
    """The components of a cell that :func:`build` integrates exactly (polynomial densities):
    independent jobs, each :func:`exact_mass` of one; their results go into ``build``'s cache
    with :func:`exact_node`, which then uses them instead of integrating again."""
    parts = _decompose(dists, trunc, cons, False)
    return [] if parts is None else [c for c in parts[1] if all(d.is_poly for d in c[1])]


def exact_mass(dists, trunc, cons, seconds: Optional[float]) -> Optional[Fraction]:
    """A polynomial component's exact mass (None when it cannot be integrated in ``seconds``):
    a pure job on plain data (exact rationals), for :mod:`tamp.executor`."""
    deadline = None if seconds is None else time.monotonic() + seconds
    return _exact_value(dists, trunc, cons, deadline)


def exact_node(dists, trunc, cons, value: Optional[Fraction]) -> Node:
    """The node :func:`build` makes for a polynomial component whose :func:`exact_mass` is ``value``."""
    return SplitNode(dists, trunc, cons) if value is None else Const(Interval.point(value))


def _component(dists, trunc, cons, transformed, deadline) -> Node:
    if all(d.is_poly for d in dists):
        return exact_node(dists, trunc, cons, _exact_value(dists, trunc, cons, deadline))
    if all(d.is_gauss for d in dists) and not transformed:
        return _ldl(dists, trunc, cons, deadline)
    star = star_mass(dists, trunc, cons)
    if star is not None:  # Laplace draws compared with one pivot: the closed form (tamp.probability.star)
        return Const(star)
    return SplitNode(dists, trunc, cons)


def _exact_value(dists, trunc, cons, deadline) -> Optional[Fraction]:
    """Exact integral of the product density over the polytope, or None (wmi missing/time out)."""
    n = len(dists)
    dens, rows = polytope_problem(
        [d.coeffs for d in dists], trunc, [(tuple(coef.get(i, ZERO) for i in range(n)), rhs) for coef, rhs in cons]
    )
    try:
        return integrate_polytope(dens, rows, n, deadline=deadline)
    except (TimeoutError, ValueError, ArithmeticError):
        return None


def _ldl(dists, trunc, cons, deadline) -> Node:
    """Gaussian component: constraints over the independent LDLᵀ coordinates."""
    n = len(dists)
    rows: List[Tuple[List[Fraction], Fraction]] = []
    for coef, rhs in cons:
        rows.append(([coef.get(i, ZERO) for i in range(n)], rhs))
    for i, (lo, hi) in enumerate(trunc):
        unit = [ZERO] * n
        if hi is not None:
            unit[i] = Fraction(1)
            rows.append((unit, hi))
        if lo is not None:
            u2 = [ZERO] * n
            u2[i] = Fraction(-1)
            rows.append((u2, -lo))
    # put one-variable rows last: the oblique constraints pick the first directions
    rows.sort(key=lambda r: -sum(1 for c in r[0] if c != 0))
    mean = [d.mean for d in dists]
    var = [d.var for d in dists]
    gram = [[sum(a[t] * b[t] * var[t] for t in range(n)) for b, _ in rows] for a, _ in rows]
    L, D = ldl(gram)
    new_cons = []
    for (a, rhs), lrow in zip(rows, L):
        m = sum(a[t] * mean[t] for t in range(n))
        new_cons.append(({j: c for j, c in enumerate(lrow) if c != 0}, rhs - m))
    new_d = [Gauss(ZERO, dj) for dj in D]
    return build(new_d, [(None, None)] * len(D), new_cons, transformed=True, deadline=deadline)


# --------------------------------------------------------------------------- adaptive splitting


_BALLS: Dict[Tuple[float, float], arb] = {}


def _ball(r: Tuple[float, float]) -> arb:
    """The ball of a (narrow) float range, cached: coefficients and moments recur."""
    b = _BALLS.get(r)
    if b is None:
        if len(_BALLS) > 100_000:
            _BALLS.clear()
        b = _BALLS[r] = ball_range(r)
    return b


def _product(balls: Sequence[arb], skip: Tuple[int, ...]) -> arb:
    """The product of the balls except those at the indices in ``skip``."""
    out = arb(1)
    for j, m in enumerate(balls):
        if j not in skip:
            out *= m
    return out


def _unit_range(x: arb) -> Tuple[float, float]:
    lo, hi = float_pair(x)
    return (max(lo, 0.0), hi)


class _Cell:
    __slots__ = ("box", "pm", "lo", "hi")

    def __init__(self, box, pm, lo, hi):
        self.box = box  # per split variable: ((Ll, Lh), (Hl, Hh)) float enclosures of the ends
        self.pm = pm  # per split variable: float interval of P(x_j in box_j)
        self.lo = lo
        self.hi = hi


class SplitNode(Node):
    """Adaptive certified bound: split the box of all variables but the inner one; per
    sub-box, the inner variable's allowed range is an interval between the worst and best
    case of the others, so its mass is a CDF difference (lower and upper)."""

    def __init__(self, dists: Sequence[Dist], trunc: Sequence[Bound], cons: Sequence[Con]):
        n = len(dists)
        count = [0] * n
        for coef, _ in cons:
            for i in coef:
                count[i] += 1
        inner = max(range(n), key=lambda i: (count[i], i))
        self.inner = inner
        self.dists = list(dists)
        self.split = [i for i in range(n) if i != inner]
        pos = {v: k for k, v in enumerate(self.split)}
        self.cons_in = []  # (sign, [(k, coef_iv)], rhs_iv)   sign*x_inner + Σ coef x_k <= rhs
        self.cons_out = []  # ([(k, coef_iv)], rhs_iv)
        for coef, rhs in cons:
            c = coef.get(inner, ZERO)
            if c != 0:
                scale = 1 / abs(c)
                others = [(pos[v], enclose(a * scale)) for v, a in coef.items() if v != inner]
                self.cons_in.append((1 if c > 0 else -1, others, enclose(rhs * scale)))
            else:
                self.cons_out.append(([(pos[v], enclose(a)) for v, a in coef.items()], enclose(rhs)))
        self.taylor_ok = dists[inner].is_gauss and all(dists[v].is_gauss for v in self.split)
        self.weights = [0.0] * len(self.split)
        for coef, _ in cons:
            for v, a in coef.items():
                if v != inner:
                    self.weights[pos[v]] += abs(float(a))
        tl, th = trunc[inner]
        self.inner_lo = (-INF, -INF) if tl is None else enclose(tl)
        self.inner_hi = (INF, INF) if th is None else enclose(th)
        self._mom: Dict = {}
        box, pm = [], []
        # Box ends that are not floats are rounded inward to floats, so every sub-box has exact
        # float ends (needed by the Taylor bound); the cut-off slivers only add to the upper
        # bound, by at most their own mass (the other factors are probabilities <= 1).
        self.slack = 0.0
        for v in self.split:
            lo, hi = trunc[v]
            L = (-INF, -INF) if lo is None else enclose(lo)
            H = (INF, INF) if hi is None else enclose(hi)
            d = self.dists[v]
            if L[0] != L[1]:
                self.slack = up(self.slack + d.mass_f(L[0], L[1])[1])
                L = (L[1], L[1])
            if H[0] != H[1]:
                self.slack = up(self.slack + d.mass_f(H[0], H[1])[1])
                H = (H[0], H[0])
            box.append((L, H))
            pm.append(self._pmass(d, L, H))
        root = self._eval(tuple(box), tuple(pm))
        self._heap: List = []
        self._tick = itertools.count()
        self._done_lo: List[float] = []
        self._done_hi: List[float] = []
        self._push(root)
        self.cells = 1
        self._sum()

    @staticmethod
    def _pmass(d: Dist, L, H):
        return d.mass_box(L, H)

    def _eval(self, box, pm) -> _Cell:
        # product of the split variables' masses
        plo, phi = 1.0, 1.0
        for m in pm:
            plo, phi = fmul_nonneg((plo, phi), m)
        if phi == 0.0:
            return _Cell(box, pm, 0.0, 0.0)
        sure = True
        for terms, rhs in self.cons_out:
            s = (0.0, 0.0)
            for k, a in terms:
                (L, H) = box[k]
                s = fadd(s, fmul(a, (L[0], H[1])))
            t = fadd(s, (-rhs[1], -rhs[0]))  # s - rhs
            if t[1] <= 0:
                continue
            if t[0] >= 0:
                return _Cell(box, pm, 0.0, 0.0)
            sure = False
        # inner variable's range: lower-bound set [a_lo, b_lo], upper-bound set [a_hi, b_hi]
        up_lo, up_hi = self.inner_hi[0], self.inner_hi[1]
        dn_lo, dn_hi = self.inner_lo[1], self.inner_lo[0]
        for sign, terms, rhs in self.cons_in:
            s = (0.0, 0.0)
            for k, a in terms:
                (L, H) = box[k]
                s = fadd(s, fmul(a, (L[0], H[1])))
            r = fadd(rhs, (-s[1], -s[0]))  # rhs - s
            if sign > 0:  # x <= r
                up_lo = min(up_lo, r[0])
                up_hi = min(up_hi, r[1])
            else:  # x >= -r
                dn_lo = max(dn_lo, -r[0])
                dn_hi = max(dn_hi, -r[1])
        d = self.dists[self.inner]
        if up_hi <= dn_hi:
            return _Cell(box, pm, 0.0, 0.0)
        hi_m = d.mass_f(dn_hi, up_hi)[1]
        lo_m = d.mass_f(dn_lo, up_lo)[0] if (sure and up_lo > dn_lo) else 0.0
        lo = fmul_nonneg((plo, phi), (lo_m, lo_m))[0]
        hi = fmul_nonneg((plo, phi), (hi_m, hi_m))[1]
        if sure and self.taylor_ok and up_lo > dn_lo and hi - lo > 1e-15:
            t = self._taylor(box, pm, (plo, phi))
            if t is not None and t[0] <= hi and t[1] >= lo:
                lo, hi = max(lo, t[0]), min(hi, t[1])
            elif t is None:
                t_hi = self._taylor_upper(box, pm, (plo, phi))
                if t_hi is not None and t_hi >= lo:
                    hi = min(hi, t_hi)
        return _Cell(box, pm, lo, hi)

    def _limit(self, sign, box, strict=True):
        """The active upper (sign +1) or lower (-1) limit of the inner variable on the box, as
        (r, [(k, a)]) with limit(s) = r - Σ a_k s_k exactly one constraint; None when the
        active constraint changes inside the box (``strict``; else the constraint that is most
        restrictive at some point, with the range of its value, as ((r, terms), range)).
        (INF, []) for no limit."""
        cands = []
        if sign > 0:
            if self.inner_hi[1] != INF:
                cands.append((self.inner_hi, [], self.inner_hi))
        else:
            if self.inner_lo[0] != -INF:
                neg = (-self.inner_lo[1], -self.inner_lo[0])
                cands.append((neg, [], neg))  # stored negated: -x <= -lo
        for sg, terms, rhs in self.cons_in:
            if sg != sign:
                continue
            s = (0.0, 0.0)
            for k, a in terms:
                (L, H) = box[k]
                s = fadd(s, fmul(a, (L[0], H[1])))
            cands.append((fadd(rhs, (-s[1], -s[0])), terms, rhs))
        if not cands:
            return (INF, []) if strict else ((INF, []), (INF, INF))
        best = min(range(len(cands)), key=lambda i: cands[i][0][1])
        top = cands[best][0][1]
        if not strict:
            return (cands[best][2], cands[best][1]), cands[best][0]
        for i, c in enumerate(cands):
            if i != best and c[0][0] < top:
                return None
        return (cands[best][2], cands[best][1])

    def _integral(self, sign, lim, box, pm, P):
        """Certified ∫_box f(s) F(limit(s)) ds for the inner CDF F (second-order Taylor bound),
        computed on ``arb`` balls (every quantity here is narrow) and returned as a float pair."""
        d = self.dists[self.inner]
        rhs, terms = lim
        if rhs == INF:
            val = (1.0, 1.0) if sign > 0 else (0.0, 0.0)
            return fmul_nonneg(P, val)
        # limit(s) = sign * (rhs - Σ a s): upper x <= rhs - a·s; lower x >= -(rhs - a·s)
        mom = [self._moments(k, L[0], H[0]) for k, (L, H) in enumerate(box)]
        B = _ball
        with ctx.workprec(WORKPREC):
            s = arb(0)
            for k, a in terms:
                s += B(a) * mom[k][0]
            u = B(rhs) - s
            if sign < 0:
                u = -u
            u_lo, u_hi = float_pair(u)
            F = B(d.cdf_range(u_lo, u_hi))
            val_b = B(P) * F
            if not terms:
                return _unit_range(val_b)
            dens = B(d.pdf_range(u_lo, u_hi))
            pmb = [B(m) for m in pm]
            T = arb(0)
            spread = 0.0
            for k, a in terms:
                T += B(a) * mom[k][4] * _product(pmb, (k,))
                spread = up(spread + up(max(abs(a[0]), abs(a[1])) * mom[k][1]))
            # limit(s) - limit(c) = -sign * Σ a (s - c): first-order term
            base = val_b + (-sign) * T * dens
            # second order: |F(u) - F(u_c) - f(u_c)(u - u_c)| <= K (u - u_c)² / 2 with K the largest
            # |F''| over the limit's range on the box, and ∫ f(s) (Σ a (s - c))² ds expanded exactly
            # (independent coordinates: squares give second moments, cross terms first moments)
            K = d.curvature_max(down(u_lo - spread), up(u_hi + spread))
            Q = arb(0)
            for i, (k, a) in enumerate(terms):
                ab = B(a)
                Q += ab * ab * mom[k][5] * _product(pmb, (k,))
                for k2, a_2 in terms[i + 1 :]:
                    Q += 2 * ab * B(a_2) * mom[k][4] * mom[k2][4] * _product(pmb, (k, k2))
            q_lo = max(float_lower(Q), 0.0)
            q_hi = min(float_upper(Q), up(up(spread * spread) * P[1]))
            q_lo = min(q_lo, q_hi)
            b_lo, b_hi = float_pair(base)
            R = up(up(0.5 * K) * q_hi)
            val = (down(b_lo - R), up(b_hi + R))
            # third order: + F''(u_c)/2 * Q with F'' = -(u - mu) f(u) / v; the remainder is at most
            # max|F'''| / 6 * integral of f |delta|^3 <= max|F'''| / 6 * spread * Q
            m, v = d._bconsts()
            quad = -(u - m) / v * dens * ball_range((q_lo, q_hi)) / 2
            R3 = up(up(up(d.third_derivative_max() / 6) * spread) * q_hi)
            t_lo, t_hi = float_pair(base + quad)
            val3 = (down(t_lo - R3), up(t_hi + R3))
        return (max(val[0], val3[0]), min(val[1], val3[1]))

    def _moments(self, k: int, a: float, b: float):
        """(center, half width, first and second moment about the center as float pairs, and the
        same two as balls) of split variable k over [a, b], cached: many cells share a column."""
        key = (k, a, b)
        m = self._mom.get(key)
        if m is None:
            c = (a + b) / 2
            d = self.dists[self.split[k]]
            if not isinstance(d, Gauss):  # taylor_ok: every split variable is Gaussian
                raise TypeError(f"the Taylor bound needs Gaussian split variables, not {d!r}")
            m1, m2 = d.first_moment(a, b, c), d.second_moment(a, b, c)
            m = self._mom[key] = (c, up(max(b - c, c - a)), m1, m2, _ball(m1), _ball(m2))
        return m

    def _split_scores(self, box) -> Optional[List[float]]:
        """Per split variable, how much splitting it narrows this finite box's bound (a
        heuristic, not used in any bound): across a kink (two limits that are each most
        restrictive somewhere) the difference of their slopes times the width, weighted 3×;
        for a single active limit its slope times the width (the Taylor remainder grows with
        (slope × width)²); a constraint not settled on the box counts like a kink."""
        width = []
        for L, H in box:
            w = H[0] - L[1]
            if not math.isfinite(w):
                return None
            width.append(w)
        score = [0.0] * len(box)
        for sign in (1, -1):
            cands: List[Tuple[Tuple[float, float], Dict[int, float]]] = []
            if sign > 0 and self.inner_hi[1] != INF:
                cands.append((self.inner_hi, {}))
            if sign < 0 and self.inner_lo[0] != -INF:
                cands.append(((-self.inner_lo[1], -self.inner_lo[0]), {}))
            for sg, terms, rhs in self.cons_in:
                if sg != sign:
                    continue
                r = rhs
                for k, a in terms:
                    (L, H) = box[k]
                    r = fadd(r, fneg(fmul(a, (L[0], H[1]))))
                cands.append((r, {k: a[1] for k, a in terms}))
            if not cands:
                continue
            top_i = min(range(len(cands)), key=lambda i: cands[i][0][1])
            top = cands[top_i][0][1]
            slopes = cands[top_i][1]
            rivals = [c[1] for i, c in enumerate(cands) if i != top_i and c[0][0] < top]
            if not rivals:
                for k, slope in slopes.items():
                    score[k] += abs(slope) * width[k]
            for other in rivals:
                for k in set(slopes) | set(other):
                    score[k] += 3 * abs(slopes.get(k, 0.0) - other.get(k, 0.0)) * width[k]
        for terms, rhs in self.cons_out:
            t = fneg(rhs)
            for k, a in terms:
                (L, H) = box[k]
                t = fadd(t, fmul(a, (L[0], H[1])))
            if t[0] < 0 < t[1]:
                for k, a in terms:
                    score[k] += 3 * abs(a[1]) * width[k]
        return score

    def _taylor(self, box, pm, P):
        for L, H in box:
            if L[0] != L[1] or H[0] != H[1] or not (math.isfinite(L[0]) and math.isfinite(H[0])):
                return None
        up_lim = self._limit(1, box)
        lo_lim = self._limit(-1, box)
        if up_lim is None or lo_lim is None:
            return None
        iu = self._integral(1, up_lim, box, pm, P)
        il = self._integral(-1, lo_lim, box, pm, P)
        return (max(down(iu[0] - il[1]), 0.0), up(iu[1] - il[0]))

    def _taylor_upper(self, box, pm, P) -> Optional[float]:
        """An upper bound for a box where the active limits change (a kink): for any one upper
        limit u and lower limit l, the allowed length is at most F(u(s)) - F(l(s)) wherever
        u >= l, so when u >= l on the whole box the mass is at most ∫ F(u) - ∫ F(l), each
        bounded by the Taylor enclosure. (Dropping constraints only enlarges the set.)"""
        for L, H in box:
            if L[0] != L[1] or H[0] != H[1] or not (math.isfinite(L[0]) and math.isfinite(H[0])):
                return None
        up_lim, u_range = self._limit(1, box, strict=False)
        lo_lim, l_range = self._limit(-1, box, strict=False)
        # u >= l everywhere: min of u = u_range[0]; max of l = -(l_range[0]) (lower limits negated)
        if up_lim[0] != INF and lo_lim[0] != INF and not (u_range[0] >= -l_range[0]):
            return None
        iu = self._integral(1, up_lim, box, pm, P)
        il = self._integral(-1, lo_lim, box, pm, P)
        return up(iu[1] - il[0])

    def _push(self, c: _Cell):
        if c.hi - c.lo <= 0.0 or not self.split:
            self._done_lo.append(c.lo)
            self._done_hi.append(c.hi)
            return
        heapq.heappush(self._heap, (-(c.hi - c.lo), next(self._tick), c))

    def _sum(self):
        los = self._done_lo + [c.lo for _, _, c in self._heap]
        his = self._done_hi + [c.hi for _, _, c in self._heap]
        lo, hi = fsum_interval(los, his + [self.slack])
        self.lo, self.hi = Fraction(lo), Fraction(min(hi, 1.0))

    def _split_point(self, d: Dist, L, H):
        lo, hi = L[1], H[0]
        if lo >= hi:
            return None
        flo = d.cdf_f(lo)[0] if lo != -INF else 0.0
        fhi = d.cdf_f(hi)[1] if hi != INF else 1.0
        x = d.quantile((flo + fhi) / 2) if fhi > flo else None
        if x is None or not (lo < x < hi) or not math.isfinite(x):
            if math.isfinite(lo) and math.isfinite(hi):
                x = (lo + hi) / 2
            elif math.isfinite(lo):
                x = lo + max(d.spread(), abs(lo) * 1e-3)
            elif math.isfinite(hi):
                x = hi - max(d.spread(), abs(hi) * 1e-3)
            else:
                x = d.quantile(0.5)
        if not (lo < x < hi):
            return None
        return x

    def refine(self, budget: int) -> bool:
        if not self._heap:
            return False
        progressed = False
        for _ in range(budget):
            if not self._heap:
                break
            _, _, c = heapq.heappop(self._heap)
            # the split variable that most reduces this cell's gap, else the one with the largest
            # influence on the constraints
            best, best_s = None, 0.0
            scores = self._split_scores(c.box)
            if scores is not None:
                for k, v in enumerate(self.split):
                    L, H = c.box[k]
                    if scores[k] > best_s and self._split_point(self.dists[v], L, H) is not None:
                        best, best_s = k, scores[k]
            for k, v in [] if best is not None else enumerate(self.split):
                L, H = c.box[k]
                w = H[1] - L[0]
                if not math.isfinite(w):
                    w = 1e6 * self.dists[v].spread()
                else:
                    w = min(w, 1e6 * self.dists[v].spread())
                s = self.weights[k] * w
                if s > best_s and self._split_point(self.dists[v], L, H) is not None:
                    best, best_s = k, s
            if best is None:
                self._done_lo.append(c.lo)
                self._done_hi.append(c.hi)
                continue
            v = self.split[best]
            L, H = c.box[best]
            x = self._split_point(self.dists[v], L, H)
            for part in (((L, (x, x))), (((x, x), H))):
                box = c.box[:best] + (part,) + c.box[best + 1 :]
                pm = c.pm[:best] + (self._pmass(self.dists[v], part[0], part[1]),) + c.pm[best + 1 :]
                self._push(self._eval(box, pm))
            self.cells += 1
            progressed = True
        self._sum()
        return progressed or bool(self._heap)

    def stats(self):
        return {"cells": self.cells}
