"""A fresh uniform draw and a value fixed before it: the draw rarely hits it, and often does.

Two facts about ``v`` drawn uniformly from ``k`` distinct constant points ``c_1, …, c_k`` — a
literal set ``unif({c_1, …, c_k})`` of numbers, or (for the second) an integer range
``unif(lo, hi)`` with constant bounds, at most :data:`MAX_POINTS` points — and an expression
``P`` whose other variables are fixed before the draw.

``uniform_set_root`` (the hit). ``P = a_0 + a_1·v + … + a_d·v^d`` a polynomial in ``v`` whose
coefficients do not read ``v``::

    Pr[ P(v) = 0  ∧  (a_0 != 0 ∨ … ∨ a_d != 0) ]  <=  e / k,   e = (a_d != 0 ? d : … a_1 != 0 ? 1 : 0)

The case that matters is ``P = v - x``: a fresh draw equals a value ``x`` fixed before it (an
earlier draw from the same set) with chance at most ``1/k`` — nothing needs ``x`` in the set.
(The integer range has the same fact in :mod:`axioms.roots`, ``uniform_root``.)

``uniform_miss`` (the miss). ``P`` any expression, with the side condition that some point is
a root, ``P[v := c_1] = 0 ∨ … ∨ P[v := c_k] = 0`` (checked by the solver where ``v`` is drawn)::

    Pr[ P(v) != 0 ]  <=  1 - 1/k

So a draw misses a value ``x`` that lies in the support (``P = v - x``) with chance at most
``1 - 1/k``: a die thrown twice disagrees with chance 5/6, two players' picks from ``1..k``
differ with chance ``1 - 1/k``.

Soundness. Fix the values of everything but ``v``; ``v`` is drawn independently of them, each
of the ``k`` distinct points with chance ``1/k``. Hit: if every ``a_i`` is 0 the event is empty;
otherwise ``e`` is the exact degree, a nonzero polynomial of degree ``e`` has at most ``e`` real
roots (none when ``e = 0``), so at most ``e`` of the points lie in the event: chance ``<= e/k``.
Miss: the side condition, stated over the values before the draw (``v`` substituted by each
point, so it does not read the draw), names a point ``c_j`` with ``P(c_j) = 0``; the event
``P(v) != 0`` excludes that point, so its chance is at most ``(k-1)/k``. Both bounds hold for
every value of the other variables, hence averaged over them. The points must be distinct
constants (a repeated element of a set literal would weigh a point twice; the families refuse
such a set). ``bad`` states the expanded polynomial (hit) or ``P`` itself (miss); which ``P`` to
name is a proposal (the differences of the program's equalities, :mod:`tamp.prover.trace.roots`):
the trace check (and ``check-proof``) asks the solver that the failure implies the events, that
the side conditions hold and that the costs fit the bound.
"""

from __future__ import annotations

from fractions import Fraction

from lang import ast as A
from lang.evaluate import evaluate
from lang.walk import free_vars, substitute

from . import build as B
from .base import AxiomFamily, AxiomInstance, SelfReferentialSample, check_targets
from .roots import coefficients, exact_degree, polynomial
from .uniform_finite import _const_points, support_points

__all__ = ["UniformSetRoot", "UniformMiss", "set_size", "points_of", "MAX_POINTS"]

#: the most points a range may have for ``uniform_miss`` (its side condition names each point)
MAX_POINTS = 64


def points_of(dist: A.Call) -> tuple:
    """The distinct numeric points of a literal set, or of a constant integer range of at most
    :data:`MAX_POINTS` points; () otherwise."""
    if len(dist.args) == 1 and set_size(dist) == 0:
        return ()
    pts = support_points(dist)
    if pts is None or len(pts) > MAX_POINTS or any(isinstance(p, (tuple, bool)) for p in pts):
        return ()
    return tuple(pts)


def set_size(dist: A.Call) -> int:
    """The number of distinct constant numbers of ``unif({…})``, or 0 when it is not one."""
    if dist.func != "unif" or len(dist.args) != 1 or not isinstance(dist.args[0], A.SetLit):
        return 0
    pts = _const_points(dist.args[0].items)
    if pts is None or any(isinstance(p, (tuple, bool)) for p in pts):
        return 0
    return len(pts)


