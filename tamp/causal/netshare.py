"""Certified bounds on the biased share of a mixed box from its linear bounds (no branching).

On a box the decision forms have linear bounds ``L_f(x) <= f(x) <= U_f(x)`` (CROWN, outward
margin included: :func:`tamp.causal.bounds.bounds_batch` with ``affine``). A biased case pair
holds where all its literals ``f < 0`` (or ``<= 0``) hold, so its points lie in the polytope
``{x ∈ box : L_f(x) < 0 for each literal}`` and include the polytope ``{x : U_f(x) < 0 for
each}``. When the case pair's implied sum ``s = Σ f`` has a relational bound ``s >= s_lo``
(:mod:`tamp.causal.netdiff`: the copies' difference), each literal also satisfies
``f_i = s - Σ_{j≠i} f_j >= s_lo - Σ_{j≠i} U_j(x)``, a further necessary condition that cuts the
polytope down to the thin sliver between the two copies' decision boundaries.

Volumes of general polytopes are slow in exact arithmetic, so the upper bound is the least of
closed-form ones: the share of one necessary half-space, or of a *slab* along one condition's
direction implied by two of them (:func:`_slab`); the lower bound is Bonferroni's over the sure
half-spaces. Which bound is tightest is estimated in floats for the whole batch at once
(:func:`_choose`); the chosen one is computed exactly (the float coefficients read as exact
rationals), so the share interval is certified; case pairs are disjoint, so their shares add up.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np
from gmpy2 import mpq

from .netclaim import CasePair
from .netvolume import _inner_point

GRID = 1 << 64  # shares are rounded outward to this grid (short rationals for the sums)


def _G(a: Sequence, beta, strict: bool = False):
    """The share of the unit cube where ``a·t <= beta`` (``< beta`` when ``strict`` matters: a
    constant form), by the closed formula Σ_S (-1)^|S| (β - Σ_S a)_+^n / (n! Π a) over the
    subsets of the (made positive) coefficients. Generic in the number type: exact for gmpy2
    rationals, an estimate for floats."""
    cs = []
    for x in a:
        if x < 0:  # t -> 1 - t
            beta -= x
            cs.append(-x)
        elif x > 0:
            cs.append(x)
    one = beta * 0 + 1
    if not cs:
        return one if (beta > 0 or (beta == 0 and not strict)) else one * 0
    if beta <= 0:
        return one * 0
    if beta >= sum(cs):
        return one
    acc = one * 0
    for size in range(len(cs) + 1):
        for sub in itertools.combinations(cs, size):
            rest = beta - sum(sub)
            if rest > 0:
                acc += -(rest ** len(cs)) if size % 2 else rest ** len(cs)
    den = one * math.factorial(len(cs))
    for x in cs:
        den *= x
    return acc / den


def _unit(coef: np.ndarray, const: float, lo: Sequence, w: Sequence):
    """``coef·x + const`` (finite floats, read exactly) in the box's unit coordinates
    x = lo + w·t (exact rationals): (a, b) with the form ``a·t + b``."""
    c = [mpq(float(x)) for x in coef]
    return [ci * wi for ci, wi in zip(c, w)], mpq(float(const)) + sum(ci * li for ci, li in zip(c, lo))


def _slab(ai, bi, aj, bj):
    """An upper bound on the share where ``ai·t + bi <= 0`` and ``aj·t + bj <= 0``: ``aj`` is
    written λ·ai + r (λ the projection, any λ is sound), r·t bounded over the cube, which leaves
    one direction: a half-space or a slab of ``ai·t``."""
    nn = sum(x * x for x in ai)
    if not nn:
        return None
    lam = sum(x * y for x, y in zip(ai, aj)) / nn
    if isinstance(lam, type(mpq(0))):
        lam = mpq(float(lam))  # any λ: a short one keeps the arithmetic fast
    r = [y - lam * x for x, y in zip(ai, aj)]
    rmin = sum(min(x, 0) for x in r)
    top = -bi
    if lam > 0:  # λ·ai·t <= -bj - r·t <= -bj - rmin
        return _G(ai, min(top, (-bj - rmin) / lam))
    if lam < 0:  # ai·t >= (-bj - rmin)/λ
        tau = (-bj - rmin) / lam
        if tau >= top:
            return _G(ai, top) * 0
        return _G(ai, top) - _G(ai, tau)
    return None


def _Gv(a: np.ndarray, beta: np.ndarray) -> np.ndarray:
    """Float estimates of :func:`_G` for arrays of forms (a: (..., n), beta: (...)): only for
    choosing which bound to compute exactly (coefficients near 0 are lifted to 1e-4 of the
    largest, which keeps the closed formula's cancellation small)."""
    a = np.nan_to_num(np.asarray(a, dtype=float), nan=0.0, posinf=0.0, neginf=0.0)
    beta = np.nan_to_num(np.asarray(beta, dtype=float) - np.minimum(a, 0.0).sum(-1), nan=-1.0)
    a = np.abs(a)
    n = a.shape[-1]
    tot = a.sum(-1)
    a = np.maximum(a, 1e-4 * tot[..., None] + 1e-300)
    acc = np.zeros(beta.shape)
    with np.errstate(over="ignore", divide="ignore", invalid="ignore", under="ignore"):
        for sub in itertools.product((0.0, 1.0), repeat=n):
            rest = beta - (a * np.array(sub)).sum(-1)
            term = np.where(rest > 0, np.maximum(rest, 0.0) ** n, 0.0)
            acc += -term if sum(sub) % 2 else term
        g = acc / (math.factorial(n) * a.prod(-1))
    g = np.where(beta <= 0, 0.0, np.where(beta >= tot, 1.0, g))
    return np.clip(np.nan_to_num(g, nan=1.0), 0.0, 1.0)


def _necessary(cp: CasePair, bb, rel_lo: Dict[int, np.ndarray], lo_f: np.ndarray, w_f: np.ndarray):
    """The necessary conditions ``coef·x + const <= 0`` of case pair ``cp`` per box: (coef (N, m,
    n), const (N, m)); a non-finite one is no condition. See the module docstring."""
    cons_c, cons_k = [], []
    for f, _ in cp.literals + cp.implied:
        cons_c.append(bb.lower_coef[:, f])
        cons_k.append(bb.lower_const[:, f])
    xmag = np.maximum(np.abs(lo_f), np.abs(lo_f + w_f))
    for f, _ in cp.implied:
        s_lo = rel_lo.get(f)
        if s_lo is None:
            continue
        for i in range(len(cp.literals)):
            # f_i >= s_lo - Σ_{j≠i} U_j(x): necessary for f_i < 0 (or <= 0) is that bound <= 0
            others = [fj for j, (fj, _) in enumerate(cp.literals) if j != i]
            co = -sum(bb.upper_coef[:, fj] for fj in others)
            with np.errstate(invalid="ignore"):
                c = s_lo - sum(bb.upper_const[:, fj] for fj in others)
                # the float sums' rounding, taken off the constant: a smaller left-hand side only
                # enlarges the region {… <= 0}
                k = len(others) + 2
                err = k * 2.0**-52 * (np.abs(s_lo) + sum(np.abs(bb.upper_const[:, fj]) for fj in others))
                cerr = k * 2.0**-52 * sum(np.abs(bb.upper_coef[:, fj]) for fj in others)
                err = err + 2 * (cerr * xmag).sum(-1)
            cons_c.append(co)
            cons_k.append(c - 2 * err - 2.0**-1000)
    return np.stack(cons_c, axis=1), np.stack(cons_k, axis=1)


def _choose(a: np.ndarray, b: np.ndarray, ok: np.ndarray) -> List[Tuple[int, ...]]:
    """Per box, the tightest bound among the single conditions and the slabs along the two
    tightest directions (float estimates on unit coordinates a·t + b <= 0): (i,) or (i, j); ()
    when none is below 1."""
    N, m, _ = a.shape
    big = np.full((N, m), np.inf)
    singles = np.where(ok, _Gv(a, -b), np.inf)
    best = singles.min(axis=1)
    how: List[Tuple[int, ...]] = [((int(i),) if best[t] < 1 else ()) for t, i in enumerate(singles.argmin(axis=1))]
    order = np.argsort(singles, axis=1)[:, : min(2, m)]
    rows = np.arange(N)
    for q in range(order.shape[1]):
        i = order[:, q]
        ai, bi = a[rows, i], b[rows, i]  # (N, n), (N,)
        nn = (ai * ai).sum(-1)
        with np.errstate(divide="ignore", invalid="ignore"):
            lam = (a * ai[:, None, :]).sum(-1) / nn[:, None]  # (N, m)
            r = a - lam[..., None] * ai[:, None, :]
            rmin = np.minimum(r, 0.0).sum(-1)
            tau = (-b - rmin) / lam
        top = -bi
        aib = np.broadcast_to(ai[:, None, :], a.shape)
        g_top = _Gv(ai, top)[:, None]
        g_pos = _Gv(aib, np.minimum(top[:, None], tau))
        g_neg = np.where(tau < top[:, None], g_top - _Gv(aib, tau), 0.0)
        v = np.where(lam > 0, g_pos, np.where(lam < 0, g_neg, big))
        v = np.where(ok & ok[rows, i][:, None] & np.isfinite(lam) & (nn[:, None] > 0), v, np.inf)
        v[rows, i] = np.inf
        j = v.argmin(axis=1)
        vj = v[rows, j]
        for t in np.flatnonzero(vj < best):
            best[t] = vj[t]
            how[t] = (int(i[t]), int(j[t]))
    return how


def share_bounds_batch(
    names: Sequence[str],
    boxes: Sequence[Sequence[Tuple[Fraction, Fraction]]],
    bb,
    case_pairs: List[CasePair],
    possible: np.ndarray,
    rel_lo: Dict[int, np.ndarray],
    point: bool = False,
) -> List[Tuple[Fraction, Fraction, Optional[Dict[str, Fraction]]]]:
    """Per box of a batch, (lower, upper) bounds on the share of the box covered by the disjoint
    biased ``case_pairs`` (``possible``: (N, case pairs) those not excluded on the box),
    outward-rounded to 2^-64, and (with ``point``) a candidate witness point where every literal's
    upper bound is negative (to be checked exactly). ``bb``: the batch's
    :class:`~tamp.causal.bounds.BatchBounds` with ``affine`` constants (rows: the claim's forms);
    ``rel_lo``: relational lower bounds (N,) of implied forms.

    Upper bound per case pair: the least of the shares of single necessary half-spaces and of
    two-condition slabs (:func:`_slab`), chosen on float estimates and computed exactly; lower
    bound: every literal's upper bound negative, by Bonferroni (1 - Σ shares where one is not)."""
    N = len(boxes)
    lo_f = np.array([[float(a) for a, _ in box] for box in boxes])
    w_f = np.array([[float(b - a) for a, b in box] for box in boxes])
    exact: List[Optional[Tuple[list, list]]] = [None] * N

    def unit_q(t: int):
        if exact[t] is None:
            exact[t] = ([mpq(a) for a, _ in boxes[t]], [mpq(b) - mpq(a) for a, b in boxes[t]])
        return exact[t]

    up = [mpq(0)] * N
    # lower bounds per pair of copies: a point is biased when some pair's outputs differ, so the
    # pairs' biased sets overlap (their upper bounds add up, a union bound; the lower is the max)
    low_of: Dict[int, List[Any]] = {cp.pair: [mpq(0)] * N for cp in case_pairs}
    pts: List[Optional[Dict[str, Fraction]]] = [None] * N
    for c, cp in enumerate(case_pairs):
        live = possible[:, c]
        if not live.any():
            continue
        A, K = _necessary(cp, bb, rel_lo, lo_f, w_f)
        ok = np.isfinite(A).all(-1) & np.isfinite(K)
        As = np.where(ok[..., None], A, 0.0)
        a = As * w_f[:, None, :]
        b = np.where(ok, K, -1.0) + (As * lo_f[:, None, :]).sum(-1)
        how = _choose(a, b, ok)
        # lower: every literal's upper bound < 0 (strict: safe for < and <=)
        U = np.stack([bb.upper_coef[:, f] for f, _ in cp.literals], axis=1)
        Uk = np.stack([bb.upper_const[:, f] for f, _ in cp.literals], axis=1)
        uok = (np.isfinite(U).all(-1) & np.isfinite(Uk)).all(-1)
        ua = np.nan_to_num(U) * w_f[:, None, :]
        ub = np.nan_to_num(Uk) + (np.nan_to_num(U) * lo_f[:, None, :]).sum(-1)
        est = 1.0 - (1.0 - _Gv(ua, -ub)).sum(-1)
        for t in np.flatnonzero(live).tolist():
            lq, wq = unit_q(t)
            h = how[t]
            if not h:
                up[t] += 1
            elif len(h) == 1:
                ai, bi = _unit(A[t, h[0]], float(K[t, h[0]]), lq, wq)
                up[t] += _G(ai, -bi)
            else:
                ai, bi = _unit(A[t, h[0]], float(K[t, h[0]]), lq, wq)
                aj, bj = _unit(A[t, h[1]], float(K[t, h[1]]), lq, wq)
                v = _slab(ai, bi, aj, bj)
                up[t] += mpq(1) if v is None else v
            if not uok[t] or est[t] <= 0:
                continue
            sure = [_unit(U[t, k], float(Uk[t, k]), lq, wq) for k in range(len(cp.literals))]
            v = 1 - sum(1 - _G(sa, -sb, True) for sa, sb in sure)
            if v > 0:
                low = low_of[cp.pair]
                low[t] += v
                if point and pts[t] is None:
                    fs = [
                        ({n: mpq(float(x)) for n, x in zip(names, U[t, k]) if x}, mpq(float(Uk[t, k])), True)
                        for k in range(len(cp.literals))
                    ]
                    lo = {n: lq[i] for i, n in enumerate(names)}
                    hi = {n: lq[i] + wq[i] for i, n in enumerate(names)}
                    pts[t] = _inner_point(fs, lo, hi, list(names))
    out = []
    for t in range(N):
        u = min(up[t], mpq(1))
        lw = max(low[t] for low in low_of.values()) if low_of else mpq(0)
        out.append((_floor(min(lw, u)), _ceil(u), pts[t]))
    return out


def _floor(q) -> Fraction:
    return Fraction(int(math.floor(q * GRID)), GRID)


def _ceil(q) -> Fraction:
    return Fraction(int(math.ceil(q * GRID)), GRID)
