"""Axioms of uniform distributions on a finite, constant support (a choice family).

Distributions: ``unif({c1, …, ck})`` (constant elements: numbers, booleans, or
pairs ``(a, b)``), ``unif(S1 * S2)`` (pairs, sampled into two targets
``(x, y) ~ …``), and the integer range ``unif(lo, hi)`` with constant integer
bounds (support ``lo, lo+1, …, hi``). A set literal with repeated elements is
not handled (its meaning — set or multiset — would be ambiguous), nor are
symbolic elements or bounds (:mod:`axioms.support` still applies to those).

Axiom, for a subset ``S`` of the support (the parameter)::

    Pr[ target ∈ S ] <= |S| / |support|

where the event is written as ``bad = !cover(C)`` with ``C = support - S`` the
points the prover may go on assuming, and ``cover(C)`` a formula true on every
point of ``C``: a disjunction of equalities (pairs: a conjunction per
coordinate), with runs of consecutive integers written as intervals
``a <= v && v <= b`` and products as rectangles ``x ∈ A && y ∈ B``. For integer
(or boolean) targets ``cover(C)`` is exactly ``target ∈ C``, so ``!bad`` tells the
prover both "the sample is in the support" and "it is not in S"; the empty
``S`` is then the cost-0 support axiom.

Soundness. Every support point has probability ``1/|support|``, and the sample
is a support point with probability 1. ``bad`` is false on every point of
``C`` (``cover(C)`` is true there by construction), so the support points where
``bad`` holds lie in ``S`` and ``Pr[bad] <= |S|/|support|`` (with equality for
integer points). ``exact_tail`` checks this on the AST itself: it sums the pmf
over the support points where ``bad`` evaluates to true.

Choices (``choices(dist)``) are subsets, in order of increasing size:

* support of at most 6 points: all subsets;
* at most 16 points: subsets of size <= 2 and their complements;
* pairs of at most 200 points, besides: the points where the coordinates are equal, differ, or
  compare by ``<``, ``<=``, ``>``, ``>=`` (a rejection test of a joint draw);
* at most 200 points: the empty set, singletons, complements of singletons,
  prefixes and suffixes of the sorted support (scalars) or rows and columns
  (pairs), and the full support (prefixes/suffixes as below);
* larger: only the empty set, prefixes/suffixes (of sizes 1 … 64 and 64 evenly
  spaced sizes) or rows/columns, and the full support.

Integer ranges with more than ``MAX_SUPPORT`` (10 000) points are not handled.

A synthesiser that knows which subset it wants builds it with
:func:`subset_where` (from a predicate) and :func:`subset_instance`.
"""

from __future__ import annotations

from fractions import Fraction
from itertools import combinations
from typing import Any, Callable, Dict, FrozenSet, List, Optional, Sequence, Set, Tuple

from lang import ast as A
from lang.evaluate import constant_value, evaluate

from . import build as B
from .base import AxiomFamily, AxiomInstance, check_targets

MAX_SUPPORT = 10_000  # integer ranges beyond this are left to other families

Point = Any  # a scalar (int / Fraction / bool) or a pair of scalars


# ----------------------------------------------------------------------- support


def _scalar(v) -> bool:
    return isinstance(v, (bool, int, Fraction))


def _const_points(items: Sequence[A.Expr]) -> Optional[Tuple[Point, ...]]:
    """The constant values of set elements (scalars or pairs), or None."""
    out = []
    for it in items:
        v = constant_value(it)
        if isinstance(v, tuple):
            if len(v) != 2 or not all(_scalar(c) for c in v):
                return None
        elif not _scalar(v):
            return None
        out.append(v)
    if not out or len(set(out)) != len(out):
        return None
    return tuple(out)


def support_points(dist: A.Call) -> Optional[Tuple[Point, ...]]:
    """The support of a finite constant uniform distribution, in source order, or None
    if ``dist`` is not one (symbolic, repeated elements, empty, too large)."""
    if dist.func != "unif":
        return None
    args = dist.args
    if len(args) == 1:
        s = args[0]
        if isinstance(s, A.SetLit):
            return _const_points(s.items)
        if isinstance(s, A.Binary) and s.op == "*" and isinstance(s.left, A.SetLit) and isinstance(s.right, A.SetLit):
            xs, ys = _const_points(s.left.items), _const_points(s.right.items)
            if xs is None or ys is None or not all(_scalar(c) for c in xs + ys):
                return None
            return tuple((x, y) for x in xs for y in ys)
        return None
    if len(args) == 2:
        lo, hi = constant_value(args[0]), constant_value(args[1])
        if (
            not (isinstance(lo, (int, Fraction)) and isinstance(hi, (int, Fraction)))
            or isinstance(lo, bool)
            or isinstance(hi, bool)
        ):
            return None
        if Fraction(lo).denominator != 1 or Fraction(hi).denominator != 1:
            return None
        lo, hi = int(lo), int(hi)
        if lo > hi or hi - lo + 1 > MAX_SUPPORT:
            return None
        return tuple(range(lo, hi + 1))
    return None


