"""Regions of the continuous sample space and their certified masses (checker side).

A :class:`Region` is an open box on base variables (bounds may be missing = unbounded) and
strict linear constraints ``Σ coef·x < rhs`` over two or more of them. Its mass under the
product of the base variables' distributions (:func:`region_mass`) is computed from scratch:

* variables in no constraint: the product of their one-dimensional masses
  (``Dist.mass``: exact for polynomial densities, certified CDF enclosures from
  :mod:`tamp.core.interval` (``arb`` balls) for Gaussian, Laplace and exponential);
* a group of variables linked by constraints, all with polynomial densities (uniform, step
  bins, ``density``): exact rational polytope integration (:func:`tamp.wmi.integrate_polytope`);
* the other linked variables: bounded through a *witness*, a bisection tree of the region's box
  over those variables (``{"split": NAME, "at": "p/q", "below": T, "above": T}``, a leaf is
  ``null``). Each leaf box is classified by exact interval arithmetic: inside every constraint,
  outside one, or partial; the mass lies in [Σ inside, Σ inside + Σ partial] (leaf masses are
  products of one-dimensional masses). No witness means the trivial [0, mass of the box].
  A partial leaf is tightened by integrating one of its variables exactly: for each choice of
  the *inner* variable, the interval the constraints leave it over the whole leaf (resp. over
  some point of the leaf) gives a lower (resp. upper) bound; the best of all choices is used.
  For Gaussian variables this is intersected with a second-order (Taylor) enclosure along the
  inner variable (:mod:`.leaf_taylor`); constraints without the inner variable are bounded
  recursively (:func:`leaf_bounds`).

With a witness of the form ``{"ldl": TREE}`` the linked all-Gaussian groups are first rewritten
exactly (:func:`gauss_transform`): the constraint and box rows ``a_i·x < b_i`` of a group depend
on ``x`` only through ``A x``, which is Gaussian with mean ``A m`` and covariance ``A V Aᵀ``
(``V`` diagonal: independent base variables). A rational LDLᵀ factorisation ``A V Aᵀ = L D Lᵀ``
(exact, no pivot search beyond skipping dependent rows) shows ``A x − A m`` has the distribution
of ``L y`` with ``y`` independent ``N(0, D_j)``; so the group's mass is that of the region
``L y < b − A m``, which is triangular (the first row mentions ``y_0`` only, …). A single
oblique half-space becomes one one-dimensional Gaussian mass; what stays linked is bounded by
the witness TREE over the new variables ``ldl<k>.<j>`` (k: the group, j: the pivot).

Constraints ``0 < rhs`` (no variable) are malformed: their boundary would not be a null set.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Dict, List, Tuple

import z3

from tamp.core.interval import Interval
from tamp.core.ldl import ldl
from tamp.core.linear import Bound, Constraint, linked_groups
from tamp.core.linear import affine_range as linear_range
from tamp.probability.dists import Dist, Gauss
from tamp.probability.polydensity import polytope_problem
from tamp.wmi import integrate_polytope

from .leaf_taylor import column_integral
from .replay import q

ZERO_IV = Interval.point(0)
ONE_IV = Interval.point(1)
MAX_WITNESS_LEAVES = 200_000


class MassError(ValueError):
    """A region or witness that cannot be used (the message says why)."""


@dataclass
class Region:
    box: Dict[str, Bound] = field(default_factory=dict)
    cons: List[Constraint[str]] = field(default_factory=list)

    def variables(self) -> set:
        out = set(self.box)
        for coef, _ in self.cons:
            out |= set(coef)
        return out

    def key(self) -> tuple:
        return (tuple(sorted(self.box.items())), tuple(sorted((tuple(sorted(c.items())), r) for c, r in self.cons)))

    def formula(self, symbols: Dict[str, z3.ArithRef], closed: bool = False) -> z3.BoolRef:
        """The open region (or its closure) as a z3 formula."""
        parts = []
        for v, (lo, hi) in self.box.items():
            x = symbols[v]
            if lo is not None:
                parts.append(x >= q(lo) if closed else x > q(lo))
            if hi is not None:
                parts.append(x <= q(hi) if closed else x < q(hi))
        for coef, rhs in self.cons:
            s = z3.Sum([q(c) * symbols[v] for v, c in sorted(coef.items())])
            parts.append(s <= q(rhs) if closed else s < q(rhs))
        return z3.And(*parts) if parts else z3.BoolVal(True)


def boxes_disjoint(a: Region, b: Region) -> bool:
    """True when the two regions' boxes do not overlap in some variable (no solver needed)."""
    for v, (lo1, hi1) in a.box.items():
        if v not in b.box:
            continue
        lo2, hi2 = b.box[v]
        if hi1 is not None and lo2 is not None and hi1 <= lo2:
            return True
        if hi2 is not None and lo1 is not None and hi2 <= lo1:
            return True
    return False


