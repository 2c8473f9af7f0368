"""Root counting for a uniform draw from a literal set: an earlier value is rarely hit.

The fact. Let ``v ~ unif({c_1, …, c_k})`` be uniform on ``k`` distinct constant numbers, and
let ``P(v) = a_0 + a_1·v + … + a_d·v^d`` be a polynomial in ``v`` whose coefficients ``a_i`` do
not read ``v`` (their values are fixed before the draw). Then::

    uniform_set_root:  Pr[ P(v) = 0  ∧  (a_0 != 0 ∨ … ∨ a_d != 0) ]  <=  e / k,
                       e = (a_d != 0 ? d : … a_1 != 0 ? 1 : 0)

The case that matters is ``P = v - x``: the chance that a fresh draw equals a value ``x`` fixed
before it (an earlier draw from the same set, a colour already chosen) is at most ``1/k``; so
``Pr[v == x] <= 1/k`` and, on the other side of the same event, ``Pr[v != x] >= 1 - 1/k``.
The integer range ``unif(lo, hi)`` has the same fact in :mod:`axioms.roots` (``uniform_root``).

Soundness. Fix the values of everything but ``v``: the ``a_i`` are then fixed reals and ``v``
is drawn independently of them, each of the ``k`` distinct points with chance ``1/k``. If every
``a_i`` is 0 the event is empty (cost ``0/k``). Otherwise ``e`` is the exact degree: ``e = 0``
is a nonzero constant without roots; ``e >= 1`` gives a nonzero real polynomial with at most
``e`` roots, so at most ``e`` of the ``k`` points are roots and the chance is at most ``e/k``.
That bound holds for every value of the other variables, hence averaged over them. The set's
elements must be distinct constants (a repeated element would weigh a point twice): the family
refuses any other set. The expansion into coefficients is :func:`axioms.roots.coefficients`,
and ``bad`` states the expanded polynomial itself; the trace check (and ``check-proof``) asks
the solver that the failure implies the events and that the costs fit the bound, so the
proposals (the differences of the program's equalities, as for ``uniform_root``) are not
trusted. Nothing needs the earlier value to lie in the set.
"""

from __future__ import annotations

from fractions import Fraction

from lang import ast as A
from lang.evaluate import evaluate
from lang.walk import free_vars

from . import build as B
from .base import AxiomFamily, AxiomInstance, SelfReferentialSample, check_targets
from .roots import coefficients, exact_degree, polynomial
from .uniform_finite import _const_points

__all__ = ["UniformSetRoot", "set_size"]


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
        pts = _const_points(dist.args[0].items) or ()
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


FAMILIES = [UniformSetRoot()]