def point_dimension(points: Sequence[Point]) -> int:
    return 2 if isinstance(points[0], tuple) else 1


def subset_where(dist: A.Call, predicate: Callable[[Point], bool]) -> FrozenSet[Point]:
    """The support points of ``dist`` for which ``predicate`` holds."""
    pts = support_points(dist)
    if pts is None:
        raise ValueError(f"not a finite constant uniform distribution: {dist.func}")
    return frozenset(p for p in pts if predicate(p))


# ------------------------------------------------------------------ formulas


def point_literal(v: Point) -> A.Expr:
    if isinstance(v, bool):
        return A.BoolLit(v)
    if isinstance(v, tuple):
        return A.TupleExpr(tuple(point_literal(c) for c in v))
    return B.n(v)


def _eq_scalar(v: A.Expr, c) -> A.Expr:
    if isinstance(c, bool):
        return v if c else B.not_(v)
    return B.eq(v, point_literal(c))


def cover_scalar(v: A.Expr, values) -> A.Expr:
    """A formula over scalar ``v`` that is true for every value in ``values`` — exactly
    ``v ∈ values`` for an integer (or boolean) ``v``: maximal runs of consecutive integers
    become intervals ``a <= v && v <= b``, other values equalities."""
    values = set(values)
    if not values:
        return B.FALSE
    if any(isinstance(c, bool) for c in values):
        if values >= {True, False}:
            return B.TRUE
        return B.or_(*(_eq_scalar(v, c) for c in sorted(values)))
    parts: List[A.Expr] = []
    run: List[Point] = []
    for c in sorted(values):
        if (
            run
            and isinstance(c, (int, Fraction))
            and Fraction(c).denominator == 1
            and Fraction(run[-1]).denominator == 1
            and c == run[-1] + 1
        ):
            run.append(c)
            continue
        if run:
            parts.append(_interval(v, run))
        run = [c]
    parts.append(_interval(v, run))
    return B.or_(*parts)


def _interval(v, run):
    if len(run) == 1:
        return B.eq(v, point_literal(run[0]))
    if len(run) == 2:
        return B.or_(B.eq(v, point_literal(run[0])), B.eq(v, point_literal(run[1])))
    return B.and_(B.le(point_literal(run[0]), v), B.le(v, point_literal(run[-1])))


def _size(e: A.Expr) -> int:
    return sum(1 for _ in A.walk(e))


def _coords(targets: Sequence[A.Expr]) -> Tuple[A.Expr, A.Expr]:
    if len(targets) == 2:
        return targets[0], targets[1]
    return B.call("fst", targets[0]), B.call("snd", targets[0])


def cover_pairs(targets: Sequence[A.Expr], values) -> A.Expr:
    """A formula over a pair target true on every pair in ``values`` (exact for integer
    coordinates): a rectangle ``x ∈ A && y ∈ B`` when ``values`` is one, else rows
    ``(x == a && y ∈ B_a) || …`` grouped by the coordinate giving the smaller formula."""
    x, y = _coords(targets)
    values = set(values)
    if not values:
        return B.FALSE
    xs = {p[0] for p in values}
    ys = {p[1] for p in values}
    cands = []
    if len(values) == len(xs) * len(ys):
        cands.append(B.and_(cover_scalar(x, xs), cover_scalar(y, ys)))
    for i, (u, w) in enumerate(((x, y), (y, x))):
        groups: Dict[Point, Set[Point]] = {}
        for p in values:
            groups.setdefault(p[i], set()).add(p[1 - i])
        cands.append(
            B.or_(
                *(
                    B.and_(_eq_scalar(u, k), cover_scalar(w, rest))
                    for k, rest in sorted(groups.items(), key=lambda kv: repr(kv[0]))
                )
            )
        )
    return min(cands, key=_size)


def bad_for_subset(targets: Sequence[A.Expr], subset, universe) -> A.Expr:
    """The bad event of restricting to ``subset``: "the target is not in ``universe - subset``",
    i.e. ``!cover(universe - subset)``. It is false at every support point outside ``subset``
    (so its probability is at most ``|subset|/|universe|``), and true outside the support."""
    rest = set(universe) - set(subset)
    if point_dimension(universe) == 2:
        return B.not_(cover_pairs(targets, rest))
    return B.not_(cover_scalar(targets[0], rest))


# ------------------------------------------------------------------- choices


def _ordered(pts):
    try:
        return sorted(pts)
    except TypeError:
        return list(pts)