def effective_box(region: Region, dists: Dict[str, Dist], names) -> Dict[str, Bound]:
    """The region's box on ``names`` clipped to each distribution's support."""
    out = {}
    for v in names:
        lo, hi = region.box.get(v, (None, None))
        slo, shi = dists[v].support()
        if slo is not None:
            lo = slo if lo is None else max(lo, slo)
        if shi is not None:
            hi = shi if hi is None else min(hi, shi)
        out[v] = (lo, hi)
    return out


def components(region: Region) -> List[List[str]]:
    """Groups of variables linked by the region's constraints (sorted)."""
    return linked_groups(coef for coef, _ in region.cons)


def witness_vars(region: Region, dists: Dict[str, Dist]) -> List[str]:
    """The variables whose mass needs a witness: linked ones not all polynomial."""
    out: List[str] = []
    for g in components(region):
        if not all(dists[v].is_poly for v in g):
            out.extend(g)
    return sorted(out)


def one_dim_mass(d: Dist, lo, hi) -> Interval:
    if lo is not None and hi is not None and lo >= hi:
        return ZERO_IV
    return d.mass(lo, hi)


def is_ldl_witness(witness: Any) -> bool:
    """True for a witness ``{"ldl": TREE | null}`` (Gaussian groups rewritten first)."""
    return isinstance(witness, dict) and set(witness) == {"ldl"}


def region_mass(region: Region, dists: Dict[str, Dist], witness: Any = None, deadline=None) -> Interval:
    """A certified enclosure of the region's mass (see the module docstring)."""
    _validate(region, dists)
    if is_ldl_witness(witness):
        moved = gauss_transform(region, dists)
        if moved is None:
            return ZERO_IV
        region, dists = moved
        witness = witness["ldl"]
        if is_ldl_witness(witness):
            raise MassError("a witness cannot ask for the Gaussian rewriting twice")
    return _region_mass(region, dists, witness, deadline)


def _validate(region: Region, dists: Dict[str, Dist]) -> None:
    for coef, _ in region.cons:
        if not coef or any(c == 0 for c in coef.values()):
            raise MassError("a constraint needs non-zero coefficients")
    for v in region.variables():
        if v not in dists:
            raise MassError(f"unknown base variable '{v}'")


def ldl_factor(gram: List[List[Fraction]]) -> Tuple[List[List[Fraction]], List[Fraction]]:
    """Exact LDLᵀ of a positive semidefinite rational matrix (:func:`tamp.core.ldl.ldl`: rows
    in order, a dependent row adds no pivot): L (one row per input row, one column per
    pivot) and the pivots' D (all > 0)."""
    try:
        return ldl(gram)
    except ValueError:
        raise MassError("internal: a Gram matrix with a negative residual") from None  # impossible (PSD)


