"""Cost-0 support axioms: "the sample lies in the distribution's support".

For every distribution one family named ``"support"`` (a choice family with the
single choice ``"support"``) gives ``Pr[bad] <= 0`` where ``bad`` says the sample
is outside the support. The prover gets these facts for free, alone or combined
with a costly axiom through :func:`axioms.base.union_bound`.

==========================  =====================================  ==============
distribution                bad (sample outside the support)       side
==========================  =====================================  ==============
``bern(p)``                 ``false``                              —
``unif(lo, hi)``            ``v < lo || v > hi``                   ``lo <= hi``
``unif({c1, …, ck})``       ``!(v == c1 || … || v == ck)``         —
``unif(S1 * S2)``           ``!(x ∈ S1) || !(y ∈ S2)``             —
``lap(m, s)``               ``false``                              —
``gauss(m, var)``           ``false``                              —
``dlap(m, s)``              ``false``                              —
``exp(k, s)``               ``v < k``                              ``s > 0``
``dexp(k, s)``              ``v < k``                              ``s > 0``
``uniform(a, b)``           ``v < a || v > b``                     ``a <= b``
``step([(a_i, b_i, w_i)])`` ``v < min a_i || v > max b_i``         ``a_i <= b_i``
``density(lo, hi, POLY)``   ``v < lo || v > hi``                   ``lo <= hi``
==========================  =====================================  ==============

Soundness. Each distribution puts all its mass on the stated set: ``unif(lo, hi)``
on the integers of ``[lo, hi]`` (non-empty when ``lo <= hi``), a finite uniform on
its elements (membership written with the same cover formulas as
:mod:`axioms.uniform_finite`, true on every element), ``exp``/``dexp`` on
``[k, ∞)`` (defined for ``s > 0``), ``uniform`` on ``[a, b]``, ``step`` on the union
of its bins ``[a_i, b_i]`` (inside ``[min a_i, max b_i]``), ``density`` on
``[lo, hi]``. So ``bad`` has probability 0. Integrality (``dlap``, ``dexp``,
``unif``) is not stated: the type checker gives those samples type ``int``.
Measure-zero events (e.g. ``v == k`` for ``exp``) could also be excluded at cost
0; they are not, to keep the facts simple.

``exact_tail`` computes ``Pr[bad]`` from the distribution itself (the CDF at the
bounds read from the ``bad`` builder, with ``scipy.stats``; finite ones by summing
the pmf over the support where the ``bad`` AST is true).
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Callable, Optional, Tuple

from lang import ast as A
from lang.evaluate import constant_value, evaluate
from lang.walk import operands

from . import build as B
from ._lazy import integrate, stats
from .base import AxiomFamily, AxiomInstance, check_targets
from .uniform_finite import cover_pairs, cover_scalar, point_literal

CHOICE = "support"


def _outside(v, lo: Optional[A.Expr], hi: Optional[A.Expr]) -> A.Expr:
    """``v < lo || v > hi`` (a missing bound is dropped)."""
    parts = []
    if lo is not None:
        parts.append(B.lt(v, lo))
    if hi is not None:
        parts.append(B.gt(v, hi))
    return B.or_(*parts)


def _bounds(lo: Optional[float], hi: Optional[float], cdf_below: Callable, sf_above: Callable):
    """``Pr[v < lo] + Pr[v > hi]`` from the distribution's functions."""
    p = 0.0
    if lo is not None:
        p += cdf_below(lo)
    if hi is not None:
        p += sf_above(hi)
    return float(p)


class SupportFamily(AxiomFamily):
    """``Pr[sample outside the support] <= 0`` for one distribution (see the module docstring).

    Subclasses set ``dist_name`` and ``arity`` and implement ``bad_and_side`` and
    ``exact_tail``."""

    name = "support"
    param_kind = "choice"
    dist_name = ""
    arity = 2

    @property
    def distributions(self):  # type: ignore[override]
        return (self.dist_name,)

    def applies(self, dist: A.Call) -> bool:
        return dist.func == self.dist_name and len(dist.args) == self.arity

    def choices(self, dist: A.Call):
        return (CHOICE,)

    def target_count(self, dist: A.Call, targets) -> int:
        return 1

    def bad_and_side(self, targets, args) -> Tuple[A.Expr, Tuple[A.Expr, ...]]:
        raise NotImplementedError

    def instantiate(self, targets, dist: A.Call, param=CHOICE) -> AxiomInstance:
        if param != CHOICE:
            raise ValueError(f"support: unknown choice {param!r}")
        check_targets(targets, dist, self.target_count(dist, targets))
        bad, side = self.bad_and_side(tuple(targets), tuple(dist.args))
        return AxiomInstance(self.name, bad, B.n(0), tuple(side), param=CHOICE, note=f"{dist.func} support")

    def literal_dist(self, args) -> A.Call:
        return A.Call(self.dist_name, tuple(B.e(a) if not isinstance(a, float) else B.n(a) for a in args))

    def numeric_instance(self, args) -> AxiomInstance:
        return self.instantiate((A.Var("v"),), self.literal_dist(args))

    def cost_value(self, args, param=CHOICE) -> float:
        return float(evaluate(self.numeric_instance(args).cost, {}))

    def bound_values(self, args) -> Tuple[Optional[float], Optional[float]]:
        """The numeric ``lo`` / ``hi`` of the ``bad`` event ``v < lo || v > hi`` (None if absent),
        read back from the AST built by :meth:`bad_and_side`."""
        bad = self.numeric_instance(args).bad
        lo = hi = None
        for part in _disjuncts(bad):
            if isinstance(part, A.Binary) and part.op == "<":
                lo = float(evaluate(part.right, {}))
            elif isinstance(part, A.Binary) and part.op == ">":
                hi = float(evaluate(part.right, {}))
            elif not (isinstance(part, A.BoolLit) and not part.value):
                raise AssertionError(f"unexpected bad event part {part}")
        return lo, hi