def enumerate_subsets(points: Sequence[Point]):
    """Candidate subsets of ``points`` in order of increasing size (see the module docstring);
    within one size, in a deterministic order (generation order)."""
    k = len(points)
    full = frozenset(points)
    cands: Dict[FrozenSet[Point], None] = {frozenset(): None}  # an insertion-ordered set

    def add(s):
        cands.setdefault(frozenset(s), None)

    if k <= 6:
        for r in range(1, k + 1):
            for c in combinations(points, r):
                add(c)
    elif k <= 16:
        for r in (1, 2):
            for c in combinations(points, r):
                add(c)
                add(full - frozenset(c))
    else:
        if k <= 200:
            for p in points:
                add([p])
                add(full - {p})
        if point_dimension(points) == 1:
            srt = _ordered(points)
            for i in _cut_points(k):
                add(srt[:i])
                add(srt[k - i :])
        else:
            for coord in (0, 1):
                for val in dict.fromkeys(p[coord] for p in points):
                    add(p for p in points if p[coord] == val)
    if k <= 200 and point_dimension(points) == 2:
        # a pair compared coordinate to coordinate (a == b, a < b, ...): a rejection test of a
        # joint draw, whose subsets are neither small nor rows nor columns
        for rel in _RELATIONS:
            try:
                add(p for p in points if rel(p[0], p[1]))
            except TypeError:
                pass
    add(full)
    return sorted(cands, key=len)


_RELATIONS = (
    lambda a, b: a == b,
    lambda a, b: a != b,
    lambda a, b: a < b,
    lambda a, b: a <= b,
    lambda a, b: a > b,
    lambda a, b: a >= b,
)


def _cut_points(k: int, ends: int = 64, spread: int = 64):
    """Sizes of the prefixes/suffixes offered for a large support: ``1 … ends`` and ``spread``
    evenly spaced sizes up to ``k - 1``."""
    sizes = set(range(1, min(ends, k - 1) + 1))
    sizes.update(max(1, (k - 1) * j // spread) for j in range(1, spread + 1))
    return sorted(sizes)


# ------------------------------------------------------------------- family


class UniformSubset(AxiomFamily):
    """``Pr[target ∈ S] <= |S| / |support|`` for a uniform distribution on a finite constant set."""

    name = "uniform_finite"
    distributions = ("unif",)
    param_kind = "choice"

    def applies(self, dist: A.Call) -> bool:
        return support_points(dist) is not None

    def choices(self, dist: A.Call):
        pts = support_points(dist)
        return [] if pts is None else enumerate_subsets(pts)

    def instantiate(self, targets, dist: A.Call, param) -> AxiomInstance:
        pts = support_points(dist)
        if pts is None:
            raise ValueError("uniform_finite: not a finite constant uniform distribution")
        dim = point_dimension(pts)
        check_targets(targets, dist, count=len(targets) if dim == 2 and len(targets) == 1 else dim)
        subset = frozenset(param)
        if not subset <= set(pts):
            raise ValueError(f"uniform_finite: {sorted(map(repr, subset - set(pts)))} not in the support")
        bad = bad_for_subset(targets, subset, pts)
        cost = B.n(Fraction(len(subset), len(pts)))
        return AxiomInstance(
            self.name, bad, cost, (), param=subset, note=f"restrict to {len(subset)} of {len(pts)} points"
        )

    # ---------------------------------------------------------------- numeric
    @staticmethod
    def numeric_dist(support: Sequence[Point]) -> A.Call:
        """``unif({…})`` over literal points."""
        return A.Call("unif", (A.SetLit(tuple(point_literal(p) for p in support)),))

    def _numeric(self, support, subset):
        dim = point_dimension(support)
        targets = (A.Var("v"),) if dim == 1 else (A.Var("x"), A.Var("y"))
        return targets, self.instantiate(targets, self.numeric_dist(support), subset)

    def exact_tail(self, args, param) -> float:
        """``args = (support,)``: Pr[bad] by summing ``1/|support|`` over the support points
        where the ``bad`` AST evaluates to true."""
        support = tuple(args[0])
        targets, inst = self._numeric(support, param)
        hits = 0
        for p in support:
            env = {"v": p} if len(targets) == 1 else {"x": p[0], "y": p[1]}
            if evaluate(inst.bad, env):
                hits += 1
        return hits / len(support)

    def cost_value(self, args, param) -> float:
        return float(evaluate(self._numeric(tuple(args[0]), param)[1].cost, {}))


FAMILY = UniformSubset()
FAMILIES = [FAMILY]


def subset_instance(targets: Sequence[A.Expr], dist: A.Call, subset) -> AxiomInstance:
    """The axiom restricting ``targets ~ dist`` to the explicit subset ``subset`` of its support."""
    return FAMILY.instantiate(targets, dist, subset)