def gauss_transform(region: Region, dists: Dict[str, Dist]):
    """The region and distributions with every linked all-Gaussian group replaced by
    independent Gaussian coordinates (module docstring); None when the region is empty."""
    box = dict(region.box)
    cons = list(region.cons)
    new_d = dict(dists)
    for k, g in enumerate(components(region)):
        gauss = {v: dists[v] for v in g}
        if not all(isinstance(d, Gauss) for d in gauss.values()):
            continue
        gset = set(g)
        rows = [(dict(c), r) for c, r in cons if set(c) <= gset]
        cons = [(c, r) for c, r in cons if not set(c) <= gset]
        for v in g:  # box rows last: the oblique constraints choose the first directions
            lo, hi = box.pop(v, (None, None))
            if hi is not None:
                rows.append(({v: Fraction(1)}, hi))
            if lo is not None:
                rows.append(({v: Fraction(-1)}, -lo))
        var = {v: d.var for v, d in gauss.items() if isinstance(d, Gauss)}
        mean = {v: d.mean for v, d in gauss.items() if isinstance(d, Gauss)}
        gram = [[sum((a[v] * b[v] * var[v] for v in a if v in b), Fraction(0)) for b, _ in rows] for a, _ in rows]
        L, D = ldl_factor(gram)
        names = [f"ldl{k}.{j}" for j in range(len(D))]
        for n, dj in zip(names, D):
            new_d[n] = Gauss(Fraction(0), dj)
        for (a, rhs), li in zip(rows, L):
            r = rhs - sum((a[v] * mean[v] for v in a), Fraction(0))
            coef = {names[j]: c for j, c in enumerate(li) if c != 0}
            if not coef:
                if r <= 0:
                    return None
                continue
            if len(coef) == 1:
                ((n, c),) = coef.items()
                lo, hi = box.get(n, (None, None))
                b = r / c
                if c > 0:
                    hi = b if hi is None else min(hi, b)
                else:
                    lo = b if lo is None else max(lo, b)
                box[n] = (lo, hi)
                continue
            cons.append((coef, r))
    return Region(box, cons), new_d


def _region_mass(region: Region, dists: Dict[str, Dist], witness: Any = None, deadline=None) -> Interval:
    fixed, wnames, box, wcons = split_mass(region, dists, deadline)
    if wnames:
        return fixed * witness_interval(*_witness_sums(wnames, box, wcons, dists, witness))
    if witness is not None:
        raise MassError("a witness is given, but every linked variable has a polynomial density")
    return fixed


def split_mass(region: Region, dists: Dict[str, Dist], deadline=None):
    """(the mass of everything but the witness variables, the witness variables, the region's
    effective box, the constraints over the witness variables)."""
    names = region.variables()
    box = effective_box(region, dists, names)
    linked = set()
    total = ONE_IV
    wvars = set()
    for g in components(region):
        linked |= set(g)
        if all(dists[v].is_poly for v in g):
            total = total * _poly_mass(g, box, [c for c in region.cons if set(c[0]) <= set(g)], dists, deadline)
        else:
            wvars |= set(g)
    for v in sorted(names - linked):
        total = total * one_dim_mass(dists[v], *box[v])
    wcons = [c for c in region.cons if set(c[0]) <= wvars]
    return total, sorted(wvars), box, wcons


def witness_interval(lo: Fraction, hi: Fraction) -> Interval:
    """The witness part of a mass from the sums of its leaves' bounds."""
    return Interval(lo, min(hi, Fraction(1)) if lo <= 1 else hi)


def _poly_mass(g, box, cons, dists, deadline) -> Interval:
    dens, rows = polytope_problem(
        [dists[v].coeffs for v in g],
        [box[v] for v in g],
        [(tuple(coef.get(v, Fraction(0)) for v in g), rhs) for coef, rhs in cons],
    )
    try:
        return Interval.point(integrate_polytope(dens, rows, len(g), deadline=deadline))
    except TimeoutError:
        raise MassError("exact integration ran out of time") from None


def classify_box(box: Dict[str, Bound], cons) -> str:
    """ "in" (every constraint holds on the whole box), "out" (one fails on all of it) or
    "partial", by exact interval arithmetic."""
    inside = True
    for coef, rhs in cons:
        lo, hi = linear_range(coef, box)
        if lo is not None and lo >= rhs:
            return "out"
        if hi is None or hi > rhs:
            inside = False
    return "in" if inside else "partial"