class UniformSetRoot(AxiomFamily):
    """``Pr[P(v) = 0 ∧ P is not the zero polynomial] <= deg P / k`` for ``v ~ unif(S)``, ``S`` a
    literal set of ``k`` distinct numbers; the parameter is the polynomial ``P``."""

    name = "uniform_set_root"
    distributions = ("unif",)
    param_kind = "real"  # an expression, serialised as such
    #: the prover proposes the differences of the program's equalities (as for uniform_root)
    root_proposals = True

    def applies(self, dist: A.Call) -> bool:
        return set_size(dist) > 0

    def instantiate(self, targets, dist: A.Call, param) -> AxiomInstance:
        check_targets(targets, dist)
        k = set_size(dist)
        if k == 0:
            raise ValueError("uniform_set_root: not a literal set of distinct numbers")
        v = targets[0]
        if len(targets) != 1 or not isinstance(v, A.Var):
            raise ValueError("uniform_set_root: the target is a scalar variable")
        if not isinstance(param, A.Expr):
            raise ValueError("uniform_set_root: the parameter is a polynomial expression")
        coefs = coefficients(param, v.name)
        if coefs is None or len(coefs) < 2:
            raise ValueError("uniform_set_root: the parameter is not a polynomial of degree >= 1 in the target")
        if any(v.name in free_vars(c) for c in coefs):  # cannot happen; a guard for the theorem
            raise SelfReferentialSample("uniform_set_root: a coefficient reads the sampled variable")
        bad = B.and_(B.eq(polynomial(coefs, v), 0), B.or_(*[B.ne(c, 0) for c in coefs]))
        cost = B.div(exact_degree(coefs), B.n(k))
        return AxiomInstance(self.name, bad, cost, (), param=param, note="a fresh draw hits a fixed value")

    def exact_tail(self, args, param) -> float:
        """``args = (values,)`` the set's values (or its literal), ``param`` a polynomial in ``v``
        with numeric coefficients: the fraction of the set's points where ``bad`` holds."""
        dist = _numeric_dist(args)
        inst = self.instantiate((A.Var("v"),), dist, param)
        pts = points_of(dist)
        return sum(1 for c in pts if evaluate(inst.bad, {"v": c}) is True) / len(pts)

    def cost_value(self, args, param) -> float:
        inst = self.instantiate((A.Var("v"),), _numeric_dist(args), param)
        return float(Fraction(evaluate(inst.cost, {})))


def _numeric_dist(args) -> A.Call:
    """``unif({…})`` from ``args = (values,)`` or ``(set literal,)``."""
    s = args[0]
    if not isinstance(s, A.SetLit):
        s = A.SetLit(tuple(B.n(Fraction(c)) for c in s))
    return A.Call("unif", (s,))


class UniformMiss(AxiomFamily):
    """``Pr[P(v) != 0] <= 1 - 1/k`` for ``v`` uniform on ``k`` distinct constant points, when some
    point is a root of ``P`` (the side condition); the parameter is the expression ``P``."""

    name = "uniform_miss"
    distributions = ("unif",)
    param_kind = "real"  # an expression, serialised as such
    #: the prover proposes the differences of the program's equalities (as for uniform_root)
    root_proposals = True

    def applies(self, dist: A.Call) -> bool:
        return dist.func == "unif" and bool(points_of(dist))

    def instantiate(self, targets, dist: A.Call, param) -> AxiomInstance:
        check_targets(targets, dist)
        pts = points_of(dist)
        if not pts:
            raise ValueError("uniform_miss: not a literal set or a small constant range of distinct numbers")
        v = targets[0]
        if len(targets) != 1 or not isinstance(v, A.Var):
            raise ValueError("uniform_miss: the target is a scalar variable")
        if not isinstance(param, A.Expr) or v.name not in free_vars(param):
            raise ValueError("uniform_miss: the parameter is an expression of the target")
        roots = [B.eq(substitute(param, {v.name: B.n(Fraction(c))}), 0) for c in pts]
        if any(v.name in free_vars(r) for r in roots):  # cannot happen; a guard for the theorem
            raise SelfReferentialSample("uniform_miss: the side condition reads the sampled variable")
        k = len(pts)
        return AxiomInstance(
            self.name,
            B.ne(param, 0),
            B.n(Fraction(k - 1, k)),
            (B.or_(*roots),),
            param=param,
            note="a draw misses a value it may take",
        )

    def exact_tail(self, args, param) -> float:
        """``args`` numeric (a set's values, or ``(lo, hi)``), ``param`` an expression of ``v``
        only whose side condition holds: the fraction of the points where ``bad`` holds."""
        dist = _numeric_dist(args) if len(args) == 1 else A.Call("unif", (B.n(args[0]), B.n(args[1])))
        inst = self.instantiate((A.Var("v"),), dist, param)
        pts = points_of(dist)
        return sum(1 for c in pts if evaluate(inst.bad, {"v": c}) is True) / len(pts)

    def cost_value(self, args, param) -> float:
        dist = _numeric_dist(args) if len(args) == 1 else A.Call("unif", (B.n(args[0]), B.n(args[1])))
        return float(Fraction(evaluate(self.instantiate((A.Var("v"),), dist, param).cost, {})))


FAMILIES = [UniformSetRoot(), UniformMiss()]
