"""The exact biased share of one box of a :class:`~tamp.causal.netclaim.NetClaim` cell.

On a box where the linear bounds fixed the phase of most ReLUs, the network is affine on each
*activation region* of the few unstable ones: branch on an unstable ReLU the decision forms
depend on (earliest first: its own pre-activation must be affine under the pattern so far),
adding ``pre > 0`` or ``pre <= 0`` to the region's constraints. Under a complete pattern every
literal of the case pairs is an exact affine form over the real inputs, and the biased points of
the region are the disjoint union over the biased case pairs of the polytopes cut by their
literals — volumes by :func:`tamp.causal.volume.cut_volume` (closed formula for one direction,
Lawrence's vertex formula otherwise). Activation regions overlap only on boundaries, so the
volumes add up. Exact rational arithmetic throughout; None when a limit is hit.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np
from gmpy2 import mpq

from .netclaim import CasePair, NetClaim
from .volume import lasserre_volume

Q = Any  # gmpy2.mpq (no type information)
Affine = Tuple[Dict[str, Q], Q]  # exact forms over the real inputs (gmpy2 rationals: fast)
ZERO = mpq(0)
ONE = mpq(1)


def _qform(f) -> Tuple[Dict[int, Q], Q]:
    return {v: mpq(x) for v, x in f[0].items()}, mpq(f[1])


def _q(claim: NetClaim):
    """The claim's forms as gmpy2 rationals (computed once per claim)."""
    q = getattr(claim, "_q", None)
    if q is None:
        q = (
            [_qform(r.pre) for r in claim.model.relus],
            [_qform(f) for f in claim.forms],
            [{v: mpq(x) for v, x in cc.items()} for cc in claim.cell_consts],
        )
        claim._q = q  # type: ignore[attr-defined]
    return q


class _Branch(Exception):
    def __init__(self, relu: int):
        self.relu = relu


class _Limit(Exception):
    pass


class _Substitution:
    """Exact affine forms over the real inputs under the box's fixed phases and ``pattern``.
    ``shared``: the values that do not depend on any ReLU of a pattern (valid for every pattern)."""

    def __init__(
        self,
        claim: NetClaim,
        cell: int,
        pre_lo: np.ndarray,
        pre_hi: np.ndarray,
        pattern: Dict[int, bool],
        shared: Dict[int, Affine],
    ):
        self.c, self.cell, self.pre_lo, self.pre_hi, self.pattern = claim, cell, pre_lo, pre_hi, pattern
        self.pres, self.forms, consts = _q(claim)
        self.consts = consts[cell]
        self.relu_index = claim.relu_index
        self.shared = shared
        self.memo: Dict[int, Tuple[Affine, bool]] = {}

    def var(self, v: int) -> Tuple[Affine, bool]:
        """(form, depends on the pattern)"""
        if v in self.shared:
            return self.shared[v], False
        if v in self.memo:
            return self.memo[v]
        c = self.c
        dep = False
        if v in c.real_vars:
            out: Affine = ({c.dims[c.real[c.real_vars[v]]].name: ONE}, ZERO)
        elif v in c.const_vars:
            out = ({}, self.consts[v])
        else:
            r = self.relu_index[v]
            if r in self.pattern:
                on, dep = self.pattern[r], True
            elif self.pre_lo[r] >= 0:
                on = True
            elif self.pre_hi[r] <= 0:
                on = False
            else:
                raise _Branch(r)
            if on:
                out, d2 = self._form(self.pres[r])
                dep = dep or d2
            else:
                out = ({}, ZERO)
        if dep:
            self.memo[v] = (out, True)
        else:
            self.shared[v] = out
        return out, dep

    def _form(self, f) -> Tuple[Affine, bool]:
        co: Dict[str, Q] = {}
        const = f[1]
        dep = False
        for v, k in f[0].items():
            g, d = self.var(v)
            dep = dep or d
            const += k * g[1]
            for name, x in g[0].items():
                co[name] = co.get(name, ZERO) + k * x
        return ({n: x for n, x in co.items() if x}, const), dep

    def form(self, f) -> Affine:
        return self._form(f)[0]