def box_mass(box: Dict[str, Bound], dists: Dict[str, Dist], names) -> Interval:
    m = ONE_IV
    for v in names:
        m = m * one_dim_mass(dists[v], *box[v])
        if m.hi == 0:
            break
    return m


def walk_witness(names: List[str], box: Dict[str, Bound], tree: Any):
    """Yield the leaf boxes of a witness tree (raises :class:`MassError` when malformed)."""
    stack = [(dict((v, box[v]) for v in names), tree, 0)]
    count = 0
    while stack:
        b, t, depth = stack.pop()
        if t is None:
            count += 1
            if count > MAX_WITNESS_LEAVES:
                raise MassError(f"the witness has more than {MAX_WITNESS_LEAVES} leaves")
            yield b
            continue
        if not isinstance(t, dict) or set(t) != {"split", "at", "below", "above"}:
            raise MassError("a witness node must be null or {split, at, below, above}")
        v = t["split"]
        if v not in b:
            raise MassError(f"the witness splits '{v}', which is not one of {', '.join(names)}")
        at = parse_rational(t["at"], "witness split point")
        lo, hi = b[v]
        if (lo is not None and at <= lo) or (hi is not None and at >= hi):
            raise MassError(f"the witness splits '{v}' at {at}, outside its box")
        below, above = dict(b), dict(b)
        below[v] = (lo, at)
        above[v] = (at, hi)
        stack.append((above, t["above"], depth + 1))
        stack.append((below, t["below"], depth + 1))


def _witness_sums(names, box, cons, dists, tree) -> Tuple[Fraction, Fraction]:
    lo = Fraction(0)
    hi = Fraction(0)
    for leaf in walk_witness(names, box, tree):
        a, b = leaf_enclosure(leaf, cons, dists, names)
        lo += a
        hi += b
    return lo, hi


def leaf_enclosure(leaf: Dict[str, Bound], cons, dists: Dict[str, Dist], names) -> Tuple[Fraction, Fraction]:
    """Bounds of the mass of (leaf box ∩ constraints): exact 0 / the box mass when the box is
    outside / inside; for a partial box, the best over the choice of an inner variable (module
    docstring), never worse than [0, box mass]."""
    lo, hi, _ = leaf_bounds(leaf, cons, dists, names)
    return lo, hi


def leaf_bounds(leaf: Dict[str, Bound], cons, dists: Dict[str, Dist], names):
    """:func:`leaf_enclosure` and the inner variable that gave the tightest bounds (or None).

    For each inner variable u in some constraint, with g(x) the mass u has between its pieces
    at the point x of the other variables' box B (:func:`_inner_intervals`): if the constraints
    without u hold on all of B, the mass is ∫_B f·g ∈ [min g, max g]·mass(B), intersected with
    the second-order enclosure of :func:`.leaf_taylor.column_integral` when it applies; if they
    are undecided on B, it is in [min g · lo, max g · hi] with [lo, hi] these bounds applied
    recursively to B and the constraints without u."""
    kind = classify_box(leaf, cons)
    if kind == "out":
        return Fraction(0), Fraction(0), None
    masses = {v: one_dim_mass(dists[v], *leaf[v]) for v in names}
    whole = ONE_IV
    for v in names:
        whole = whole * masses[v]
    if kind == "in":
        return whole.lo, whole.hi, None
    best_lo, best_hi = Fraction(0), whole.hi
    best_u, best_gap = None, whole.hi
    if whole.hi == 0:
        return best_lo, best_hi, None
    for u in names:
        bounds = _inner_bounds(u, leaf, cons, dists, names, masses)
        if bounds is None:
            continue
        u_lo, u_hi = bounds
        if u_hi - u_lo < best_gap:
            best_u, best_gap = u, u_hi - u_lo
        best_lo = max(best_lo, u_lo)
        best_hi = min(best_hi, u_hi)
    return best_lo, max(best_hi, best_lo), best_u