def _disjuncts(e: A.Expr):
    return operands(e, "||")


# ----------------------------------------------------------------- per distribution


class NothingSupport(SupportFamily):
    """Distributions whose support gives no expressible fact: ``bad = false``."""

    def __init__(self, dist_name: str, arity: int):
        self.dist_name = dist_name
        self.arity = arity

    def bad_and_side(self, targets, args):
        return B.FALSE, ()

    def exact_tail(self, args, param=CHOICE) -> float:
        return 0.0 if not evaluate(self.numeric_instance(args).bad, {}) else 1.0


class IntRangeSupport(SupportFamily):
    """``unif(lo, hi)``: the integers of ``[lo, hi]``."""

    dist_name = "unif"
    arity = 2

    def bad_and_side(self, targets, args):
        lo, hi = args
        return _outside(targets[0], lo, hi), (B.le(lo, hi),)

    def exact_tail(self, args, param=CHOICE) -> float:
        lo, hi = (int(a) for a in args)
        bad = self.numeric_instance(args).bad
        # the pmf summed where bad holds; the support is lo..hi (randint's upper end is open)
        d = stats.randint(lo, hi + 1)
        return float(sum(d.pmf(c) for c in range(lo, hi + 1) if evaluate(bad, {"v": c})))


class FiniteSetSupport(SupportFamily):
    """``unif({c1, …, ck})`` and ``unif(S1 * S2)``: the listed elements (possibly symbolic)."""

    dist_name = "unif"
    arity = 1

    def applies(self, dist):
        return super().applies(dist) and _set_shape(dist.args[0]) is not None

    def target_count(self, dist, targets):
        return 2 if _set_shape(dist.args[0]) == "pairs" and len(targets) != 1 else 1

    def bad_and_side(self, targets, args):
        s = args[0]
        if isinstance(s, A.Binary):  # S1 * S2
            x, y = _coord_exprs(targets)
            return B.or_(B.not_(_cover_items(x, s.left.items)), B.not_(_cover_items(y, s.right.items))), ()
        if _set_shape(s) == "pairs":
            x, y = _coord_exprs(targets)
            consts = [constant_value(it) for it in s.items]
            if all(c is not None for c in consts):
                return B.not_(cover_pairs(targets, consts)), ()
            return B.not_(B.or_(*(B.and_(B.eq(x, it.items[0]), B.eq(y, it.items[1])) for it in s.items))), ()
        return B.not_(_cover_items(targets[0], s.items)), ()

    def literal_dist(self, args):
        return A.Call("unif", (A.SetLit(tuple(point_literal(p) for p in args[0])),))

    def exact_tail(self, args, param=CHOICE) -> float:
        support = tuple(args[0])
        pairs = isinstance(support[0], tuple)
        targets = (A.Var("x"), A.Var("y")) if pairs else (A.Var("v"),)
        bad = self.instantiate(targets, self.literal_dist(args)).bad
        hits = sum(1 for p in support if evaluate(bad, {"x": p[0], "y": p[1]} if pairs else {"v": p}))
        return hits / len(support)


def _set_shape(s: A.Expr) -> Optional[str]:
    """ "scalars" / "pairs" for a set literal or product of set literals, else None."""
    if (
        isinstance(s, A.Binary)
        and s.op == "*"
        and isinstance(s.left, A.SetLit)
        and isinstance(s.right, A.SetLit)
        and s.left.items
        and s.right.items
        and _set_shape(s.left) == "scalars"
        and _set_shape(s.right) == "scalars"
    ):
        return "pairs"
    if isinstance(s, A.SetLit) and s.items:
        if all(isinstance(i, A.TupleExpr) and len(i.items) == 2 for i in s.items):
            return "pairs"
        if not any(isinstance(i, A.TupleExpr) for i in s.items):
            return "scalars"
    return None