def _below_share(f: Affine, lo: Dict[str, Q], hi: Dict[str, Q]) -> Q:
    """The share of the box where ``f <= 0`` (f not constant on it): with t = (x - lo)/width,
    vol{t ∈ [0,1]^n : c·t <= β} = Σ_S (-1)^|S| (β - Σ_S c)^n / (n! Π c) over the subsets S of the
    (made positive) coefficients with Σ_S c < β."""
    co, c = f
    beta = -c
    cs = []
    for n, k in co.items():
        w = hi[n] - lo[n]
        beta -= k * lo[n]
        if k == 0 or w == 0:
            continue
        k = k * w
        if k < 0:  # t -> 1 - t
            beta -= k
            k = -k
        cs.append(k)
    if beta < 0 or (beta == 0 and cs):
        return ZERO
    if beta >= sum(cs, ZERO):
        return ONE
    acc = ZERO
    for size in range(len(cs) + 1):
        for sub in itertools.combinations(cs, size):
            rest = beta - sum(sub, ZERO)
            if rest > 0:
                acc += -(rest ** len(cs)) if size % 2 else rest ** len(cs)
    den = mpq(math.factorial(len(cs)))
    for k in cs:
        den *= k
    return acc / den


def _cut(fs: List[tuple], lo: Dict[str, Q], hi: Dict[str, Q], names: List[str]) -> Q:
    """vol{x ∈ box : f(x) < 0 (strict) or <= 0 for every f} exactly: constraints true on the whole
    box are dropped, one false on the whole box empties it (strictness matters only for a form
    constant on the box); one live half-space: the closed formula; more: Lasserre's recursion."""
    live = []
    for co, c, strict in fs:
        mn = mx = c
        for n, k in co.items():
            if k > 0:
                mn, mx = mn + k * lo[n], mx + k * hi[n]
            else:
                mn, mx = mn + k * hi[n], mx + k * lo[n]
        if mn == mx:
            if mx < 0 or (mx == 0 and not strict):
                continue
            return ZERO
        if mx <= 0:
            continue
        if mn >= 0:
            return ZERO
        live.append((co, c))
    full = ONE
    for n in names:
        full *= hi[n] - lo[n]
    if not live:
        return full
    if len(live) == 1:
        return full * _below_share(live[0], lo, hi)
    used = sorted({n for co, _ in live for n in co})
    rest = ONE
    for n in names:
        if n not in used:
            rest *= hi[n] - lo[n]
    d = len(used)
    rows = []
    for t, n in enumerate(used):  # origin at the box's low corner: x = lo + y
        e = tuple(ONE if u == t else ZERO for u in range(d))
        rows.append((e, hi[n] - lo[n]))
        rows.append((tuple(-x for x in e), ZERO))
    for co, c in live:
        shift = c + sum((k * lo[n] for n, k in co.items()), ZERO)
        rows.append((tuple(co.get(n, ZERO) for n in used), -shift))
    return lasserre_volume(rows, d) * rest


def _inner_point(fs: List[tuple], lo: Dict[str, Q], hi: Dict[str, Q], names: List[str]):
    """The centre of the largest ball inside the box cut by ``fs`` (linear programming in floats:
    only a candidate, checked exactly by the caller), or None."""
    from scipy.optimize import linprog

    n = len(names)
    A, b = [], []
    for t, name in enumerate(names):
        e = [0.0] * n
        e[t] = 1.0
        A.append(e + [1.0])
        b.append(float(hi[name]))
        e = [0.0] * n
        e[t] = -1.0
        A.append(e + [1.0])
        b.append(-float(lo[name]))
    for co, c, _ in fs:
        row = [float(co.get(name, 0)) for name in names]
        norm = sum(x * x for x in row) ** 0.5
        if norm == 0:
            continue
        A.append(row + [norm])
        b.append(-float(c))
    try:
        res = linprog([0.0] * n + [-1.0], A_ub=A, b_ub=b, bounds=[(None, None)] * n + [(0, None)], method="highs")
    except (ValueError, OverflowError):
        return None
    if not res.success or res.x[-1] <= 0:
        return None
    return {name: Fraction(float(res.x[t])) for t, name in enumerate(names)}


