"""Regions of the continuous sample space and their certified masses (checker side).

A :class:`Region` is an open box on base variables (bounds may be missing = unbounded) and
strict linear constraints ``Σ coef·x < rhs`` over two or more of them. Its mass under the
product of the base variables' distributions (:func:`region_mass`) is computed from scratch:

* variables in no constraint: the product of their one-dimensional masses
  (``Dist.mass``: exact for polynomial densities, rigorous CDF enclosures from
  :mod:`tamp.prob.rigorous` for Gaussian, Laplace and exponential);
* a group of variables linked by constraints, all with polynomial densities (uniform, step
  bins, ``density``): exact rational polytope integration (:func:`tamp.wmi.integrate_polytope`);
* the other linked variables: bounded through a *witness*, a bisection tree of the region's box
  over those variables (``{"split": NAME, "at": "p/q", "below": T, "above": T}``, a leaf is
  ``null``). Each leaf box is classified by exact interval arithmetic: inside every constraint,
  outside one, or partial; the mass lies in [Σ inside, Σ inside + Σ partial] (leaf masses are
  products of one-dimensional masses). No witness means the trivial [0, mass of the box].

Constraints ``0 < rhs`` (no variable) are malformed: their boundary would not be a null set.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Dict, List, Optional, Tuple

import z3

from tamp.prob.dists import Dist
from tamp.prob.interval import Interval

Bound = Tuple[Optional[Fraction], Optional[Fraction]]
ZERO_IV = Interval.point(0)
ONE_IV = Interval.point(1)
MAX_WITNESS_LEAVES = 200_000


class MassError(ValueError):
    """A region or witness that cannot be used (the message says why)."""


@dataclass
class Region:
    box: Dict[str, Bound] = field(default_factory=dict)
    cons: List[Tuple[Dict[str, Fraction], Fraction]] = field(default_factory=list)

    def variables(self) -> set:
        out = set(self.box)
        for coef, _ in self.cons:
            out |= set(coef)
        return out

    def key(self) -> tuple:
        return (tuple(sorted(self.box.items())),
                tuple(sorted((tuple(sorted(c.items())), r) for c, r in self.cons)))

    def formula(self, symbols: Dict[str, z3.ArithRef], closed: bool = False) -> z3.BoolRef:
        """The open region (or its closure) as a z3 formula."""
        from .replay import q

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
    parent: Dict[str, str] = {}

    def find(a):
        parent.setdefault(a, a)
        while parent[a] != a:
            parent[a] = parent[parent[a]]
            a = parent[a]
        return a

    for coef, _ in region.cons:
        vs = sorted(coef)
        for v in vs:
            find(v)
        for v in vs[1:]:
            parent[find(v)] = find(vs[0])
    groups: Dict[str, List[str]] = {}
    for v in parent:
        groups.setdefault(find(v), []).append(v)
    return [sorted(g) for g in sorted(groups.values())]


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


def region_mass(region: Region, dists: Dict[str, Dist], witness: Any = None, deadline=None) -> Interval:
    """A certified enclosure of the region's mass (see the module docstring)."""
    for coef, _ in region.cons:
        if not coef or any(c == 0 for c in coef.values()):
            raise MassError("a constraint needs non-zero coefficients")
    names = region.variables()
    for v in names:
        if v not in dists:
            raise MassError(f"unknown base variable '{v}'")
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
    if wvars:
        wcons = [c for c in region.cons if set(c[0]) <= wvars]
        total = total * _witness_mass(sorted(wvars), box, wcons, dists, witness)
    elif witness is not None:
        raise MassError("a witness is given, but every linked variable has a polynomial density")
    return total


def _poly_mass(g, box, cons, dists, deadline) -> Interval:
    from tamp.wmi import Poly, integrate_polytope

    n = len(g)
    idx = {v: i for i, v in enumerate(g)}
    dens = Poly.const(n, 1)
    rows = []
    for i, v in enumerate(g):
        terms = {}
        for k, c in enumerate(dists[v].coeffs):
            e = [0] * n
            e[i] = k
            terms[tuple(e)] = c
        dens = dens * Poly(n, terms)
        lo, hi = box[v]
        unit = [Fraction(0)] * n
        unit[i] = Fraction(1)
        rows.append((tuple(unit), hi, False))
        rows.append((tuple(-u for u in unit), -lo, False))
    for coef, rhs in cons:
        rows.append((tuple(coef.get(v, Fraction(0)) for v in g), rhs, False))
    try:
        return Interval.point(integrate_polytope(dens, rows, n, deadline=deadline))
    except TimeoutError:
        raise MassError("exact integration ran out of time") from None


def classify_box(box: Dict[str, Bound], cons) -> str:
    """"in" (every constraint holds on the whole box), "out" (one fails on all of it) or
    "partial", by exact interval arithmetic."""
    inside = True
    for coef, rhs in cons:
        lo = hi = Fraction(0)
        for v, c in coef.items():
            a, b = box[v]
            if c < 0:
                a, b = b, a
            lo = None if lo is None or a is None else lo + c * a
            hi = None if hi is None or b is None else hi + c * b
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


def _witness_mass(names, box, cons, dists, tree) -> Interval:
    lo = Fraction(0)
    hi = Fraction(0)
    for leaf in walk_witness(names, box, tree):
        kind = classify_box(leaf, cons)
        if kind == "out":
            continue
        m = box_mass(leaf, dists, names)
        if kind == "in":
            lo += m.lo
        hi += m.hi
    return Interval(lo, min(hi, Fraction(1)) if lo <= 1 else hi)


def parse_rational(s: Any, what: str) -> Fraction:
    """``"p/q"`` or ``"p"`` (strings only; floats are not exact)."""
    if not isinstance(s, str):
        raise MassError(f"{what}: expected an exact rational string \"p/q\"")
    try:
        if len(s) > 20000:
            raise ValueError
        return Fraction(s)
    except (ValueError, ZeroDivisionError):
        raise MassError(f"{what}: '{s[:40]}' is not a rational \"p/q\"") from None


def rational_text(x: Fraction) -> str:
    x = Fraction(x)
    return str(x.numerator) if x.denominator == 1 else f"{x.numerator}/{x.denominator}"