def _coord_exprs(targets):
    if len(targets) == 2:
        return targets
    return B.call("fst", targets[0]), B.call("snd", targets[0])


def _cover_items(v, items) -> A.Expr:
    """A formula true when ``v`` equals one of the (scalar) ``items``."""
    consts = [constant_value(i) for i in items]
    if all(c is not None and not isinstance(c, tuple) for c in consts):
        return cover_scalar(v, consts)
    return B.or_(*(B.eq(v, i) for i in items))


class ShiftedSupport(SupportFamily):
    """``exp(k, s)`` and ``dexp(k, s)``: ``[k, ∞)``."""

    def __init__(self, dist_name: str):
        self.dist_name = dist_name

    def bad_and_side(self, targets, args):
        k, s = args
        return _outside(targets[0], k, None), (B.gt(s, 0),)

    def exact_tail(self, args, param=CHOICE) -> float:
        k, s = (float(a) for a in args)
        lo, hi = self.bound_values(args)
        if self.dist_name == "exp":
            d = stats.expon(loc=k, scale=s)
            return _bounds(lo, hi, d.cdf, d.sf)
        d = stats.planck(1.0 / s, loc=int(k))  # pmf a^j (1-a) on k, k+1, …
        return _bounds(lo, hi, lambda x: d.cdf(_int_below(x)), lambda x: d.sf(x))


def _int_below(x: float) -> float:
    """The largest integer strictly below ``x`` (``Pr[v < x] = cdf(that)`` for integer ``v``)."""
    f = math.floor(x)
    return f - 1 if f == x else f


class IntervalSupport(SupportFamily):
    """``uniform(a, b)`` and ``density(lo, hi, POLY)``: ``[a, b]``."""

    def __init__(self, dist_name: str, arity: int):
        self.dist_name = dist_name
        self.arity = arity

    def bad_and_side(self, targets, args):
        lo, hi = args[0], args[1]
        return _outside(targets[0], lo, hi), (B.le(lo, hi),)

    def exact_tail(self, args, param=CHOICE) -> float:
        a, b = float(args[0]), float(args[1])
        lo, hi = self.bound_values(args)
        if self.dist_name == "uniform":
            d = stats.uniform(loc=a, scale=b - a)
            return _bounds(lo, hi, d.cdf, d.sf)
        poly = args[2]

        def dens(x):
            return float(evaluate(poly, {"_": x}))

        total = integrate.quad(dens, a, b)[0]

        def mass(u, w):
            u, w = max(u, a), min(w, b)
            return integrate.quad(dens, u, w)[0] / total if w > u else 0.0

        return _bounds(lo, hi, lambda x: mass(a, x), lambda x: mass(x, b))


def _fold_const(pick, build, exprs):
    """``pick`` of the values as one literal when all are constants, else the ``build`` call."""
    vals = [constant_value(x) for x in exprs]
    if all(isinstance(v, (int, Fraction)) and not isinstance(v, bool) for v in vals):
        return B.n(pick(Fraction(v) for v in vals))
    return build(*exprs)


class StepSupport(SupportFamily):
    """``step([(a1, b1, w1), …])``: inside ``[min a_i, max b_i]``."""

    dist_name = "step"
    arity = 1

    def applies(self, dist):
        return (
            super().applies(dist)
            and isinstance(dist.args[0], A.ListLit)
            and dist.args[0].items
            and all(isinstance(b, A.TupleExpr) and len(b.items) == 3 for b in dist.args[0].items)
        )

    def bad_and_side(self, targets, args):
        bins = args[0].items
        lo = _fold_const(min, B.min_, [b.items[0] for b in bins])
        hi = _fold_const(max, B.max_, [b.items[1] for b in bins])
        return _outside(targets[0], lo, hi), tuple(B.le(b.items[0], b.items[1]) for b in bins)

    def literal_dist(self, args):
        return A.Call("step", (A.ListLit(tuple(A.TupleExpr(tuple(B.n(x) for x in b)) for b in args[0])),))

    def exact_tail(self, args, param=CHOICE) -> float:
        bins = [tuple(float(x) for x in b) for b in args[0]]
        total = sum(w for _, _, w in bins)
        lo, hi = self.bound_values(args)
        p = 0.0
        for a, b, w in bins:
            d = stats.uniform(loc=a, scale=b - a)
            p += w / total * _bounds(lo, hi, d.cdf, d.sf)
        return p


FAMILIES = [
    NothingSupport("bern", 1),
    IntRangeSupport(),
    FiniteSetSupport(),
    NothingSupport("lap", 2),
    NothingSupport("gauss", 2),
    NothingSupport("dlap", 2),
    ShiftedSupport("exp"),
    ShiftedSupport("dexp"),
    IntervalSupport("uniform", 2),
    StepSupport(),
    IntervalSupport("density", 3),
]