def exact_share(
    claim: NetClaim,
    cell: int,
    box: Sequence[Tuple[Fraction, Fraction]],
    pre_lo: np.ndarray,
    pre_hi: np.ndarray,
    case_pairs: List[CasePair],
    max_branch: int = 6,
    max_dims: int = 8,
    deadline: Optional[float] = None,
    points: Optional[List[Dict[str, Fraction]]] = None,
) -> Optional[Fraction]:
    """The exact share of the real ``box`` (per real dimension) of ``cell`` covered by the
    disjoint conditions ``case_pairs`` (the possibly-true biased case pairs of one pair of
    copies), or None when more than ``max_branch`` ReLUs must be branched on or a volume is not
    computed. ``points``: if given (and empty), receives a point near the centre of the first
    biased polytope of positive volume (a candidate witness, to be checked exactly)."""
    names = [claim.dims[k].name for k in claim.real]
    lo = {n: mpq(box[t][0]) for t, n in enumerate(names)}
    hi = {n: mpq(box[t][1]) for t, n in enumerate(names)}
    needed = sorted({f for cp in case_pairs for f, _ in cp.literals})
    shared: Dict[int, Affine] = {}
    qforms = _q(claim)[1]

    pres = _q(claim)[0]
    if len(names) > max_dims:
        return None

    def affine_range(f: Affine) -> Tuple[Q, Q]:
        mn = mx = f[1]
        for n, k in f[0].items():
            if k > 0:
                mn, mx = mn + k * lo[n], mx + k * hi[n]
            else:
                mn, mx = mn + k * hi[n], mx + k * lo[n]
        return mn, mx

    def volume(pattern: Dict[int, bool], cons: List[tuple], branches: int) -> Q:
        while True:
            sub = _Substitution(claim, cell, pre_lo, pre_hi, pattern, shared)
            try:
                forms = {f: sub.form(qforms[f]) for f in needed}
                break
            except _Branch as e:
                r = e.relu
                while True:  # the earliest undecided dependency of this ReLU's pre-activation
                    try:
                        pre = _Substitution(claim, cell, pre_lo, pre_hi, pattern, shared).form(pres[r])
                        break
                    except _Branch as e2:
                        r = e2.relu
                mn, mx = affine_range(pre)  # exact under the pattern: often decides the phase
                if mn >= 0 or mx <= 0:
                    pattern = {**pattern, r: mn >= 0}
                    continue
                if branches >= max_branch:
                    raise _Limit() from None
                neg = ({n: -x for n, x in pre[0].items()}, -pre[1])
                total = ZERO
                for on, c in ((True, (*neg, True)), (False, (*pre, False))):
                    region = cons + [c]
                    if _cut(region, lo, hi, names) == 0:  # an empty activation region
                        continue
                    total += volume({**pattern, r: on}, region, branches + 1)
                return total
        total = ZERO
        for cp in case_pairs:
            fs = cons + [(*forms[f], strict) for f, strict in cp.literals]
            v = _cut(fs, lo, hi, names)
            if v > 0 and points is not None and not points:
                p = _inner_point(fs, lo, hi, names)
                if p is not None:
                    points.append(p)
            total += v
        return total

    full = ONE
    for n in names:
        full *= hi[n] - lo[n]
    if full == 0:
        return None
    try:
        v = volume({}, [], 0) / full
    except _Limit:
        return None
    return Fraction(int(v.numerator), int(v.denominator))