def _inner_bounds(u, leaf, cons, dists, names, masses):
    """(lower, upper) bound of the leaf's mass integrating ``u`` exactly (:func:`leaf_bounds`);
    None when u is in no constraint."""
    inner = _inner_intervals(u, leaf, cons)
    if inner is None:
        return None
    (alo, ahi), (blo, bhi) = inner
    outer = [v for v in names if v != u]
    rest = [c for c in cons if u not in c[0]]
    g_lo = one_dim_mass(dists[u], alo, ahi).lo
    g_hi = one_dim_mass(dists[u], blo, bhi).hi
    if rest and classify_box(leaf, rest) != "in":
        r_lo, r_hi, _ = leaf_bounds({v: leaf[v] for v in outer}, rest, dists, outer)
        return r_lo * g_lo, r_hi * g_hi
    rest_lo, rest_hi = Fraction(1), Fraction(1)
    for v in outer:
        rest_lo *= masses[v].lo
        rest_hi *= masses[v].hi
    lo, hi = rest_lo * g_lo, rest_hi * g_hi
    if hi > lo and outer:
        ups, lows = _pieces(u, leaf, cons)
        second = column_integral(leaf, outer, ups, lows, dists[u], dists)
        if second is not None:
            lo, hi = max(lo, Fraction(second[0])), min(hi, Fraction(second[1]))
            hi = max(hi, lo)
    return lo, hi


def _pieces(u, leaf, cons):
    """The constraints that mention ``u`` solved for it, and u's sides of the leaf box, as
    (upper pieces, lower pieces) ``(coefficients over the other variables, constant)``
    (constant None: an unbounded side)."""
    lo, hi = leaf[u]
    ups = [({}, hi)]
    lows = [({}, lo)]
    for coef, rhs in cons:
        c = coef.get(u)
        if c is None:
            continue
        # c·u < rhs − Σ k·x  ⇔  u < (or >) rhs/c − Σ (k/c)·x
        piece = ({v: -k / c for v, k in coef.items() if v != u}, rhs / c)
        (ups if c > 0 else lows).append(piece)
    return ups, lows


def _inner_intervals(u, leaf, cons):
    """For inner variable ``u``, over the constraints that mention it: (the interval of u on
    which each of them holds for every point of the other variables' box — or (0, 0) if none
    can be guaranteed —, the interval outside which one fails for every such point). None when
    u is in no constraint."""
    a_lo, a_hi = leaf[u]
    b_lo, b_hi = leaf[u]
    sure = True
    used = False
    for coef, rhs in cons:
        c = coef.get(u)
        if c is None:
            continue
        rmin, rmax = linear_range({v: k for v, k in coef.items() if v != u}, leaf)
        used = True
        # c·u < rhs − rest, rest ∈ [rmin, rmax]
        every = None if rmax is None else (rhs - rmax) / c  # holds for every other point
        some = None if rmin is None else (rhs - rmin) / c  # holds for some other point
        if c > 0:
            if every is None:
                sure = False
            else:
                a_hi = every if a_hi is None else min(a_hi, every)
            if some is not None:
                b_hi = some if b_hi is None else min(b_hi, some)
        else:
            if every is None:
                sure = False
            else:
                a_lo = every if a_lo is None else max(a_lo, every)
            if some is not None:
                b_lo = some if b_lo is None else max(b_lo, some)
    if not used:
        return None
    if not sure:
        a_lo = a_hi = Fraction(0)
    return (a_lo, a_hi), (b_lo, b_hi)


def parse_rational(s: Any, what: str) -> Fraction:
    """``"p/q"`` or ``"p"`` (strings only; floats are not exact)."""
    if not isinstance(s, str):
        raise MassError(f'{what}: expected an exact rational string "p/q"')
    try:
        if len(s) > 20000:
            raise ValueError
        return Fraction(s)
    except (ValueError, ZeroDivisionError):
        raise MassError(f"{what}: '{s[:40]}' is not a rational \"p/q\"") from None


def rational_text(x: Fraction) -> str:
    x = Fraction(x)
    return str(x.numerator) if x.denominator == 1 else f"{x.numerator}/{x.denominator}"
